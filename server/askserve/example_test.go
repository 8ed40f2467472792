package askserve_test

import (
	"context"
	"log"

	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/index/indextest"
	"github.com/ctxsel/ctxsel/server"
	"github.com/ctxsel/ctxsel/server/askserve"
)

// Serve /v1/ask (and the MCP tools ask and search) over an index from a Go
// program: the Asker is the index, the embedder the index was built with
// and a reader (nil: select, no answer); the server translates HTTP.
func ExampleNew() {
	store, err := index.OpenDir("/path/to/index", index.DirOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	embedder := indextest.HashEmbedder{} // the model the index was built with: uselite.New for ctxsel's default
	srv, err := server.New(server.DefaultConfig(), server.Options{
		Embedder: embedder,
		Asker:    askserve.New(store, embedder, nil, askserve.Options{}),
	})
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(srv.ListenAndServe(context.Background()))
}
