package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/dataset"
)

// chunkDoc cuts each question's document as an index does, where regroup
// keeps every unit whole: the question's passages (a converter's units, in
// document order) are joined into one text and cut by the index's own
// chunker (chunk.DefaultSpec: 600-token windows, 100 shared with the next),
// so a chunk may start or end inside a turn, and a unit in the overlap of
// two chunks is in both. Each gold span goes to every chunk that holds it
// whole, one gold id for all its copies (eval counts a unit once, kept when
// any copy is); a unit no chunk holds whole (longer than the overlap, cut
// by an edge) goes, cut, to the chunk holding most of it, and is counted.
// With --title-meta KEY every chunk's title is the record's meta[KEY] (with
// --title T: T), as an index gives each chunk its document's title.
func chunkDoc(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("evidata chunk", flag.ContinueOnError)
	in := fs.String("in", "", "common-format file, each question's passages its document's units in order")
	out := fs.String("out", "", "output .jsonl.gz")
	spec := fs.String("chunker", chunk.DefaultSpec, "chunker spec, as index add --chunker")
	sep := fs.String("sep", "\n\n", "what joins two passages in the document (\"\\n\" for one turn a line)")
	titleMeta := fs.String("title-meta", "", "give every chunk the record's meta value of this key as its title (empty: none)")
	titleAll := fs.String("title", "", "give every chunk this title (a file name, as index add would; --title-meta wins)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	*sep = strings.ReplaceAll(*sep, `\n`, "\n")
	recs, tok, err := loadCounting(*in)
	if err != nil {
		return err
	}
	ch, err := chunk.Parse(*spec, tok, nil)
	if err != nil {
		return fmt.Errorf("--chunker: %w", err)
	}
	cache := map[string][]chunk.Chunk{} // a document's chunks: many questions share one
	n, cut, units := 0, 0, 0
	for ri, r := range recs {
		var doc strings.Builder
		type goldUnit struct {
			span [2]int // in the document
			id   string
		}
		var gold []goldUnit
		for pi, p := range r.Passages {
			if pi > 0 {
				doc.WriteString(*sep)
			}
			off := doc.Len()
			doc.WriteString(p.Text)
			for j, g := range p.GoldSpans {
				id := p.ID + "/" + fmt.Sprint(j)
				if p.GoldIDs != nil {
					id = p.GoldIDs[j]
				}
				gold = append(gold, goldUnit{[2]int{g[0] + off, g[1] + off}, id})
			}
		}
		text := doc.String()
		cs, ok := cache[text]
		if !ok {
			if cs, err = ch.Chunk(context.Background(), r.ID, text); err != nil {
				return fmt.Errorf("record %q: %w", r.ID, err)
			}
			cache[text] = cs
		}
		title := *titleAll
		if *titleMeta != "" {
			var meta map[string]any
			if err := json.Unmarshal(r.Meta, &meta); err != nil {
				return fmt.Errorf("record %q: meta: %w", r.ID, err)
			}
			t, ok := meta[*titleMeta].(string)
			if !ok || t == "" {
				return fmt.Errorf("record %q: meta has no text %q for --title-meta", r.ID, *titleMeta)
			}
			title = t
		}
		ps := make([]dataset.Passage, len(cs))
		for i, c := range cs {
			ps[i] = dataset.Passage{ID: fmt.Sprintf("c%d", i), Text: c.Text, Title: title}
		}
		add := func(i int, g [2]int, id string) {
			c := cs[i]
			ps[i].Gold = true
			ps[i].GoldSpans = append(ps[i].GoldSpans, [2]int{g[0] - c.Start, g[1] - c.Start})
			ps[i].GoldIDs = append(ps[i].GoldIDs, id)
		}
		for _, g := range gold {
			units++
			whole, best, most := false, -1, 0
			for i, c := range cs {
				if c.Start <= g.span[0] && g.span[1] <= c.End {
					add(i, g.span, g.id)
					whole = true
				} else if lo, hi := max(g.span[0], c.Start), min(g.span[1], c.End); hi-lo > most {
					best, most = i, hi-lo
				}
			}
			if !whole && best >= 0 {
				c := cs[best]
				add(best, [2]int{max(g.span[0], c.Start), min(g.span[1], c.End)}, g.id)
				cut++
			}
		}
		recs[ri].Passages = ps
		n += len(ps)
	}
	if err := write(*out, recs); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d questions, %.1f chunks each (%s), %d gold units, %d held whole by no chunk (sent cut)\n",
		*out, len(recs), float64(n)/float64(max(1, len(recs))), *spec, units, cut)
	return nil
}
