package cache_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"

	"github.com/ctxsel/ctxsel/embed/cache"
	"github.com/ctxsel/ctxsel/embed/ollama"
	"github.com/ctxsel/ctxsel/embed/remote"
)

func Example() {
	// A stand-in for an Ollama server that counts the texts it embeds.
	var embedded atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Input []string }
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
			return
		}
		embedded.Add(int64(len(req.Input)))
		embs := make([][]float32, len(req.Input))
		for i, in := range req.Input {
			embs[i] = []float32{float32(len(in)), 1}
		}
		json.NewEncoder(w).Encode(map[string]any{"embeddings": embs})
	}))
	defer srv.Close()

	dir, err := os.MkdirTemp("", "ctxsel-cache-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	backend, err := ollama.New(ollama.Options{Config: remote.Config{BaseURL: srv.URL, Model: "nomic-embed-text:v1.5"}})
	if err != nil {
		log.Fatal(err)
	}
	store, err := cache.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	e := cache.Wrap(backend, store)

	ctx := context.Background()
	for _, texts := range [][]string{
		{"alpha", "beta", "alpha"}, // "alpha" is sent once
		{"alpha", "beta", "gamma"}, // only "gamma" is sent
	} {
		vecs, err := e.Embed(ctx, texts)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(vecs, "texts embedded so far:", embedded.Load())
	}
	st := store.Stats()
	fmt.Printf("hits %d, misses %d, vectors %d\n", st.Hits, st.Misses, st.Vectors)
	// Output:
	// [[5 1] [4 1] [5 1]] texts embedded so far: 2
	// [[5 1] [4 1] [5 1]] texts embedded so far: 3
	// hits 2, misses 4, vectors 3
}
