package llm_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/llm/llmtest"
)

// The window is learned through the wrappers a command puts around a
// client (limiter, call cache), asked once per client, and a prompt fitted
// to it makes Ollama run the model with that context (num_ctx).
func TestContextWindowOllama(t *testing.T) {
	srv := llmtest.New(nil)
	defer srv.Close()
	srv.SetContextLength(4096)
	cache, err := llm.OpenCache(t.TempDir(), llm.CacheOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	c, err := llm.Opener(llm.Options{}, cache)(srv.OllamaSpec("llama3.2"))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		n, ok, err := llm.ContextWindow(context.Background(), c)
		if n != 4096 || !ok || err != nil {
			t.Fatalf("window %d %v %v", n, ok, err)
		}
	}
	if srv.WindowRequests() != 1 {
		t.Fatalf("asked the server %d times", srv.WindowRequests())
	}
	if _, err := llm.AskWithin(context.Background(), c, "hello", 4096); err != nil {
		t.Fatal(err)
	}
	if _, err := llm.Ask(context.Background(), c, "hello again"); err != nil {
		t.Fatal(err)
	}
	calls := srv.Calls()
	if calls[0].NumCtx != 4096 || calls[1].NumCtx != 0 {
		t.Fatalf("num_ctx sent: %d, then %d", calls[0].NumCtx, calls[1].NumCtx)
	}
	// A server that cannot say: not known, no error.
	srv2 := llmtest.New(nil)
	defer srv2.Close()
	c2, _, err := llm.OpenSpec(srv2.OllamaSpec("m"), llm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n, ok, err := llm.ContextWindow(context.Background(), c2); ok || err == nil && n != 0 {
		t.Fatalf("unknown model: %d %v %v", n, ok, err)
	}
}

func TestContextWindowOpenAI(t *testing.T) {
	srv := llmtest.New(nil)
	defer srv.Close()
	c, _, err := llm.OpenSpec(srv.OpenAISpec("llmtest"), llm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := llm.ContextWindow(context.Background(), c); ok || err != nil {
		t.Fatalf("no max_model_len: %v %v", ok, err)
	}
	srv.SetContextLength(8192)
	c, _, _ = llm.OpenSpec(srv.OpenAISpec("llmtest"), llm.Options{})
	if n, ok, err := llm.ContextWindow(context.Background(), c); n != 8192 || !ok || err != nil {
		t.Fatalf("vLLM's max_model_len: %d %v %v", n, ok, err)
	}
	// the window is never sent to an OpenAI-compatible server
	if _, err := llm.AskWithin(context.Background(), c, "hi", 8192); err != nil {
		t.Fatal(err)
	}
}

// An OpenAI-compatible 400 saying the prompt is too long is an
// ErrContextLength naming the server's limit; other 400s are not.
func TestContextLengthExceeded(t *testing.T) {
	srv := llmtest.New(nil)
	defer srv.Close()
	c, _, err := llm.OpenSpec(srv.OpenAISpec("m"), llm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		fault llmtest.Fault
		limit int
	}{
		{llmtest.Fault{Status: http.StatusBadRequest, Code: "context_length_exceeded",
			Message: "This model's maximum context length is 4096 tokens. However, your messages resulted in 9123 tokens. Please reduce the length of the messages."}, 4096},
		{llmtest.Fault{Status: http.StatusBadRequest, Message: "the request exceeds the available context size, try increasing it"}, 0},
		{llmtest.Fault{Status: http.StatusBadRequest, Code: "context_length_exceeded", Message: "Input too long"}, 0},
	}
	for _, tc := range cases {
		srv.Script(tc.fault)
		_, err := llm.Ask(context.Background(), c, "a long prompt")
		var ce *llm.ContextLengthError
		if !errors.Is(err, llm.ErrContextLength) || !errors.As(err, &ce) || ce.Limit != tc.limit {
			t.Fatalf("%q: %v (limit %v)", tc.fault.Message, err, ce)
		}
		if !strings.Contains(err.Error(), "context window") {
			t.Fatalf("message %q", err)
		}
	}
	srv.Script(llmtest.Fault{Status: http.StatusBadRequest, Message: "temperature must be at most 2"})
	if _, err := llm.Ask(context.Background(), c, "x"); err == nil || errors.Is(err, llm.ErrContextLength) {
		t.Fatalf("another 400: %v", err)
	}
}
