package server_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/ctxsel/ctxsel/server"
)

// A selection request against the service in process: four scored
// candidates, Adaptive-k without a buffer, and the explanation of the cut.
func Example() {
	srv, err := server.New(server.DefaultConfig(), server.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	body := `{
		"strategy": "adaptivek",
		"params": {"buffer": 0},
		"candidates": [
			{"id": "d1", "score": 0.82, "tokens": 120},
			{"id": "d2", "score": 0.79, "tokens": 9},
			{"id": "d3", "score": 0.31, "tokens": 95},
			{"id": "d4", "score": 0.30, "tokens": 101}
		]
	}`
	res, err := http.Post(ts.URL+"/v1/select", "application/json", strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	defer res.Body.Close()
	var out struct {
		IDs         []string `json:"ids"`
		K           int      `json:"k"`
		Tokens      int      `json:"tokens"`
		TotalTokens int      `json:"total_tokens"`
		Explanation struct {
			Cut      int `json:"cut"`
			Decision struct {
				Kind  string  `json:"kind"`
				Rank  int     `json:"rank"`
				Above float64 `json:"above"`
				Below float64 `json:"below"`
			} `json:"decision"`
			Curve struct {
				Scores []float64 `json:"scores"`
			} `json:"curve"`
		} `json:"explanation"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		panic(err)
	}
	e := out.Explanation
	fmt.Println(res.StatusCode, out.IDs, "k =", out.K, "tokens", out.Tokens, "of", out.TotalTokens)
	fmt.Printf("cut before rank %d: %s between ranks %d and %d (%.2f → %.2f)\n", e.Cut, e.Decision.Kind, e.Decision.Rank, e.Decision.Rank+1, e.Decision.Above, e.Decision.Below)
	fmt.Println("curve:", e.Curve.Scores)

	// Bad input is a 4xx naming the field.
	res, err = http.Post(ts.URL+"/v1/select", "application/json",
		strings.NewReader(`{"strategy": "topk", "params": {"k": 0}, "candidates": [{"id": "a", "score": 1}]}`))
	if err != nil {
		panic(err)
	}
	defer res.Body.Close()
	var bad struct {
		Error struct{ Message, Field string } `json:"error"`
	}
	if err := json.NewDecoder(res.Body).Decode(&bad); err != nil {
		panic(err)
	}
	fmt.Println(res.StatusCode, bad.Error.Field+":", bad.Error.Message)

	// Output:
	// 200 [d1 d2] k = 2 tokens 129 of 325
	// cut before rank 2: gap between ranks 1 and 2 (0.79 → 0.31)
	// curve: [0.82 0.79 0.31 0.3]
	// 400 params.k: k=0 out of range [1, 2.147483647e+09]
}
