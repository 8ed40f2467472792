package askserve_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/ask"
	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/index/indextest"
	"github.com/ctxsel/ctxsel/server"
	"github.com/ctxsel/ctxsel/server/askserve"
	"github.com/ctxsel/ctxsel/token"
)

// TestAskerServesAsk: a library user serves /v1/ask with askserve.New and
// server.New alone. The request's strategy arrives resolved; a request
// naming none gets ask's default, which the Asker builds (the server has
// no SelectorDeps); the MCP search tool and /readyz reach the index.
func TestAskerServesAsk(t *testing.T) {
	a := askserve.New(build(t), indextest.HashEmbedder{}, nil, askserve.Options{})
	srv, err := server.New(server.DefaultConfig(), server.Options{Asker: a})
	if err != nil {
		t.Fatal(err)
	}
	post := func(body string) (int, map[string]any) {
		t.Helper()
		req := httptest.NewRequest(http.MethodPost, "/v1/ask", strings.NewReader(body))
		req.Host = "127.0.0.1" // the server listens on loopback: only loopback Host values are served
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, req)
		var out map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("%s: %v: %s", body, err, rec.Body)
		}
		return rec.Code, out
	}
	code, out := post(`{"query":"Etna volcano","strategy":"topk:k=2","order":"document"}`)
	expl, _ := out["explanation"].(map[string]any)
	if code != 200 || out["k"] != 2.0 || expl["strategy"] != "topk" || len(out["passages"].([]any)) < 2 {
		t.Fatalf("%d %v", code, out)
	}
	// The default: what ask.Ask selects with when nothing is named.
	want, err := ask.Ask(ctx, build(t), indextest.HashEmbedder{}, "Etna volcano", ask.Options{})
	if err != nil {
		t.Fatal(err)
	}
	code, out = post(`{"query":"Etna volcano"}`)
	expl, _ = out["explanation"].(map[string]any)
	if code != 200 || expl["strategy"] != want.Selection.Explanation.Strategy || out["k"] != float64(want.Selection.K) {
		t.Fatalf("default: %d %v, want %+v", code, out, want.Selection.Explanation)
	}
	if !strings.HasPrefix(ctxsel.DefaultStrategy, want.Selection.Explanation.Strategy) {
		t.Fatalf("ask's default ran %q, not %s", want.Selection.Explanation.Strategy, ctxsel.DefaultStrategy)
	}
	// A route needs the reader, which this Asker has not: bad input.
	if code, out = post(`{"query":"Etna volcano","strategy":"selfroute:k=1"}`); code != 400 || !strings.Contains(out["error"].(map[string]any)["message"].(string), "needs an LLM") {
		t.Fatalf("route without a reader: %d %v", code, out)
	}
	ps, err := a.Search(ctx, "Etna volcano", 3)
	if err != nil || len(ps) == 0 || len(ps) > 3 || !strings.Contains(ps[0].Text, "Etna") {
		t.Fatalf("search: %+v %v", ps, err)
	}
	if err := a.Ready(ctx); err != nil {
		t.Fatalf("ready: %v", err)
	}
}

// TestAskerHidesTheIndexLocation: an error a client sees names "the
// index", not where it lives.
func TestAskerHidesTheIndexLocation(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "secret-place")
	s, err := index.OpenDir(dir, index.DirOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = askserve.New(s, indextest.HashEmbedder{}, nil, askserve.Options{}).Ask(ctx, server.AskRequest{Query: "q"})
	if err == nil || strings.Contains(err.Error(), "secret-place") || !strings.Contains(err.Error(), "the index") {
		t.Fatalf("%v", err)
	}
	_, err = askserve.New(s, indextest.HashEmbedder{}, nil, askserve.Options{Location: "weaviate://secret-host"}).Ask(ctx, server.AskRequest{Query: "q"})
	if err == nil || !strings.Contains(err.Error(), "secret-place") {
		t.Fatalf("a given location is the one hidden: %v", err)
	}
}

var ctx = context.Background()

// build indexes a small corpus in which two passages are about Etna and
// the rest are not.
func build(t *testing.T) index.Store {
	t.Helper()
	s, err := index.OpenDir(filepath.Join(t.TempDir(), "idx"), index.DirOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	tk, _ := token.New("")
	c, _ := chunk.NewSentences(tk, 30)
	texts := map[string]string{
		"volcano.txt": "Mount Etna is an active volcano on Sicily. Etna volcano eruptions are frequent.",
		"etna.md":     "The Etna volcano summit has four craters.",
		"bread.txt":   "Bread rises because yeast produces gas. Flour water salt yeast.",
		"moon.txt":    "The Moon has no atmosphere. Its craters come from impacts.",
	}
	var docs []index.Document
	for id, text := range texts {
		cs, err := c.Chunk(ctx, id, text)
		if err != nil {
			t.Fatal(err)
		}
		d := index.Document{ID: id, Hash: index.Hash([]byte(text)), Text: text, Chunks: cs}
		for _, ch := range cs {
			d.Vectors = append(d.Vectors, indextest.HashVector(ch.Text))
		}
		docs = append(docs, d)
	}
	cfg := index.Config{Model: indextest.HashEmbedder{}.ModelID(), Chunker: c.Spec(), Encoding: "cl100k_base"}
	if err := s.Add(ctx, cfg, docs); err != nil {
		t.Fatal(err)
	}
	return s
}
