package ask_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/ask"
	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/index/indextest"
	"github.com/ctxsel/ctxsel/index/ingest"
	"github.com/ctxsel/ctxsel/server"
	"github.com/ctxsel/ctxsel/server/askserve"
	"github.com/ctxsel/ctxsel/token"
)

// recorder embeds as HashEmbedder under the model id given, and records
// every text it is handed.
type recorder struct {
	id    string
	mu    sync.Mutex
	texts []string
}

func (r *recorder) ModelID() string { return r.id }
func (r *recorder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	r.mu.Lock()
	r.texts = append(r.texts, texts...)
	r.mu.Unlock()
	return indextest.HashEmbedder{}.Embed(ctx, texts)
}
func (r *recorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.texts...)
}

// sentenceCorpus writes a few many-sentence files.
func sentenceCorpus(t *testing.T) string {
	t.Helper()
	src := t.TempDir()
	for i, topic := range []string{"volcano", "bread", "moon", "jazz"} {
		text := fmt.Sprintf("# About the %s\n\n", topic)
		for k := range 12 {
			text += fmt.Sprintf("Fact %d about the %s: item%d%d is one of its parts. ", k, topic, i, k)
		}
		if err := os.WriteFile(filepath.Join(src, topic+".md"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return src
}

// sentenceIndex ingests src into a new index, with sentence vectors by
// sentences (nil: none), in vector format f.
func sentenceIndex(t *testing.T, src string, sentences embed.Embedder, f string) (*index.Dir, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "idx")
	s, err := index.OpenDir(dir, index.DirOptions{Create: true, Vectors: f})
	if err != nil {
		t.Fatal(err)
	}
	tk, _ := token.New("")
	c, _ := chunk.NewTokens(tk, 80, 10)
	in := &ingest.Ingester{Store: s, Embedder: indextest.HashEmbedder{}, Chunker: c, Encoding: tk.Encoding(), Sentences: sentences}
	if _, err := in.Add(ctx, []string{src}); err != nil {
		t.Fatal(err)
	}
	return s, dir
}

const sentenceQuestion = "which parts does the volcano have item05"

// askEvidence asks with the default (evidence) selector, sentences
// embedded by e.
func askEvidence(t *testing.T, s index.Store, e embed.Embedder) (ask.Answer, error) {
	t.Helper()
	return ask.Ask(ctx, s, indextest.HashEmbedder{}, sentenceQuestion, ask.Options{
		Strategy: "evidence:budget=120", Deps: ctxsel.DepsOf(map[string]any{ctxsel.DepEmbedder: e})})
}

// TestAskReadsStoredSentences: with sentence vectors stored by the
// selector's model, ask embeds no passage text — only the question — and
// selects what it selects when it embeds every sentence.
func TestAskReadsStoredSentences(t *testing.T) {
	model := indextest.HashEmbedder{}.ModelID()
	src := sentenceCorpus(t)
	plain, _ := sentenceIndex(t, src, nil, "f32")
	r0 := &recorder{id: model}
	want, err := askEvidence(t, plain, r0)
	if err != nil {
		t.Fatal(err)
	}
	if len(r0.seen()) < 20 {
		t.Fatalf("without stored vectors only %d texts were embedded", len(r0.seen()))
	}
	stored, _ := sentenceIndex(t, src, indextest.HashEmbedder{}, "f32")
	r1 := &recorder{id: model}
	got, err := askEvidence(t, stored, r1)
	if err != nil {
		t.Fatal(err)
	}
	if seen := r1.seen(); len(seen) != 1 || seen[0] != sentenceQuestion {
		t.Fatalf("with stored vectors the selector embedded %d texts (%q…), want only the question", len(seen), seen[:min(3, len(seen))])
	}
	if !reflect.DeepEqual(got.Selection.IDs, want.Selection.IDs) || !reflect.DeepEqual(got.Selection.Evidence, want.Selection.Evidence) {
		t.Fatalf("stored vectors selected\n%v %+v\nembedding selected\n%v %+v", got.Selection.IDs, got.Selection.Evidence, want.Selection.IDs, want.Selection.Evidence)
	}

	// Another model's vectors are never used: the sentences are embedded.
	r2 := &recorder{id: "another-model"}
	if _, err := askEvidence(t, stored, r2); err != nil {
		t.Fatal(err)
	}
	if len(r2.seen()) <= 1 {
		t.Fatal("another model's selector used the stored vectors")
	}
}

// TestAskDamagedSentencesFail: a damaged sentence file fails the question
// with ErrCorrupt; nothing is embedded in its place.
func TestAskDamagedSentencesFail(t *testing.T) {
	_, dir := sentenceIndex(t, sentenceCorpus(t), indextest.HashEmbedder{}, "i8")
	files, _ := filepath.Glob(filepath.Join(dir, "seg-*.ctxsnt"))
	if len(files) != 1 {
		t.Fatalf("sentence files %v", files)
	}
	b, _ := os.ReadFile(files[0])
	for i := len(b) - 4 - 2000; i < len(b)-4; i++ { // the last rows' scales and vectors
		b[i] ^= 0x11
	}
	os.WriteFile(files[0], b, 0o644)
	// the trailer still matches the manifest: only the rows' checksums see it
	s, err := index.OpenDir(dir, index.DirOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{id: indextest.HashEmbedder{}.ModelID()}
	_, err = ask.Ask(ctx, s, indextest.HashEmbedder{}, sentenceQuestion, ask.Options{
		Strategy: "evidence:budget=120,passages=100", Deps: ctxsel.DepsOf(map[string]any{ctxsel.DepEmbedder: r})})
	if !errors.Is(err, index.ErrCorrupt) {
		t.Fatalf("err = %v, want ErrCorrupt", err)
	}
	if len(r.seen()) > 1 {
		t.Fatalf("%d texts embedded in place of the damaged vectors", len(r.seen()))
	}
}

// TestServedAskReadsStoredSentences: /v1/ask served by an Asker reads the
// sentence vectors its index stored, whether the server resolves the
// request's selector with the operator's dependencies (Options.SelectorDeps,
// as ctxsel serve does) or has none: the index's own sentences reach the
// selector through the Asker, and only the question is embedded.
func TestServedAskReadsStoredSentences(t *testing.T) {
	stored, _ := sentenceIndex(t, sentenceCorpus(t), indextest.HashEmbedder{}, "f32")
	model := indextest.HashEmbedder{}.ModelID()
	for _, tc := range []struct {
		name string
		deps func(*recorder) ctxsel.Deps // the server's
		ask  func(*recorder) ctxsel.Deps // the Asker's
	}{
		{"operator's embedder", func(r *recorder) ctxsel.Deps { return ctxsel.DepsOf(map[string]any{ctxsel.DepEmbedder: r}) }, func(*recorder) ctxsel.Deps { return nil }},
		{"Asker's embedder", func(*recorder) ctxsel.Deps { return nil }, func(r *recorder) ctxsel.Deps { return ctxsel.DepsOf(map[string]any{ctxsel.DepEmbedder: r}) }},
	} {
		r := &recorder{id: model}
		a := askserve.New(stored, indextest.HashEmbedder{}, nil, askserve.Options{Deps: tc.ask(r)})
		srv, err := server.New(server.DefaultConfig(), server.Options{Asker: a, SelectorDeps: tc.deps(r)})
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodPost, "/v1/ask", strings.NewReader(`{"query":"`+sentenceQuestion+`","strategy":"evidence:budget=120"}`))
		req.Host = "127.0.0.1" // the server listens on loopback: only loopback Host values are served
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, req)
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"evidence"`) {
			t.Fatalf("%s: %d %s", tc.name, rec.Code, rec.Body)
		}
		if seen := r.seen(); len(seen) != 1 || seen[0] != sentenceQuestion {
			t.Errorf("%s: the selector embedded %d texts (%q…), want only the question", tc.name, len(seen), seen[:min(3, len(seen))])
		}
	}
}
