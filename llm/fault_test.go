package llm

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxsel/ctxsel/llm/llmtest"
)

// recordSleep records backoff waits instead of sleeping.
type recordSleep struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (r *recordSleep) sleep(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	r.waits = append(r.waits, d)
	r.mu.Unlock()
	return ctx.Err()
}

func openBoth(t *testing.T, srv *llmtest.Server, o Options) map[string]Client {
	t.Helper()
	o.Model = "m"
	oa := o
	oa.BaseURL = srv.URL + "/v1"
	c1, err := NewOpenAI(oa)
	if err != nil {
		t.Fatal(err)
	}
	ol := o
	ol.BaseURL = srv.URL
	c2, err := NewOllama(ol)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]Client{"openai": c1, "ollama": c2}
}

// checkClean: an error never shows the key; the address the user
// configured it may show (TestErrorsShowTheAddressNotSecrets).
func checkClean(t *testing.T, err error, srv *llmtest.Server, key string) {
	t.Helper()
	msg := err.Error()
	if key != "" && strings.Contains(msg, key) || strings.Contains(msg, "[REDACTED]:") {
		t.Fatalf("error leaks the key or hides the address: %s", msg)
	}
}

// TestErrorsShowTheAddressNotSecrets: a refused connection names the
// address the user configured (so they can see what was tried), never the
// key nor a URL's user information or query.
func TestErrorsShowTheAddressNotSecrets(t *testing.T) {
	srv := llmtest.New(nil)
	addr := strings.TrimPrefix(srv.URL, "http://")
	srv.Close() // nothing listens there now
	for name, base := range map[string]string{
		"openai": "http://tokenuser:hunter2@" + addr + "/v1?api-key=qsecret",
		"ollama": "http://" + addr, // takes host[:port] alone
	} {
		o := Options{Model: "m", BaseURL: base, APIKey: "sk-secret", MaxRetries: -1}
		var c Client
		var err error
		if name == "openai" {
			c, err = NewOpenAI(o)
		} else {
			c, err = NewOllama(o)
		}
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Chat(context.Background(), Request{Messages: []Message{{Role: "user", Content: "x"}}})
		if err == nil {
			t.Fatalf("%s: no error from a closed port", name)
		}
		msg := err.Error()
		if !strings.Contains(msg, addr) || strings.Contains(msg, "sk-secret") || strings.Contains(msg, "hunter2") ||
			strings.Contains(msg, "tokenuser") || strings.Contains(msg, "qsecret") {
			t.Errorf("%s: %s", name, msg)
		}
	}
}

