package ask_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/ask"
	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/index/indextest"
	"github.com/ctxsel/ctxsel/index/ingest"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/llm/llmtest"
	"github.com/ctxsel/ctxsel/server"
	"github.com/ctxsel/ctxsel/server/askserve"
	"github.com/ctxsel/ctxsel/token"
)

// A folder indexed by its absolute path: the prompt the LLM server
// receives, and the ids ask shows, name each passage by its path below
// that folder, never by where the folder lives; the hit keeps the full
// path for local diagnostics.
func TestAskNamesNoAbsolutePath(t *testing.T) {
	root := filepath.Join(t.TempDir(), "notes")
	for name, text := range map[string]string{
		"chat/conv-26.txt": "[2023-05-08 14:05] Maya: By the way, I adopted a cat last Friday. Her name is Pickle.\n[2023-05-08 14:06] Tom: No way! Send pictures.\n",
		"garden.md":        "# Garden\n\n| Plant | Price |\n|---|---|\n| Lavender | 6.50 |\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := index.OpenDir(filepath.Join(t.TempDir(), "idx"), index.DirOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	tk, _ := token.New("")
	c, _ := chunk.NewTokens(tk, 80, 10)
	in := &ingest.Ingester{Store: s, Embedder: indextest.HashEmbedder{}, Chunker: c, Encoding: tk.Encoding()}
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.Add(ctx, []string{abs}); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(nil)
	defer srv.Close()
	client, _, err := llm.OpenSpec(srv.OpenAISpec("m"), llm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, strategy := range []string{"", "topk:k=5"} {
		a, err := ask.Ask(ctx, s, indextest.HashEmbedder{}, "What is the name of Maya's cat?", ask.Options{Strategy: strategy, LLM: client, Window: 4096})
		if err != nil {
			t.Fatal(err)
		}
		calls := srv.Calls()
		if len(calls) == 0 {
			t.Fatal("no call reached the server")
		}
		prompt := calls[len(calls)-1].Prompt()
		dir := filepath.ToSlash(filepath.Dir(abs))
		if strings.Contains(prompt, dir) || strings.Contains(prompt, filepath.Dir(abs)) {
			t.Fatalf("%q: the prompt holds the absolute path %s:\n%s", strategy, dir, prompt)
		}
		if !strings.Contains(prompt, "chat/conv-26.txt#0") {
			t.Fatalf("%q: the prompt does not name the passage by its path below the folder:\n%s", strategy, prompt)
		}
		for _, p := range a.Passages {
			if strings.Contains(p.ID, dir) || !strings.HasPrefix(p.Doc, dir) {
				t.Fatalf("%q: passage id %q, doc %q", strategy, p.ID, p.Doc)
			}
		}
		for _, id := range a.Selection.IDs {
			if strings.Contains(id, dir) {
				t.Fatalf("%q: selected id %q", strategy, id)
			}
		}
	}
	// nor does what /v1/ask answers a remote client
	srvAsk, err := server.New(server.DefaultConfig(), server.Options{Asker: askserve.New(s, indextest.HashEmbedder{}, nil, askserve.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/v1/ask", strings.NewReader(`{"query":"What is the name of Maya's cat?"}`))
	req.Host = "127.0.0.1" // a loopback server answers loopback Host values only
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	srvAsk.Handler().ServeHTTP(rec, req)
	if rec.Code != 200 || strings.Contains(rec.Body.String(), filepath.ToSlash(filepath.Dir(abs))) || !strings.Contains(rec.Body.String(), "chat/conv-26.txt#0") {
		t.Fatalf("/v1/ask: %d %s", rec.Code, rec.Body)
	}
}

// Labels keep relative ids and cut the shared folder off absolute ones.
func TestLabels(t *testing.T) {
	hit := func(doc string, i int) index.Hit { return index.Hit{Chunk: chunk.Chunk{Doc: doc, Index: i}} }
	for _, c := range []struct {
		hits []index.Hit
		want []string
	}{
		{[]index.Hit{hit("docs/a.md", 0), hit("b.txt", 3)}, []string{"docs/a.md#0", "b.txt#3"}},
		{[]index.Hit{hit("/home/u/notes/a.md", 0), hit("/home/u/notes/sub/b.txt", 1)}, []string{"a.md#0", "sub/b.txt#1"}},
		{[]index.Hit{hit("/home/u/one.txt", 2)}, []string{"one.txt#2"}},
		{[]index.Hit{hit("/a.txt", 0), hit(`C:\Users\u\b.txt`, 1)}, []string{"a.txt#0", "b.txt#1"}},
	} {
		got := ask.Labels(c.hits)
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("Labels(%v) = %q, want %q", c.hits, got, c.want)
		}
	}
}
