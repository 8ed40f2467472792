package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/index/indextest"
	"github.com/ctxsel/ctxsel/llm"
)

// useHashEmbedder makes the index and ask commands embed with the test
// hash embedder, and keeps the environment from configuring an LLM.
func useHashEmbedder(t *testing.T) {
	t.Helper()
	old, oldLLM := openEmbedder, llmFromEnv
	openEmbedder = func(name, _ string) (embed.Embedder, func() error, error) {
		return indextest.HashEmbedder{}, func() error { return nil }, nil
	}
	llmFromEnv = func() (llm.Client, error) { return nil, nil }
	t.Cleanup(func() { openEmbedder, llmFromEnv = old, oldLLM })
	t.Setenv(envIndex, "")
}

func TestIndexAndAsk(t *testing.T) {
	useHashEmbedder(t)
	root := t.TempDir()
	docs := filepath.Join(root, "docs")
	os.MkdirAll(filepath.Join(docs, "sub"), 0o755)
	os.WriteFile(filepath.Join(docs, "volcano.txt"), []byte("Mount Etna is an active volcano on Sicily. Its eruptions are frequent and its lava flows reach villages."), 0o644)
	os.WriteFile(filepath.Join(docs, "sub", "bread.md"), []byte("# Bread\n\nBread rises because yeast makes gas. Knead the dough for ten minutes."), 0o644)
	os.WriteFile(filepath.Join(docs, "page.html"), []byte("<html><body><p>The Moon has no air.</p><script>x()</script></body></html>"), 0o644)
	os.WriteFile(filepath.Join(docs, "recs.jsonl"), []byte(`{"id":"r1","text":"Jazz uses improvisation over chords."}`+"\n"), 0o644)
	idx := filepath.Join(root, "idx")

	code, out, errs := runCLI(t, "", "index", "add", docs, "--index", idx, "--chunker", "sentences:max_tokens=40")
	if code != 0 {
		t.Fatalf("add: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "4 documents added") || !strings.Contains(out, "sentences:max_tokens=40") {
		t.Fatalf("add output:\n%s", out)
	}
	// again: nothing to do
	code, out, _ = runCLI(t, "", "index", "add", "--index", idx, docs)
	if code != 0 || !strings.Contains(out, "4 unchanged files skipped") {
		t.Fatalf("re-add: %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "", "index", "ls", "--index", idx)
	if code != 0 || !strings.Contains(out, "docs/sub/bread.md") || !strings.Contains(out, "r1") || !strings.Contains(out, "4 documents") {
		t.Fatalf("ls: %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "", "index", "stats", "--index", idx, "--json")
	var st struct {
		Docs   int `json:"docs"`
		Config struct {
			Model string `json:"model"`
		} `json:"config"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.Docs != 4 || st.Config.Model != "test-hash-512" {
		t.Fatalf("stats: %d %s", code, out)
	}

	curve := filepath.Join(root, "curve.svg")
	code, out, errs = runCLI(t, "", "ask", "--index", idx, "--strategy", "topk:k=2", "--show-curve", curve, "How", "often", "does", "Etna", "erupt?")
	if code != 0 {
		t.Fatalf("ask: exit %d: %s", code, errs)
	}
	for _, want := range []string{"Question: How often does Etna erupt?", "Selected 2 of", "hybrid retrieval", "volcano.txt#0", "Why:", "--- prompt (", "Your task is to answer", "no LLM configured"} {
		if !strings.Contains(out, want) {
			t.Errorf("ask output lacks %q:\n%s", want, out)
		}
	}
	if b, err := os.ReadFile(curve); err != nil || !strings.HasPrefix(string(b), "<svg") {
		t.Fatalf("curve: %v", err)
	}
	code, out, _ = runCLI(t, "", "ask", "--index", idx, "--json", "--order", "edges", "--param", "max_tokens=30", "Etna volcano")
	var a struct {
		Passages []struct {
			ID    string  `json:"id"`
			Score float64 `json:"score"`
		} `json:"passages"`
		Selection struct {
			Explanation struct {
				Reason string `json:"reason"`
			} `json:"explanation"`
		} `json:"selection"`
		PromptTokens int `json:"prompt_tokens"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &a) != nil || len(a.Passages) == 0 || a.Selection.Explanation.Reason == "" || a.PromptTokens == 0 {
		t.Fatalf("ask --json: %d %s", code, out)
	}

	// each retriever, named in the JSON answer; bm25 ranks the passage
	// holding the question's rare words first
	for _, r := range []string{"dense", "bm25", "hybrid"} {
		code, out, errs = runCLI(t, "", "ask", "--index", idx, "--json", "--retriever", r, "--alpha", "0.7", "--fusion", "minmax", "--llm=false", "Etna erupt")
		var ra struct {
			Retriever string    `json:"retriever"`
			Scores    []float64 `json:"scores"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &ra) != nil || ra.Retriever != r || len(ra.Scores) == 0 {
			t.Fatalf("ask --retriever %s: %d %s %s", r, code, errs, out)
		}
	}

	// with an LLM
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"model":"tiny","choices":[{"message":{"role":"assistant","content":"Often."},"finish_reason":"stop"}],"usage":{"prompt_tokens":99,"completion_tokens":2,"total_tokens":101}}`)
	}))
	defer srv.Close()
	llmFromEnv = func() (llm.Client, error) { return llm.NewOpenAI(llm.Options{BaseURL: srv.URL, Model: "tiny"}) }
	code, out, errs = runCLI(t, "", "ask", "--index", idx, "--prompt=false", "How often does Etna erupt?")
	if code != 0 || !strings.Contains(out, "--- answer (tiny; 99 prompt + 2 completion tokens") || !strings.Contains(out, "Often.") || strings.Contains(out, "--- prompt") {
		t.Fatalf("ask with LLM: %d %s\n%s", code, errs, out)
	}

	// remove by folder path, then by id
	code, out, _ = runCLI(t, "", "index", "rm", "--index", idx, filepath.Join(docs, "sub"))
	if code != 0 || !strings.Contains(out, "removed 1 documents") {
		t.Fatalf("rm folder: %d %s", code, out)
	}
	code, out, _ = runCLI(t, "", "index", "rm", "--index", idx, "r1")
	if code != 0 || !strings.Contains(out, "removed 1 documents") {
		t.Fatalf("rm id: %d %s", code, out)
	}
	code, out, _ = runCLI(t, "", "index", "ls", "--index", idx, "--json")
	if code != 0 || strings.Count(out, `"id"`) != 2 {
		t.Fatalf("ls after rm: %s", out)
	}
}

func TestIndexAskErrors(t *testing.T) {
	useHashEmbedder(t)
	root := t.TempDir()
	missing := filepath.Join(root, "none")
	os.WriteFile(filepath.Join(root, "a.pdf"), []byte("%PDF"), 0o644)
	os.WriteFile(filepath.Join(root, "ok.txt"), []byte("Fine text."), 0o644)
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"index"}, 2, "missing subcommand"},
		{[]string{"index", "frob"}, 2, "unknown subcommand"},
		{[]string{"index", "add", "--index", missing}, 2, "no files or folders"},
		{[]string{"index", "add", "--index", missing, filepath.Join(root, "a.pdf")}, 2, "unsupported file type"},
		{[]string{"index", "add", "--index", missing, filepath.Join(root, "nope.txt")}, 2, "no such file"},
		{[]string{"index", "add", "--index", missing, "--chunker", "tokens:size=2", filepath.Join(root, "ok.txt")}, 2, "size=2"},
		{[]string{"index", "add", "--index", missing, "--vectors", "f64", filepath.Join(root, "ok.txt")}, 2, "vector format"},
		{[]string{"index", "ls", "--index", missing}, 2, "no index"},
		{[]string{"index", "stats", "--index", missing}, 2, "no index"},
		{[]string{"index", "rm", "--index", missing, "x"}, 2, "no index"},
		{[]string{"index", "ls", "--index", "ftp://x/Y"}, 2, "unknown scheme"},
		{[]string{"index", "ls", "--index", "weaviate://localhost:1/lowercase"}, 2, "capital letter"},
		{[]string{"ask", "--index", missing}, 2, "no question"},
		{[]string{"ask", "--index", missing, "why?"}, 2, "no index"},
		{[]string{"ask", "--strategy", "nosuch", "why?"}, 2, "unknown strategy"},
		{[]string{"ask", "--order", "sideways", "why?"}, 2, "order"},
		{[]string{"ask", "--candidates", "0", "why?"}, 2, "candidates"},
		{[]string{"ask", "--retriever", "sparse", "why?"}, 2, "retriever"},
		{[]string{"ask", "--alpha", "0", "why?"}, 2, "alpha"},
		{[]string{"ask", "--fusion", "max", "why?"}, 2, "fusion"},
		{[]string{"help", "ask"}, 0, ""},
		{[]string{"index", "add", "-h"}, 0, ""},
	}
	for _, tc := range cases {
		code, _, errs := runCLI(t, "", tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.msg) {
			t.Errorf("%v: exit %d (want %d), stderr %q (want it to contain %q)", tc.args, code, tc.code, errs, tc.msg)
		}
	}
	// an index built with another model is refused by ask
	idx := filepath.Join(root, "idx")
	if code, _, errs := runCLI(t, "", "index", "add", "--index", idx, filepath.Join(root, "ok.txt")); code != 0 {
		t.Fatal(errs)
	}
	openEmbedder = func(string, string) (embed.Embedder, func() error, error) {
		return otherEmbedder{}, func() error { return nil }, nil
	}
	if code, _, errs := runCLI(t, "", "ask", "--index", idx, "why?"); code != 2 || !strings.Contains(errs, "does not match the index") {
		t.Errorf("model mismatch: exit %d: %s", code, errs)
	}
}