func TestWireFormatsCarrySettings(t *testing.T) {
	srv := llmtest.New(nil)
	defer srv.Close()
	temp, seed := 0.25, 7
	for name, c := range openBoth(t, srv, Options{Temperature: &temp, Seed: &seed, MaxTokens: 33}) {
		n := srv.Requests()
		r, err := c.Chat(context.Background(), Request{Messages: []Message{{Role: "user", Content: "say hi there"}}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if r.Content != "say hi there" || r.PromptTokens != 3 || r.CompletionTokens != 3 || r.TotalTokens != 6 {
			t.Fatalf("%s: reply %+v", name, r)
		}
		call := srv.Calls()[n]
		if call.Wire != name || call.Temperature == nil || *call.Temperature != 0.25 || call.Seed == nil || *call.Seed != 7 || call.MaxTokens != 33 {
			t.Fatalf("%s: server saw %+v", name, call)
		}
		// A request's own settings win over the client's defaults.
		other := 3
		if _, err := c.Chat(context.Background(), Request{Messages: []Message{{Role: "user", Content: "x"}}, Seed: &other, MaxTokens: 5}); err != nil {
			t.Fatal(err)
		}
		if call := srv.Calls()[n+1]; *call.Seed != 3 || call.MaxTokens != 5 {
			t.Fatalf("%s: override not sent: %+v", name, call)
		}
	}
}

func TestFaults(t *testing.T) {
	user := []Message{{Role: "user", Content: "q"}}
	cases := []struct {
		name     string
		faults   []llmtest.Fault
		ok       bool
		requests int
		errHas   string
		waits    []time.Duration // backoff waits that must have been asked for
	}{
		{"401 not retried", []llmtest.Fault{{Status: 401}}, false, 1, "401", nil},
		{"429 honours Retry-After", []llmtest.Fault{{Status: 429, RetryAfter: "2"}}, true, 2, "", []time.Duration{2 * time.Second}},
		{"5xx retried", []llmtest.Fault{{Status: 503}, {Status: 500}}, true, 3, "", nil},
		{"5xx exhausts retries", []llmtest.Fault{{Status: 502}, {Status: 502}, {Status: 502}}, false, 3, "after 3 attempts", nil},
		{"truncated body retried", []llmtest.Fault{{Truncate: true}}, true, 2, "", nil},
		{"non-JSON body", []llmtest.Fault{{NonJSON: true}}, false, 1, "decode response", nil},
		{"empty choices", []llmtest.Fault{{EmptyChoices: true}}, false, 1, "", nil},
	}
	const key = "sk-top-secret-key"
	for _, tc := range cases {
		for _, wire := range []string{"openai", "ollama"} {
			t.Run(tc.name+"/"+wire, func(t *testing.T) {
				srv := llmtest.New(nil)
				defer srv.Close()
				rs := &recordSleep{}
				c := openBoth(t, srv, Options{APIKey: key, sleep: rs.sleep})[wire]
				srv.Script(tc.faults...)
				r, err := c.Chat(context.Background(), Request{Messages: user})
				if tc.ok != (err == nil) {
					t.Fatalf("err = %v, want ok=%v", err, tc.ok)
				}
				if err != nil {
					checkClean(t, err, srv, key)
					if !strings.Contains(err.Error(), tc.errHas) {
						t.Fatalf("err %q lacks %q", err, tc.errHas)
					}
				} else if r.Content != "q" {
					t.Fatalf("reply %+v", r)
				}
				if srv.Requests() != tc.requests {
					t.Fatalf("%d requests, want %d", srv.Requests(), tc.requests)
				}
				for i, w := range tc.waits {
					if i >= len(rs.waits) || rs.waits[i] != w {
						t.Fatalf("waits %v, want %v first", rs.waits, tc.waits)
					}
				}
			})
		}
	}
}

func TestTotalDeadlineAcrossRetries(t *testing.T) {
	srv := llmtest.New(nil)
	defer srv.Close()
	// Each attempt hangs; with no per-attempt timeout the first hang uses up
	// the whole budget, and the call ends there instead of retrying.
	c := openBoth(t, srv, Options{Timeout: 300 * time.Millisecond, MaxRetries: 5, APIKey: "sk-k"})["openai"]
	srv.Script(llmtest.Fault{Hang: true}, llmtest.Fault{Hang: true}, llmtest.Fault{Hang: true})
	_, err := c.Chat(context.Background(), Request{Messages: []Message{{Role: "user", Content: "q"}}})
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "total deadline") {
		t.Fatalf("err = %v, want the total deadline", err)
	}
	checkClean(t, err, srv, "sk-k")
	if n := srv.Requests(); n != 1 {
		t.Fatalf("%d attempts inside one total deadline of a hanging server, want 1", n)
	}

	// A per-attempt timeout lets hung attempts be retried within the total.
	srv2 := llmtest.New(nil)
	defer srv2.Close()
	rs := &recordSleep{}
	c2 := openBoth(t, srv2, Options{Timeout: time.Minute, AttemptTimeout: 100 * time.Millisecond, MaxRetries: 2, sleep: rs.sleep})["ollama"]
	srv2.Script(llmtest.Fault{Hang: true}, llmtest.Fault{Hang: true})
	r, err := c2.Chat(context.Background(), Request{Messages: []Message{{Role: "user", Content: "q"}}})
	if err != nil || r.Content != "q" || srv2.Requests() != 3 {
		t.Fatalf("reply %+v, err %v, %d requests; want success on the third attempt", r, err, srv2.Requests())
	}
}
