package ollama_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/embed/ollama"
	"github.com/ctxsel/ctxsel/embed/remote"
)

// A stand-in for Ollama's /api/embed: the embedding of a text is
// [its length, 0.5].
func fakeOllama() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
			return
		}
		embs := make([][]float32, len(req.Input))
		for i, in := range req.Input {
			embs[i] = []float32{float32(len(in)), 0.5}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"model": req.Model, "embeddings": embs})
	}))
}

func Example() {
	srv := fakeOllama()
	defer srv.Close()

	c, err := ollama.New(ollama.Options{
		Config: remote.Config{
			BaseURL:       srv.URL, // default: $OLLAMA_HOST, else http://127.0.0.1:11434
			Model:         "nomic-embed-text:v1.5",
			QueryPrefix:   "search_query: ",
			PassagePrefix: "search_document: ",
		},
		KeepAlive: "10m",
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	docs, err := c.Embed(ctx, []string{"a", "bb"})
	if err != nil {
		log.Fatal(err)
	}
	queries, err := embed.Queries(ctx, c, []string{"a"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(docs)
	fmt.Println(queries)
	// Output:
	// [[18 0.5] [19 0.5]]
	// [[15 0.5]]
}