type otherEmbedder struct{ indextest.HashEmbedder }

func (otherEmbedder) ModelID() string { return "other" }

// `index add --sentences` makes an index that keeps sentence vectors: a
// per-index choice that later adds keep, that stats reports, that verify
// checks, and that ask reads.
func TestIndexSentences(t *testing.T) {
	useHashEmbedder(t)
	root := t.TempDir()
	docs := filepath.Join(root, "docs")
	os.MkdirAll(docs, 0o755)
	os.WriteFile(filepath.Join(docs, "volcano.txt"), []byte("Mount Etna is an active volcano on Sicily. Its eruptions are frequent. Its lava flows reach villages."), 0o644)
	idx := filepath.Join(root, "idx")
	if code, _, errs := runCLI(t, "", "index", "add", "--sentences", "--index", idx, docs); code != 0 {
		t.Fatalf("add: exit %d: %s", code, errs)
	}
	stats := func() (model string, bytes int64) {
		_, out, _ := runCLI(t, "", "index", "stats", "--index", idx, "--json")
		var st struct {
			Config struct {
				SentenceModel string `json:"sentence_model"`
			} `json:"config"`
			SentenceBytes int64 `json:"sentence_bytes"`
		}
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatalf("stats: %v\n%s", err, out)
		}
		return st.Config.SentenceModel, st.SentenceBytes
	}
	model, before := stats()
	if model != (indextest.HashEmbedder{}).ModelID() || before == 0 {
		t.Fatalf("stats: sentence model %q, %d bytes", model, before)
	}
	// a later add without the flag keeps the index's choice
	os.WriteFile(filepath.Join(docs, "bread.txt"), []byte("Bread rises because yeast makes gas. Knead the dough for ten minutes."), 0o644)
	if code, _, errs := runCLI(t, "", "index", "add", "--index", idx, docs); code != 0 {
		t.Fatalf("second add: exit %d: %s", code, errs)
	}
	if _, after := stats(); after <= before {
		t.Fatalf("sentence bytes %d after adding a file, %d before", after, before)
	}
	if code, out, errs := runCLI(t, "", "index", "stats", "--index", idx); code != 0 || !strings.Contains(out, "sentences") {
		t.Fatalf("stats: %d\n%s%s", code, out, errs)
	}
	if code, _, errs := runCLI(t, "", "index", "verify", "--index", idx); code != 0 {
		t.Fatalf("verify: %d %s", code, errs)
	}
	if code, out, errs := runCLI(t, "", "ask", "--index", idx, "Which volcano erupts?"); code != 0 || !strings.Contains(out, "Etna") {
		t.Fatalf("ask: %d\n%s%s", code, out, errs)
	}
	// an index made without them does not take them
	plain := filepath.Join(root, "plain")
	runCLI(t, "", "index", "add", "--index", plain, docs)
	if code, _, errs := runCLI(t, "", "index", "add", "--sentences", "--index", plain, docs); code != 2 || !strings.Contains(errs, "sentence") {
		t.Fatalf("--sentences on a plain index: exit %d: %s", code, errs)
	}
}

