package index

import (
	"context"
	"strings"

	"github.com/ctxsel/ctxsel/chunk"
)

// AboveReader is a Store that knows its documents' texts, so it can say,
// for found chunks, what lies above each in its document that the chunk
// needs to be read (chunk.Above: its heading path, the header of a table
// it starts inside). The embedded index is one, from the documents' texts
// it keeps; a Weaviate collection (index/weaviate) is one from what each
// chunk kept when it was written.
type AboveReader interface {
	// Above returns one string per hit, "" where none is needed or where
	// the hit is not a chunk the index holds now.
	Above(ctx context.Context, hits []Hit) ([]string, error)
}

var _ AboveReader = (*Dir)(nil)

// Above implements AboveReader from the documents' texts the segments
// keep, for the hits whose chunk is the one stored now: one pass over each
// document's text up to its last chunk found (chunk.AboveAll).
func (d *Dir) Above(ctx context.Context, hits []Hit) (out []string, err error) {
	defer d.afterSearch(&err)
	defer catchFault(&err)()
	s, err := d.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	out = make([]string, len(hits))
	rows := s.docRows()
	byDoc := map[string][]int{} // hits of each document, in order of first hit
	var docs []string
	for i, h := range hits {
		if _, ok := byDoc[h.Doc]; !ok {
			docs = append(docs, h.Doc)
		}
		byDoc[h.Doc] = append(byDoc[h.Doc], i)
	}
	for _, doc := range docs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		loc, ok := rows[doc]
		if !ok {
			continue
		}
		var text string
		var at, starts []int
		for _, i := range byDoc[doc] {
			h := hits[i]
			if h.Index < 0 || h.Index >= loc.n {
				continue
			}
			var span [5]int
			_, text, span = s.segs[loc.seg].chunk(int32(loc.first + h.Index))
			if span[0] != h.Start || span[1] != h.End || text[span[0]:span[1]] != h.Text {
				continue // not the chunk this index holds now
			}
			at, starts = append(at, i), append(starts, h.Start)
		}
		for k, a := range chunk.AboveAll(text, starts) {
			out[at[k]] = strings.Clone(a)
		}
	}
	return out, nil
}
