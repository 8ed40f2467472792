package index_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/index/indextest"
	"github.com/ctxsel/ctxsel/token"
)

// BenchmarkAbove measures what ask adds to a query over the embedded
// index to say what lies above its candidates (Dir.Above, one pass over
// each document up to its last chunk found), beside the search that found
// them: LaRA's 19 papers (Markdown, 1,058 chunks at 600 / 100 tokens) and
// its 30 filings (text exports with space-aligned statements, 1,655
// chunks), the 1,000 best chunks and the 20 best. Report the ratio of the
// two.
func BenchmarkAbove(b *testing.B) {
	for _, genre := range []struct{ name, glob, query string }{
		{"paper", "paper/*.md", "objective evaluation BLEU score of the deep model"},
		{"financial", "financial/*.txt", "total stockholders equity as of March 31, 2024"},
	} {
		b.Run(genre.name, func(b *testing.B) { benchmarkAbove(b, genre.glob, genre.query) })
	}
}

func benchmarkAbove(b *testing.B, glob, query string) {
	dir := "../../shared/data/lara/datasets/32k"
	files, _ := filepath.Glob(filepath.Join(dir, glob))
	if len(files) == 0 {
		b.Skipf("no LaRA documents %s under %s", glob, dir)
	}
	tk, err := token.New("")
	if err != nil {
		b.Fatal(err)
	}
	c, err := chunk.NewTokens(tk, 600, 100)
	if err != nil {
		b.Fatal(err)
	}
	s, err := index.OpenDir(filepath.Join(b.TempDir(), "idx"), index.DirOptions{Create: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var docs []index.Document
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, indextest.Doc(b, c, filepath.Base(f), string(text)))
	}
	if err := s.Add(ctx, index.Config{Model: indextest.HashEmbedder{}.ModelID(), Chunker: c.Spec(), Encoding: "cl100k_base"}, docs); err != nil {
		b.Fatal(err)
	}
	q := indextest.HashVector(query)
	// the 1,000 best chunks (most of each document's), and the 20 best, as
	// ask asks for them
	for _, k := range []int{1000, 20} {
		hits, err := s.Search(ctx, q, k)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("search-%d", k), func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Search(ctx, q, k); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("above-%d", k), func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Above(ctx, hits); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
