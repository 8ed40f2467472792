// Command aboverows reads `ctxsel ask --json` outputs (DIR/N.json, one per
// question) and counts, of the table rows each sent passage kept, how many
// reach the reader with their table's header above them: a row and its
// header as package evidence reads the whole document the passage was cut
// from (a Markdown, space-aligned or statement table's row unit, and the
// context lines it needs), and of those rows of space-aligned tables and
// statements sent under their header, how many go out laid out as the
// document has them (the row's line and every header line whole, indents
// and column spaces kept). Reported in docs/evidence.md ("What lies above
// a chunk"); run it on two binaries' outputs to compare.
//
// With -chunks it reads a folder of documents instead, cuts each as
// `index add` does (600 tokens, sharing 100), and counts the table rows
// inside chunks whose header lines lie before the chunk's start (some or
// all of them), and how many of them chunk.Above gives every such line.
//
//	go run ./internal/measure/aboverows DIR
//	go run ./internal/measure/aboverows -chunks FOLDER
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/evidence"
	"github.com/ctxsel/ctxsel/token"
)

type passage struct {
	ID     string `json:"id"`
	Source string `json:"source"`
	Start  int    `json:"start"`
	Text   string `json:"text"`
}

type answer struct {
	Passages  []passage `json:"passages"`
	Selection struct {
		Tokens   int      `json:"tokens"`
		IDs      []string `json:"ids"`
		Evidence []struct {
			Text  string   `json:"text"`
			Spans [][2]int `json:"spans"`
		} `json:"evidence"`
	} `json:"selection"`
}

// doc is a source's text and its units, read once.
type doc struct {
	text  string
	units evidence.Units
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "-chunks" {
		if err := chunks(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "aboverows:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: aboverows DIR | aboverows -chunks FOLDER")
		os.Exit(2)
	}
	files, err := filepath.Glob(filepath.Join(os.Args[1], "*.json"))
	if err != nil || len(files) == 0 {
		fmt.Fprintln(os.Stderr, "aboverows: no JSON files in", os.Args[1])
		os.Exit(1)
	}
	docs := map[string]*doc{}
	questions, tokens, rows, headed, passagesWithRows := 0, 0, 0, 0, 0
	textRows, laidOut := 0, 0 // headed rows of space-aligned tables and statements; those sent as the document lays them out
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "aboverows:", err)
			os.Exit(1)
		}
		var a answer
		if err := json.Unmarshal(b, &a); err != nil || len(a.Selection.Evidence) != len(a.Selection.IDs) {
			continue // an error's output
		}
		questions++
		tokens += a.Selection.Tokens
		for k, id := range a.Selection.IDs {
			i := slices.IndexFunc(a.Passages, func(p passage) bool { return p.ID == id })
			if i < 0 {
				continue
			}
			p := a.Passages[i]
			d := docs[p.Source]
			if d == nil {
				t, err := os.ReadFile(p.Source)
				if err != nil {
					fmt.Fprintln(os.Stderr, "aboverows:", err)
					os.Exit(1)
				}
				d = &doc{text: string(t), units: evidence.SplitUnits(string(t), evidence.AllUnits)}
				docs[p.Source] = d
			}
			ev := a.Selection.Evidence[k]
			sent := single(ev.Text)
			any := false
			for _, sp := range ev.Spans {
				// the document's unit this span is (a row kept whole or in part)
				lo, hi := p.Start+sp[0], p.Start+sp[1]
				j := slices.IndexFunc(d.units.Sentences, func(u [2]int) bool { return u[0] < hi && lo < u[1] })
				if j < 0 || d.units.Kind(j) != evidence.Row {
					continue
				}
				var header, headerLines []string
				for _, n := range d.units.Needs[j] {
					if d.units.Kind(n) == evidence.Context {
						header = append(header, single(d.text[d.units.Sentences[n][0]:d.units.Sentences[n][1]]))
						headerLines = append(headerLines, lineAt(d.text, d.units.Sentences[n][0]))
					}
				}
				if len(header) == 0 {
					continue // a table without a header: nothing to send above it
				}
				row := single(p.Text[sp[0]:sp[1]])
				if slices.Contains(header, row) {
					continue // the header itself, a context unit
				}
				rows++
				any = true
				at := strings.Index(sent, row)
				ok := at >= 0
				for _, h := range header {
					if !ok || !strings.Contains(sent[:at], h) {
						ok = false
					}
				}
				if ok {
					headed++
					if rowLine := lineAt(d.text, d.units.Sentences[j][0]); !strings.HasPrefix(strings.TrimSpace(rowLine), "|") {
						// a text table's row: are it and its header sent as
						// whole lines of the document, indents and column
						// spaces kept, so each figure stands in its column?
						textRows++
						sentLines := strings.Split(ev.Text, "\n")
						for i := range sentLines {
							sentLines[i] = strings.TrimRightFunc(sentLines[i], unicode.IsSpace)
						}
						if slices.Contains(sentLines, rowLine) && !slices.ContainsFunc(headerLines, func(h string) bool { return !slices.Contains(sentLines, h) }) {
							laidOut++
						}
					}
				}
			}
			if any {
				passagesWithRows++
			}
		}
	}
	fmt.Printf("%s: %d questions, %.0f tokens sent on average; kept table rows whose table has a header %d (in %d passages), sent with every header line above them %d (%.3f)\n",
		os.Args[1], questions, float64(tokens)/float64(max(questions, 1)), rows, passagesWithRows, headed, float64(headed)/float64(max(rows, 1)))
	fmt.Printf("  of those headed, rows of space-aligned tables and statements %d, sent with the row and every header line laid out as in the document (whole lines, indents and column spaces kept) %d (%.3f)\n",
		textRows, laidOut, float64(laidOut)/float64(max(textRows, 1)))
}

