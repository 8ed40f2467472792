package llm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctxsel/ctxsel/internal/httpretry"
)

func noSleep(context.Context, time.Duration) error { return nil }

// openAIServer speaks /v1/chat/completions. fail makes the first n calls
// fail with status.
func openAIServer(t *testing.T, key string, failN int32, status int) (*httptest.Server, *atomic.Int32, *openAIRequest) {
	var calls atomic.Int32
	var last openAIRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
			http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
			return
		}
		if key != "" && r.Header.Get("Authorization") != "Bearer "+key {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":{"message":"Incorrect API key provided: `+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")+`","type":"invalid_request_error"}}`)
			return
		}
		if n <= failN {
			w.WriteHeader(status)
			io.WriteString(w, `{"error":{"message":"overloaded","type":"server_error"}}`)
			return
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &last); err != nil {
			http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"`+last.Model+`-2024",
			"choices":[{"index":0,"message":{"role":"assistant","content":"Paris."},"logprobs":null,"finish_reason":"stop"}],
			"usage":{"prompt_tokens":42,"completion_tokens":3,"total_tokens":45}}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls, &last
}

func TestOpenAI(t *testing.T) {
	srv, calls, last := openAIServer(t, "sk-secret", 1, http.StatusServiceUnavailable)
	for _, base := range []string{srv.URL, srv.URL + "/v1", srv.URL + "/v1/"} {
		c, err := NewOpenAI(Options{BaseURL: base, Model: "gpt-test", APIKey: "sk-secret", MaxTokens: 50, sleep: noSleep})
		if err != nil {
			t.Fatal(err)
		}
		r, err := Ask(context.Background(), c, "What is the capital of France?")
		if err != nil {
			t.Fatal(err)
		}
		if r.Content != "Paris." || r.PromptTokens != 42 || r.CompletionTokens != 3 || r.TotalTokens != 45 || r.Model != "gpt-test-2024" || r.FinishReason != "stop" {
			t.Fatalf("response %+v", r)
		}
		if last.Model != "gpt-test" || len(last.Messages) != 1 || last.Messages[0].Role != "user" || last.Temperature == nil || *last.Temperature != 0 ||
			last.MaxTokens != 50 || last.Stream {
			t.Fatalf("request %+v", last)
		}
	}
	if calls.Load() != 4 { // one 503 retried, then three successes
		t.Fatalf("%d calls", calls.Load())
	}
	if !strings.Contains(c(t, srv.URL).Describe(), "gpt-test") {
		t.Fatal("describe")
	}
}

