package llm

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ctxsel/ctxsel"
)

func TestParseSpec(t *testing.T) {
	ok := []struct {
		in   string
		want Spec
	}{
		{"openai:gpt-4o-mini", Spec{Provider: "openai", Model: "gpt-4o-mini"}},
		{"openai:qwen2.5-7b@http://127.0.0.1:8000/v1", Spec{Provider: "openai", Model: "qwen2.5-7b", BaseURL: "http://127.0.0.1:8000/v1"}},
		{"ollama:llama3.2@127.0.0.1:11434", Spec{Provider: "ollama", Model: "llama3.2", BaseURL: "127.0.0.1:11434"}},
		{"ollama:llama3.2:3b", Spec{Provider: "ollama", Model: "llama3.2:3b"}},
		{"openai:m@https://h.example/v1#window=128000", Spec{Provider: "openai", Model: "m", BaseURL: "https://h.example/v1", Window: 128000}},
		{"ollama:q#window=8192", Spec{Provider: "ollama", Model: "q", Window: 8192}},
	}
	for _, c := range ok {
		got, err := ParseSpec(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseSpec(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
			continue
		}
		if got.String() != c.in {
			t.Errorf("String() = %q, want %q", got.String(), c.in)
		}
	}
	bad := map[string]string{
		"gpt-4o":                        "PROVIDER:MODEL",
		"anthropic:claude":              "unknown provider",
		"openai:":                       "empty model",
		"openai:@http://x":              "empty model",
		"openai:m@":                     "empty base URL",
		"openai:m@ftp://x":              "base URL",
		"openai:m@http://u:pw@x/v1":     "base URL", // userinfo: model "m", base "http://u:pw@x/v1" has '@' → cut at first
		"openai:m@x:8000":               "base URL",
		"ollama:m@gopher://x":           "base URL",
		"openai:m#window=0":             "window",
		"openai:m#window=-5":            "window",
		"openai:m#window=lots":          "window",
		"openai:m#window=9999999999999": "window",
		"openai:m#ctx=5":                "unknown option",
		"openai:my model":               "white space",
	}
	for in, want := range bad {
		_, err := ParseSpec(in)
		if err == nil || !errors.Is(err, ctxsel.ErrInvalidInput) || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSpec(%q) error = %v; want ErrInvalidInput mentioning %q", in, err, want)
		}
	}
}

func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"openai:gpt-4o-mini", "ollama:llama3.2:3b@127.0.0.1:11434", "openai:m@http://h:1/v1#window=7",
		"openai:m#window=007", "ollama:x@https://[::1]:5/api", ":", "openai:@#"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sp, err := ParseSpec(s)
		if err != nil {
			if !errors.Is(err, ctxsel.ErrInvalidInput) {
				t.Fatalf("error does not wrap ErrInvalidInput: %v", err)
			}
			return
		}
		again, err := ParseSpec(sp.String())
		if err != nil || again != sp {
			t.Fatalf("round trip %q → %q: %+v, %v; want %+v", s, sp.String(), again, err, sp)
		}
	})
}

func TestOpenKeyFromEnvNotDescribed(t *testing.T) {
	t.Setenv(EnvAPIKey, "sk-very-secret")
	c, sp, err := OpenSpec("openai:m@http://127.0.0.1:9/v1#window=100", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sp.Window != 100 {
		t.Fatalf("window %d", sp.Window)
	}
	for _, s := range []string{c.Describe(), Identity(c)} {
		if strings.Contains(s, "sk-very-secret") {
			t.Fatalf("key leaked: %s", s)
		}
	}
	if _, err := Open(Spec{Provider: "x", Model: "m"}, Options{}); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("Open bad spec: %v", err)
	}
}

// blocker counts concurrent calls.
type blocker struct {
	cur, peak atomic.Int32
	release   chan struct{}
}

func (b *blocker) Chat(ctx context.Context, _ Request) (Response, error) {
	n := b.cur.Add(1)
	for {
		p := b.peak.Load()
		if n <= p || b.peak.CompareAndSwap(p, n) {
			break
		}
	}
	<-b.release
	b.cur.Add(-1)
	return Response{Content: "ok"}, nil
}
func (b *blocker) Describe() string { return "blocker" }

func TestLimiterSharedAcrossClients(t *testing.T) {
	b := &blocker{release: make(chan struct{})}
	l := NewLimiter(3)
	reader, judge := l.Wrap(b), l.Wrap(b)
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		c := reader
		if i%2 == 1 {
			c = judge
		}
		go func() { defer wg.Done(); _, _ = c.Chat(context.Background(), Request{}) }()
	}
	// Release one call at a time; at most 3 are ever inside.
	for i := 0; i < 10; i++ {
		b.release <- struct{}{}
	}
	wg.Wait()
	if p := b.peak.Load(); p > 3 || p < 1 {
		t.Fatalf("peak concurrency %d, want 1..3", p)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	full := NewLimiter(1)
	full.slots <- struct{}{}
	if _, err := full.Wrap(b).Chat(ctx, Request{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
}
