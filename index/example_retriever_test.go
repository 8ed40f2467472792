package index_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/index/indextest"
	"github.com/ctxsel/ctxsel/token"
)

// Retrieve by BM25, by cosine or by both fused: the same index answers all
// three (its BM25 postings are committed with its vectors).
func ExampleRetrieve() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "idx")
	defer os.RemoveAll(dir)
	store, err := index.OpenDir(dir, index.DirOptions{Create: true})
	if err != nil {
		log.Fatal(err)
	}
	tk, _ := token.New("")
	chunker, _ := chunk.NewSentences(tk, 12)
	text := "Mount Etna is an active volcano in Sicily. Bread rises because yeast makes gas. The Moon orbits the Earth."
	chunks, _ := chunker.Chunk(ctx, "notes", text)
	doc := index.Document{ID: "notes", Hash: index.Hash([]byte(text)), Text: text, Chunks: chunks}
	for _, c := range chunks {
		doc.Vectors = append(doc.Vectors, indextest.HashVector(c.Text))
	}
	cfg := index.Config{Model: indextest.HashEmbedder{}.ModelID(), Chunker: chunker.Spec(), Encoding: tk.Encoding()}
	if err := store.Add(ctx, cfg, []index.Document{doc}); err != nil {
		log.Fatal(err)
	}
	q := "which volcano is in Sicily"
	for _, r := range []index.Retriever{index.BM25, index.Dense, index.Hybrid} {
		hits, err := index.Retrieve(ctx, store, index.Query{Vector: indextest.HashVector(q), Text: q, Limit: 3, Retriever: r})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%-6s %d hits, best %s\n", r, len(hits), hits[0].ID())
	}
	// Output:
	// bm25   1 hits, best notes#0
	// dense  3 hits, best notes#0
	// hybrid 3 hits, best notes#0
}
