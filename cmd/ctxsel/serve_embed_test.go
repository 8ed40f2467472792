package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/embed/embedders"
	"github.com/ctxsel/ctxsel/server"
)

// TestServeEmbedderLazyByDefault: serve's default embedder is use-lite,
// opened on the first request that embeds: starting, listing models and
// selecting by score leave it unopened.
func TestServeEmbedderLazyByDefault(t *testing.T) {
	t.Setenv(embedders.EnvCache, "off")
	b, err := serverBackends(context.Background(), "serve", "use-lite", "", askReader{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.done()
	emb := b.emb
	lazy, ok := emb.(*embed.Lazy)
	if !ok {
		t.Fatalf("use-lite is %T, want *embed.Lazy", emb)
	}
	srv, err := server.New(server.DefaultConfig(), server.Options{Embedder: emb, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }() // logs its start line, naming the embedder
	defer func() { cancel(); <-served }()
	base := "http://" + ln.Addr().String()
	get := func(method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := get("GET", "/v1/models", ""); code != 200 || !strings.Contains(body, `"id":"use-lite"`) {
		t.Fatalf("/v1/models: %d %s", code, body)
	}
	if code, _ := get("POST", "/v1/select", `{"candidates":[{"id":"a","score":0.9},{"id":"b","score":0.1}]}`); code != 200 {
		t.Fatalf("/v1/select by score: %d", code)
	}
	if lazy.Loaded() {
		t.Fatal("the model was loaded without a request that embeds")
	}
	if code, body := get("POST", "/v1/embeddings", `{"input":"hello"}`); code != 200 || !strings.Contains(body, `"model":"use-lite"`) {
		t.Fatalf("/v1/embeddings: %d %.200s", code, body)
	}
	if !lazy.Loaded() {
		t.Fatal("an embedding request did not load the model")
	}
}

// TestServeEmbedderFlags: no flag serves use-lite, --embedder none serves
// no embedder (texts refused, rerank by BM25), and --embedding-alias (or
// the config key, merged with it) maps a client's model name.
func TestServeEmbedderFlags(t *testing.T) {
	t.Setenv(embedders.EnvCache, "off")
	handler := func(args ...string) http.Handler {
		t.Helper()
		var stderr strings.Builder
		srv, done, err := newServe(context.Background(), args, &stderr)
		if err != nil {
			t.Fatalf("serve %q: %v %s", args, err, stderr.String())
		}
		t.Cleanup(done)
		return srv.Handler()
	}
	post := func(h http.Handler, path, body string) (int, string) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Host = "127.0.0.1" // the server listens on loopback: only loopback Host values are served
		req.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	ada := `{"input":"hello","model":"text-embedding-ada-002"}`
	def := handler()
	if code, body := post(def, "/v1/embeddings", ada); code != 400 || !strings.Contains(body, "--embedding-alias text-embedding-ada-002=use-lite") {
		t.Errorf("default, ada without an alias: %d %s", code, body)
	}
	if code, body := post(def, "/v1/rerank", `{"query":"q","documents":["q a","b"]}`); code != 200 || !strings.Contains(body, `"scoring":"dense"`) {
		t.Errorf("default rerank: %d %.200s", code, body)
	}
	aliased := handler("--embedding-alias", "text-embedding-ada-002=use-lite")
	if code, body := post(aliased, "/v1/embeddings", ada); code != 200 {
		t.Errorf("--embedding-alias: %d %s", code, body)
	}
	cfg := t.TempDir() + "/serve.json"
	if err := os.WriteFile(cfg, []byte(`{"embedding_aliases": {"text-embedding-3-small": "use-lite"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	both := handler("--config", cfg, "--embedding-alias", "text-embedding-ada-002=use-lite")
	for _, m := range []string{"text-embedding-ada-002", "text-embedding-3-small"} {
		if code, body := post(both, "/v1/embeddings", `{"input":"hello","model":"`+m+`"}`); code != 200 {
			t.Errorf("config and flag aliases, %s: %d %s", m, code, body)
		}
	}
	none := handler("--embedder", "none")
	if code, body := post(none, "/v1/embeddings", `{"input":"hello"}`); code != 501 || !strings.Contains(body, "--embedder none") {
		t.Errorf("--embedder none, embeddings: %d %s", code, body)
	}
	code, body := post(none, "/v1/rerank", `{"query":"q","documents":["q a","b"]}`)
	var rr struct{ Ctxsel struct{ Scoring string } }
	_ = json.Unmarshal([]byte(body), &rr)
	if code != 200 || rr.Ctxsel.Scoring != "bm25" {
		t.Errorf("--embedder none, rerank: %d %.200s", code, body)
	}
	t.Setenv("CTXSEL_USELITE_PRECISION", "fp16")
	var stderr strings.Builder
	if _, _, err := newServe(context.Background(), nil, &stderr); err == nil || !strings.Contains(err.Error(), "CTXSEL_USELITE_PRECISION") {
		t.Errorf("a bad use-lite setting was not refused at start: %v", err)
	}
	t.Setenv("CTXSEL_USELITE_PRECISION", "")
	for _, args := range [][]string{
		{"--embedding-alias", "nonsense"},
		{"--embedding-alias", "ada=other-model"},
		{"--embedder", "none", "--embedding-alias", "ada=use-lite"},
		{"--embed-concurrency", "0"},
	} {
		var stderr strings.Builder
		if _, _, err := newServe(context.Background(), args, &stderr); err == nil {
			t.Errorf("serve %q started", args)
		}
	}
}