func c(t *testing.T, base string) *OpenAI {
	cl, err := NewOpenAI(Options{BaseURL: base, Model: "gpt-test"})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func TestOpenAIErrors(t *testing.T) {
	srv, calls, _ := openAIServer(t, "sk-right", 0, 0)
	cl, _ := NewOpenAI(Options{BaseURL: srv.URL, Model: "m", APIKey: "sk-wrong-and-secret", sleep: noSleep})
	_, err := Ask(context.Background(), cl, "hi")
	var se *httpretry.StatusError
	if !errors.As(err, &se) || se.StatusCode != 401 || calls.Load() != 1 {
		t.Fatalf("401: %v (%d calls)", err, calls.Load())
	}
	if strings.Contains(err.Error(), "sk-wrong-and-secret") || strings.Contains(se.Message, "sk-wrong-and-secret") {
		t.Fatalf("key leaked: %v", err)
	}
	if !strings.Contains(err.Error(), "Incorrect API key") {
		t.Fatalf("server message lost: %v", err)
	}
	srv2, calls2, _ := openAIServer(t, "", 100, http.StatusInternalServerError)
	cl2, _ := NewOpenAI(Options{BaseURL: srv2.URL, Model: "m", MaxRetries: 2, sleep: noSleep})
	if _, err := Ask(context.Background(), cl2, "hi"); err == nil || calls2.Load() != 3 || !strings.Contains(err.Error(), "overloaded") {
		t.Fatalf("500s: %v (%d calls)", err, calls2.Load())
	}
	for _, bad := range []string{"", "localhost:8000", "ftp://x", "http://"} {
		if _, err := NewOpenAI(Options{BaseURL: bad, Model: "m"}); err == nil {
			t.Errorf("base %q accepted", bad)
		}
	}
	if _, err := cl2.Chat(context.Background(), Request{Model: "m"}); err == nil {
		t.Error("no messages accepted")
	}
	if _, err := cl2.Chat(context.Background(), Request{Model: "m", Messages: []Message{{Role: "robot", Content: "x"}}}); err == nil {
		t.Error("bad role accepted")
	}
	nomodel, _ := NewOpenAI(Options{BaseURL: srv.URL})
	if _, err := Ask(context.Background(), nomodel, "x"); !errors.Is(err, ErrNoModel) {
		t.Errorf("no model: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Ask(ctx, cl2, "x"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestOllama(t *testing.T) {
	var last ollamaRequest
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Path != "/api/chat" {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":"not found"}`)
			return
		}
		json.NewDecoder(r.Body).Decode(&last)
		if last.Model == "missing" {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":"model \"missing\" not found, try pulling it first"}`)
			return
		}
		io.WriteString(w, `{"model":"`+last.Model+`","created_at":"2024-01-01T00:00:00Z","message":{"role":"assistant","content":"Forty-two."},
			"done_reason":"stop","done":true,"total_duration":123,"load_duration":1,"prompt_eval_count":30,"prompt_eval_duration":2,"eval_count":4,"eval_duration":3}`)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, h := range []string{host, srv.URL, srv.URL + "/api"} {
		cl, err := NewOllama(Options{BaseURL: h, Model: "llama3.2", MaxTokens: 64})
		if err != nil {
			t.Fatal(err)
		}
		r, err := Ask(context.Background(), cl, "The answer?")
		if err != nil {
			t.Fatal(err)
		}
		if r.Content != "Forty-two." || r.PromptTokens != 30 || r.CompletionTokens != 4 || r.TotalTokens != 34 || r.FinishReason != "stop" {
			t.Fatalf("response %+v", r)
		}
		if last.Stream || last.Model != "llama3.2" || last.Options["temperature"] != 0.0 || last.Options["num_predict"] != 64.0 || last.Messages[0].Content != "The answer?" {
			t.Fatalf("request %+v", last)
		}
	}
	cl, _ := NewOllama(Options{BaseURL: host, Model: "missing"})
	if _, err := Ask(context.Background(), cl, "x"); err == nil || !strings.Contains(err.Error(), "try pulling it first") {
		t.Fatalf("missing model: %v", err)
	}
	for in, want := range map[string]string{"": "http://127.0.0.1:11434", "example.com": "http://example.com:11434",
		"https://example.com": "https://example.com:443", "0.0.0.0:8080": "http://0.0.0.0:8080", "[::1]:1": "http://[::1]:1"} {
		u, err := parseOllamaHost(in)
		if err != nil || u.String() != want {
			t.Errorf("parseOllamaHost(%q) = %v, %v; want %s", in, u, err, want)
		}
	}
	// The embedder's parser (internal/ollamahost): the same strict rules.
	for _, bad := range []string{"ftp://x", "h:99999", "h x:1", "http://u:p@h"} {
		if _, err := NewOllama(Options{BaseURL: bad, Model: "m"}); err == nil || !strings.Contains(err.Error(), "llm: Ollama host") {
			t.Errorf("NewOllama with %q: %v", bad, err)
		}
		if _, err := ParseSpec("ollama:m@" + bad); err == nil {
			t.Errorf("ParseSpec ollama:m@%s accepted", bad)
		}
	}
}

func TestFromEnv(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	cases := []struct {
		env     func(string) string
		want    string // "" nil client; else a substring of Describe
		wantErr bool
	}{
		{env(), "", false},
		{env(EnvOllama, "localhost:11434"), "", false}, // no model: off
		{env(EnvOllama, "localhost:11434", EnvModel, "llama3.2"), "ollama http://localhost:11434 model llama3.2", false},
		{env(EnvBaseURL, "https://api.openai.com", EnvModel, "gpt-4o-mini"), "openai-compatible https://api.openai.com/v1 model gpt-4o-mini", false},
		{env(EnvBaseURL, "http://h:8000/v1", EnvOllama, "x", EnvModel, "m"), "openai-compatible http://h:8000/v1", false},
		{env(EnvBaseURL, "http://h:8000", EnvOllama, "o:1", EnvModel, "m", EnvProvider, "ollama"), "ollama http://o:1", false},
		// a model name a spec cannot hold ('@') is taken as written
		{env(EnvBaseURL, "http://h:8000/v1", EnvModel, "claude-3-5-sonnet@20240620"), "model claude-3-5-sonnet@20240620", false},
		{env(EnvBaseURL, "ftp://h", EnvModel, "m"), "", true},
		{env(EnvBaseURL, "http://h:8000"), "", true},
		{env(EnvProvider, "openai", EnvModel, "m"), "", true},
		{env(EnvProvider, "claude", EnvModel, "m", EnvBaseURL, "http://x"), "", true},
		{env(EnvBaseURL, "http://x", EnvModel, "m", EnvTimeout, "soon"), "", true},
		{env(EnvBaseURL, "http://x", EnvModel, "m", EnvMaxTokens, "-3"), "", true},
	}
	for i, tc := range cases {
		c, err := fromEnv(tc.env)
		if (err != nil) != tc.wantErr {
			t.Errorf("case %d: err %v", i, err)
			continue
		}
		switch {
		case tc.want == "" && c != nil:
			t.Errorf("case %d: got client %s", i, c.Describe())
		case tc.want != "" && (c == nil || !strings.Contains(c.Describe(), tc.want)):
			t.Errorf("case %d: got %v, want %q", i, c, tc.want)
		}
		// built as Open builds a spec's: behind a limiter
		if l, ok := c.(*limited); c != nil && (!ok || l.l.Cap() != DefaultConcurrency) {
			t.Errorf("case %d: %T is not limited to %d calls", i, c, DefaultConcurrency)
		}
	}
}

// TestReal calls a real endpoint when CTXSEL_TEST_LLM=1 (see the package
// documentation).
func TestReal(t *testing.T) {
	if os.Getenv("CTXSEL_TEST_LLM") != "1" {
		t.Skip("set CTXSEL_TEST_LLM=1 and configure an endpoint to call a real LLM")
	}
	c, err := FromEnv()
	if err != nil || c == nil {
		t.Fatalf("no endpoint configured: %v", err)
	}
	prompt, _ := FactoidQA.Render("What is the capital of France?", FormatContext([]Passage{{Label: "geo#0", Text: "Paris is the capital and largest city of France."}}))
	r, err := Ask(context.Background(), c, prompt)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %q (%d prompt + %d completion tokens, %v)", c.Describe(), r.Content, r.PromptTokens, r.CompletionTokens, r.Elapsed)
	if !strings.Contains(strings.ToLower(r.Content), "paris") {
		t.Errorf("unexpected answer %q", r.Content)
	}
}
