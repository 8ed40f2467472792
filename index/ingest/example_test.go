package ingest_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/index/indextest"
	"github.com/ctxsel/ctxsel/index/ingest"
	"github.com/ctxsel/ctxsel/token"
)

// Index a folder with the Ingester — what `ctxsel index add` does — and
// search it. The test hash embedder stands in for a real model
// (embed/uselite in the CLI).
func Example() {
	ctx := context.Background()
	docs, _ := os.MkdirTemp("", "docs")
	defer os.RemoveAll(docs)
	os.WriteFile(filepath.Join(docs, "etna.txt"), []byte("Mount Etna is an active volcano in Sicily. It erupts often."), 0o644)
	os.WriteFile(filepath.Join(docs, "bread.md"), []byte("Bread rises because yeast makes carbon dioxide."), 0o644)

	dir, _ := os.MkdirTemp("", "idx")
	defer os.RemoveAll(dir)
	store, err := index.OpenDir(dir, index.DirOptions{Create: true})
	if err != nil {
		log.Fatal(err)
	}
	tk, _ := token.New("")
	chunker, _ := chunk.NewSentences(tk, 600)
	in := &ingest.Ingester{Store: store, Embedder: indextest.HashEmbedder{}, Chunker: chunker, Encoding: tk.Encoding()}
	rep, err := in.Add(ctx, []string{docs})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("added", rep.Added, "documents,", rep.Chunks, "chunks")

	hits, err := store.Search(ctx, indextest.HashVector("which volcano erupts"), 1)
	if err != nil {
		log.Fatal(err)
	}
	h := hits[0]
	fmt.Printf("%s bytes %d-%d: %q\n", filepath.Base(h.Doc)+"#"+fmt.Sprint(h.Index), h.Start, h.End, h.Text)

	// Adding the same folder again costs nothing: the files' hashes match.
	rep, _ = in.Add(ctx, []string{docs})
	fmt.Println("unchanged files:", rep.Unchanged)
	// Output:
	// added 2 documents, 2 chunks
	// etna.txt#0 bytes 0-59: "Mount Etna is an active volcano in Sicily. It erupts often."
	// unchanged files: 2
}