// lineAt is the line of text holding byte i, its trailing white space cut.
func lineAt(text string, i int) string {
	start := strings.LastIndexByte(text[:i], '\n') + 1
	end := len(text)
	if n := strings.IndexByte(text[i:], '\n'); n >= 0 {
		end = i + n
	}
	return strings.TrimRightFunc(text[start:end], unicode.IsSpace)
}

// single is s with its white space runs made single spaces, as lines above
// are sent.
func single(s string) string { return strings.Join(strings.Fields(s), " ") }

// chunks counts, over every chunk of every document in folder, the rows
// some of whose table's header lines lie before the chunk's start, and
// those of them for which chunk.Above gives every such line.
func chunks(folder string) error {
	tok, err := token.New("")
	if err != nil {
		return err
	}
	c, err := chunk.NewTokens(tok, 600, 100)
	if err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(folder, "*"))
	if err != nil {
		return err
	}
	n, cut, given, chunksCut := 0, 0, 0, 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		text := string(b)
		chs, err := c.Chunk(context.Background(), filepath.Base(f), text)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		u := evidence.SplitUnits(text, evidence.AllUnits)
		starts := make([]int, len(chs))
		for i, ch := range chs {
			starts[i] = ch.Start
		}
		above := chunk.AboveAll(text, starts)
		for i, ch := range chs {
			n++
			gave := single(above[i])
			any := false
			for j, sp := range u.Sentences {
				if u.Kind(j) != evidence.Row || sp[0] < ch.Start || sp[1] > ch.End {
					continue // a row wholly inside the chunk
				}
				var header []string // its header's lines that start before the chunk's start
				for _, k := range u.Needs[j] {
					if u.Kind(k) != evidence.Context {
						continue
					}
					at := u.Sentences[k][0]
					for _, l := range strings.SplitAfter(text[at:u.Sentences[k][1]], "\n") {
						if at < ch.Start && single(l) != "" {
							header = append(header, single(l))
						}
						at += len(l)
					}
				}
				if len(header) == 0 {
					continue // its header is in the chunk, or it has none
				}
				cut++
				any = true
				all := true
				for _, h := range header {
					all = all && strings.Contains(gave, h)
				}
				if all {
					given++
				}
			}
			if any {
				chunksCut++
			}
		}
	}
	fmt.Printf("%s: %d documents, %d chunks; %d chunks hold table rows whose header is before the chunk's start: %d such rows, %d of them (%.3f) with every header line in chunk.Above\n",
		folder, len(files), n, chunksCut, cut, given, float64(given)/float64(max(cut, 1)))
	return nil
}
