package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/embed/openai"
	"github.com/ctxsel/ctxsel/embed/remote"
)

// A stand-in for an OpenAI-compatible server: the embedding of a text is
// [its length, 1].
func fakeOpenAI() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i := len(req.Input) - 1; i >= 0; i-- { // any order: clients sort by index
			data = append(data, item{i, []float32{float32(len(req.Input[i])), 1}})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"object": "list", "data": data, "model": req.Model,
			"usage": map[string]int{"prompt_tokens": len(req.Input), "total_tokens": len(req.Input)},
		})
	}))
}

func Example() {
	srv := fakeOpenAI()
	defer srv.Close()

	c, err := openai.New(openai.Options{
		Config: remote.Config{
			BaseURL:       srv.URL + "/v1", // "/v1" is optional
			Model:         "e5-small",
			APIKey:        "sk-example",
			QueryPrefix:   "query: ",
			PassagePrefix: "passage: ",
			BatchSize:     2,
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	docs, err := c.Embed(ctx, []string{"a", "bb", "ccc"}) // 2 requests
	if err != nil {
		log.Fatal(err)
	}
	queries, err := embed.Queries(ctx, c, []string{"dd"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(docs)
	fmt.Println(queries)
	fmt.Printf("%+v\n", c.Usage())
	// Output:
	// [[10 1] [11 1] [12 1]]
	// [[9 1]]
	// {Requests:3 PromptTokens:4 TotalTokens:4}
}
