package ask_test

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/ask"
	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/index/indextest"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/llm/llmtest"
	"github.com/ctxsel/ctxsel/token"
)

// buildBook indexes one of LaRA's novels in 600-token chunks, as `ctxsel
// index add` chunks it: topk:k=20 of them is about 12,000 tokens.
func buildBook(t *testing.T) index.Store {
	t.Helper()
	raw, err := os.ReadFile("../../shared/data/lara/datasets/32k/book/A Christmas Carol.txt")
	if err != nil {
		t.Fatalf("test data: %v", err)
	}
	s, err := index.OpenDir(filepath.Join(t.TempDir(), "idx"), index.DirOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	tk, _ := token.New("")
	c, err := chunk.NewTokens(tk, 600, 100)
	if err != nil {
		t.Fatal(err)
	}
	id := "books/A Christmas Carol.txt"
	cs, err := c.Chunk(ctx, id, string(raw))
	if err != nil {
		t.Fatal(err)
	}
	d := index.Document{ID: id, Hash: index.Hash(raw), Text: string(raw), Chunks: cs}
	for _, ch := range cs {
		d.Vectors = append(d.Vectors, indextest.HashVector(ch.Text))
	}
	cfg := index.Config{Model: indextest.HashEmbedder{}.ModelID(), Chunker: c.Spec(), Encoding: "cl100k_base"}
	if err := s.Add(ctx, cfg, []index.Document{d}); err != nil {
		t.Fatal(err)
	}
	return s
}

// Against an Ollama server whose model has a 4,096-token window, ask
// learns the window, never sends a larger prompt, runs the model with that
// window (num_ctx), and says what the window dropped — for a passage
// strategy that would send 12,000 tokens and for the evidence default.
func TestAskFitsOllamasWindow(t *testing.T) {
	srv := llmtest.New(nil)
	defer srv.Close()
	srv.SetContextLength(4096)
	c, _, err := llm.OpenSpec(srv.OllamaSpec("llama3.2"), llm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	store := buildBook(t)
	tk, _ := token.New("")
	q := "What did Gordon say to his nephew about Christmas?"
	for _, strategy := range []string{"topk:k=20", "", "selfroute:k=5"} {
		a, err := ask.Ask(ctx, store, indextest.HashEmbedder{}, q, ask.Options{Strategy: strategy, LLM: c})
		if err != nil {
			t.Fatalf("%q: %v", strategy, err)
		}
		w := a.Window
		if w.Tokens != 4096 || w.Source != "server" || w.Reserve != llm.DefaultAnswerReserve {
			t.Fatalf("%q: window %+v", strategy, w)
		}
		calls := srv.Calls()
		for _, call := range calls {
			if n := tk.Count(call.Prompt()); n+w.Reserve > 4096 {
				t.Fatalf("%q: sent a prompt of %d tokens to a 4096-token model (%d kept for the answer)", strategy, n, w.Reserve)
			}
			if call.NumCtx != 4096 {
				t.Fatalf("%q: num_ctx %d, want 4096", strategy, call.NumCtx)
			}
		}
		if a.PromptTokens != tk.Count(a.Prompt) || a.PromptTokens+w.Reserve > 4096 {
			t.Fatalf("%q: prompt %d tokens", strategy, a.PromptTokens)
		}
		reason := a.Selection.Explanation.Reason
		switch strategy {
		case "topk:k=20":
			if w.Dropped == 0 || a.Selection.K+w.Dropped != 20 || !strings.Contains(reason, "4096 tokens (from the LLM's server)") ||
				!strings.Contains(reason, "were dropped") {
				t.Fatalf("topk:k=20: kept %d, dropped %d: %s", a.Selection.K, w.Dropped, reason)
			}
		case "":
			// The default prunes to sentences within 1,500 tokens, which fit.
			if len(a.Passages) == 0 || a.Passages[0].Evidence == nil || a.Selection.Tokens > 1500 || w.Dropped != 0 {
				t.Fatalf("default: %d passages, %d tokens, window %+v", len(a.Passages), a.Selection.Tokens, w)
			}
			for _, p := range a.Passages {
				if !strings.HasPrefix(p.Evidence.Text, "A Christmas Carol\n") || p.Evidence.Title != "A Christmas Carol" {
					t.Fatalf("the document's title is not the passage's header: %q", p.Evidence.Text)
				}
				if !strings.Contains(a.Prompt, p.Evidence.Text) || p.Evidence.Tokens >= p.Tokens {
					t.Fatalf("pruned passage %s: %d of %d tokens, in the prompt: %v", p.ID, p.Evidence.Tokens, p.Tokens, strings.Contains(a.Prompt, p.Evidence.Text))
				}
			}
		}
	}
	if srv.WindowRequests() != 1 {
		t.Fatalf("asked the window %d times; once per client is enough", srv.WindowRequests())
	}
	// A small window caps the default's budget, and says so.
	a, err := ask.Ask(ctx, store, indextest.HashEmbedder{}, q, ask.Options{LLM: c, Window: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if a.Window.Source != "given" || !a.Window.Capped || a.PromptTokens+a.Window.Reserve > 1000 ||
		!strings.Contains(a.Selection.Explanation.Reason, "the selector's budget") {
		t.Fatalf("window 1000: %+v, prompt %d: %s", a.Window, a.PromptTokens, a.Selection.Explanation.Reason)
	}
	if last := srv.Calls()[len(srv.Calls())-1]; last.NumCtx != 1000 {
		t.Fatalf("num_ctx %d for a given window of 1000", last.NumCtx)
	}
	// A window that leaves nothing for passages is refused before any call.
	n := srv.Requests()
	if _, err := ask.Ask(ctx, store, indextest.HashEmbedder{}, q, ask.Options{LLM: c, Window: 600}); err == nil || !strings.Contains(err.Error(), "600 tokens") {
		t.Fatalf("window 600: %v", err)
	}
	if srv.Requests() != n {
		t.Fatal("asked the model with a window too small for any passage")
	}
}

// An OpenAI-compatible server that answers "context length exceeded"
// gets a clear error: the window the prompt was fitted to, what the server
// says the model takes, and how to give the window.
func TestAskContextLengthExceeded(t *testing.T) {
	srv := llmtest.New(nil)
	defer srv.Close()
	c, _, err := llm.OpenSpec(srv.OpenAISpec("small"), llm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv.Script(llmtest.Fault{Status: http.StatusBadRequest, Code: "context_length_exceeded",
		Message: "This model's maximum context length is 2048 tokens. However, your messages resulted in 9123 tokens. Please reduce the length of the messages."})
	a, err := ask.Ask(ctx, buildBook(t), indextest.HashEmbedder{}, "Who is Gordon's clerk?", ask.Options{Strategy: "topk:k=20", LLM: c})
	if !errors.Is(err, llm.ErrContextLength) {
		t.Fatalf("error %v", err)
	}
	for _, want := range []string{"32000 tokens (ctxsel's default", "the server says the model takes 2048", "#window=N"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q lacks %q", err, want)
		}
	}
	if a.Prompt == "" || a.Window.Source != "default" {
		t.Fatalf("the answer still shows what was sent: window %+v, %d prompt tokens", a.Window, a.PromptTokens)
	}
}

// When Ollama's /api/show fails, ask falls back to ctxsel's default window
// for fitting the prompt but sends no num_ctx: the model runs with the
// context it was configured with, not one nobody asked for.
func TestAskSendsNoDefaultWindow(t *testing.T) {
	srv := llmtest.New(nil) // no context length: /api/show answers 404
	defer srv.Close()
	c, _, err := llm.OpenSpec(srv.OllamaSpec("llama3.2"), llm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := ask.Ask(ctx, buildBook(t), indextest.HashEmbedder{}, "Who is Scrooge?", ask.Options{Strategy: "topk:k=2", LLM: c})
	if err != nil {
		t.Fatal(err)
	}
	if a.Window.Source != "default" || srv.WindowRequests() != 1 {
		t.Fatalf("window %+v after %d /api/show calls", a.Window, srv.WindowRequests())
	}
	if last := srv.Calls()[len(srv.Calls())-1]; last.NumCtx != 0 {
		t.Fatalf("num_ctx %d sent for ctxsel's default window", last.NumCtx)
	}
}

// A selector that reads the texts packs within what the window leaves for
// passages less their label lines, so the window's fit drops nothing it
// chose: the explanation names one passage budget (issue 29).
func TestAskSelectorFitsWindowWithLabels(t *testing.T) {
	srv := llmtest.New(nil)
	defer srv.Close()
	c, _, err := llm.OpenSpec(srv.OllamaSpec("llama3.2"), llm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	store := buildBook(t)
	tk, _ := token.New("")
	q := "What did Scrooge's nephew say about Christmas?"
	for _, window := range []int{900, 1000, 1200, 1500} {
		a, err := ask.Ask(ctx, store, indextest.HashEmbedder{}, q, ask.Options{LLM: c, Window: window})
		if err != nil {
			t.Fatalf("window %d: %v", window, err)
		}
		w, reason := a.Window, a.Selection.Explanation.Reason
		if w.Dropped != 0 || strings.Contains(reason, "were dropped") || strings.Contains(reason, "reader window (") {
			t.Fatalf("window %d: the fit dropped %d passages (%d tokens) the selector packed: %s", window, w.Dropped, w.DroppedTokens, reason)
		}
		if !w.Capped || !strings.Contains(reason, "the selector's budget") {
			t.Fatalf("window %d: the cap is not explained: %s", window, reason)
		}
		t.Logf("window %d: %s", window, reason[strings.LastIndex(reason, "; the reader"):])
		labelled := 0
		for _, p := range a.Passages {
			labelled += tk.Count(p.Sent()) + llm.LabelledPassageOverhead
		}
		if len(a.Passages) == 0 || labelled > w.Passages || a.PromptTokens+w.Reserve > window {
			t.Fatalf("window %d: %d passages, %d tokens with labels for %d, prompt %d", window, len(a.Passages), labelled, w.Passages, a.PromptTokens)
		}
	}
}
