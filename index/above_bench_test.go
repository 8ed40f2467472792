package index_test

import (
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
// them: LaRA's 19 papers (Markdown, 1,058 chunks at 600 / 100 tokens), the
// 1,000 best chunks. Report the ratio of the two.
func BenchmarkAbove(b *testing.B) {
	dir := "../../shared/data/lara/datasets/32k/paper"
	files, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	if len(files) == 0 {
		b.Skipf("no LaRA papers under %s", dir)
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
	q := indextest.HashVector("objective evaluation BLEU score of the deep model")
	hits, err := s.Search(ctx, q, 1000)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("search", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Search(ctx, q, 1000); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("above", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Above(ctx, hits); err != nil {
				b.Fatal(err)
			}
		}
	})
}