// countingEmbedder embeds as HashEmbedder under the use-lite-like id given
// and records what it embeds.
type countingEmbedder struct {
	id    string
	mu    sync.Mutex
	texts []string
}

func (c *countingEmbedder) ModelID() string { return c.id }
func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.mu.Lock()
	c.texts = append(c.texts, texts...)
	c.mu.Unlock()
	return indextest.HashEmbedder{}.Embed(ctx, texts)
}

// TestAskOpensOneEmbedder: ask embeds the question and scores the
// sentences with one embedder, the index's use-lite (what index add
// --sentences stored their vectors by), so one model and one embedding
// cache are opened; with the stored vectors no passage text is embedded.
func TestAskOpensOneEmbedder(t *testing.T) {
	useHashEmbedder(t)
	var mu sync.Mutex
	var opened []*countingEmbedder
	openEmbedder = func(name, _ string) (embed.Embedder, func() error, error) {
		e := &countingEmbedder{id: "use-lite@test"}
		mu.Lock()
		opened = append(opened, e)
		mu.Unlock()
		return e, func() error { return nil }, nil
	}
	root := t.TempDir()
	docs := filepath.Join(root, "docs")
	os.MkdirAll(docs, 0o755)
	os.WriteFile(filepath.Join(docs, "volcano.txt"), []byte("Mount Etna is an active volcano on Sicily. Its eruptions are frequent. Its lava flows reach villages."), 0o644)
	idx := filepath.Join(root, "idx")
	if code, _, errs := runCLI(t, "", "index", "add", "--sentences", "--index", idx, docs); code != 0 {
		t.Fatalf("add: exit %d: %s", code, errs)
	}
	opened = nil
	const q = "Which volcano erupts?"
	if code, out, errs := runCLI(t, "", "ask", "--index", idx, "--llm=false", q); code != 0 || !strings.Contains(out, "Etna") {
		t.Fatalf("ask: %d\n%s%s", code, out, errs)
	}
	if len(opened) != 1 {
		t.Fatalf("ask opened %d embedders, want the index's alone", len(opened))
	}
	for _, text := range opened[0].texts {
		if text != q {
			t.Errorf("ask embedded %q: want only the question, the sentences' vectors being stored", text)
		}
	}
}

// TestServerSourcesPreferTheIndexEmbedder: serve's evidence selector
// scores sentences with the index's use-lite embedder (which embeds the
// questions and stored the sentence vectors), leaving the served one
// unopened; without an index, with the served one.
func TestServerSourcesPreferTheIndexEmbedder(t *testing.T) {
	idx := &countingEmbedder{id: "use-lite@test"}
	served := embed.NewLazy("use-lite", func() (embed.Embedder, func() error, error) {
		return &countingEmbedder{id: "use-lite@served"}, nil, nil
	})
	for _, tc := range []struct {
		index embed.Embedder
		want  string
	}{{idx, "use-lite@test"}, {nil, "use-lite@served"}, {otherEmbedder{}, "use-lite@served"}} {
		src := serverSources(tc.index, served, nil)
		v, err := src.deps(ctxsel.DepEmbedder)
		if err != nil {
			t.Fatal(err)
		}
		if got := v.(embed.Embedder).ModelID(); got != tc.want {
			t.Errorf("index %v: sentences by %s, want %s", tc.index, got, tc.want)
		}
		if tc.index == idx && served.Loaded() {
			t.Error("the served embedder was opened beside the index's")
		}
	}
}
