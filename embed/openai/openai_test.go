package openai

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/embed/remote"
	"github.com/ctxsel/ctxsel/internal/httpretry"
)

// vecFor is the fake model: a deterministic 3-d vector per input text.
func vecFor(text string) []float32 {
	var sum int
	for _, b := range []byte(text) {
		sum += int(b)
	}
	return []float32{float32(len(text)), float32(sum % 997), 1}
}

type wireRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	Dimensions     *int     `json:"dimensions"`
	EncodingFormat string   `json:"encoding_format"`
}

type wireItem struct {
	Object    string `json:"object"`
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"`
}

// fakeServer speaks the OpenAI embeddings wire format. Each request is
// passed to handle (if set) first; handle returns true when it wrote the
// response itself.
type fakeServer struct {
	*httptest.Server
	t      *testing.T
	calls  atomic.Int32
	mu     sync.Mutex
	reqs   []wireRequest
	auth   []string
	handle func(n int, w http.ResponseWriter, r *http.Request, req wireRequest) bool
	// shuffle reverses data order in successful responses.
	shuffle bool
}

func newFake(t *testing.T) *fakeServer {
	f := &fakeServer{t: t}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	n := int(f.calls.Add(1))
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	var req wireRequest
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.mu.Unlock()
	if f.handle != nil && f.handle(n, w, r, req) {
		return
	}
	writeOK(w, req, f.shuffle)
}

func (f *fakeServer) requests() []wireRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reqs)
}

func (f *fakeServer) auths() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.auth)
}

func writeOK(w http.ResponseWriter, req wireRequest, shuffle bool) {
	items := make([]wireItem, len(req.Input))
	for i, in := range req.Input {
		items[i] = wireItem{Object: "embedding", Index: i, Embedding: vecFor(in)}
	}
	if shuffle {
		slices.Reverse(items)
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list",
		"data":   items,
		"model":  req.Model,
		"usage":  map[string]int{"prompt_tokens": len(req.Input), "total_tokens": len(req.Input)},
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeAPIError(w http.ResponseWriter, status int, msg, typ string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}})
}

// sleeps records backoff waits instead of sleeping.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.d)
}

func newClient(t *testing.T, f *fakeServer, mod func(*Options)) (*Client, *sleeps) {
	t.Helper()
	sl := &sleeps{}
	o := Options{Config: remote.Config{BaseURL: f.URL, Model: "test-model", APIKey: "sk-test-SECRET-123"}, sleep: sl.sleep}
	if mod != nil {
		mod(&o)
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c, sl
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("text number %d %s", i, strings.Repeat("x", i%7))
	}
	return out
}

func checkVecs(t *testing.T, in []string, prefix string, got [][]float32) {
	t.Helper()
	if len(got) != len(in) {
		t.Fatalf("got %d vectors for %d texts", len(got), len(in))
	}
	for i := range in {
		if want := vecFor(prefix + in[i]); !slices.Equal(got[i], want) {
			t.Fatalf("vector %d = %v, want %v", i, got[i], want)
		}
	}
}

func TestBatchingSplitsAndReorders(t *testing.T) {
	f := newFake(t)
	f.shuffle = true
	c, _ := newClient(t, f, func(o *Options) {
		o.PassagePrefix = "passage: "
		o.Concurrency = 3
	})
	in := texts(250)
	got, err := c.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkVecs(t, in, "passage: ", got)
	if n := f.calls.Load(); n != 3 {
		t.Fatalf("%d requests, want 3", n)
	}
	var sizes []int
	seen := map[string]bool{}
	for _, r := range f.requests() {
		sizes = append(sizes, len(r.Input))
		if r.Model != "test-model" || r.EncodingFormat != "float" || r.Dimensions != nil {
			t.Fatalf("request = model %q format %q dims %v", r.Model, r.EncodingFormat, r.Dimensions)
		}
		for _, s := range r.Input {
			if !strings.HasPrefix(s, "passage: ") {
				t.Fatalf("input %q lacks the passage prefix", s)
			}
			seen[s] = true
		}
	}
	slices.Sort(sizes)
	if !slices.Equal(sizes, []int{58, 96, 96}) {
		t.Fatalf("batch sizes %v, want [58 96 96]", sizes)
	}
	if len(seen) != 250 {
		t.Fatalf("server saw %d distinct texts, want 250", len(seen))
	}
	if u := c.Usage(); u.Requests != 3 || u.PromptTokens != 250 || u.TotalTokens != 250 {
		t.Fatalf("usage = %+v", u)
	}
}

func TestOutOfOrderIndex(t *testing.T) {
	f := newFake(t)
	f.handle = func(_ int, w http.ResponseWriter, _ *http.Request, req wireRequest) bool {
		order := rand.Perm(len(req.Input))
		items := make([]wireItem, 0, len(order))
		for _, i := range order {
			items = append(items, wireItem{Object: "embedding", Index: i, Embedding: vecFor(req.Input[i])})
		}
		writeJSON(w, http.StatusOK, map[string]any{"data": items, "model": req.Model})
		return true
	}
	c, _ := newClient(t, f, nil)
	in := texts(40)
	got, err := c.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkVecs(t, in, "", got)
}

func TestBadIndexes(t *testing.T) {
	for name, idx := range map[string][]int{
		"duplicate":    {0, 0, 2},
		"out of range": {0, 1, 3},
		"negative":     {0, -1, 2},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFake(t)
			f.handle = func(_ int, w http.ResponseWriter, _ *http.Request, req wireRequest) bool {
				items := make([]wireItem, len(req.Input))
				for i := range items {
					items[i] = wireItem{Index: idx[i], Embedding: vecFor(req.Input[i])}
				}
				writeJSON(w, http.StatusOK, map[string]any{"data": items})
				return true
			}
			c, _ := newClient(t, f, nil)
			if _, err := c.Embed(context.Background(), texts(3)); err == nil || !strings.Contains(err.Error(), "index") {
				t.Fatalf("err = %v, want an index error", err)
			}
			if n := f.calls.Load(); n != 1 {
				t.Fatalf("%d requests, want 1 (no retry on a bad response)", n)
			}
		})
	}
}

func Test429RetryAfterThenSuccess(t *testing.T) {
	for name, header := range map[string]string{
		"seconds":   "2",
		"http-date": time.Now().Add(3 * time.Second).UTC().Format(http.TimeFormat),
	} {
		t.Run(name, func(t *testing.T) {
			f := newFake(t)
			f.handle = func(n int, w http.ResponseWriter, _ *http.Request, _ wireRequest) bool {
				if n == 1 {
					w.Header().Set("Retry-After", header)
					writeAPIError(w, http.StatusTooManyRequests, "Rate limit reached", "requests")
					return true
				}
				return false
			}
			c, sl := newClient(t, f, func(o *Options) { o.RetryMaxDelay = time.Minute })
			in := texts(5)
			got, err := c.Embed(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			checkVecs(t, in, "", got)
			if n := f.calls.Load(); n != 2 {
				t.Fatalf("%d requests, want 2", n)
			}
			d := sl.got()
			if len(d) != 1 || d[0] < time.Second || d[0] > 3*time.Second {
				t.Fatalf("waits %v, want one wait honouring Retry-After %q", d, header)
			}
		})
	}
}

func TestRetryAfterIsCapped(t *testing.T) {
	f := newFake(t)
	f.handle = func(n int, w http.ResponseWriter, _ *http.Request, _ wireRequest) bool {
		if n == 1 {
			w.Header().Set("Retry-After", "86400")
			writeAPIError(w, http.StatusTooManyRequests, "slow down", "requests")
			return true
		}
		return false
	}
	c, sl := newClient(t, f, func(o *Options) { o.RetryMaxDelay = 5 * time.Second })
	if _, err := c.Embed(context.Background(), texts(1)); err != nil {
		t.Fatal(err)
	}
	if d := sl.got(); len(d) != 1 || d[0] != 5*time.Second {
		t.Fatalf("waits %v, want [5s]", d)
	}
}

func Test503ThenSuccess(t *testing.T) {
	f := newFake(t)
	f.handle = func(n int, w http.ResponseWriter, _ *http.Request, _ wireRequest) bool {
		if n <= 2 {
			writeAPIError(w, http.StatusServiceUnavailable, "overloaded", "server_error")
			return true
		}
		return false
	}
	c, sl := newClient(t, f, func(o *Options) {
		o.RetryBaseDelay = 100 * time.Millisecond
		o.RetryMaxDelay = time.Second
	})
	in := texts(3)
	got, err := c.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkVecs(t, in, "", got)
	if n := f.calls.Load(); n != 3 {
		t.Fatalf("%d requests, want 3", n)
	}
	d := sl.got()
	if len(d) != 2 || d[0] < 50*time.Millisecond || d[0] > 100*time.Millisecond ||
		d[1] < 100*time.Millisecond || d[1] > 200*time.Millisecond {
		t.Fatalf("waits %v, want exponential backoff with jitter from 100ms", d)
	}
}

func TestRetriesExhausted(t *testing.T) {
	f := newFake(t)
	f.handle = func(_ int, w http.ResponseWriter, _ *http.Request, _ wireRequest) bool {
		writeAPIError(w, http.StatusBadGateway, "upstream down", "server_error")
		return true
	}
	c, _ := newClient(t, f, func(o *Options) { o.MaxRetries = 2 })
	_, err := c.Embed(context.Background(), texts(2))
	if err == nil || !strings.Contains(err.Error(), "502") || !strings.Contains(err.Error(), "upstream down") {
		t.Fatalf("err = %v", err)
	}
	if n := f.calls.Load(); n != 3 {
		t.Fatalf("%d requests, want 3 (1 + MaxRetries)", n)
	}
	var se *httpretry.StatusError
	if !errors.As(err, &se) || se.StatusCode != 502 || se.Attempts != 3 {
		t.Fatalf("err = %#v, want a StatusError 502 after 3 attempts", err)
	}
}

func TestNoRetriesOption(t *testing.T) {
	f := newFake(t)
	f.handle = func(_ int, w http.ResponseWriter, _ *http.Request, _ wireRequest) bool {
		writeAPIError(w, http.StatusInternalServerError, "boom", "server_error")
		return true
	}
	c, _ := newClient(t, f, func(o *Options) { o.MaxRetries = -1 })
	if _, err := c.Embed(context.Background(), texts(2)); err == nil {
		t.Fatal("want an error")
	}
	if n := f.calls.Load(); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
}

func Test400NoRetry(t *testing.T) {
	f := newFake(t)
	f.handle = func(_ int, w http.ResponseWriter, _ *http.Request, _ wireRequest) bool {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{
			"message": "This model's maximum context length is 8192 tokens",
			"type":    "invalid_request_error",
			"code":    "context_length_exceeded",
		}})
		return true
	}
	c, sl := newClient(t, f, nil)
	_, err := c.Embed(context.Background(), texts(2))
	if err == nil {
		t.Fatal("want an error")
	}
	for _, want := range []string{"400", "maximum context length is 8192 tokens", "invalid_request_error", "context_length_exceeded"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if n := f.calls.Load(); n != 1 {
		t.Fatalf("%d requests, want 1 (no retry on 400)", n)
	}
	if len(sl.got()) != 0 {
		t.Fatal("slept before failing a 400")
	}
}

func TestAuthHeaderAndKeyNotInErrors(t *testing.T) {
	const key = "sk-test-SECRET-123"
	f := newFake(t)
	f.handle = func(n int, w http.ResponseWriter, r *http.Request, _ wireRequest) bool {
		if n == 2 {
			// Servers do echo keys back; the client must not pass them on.
			writeAPIError(w, http.StatusUnauthorized, "Incorrect API key provided: "+key, "invalid_request_error")
			return true
		}
		return false
	}
	c, _ := newClient(t, f, func(o *Options) { o.APIKey = key })
	if _, err := c.Embed(context.Background(), texts(1)); err != nil {
		t.Fatal(err)
	}
	if got := f.auths()[0]; got != "Bearer "+key {
		t.Fatalf("Authorization = %q", got)
	}
	_, err := c.Embed(context.Background(), texts(1))
	if err == nil {
		t.Fatal("want an error")
	}
	if strings.Contains(err.Error(), key) || strings.Contains(fmt.Sprintf("%+v %#v", err, err), key) {
		t.Fatalf("error leaks the key: %v", err)
	}
	if !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "[REDACTED]") {
		t.Fatalf("err = %v", err)
	}
	var se *httpretry.StatusError
	if !errors.As(err, &se) || strings.Contains(string(se.Body), key) || strings.Contains(se.Message, key) {
		t.Fatalf("StatusError leaks the key: %+v", se)
	}
}

func TestNoKeyNoAuthHeader(t *testing.T) {
	t.Setenv(EnvAPIKey, "")
	t.Setenv(EnvOpenAIAPIKey, "sk-openai-only")
	f := newFake(t)
	c, _ := newClient(t, f, func(o *Options) { o.APIKey = "" })
	if _, err := c.Embed(context.Background(), texts(1)); err != nil {
		t.Fatal(err)
	}
	if got := f.auths()[0]; got != "" {
		t.Fatalf("OPENAI_API_KEY was sent to a non-OpenAI server: Authorization = %q", got)
	}

	t.Setenv(EnvAPIKey, "ctxsel-key")
	c, _ = newClient(t, f, func(o *Options) { o.APIKey = "" })
	if _, err := c.Embed(context.Background(), texts(1)); err != nil {
		t.Fatal(err)
	}
	if got := f.auths()[1]; got != "Bearer ctxsel-key" {
		t.Fatalf("Authorization = %q, want the %s key", got, EnvAPIKey)
	}
}

func TestOfficialHostKeyFromEnv(t *testing.T) {
	t.Setenv(EnvAPIKey, "")
	t.Setenv(EnvOpenAIAPIKey, "")
	if _, err := New(Options{Config: remote.Config{Model: "text-embedding-3-small"}}); err == nil {
		t.Fatal("want an error without any key for api.openai.com")
	}
	t.Setenv(EnvOpenAIAPIKey, "sk-from-env")
	c, err := New(Options{Config: remote.Config{Model: "text-embedding-3-small"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.key != "sk-from-env" || c.Endpoint() != "https://api.openai.com/v1/embeddings" {
		t.Fatalf("key %q endpoint %q", c.key, c.Endpoint())
	}
	c, _ = New(Options{Config: remote.Config{Model: "m", APIKey: "explicit"}})
	if c.key != "explicit" {
		t.Fatalf("explicit key not preferred: %q", c.key)
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newFake(t)
	f.handle = func(_ int, w http.ResponseWriter, _ *http.Request, _ wireRequest) bool {
		w.Header().Set("Retry-After", "3600")
		writeAPIError(w, http.StatusTooManyRequests, "later", "requests")
		// Cancel once the client is (most likely) asleep for the hour;
		// if it is not there yet, cancellation must stop it all the same.
		time.AfterFunc(20*time.Millisecond, cancel)
		return true
	}
	// The real timer-based sleep: cancellation must interrupt it.
	c, err := New(Options{Config: remote.Config{BaseURL: f.URL, Model: "m", RetryMaxDelay: 2 * time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Embed(ctx, texts(3))
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Embed did not return after cancellation during backoff")
	}
	if n := f.calls.Load(); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
}

func TestCancelledBeforeStart(t *testing.T) {
	f := newFake(t)
	c, _ := newClient(t, f, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Embed(ctx, texts(3)); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n := f.calls.Load(); n != 0 {
		t.Fatalf("%d requests, want 0", n)
	}
}

func TestNetworkErrorRetried(t *testing.T) {
	f := newFake(t)
	f.handle = func(n int, w http.ResponseWriter, _ *http.Request, _ wireRequest) bool {
		if n == 1 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close() // connection dropped without a response
			}
			return true
		}
		return false
	}
	c, sl := newClient(t, f, nil)
	in := texts(4)
	got, err := c.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkVecs(t, in, "", got)
	if n := f.calls.Load(); n != 2 || len(sl.got()) != 1 {
		t.Fatalf("%d requests, %d waits; want 2 and 1", n, len(sl.got()))
	}
}

func TestAttemptTimeoutRetried(t *testing.T) {
	f := newFake(t)
	f.handle = func(n int, _ http.ResponseWriter, r *http.Request, _ wireRequest) bool {
		if n == 1 {
			<-r.Context().Done() // hang until the client gives up on the attempt
			return true
		}
		return false
	}
	c, _ := newClient(t, f, func(o *Options) { o.Timeout = 200 * time.Millisecond })
	if _, err := c.Embed(context.Background(), texts(2)); err != nil {
		t.Fatal(err)
	}
	if n := f.calls.Load(); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
}

func TestDimensionMismatchAcrossBatches(t *testing.T) {
	f := newFake(t)
	f.handle = func(_ int, w http.ResponseWriter, _ *http.Request, req wireRequest) bool {
		items := make([]wireItem, len(req.Input))
		for i, in := range req.Input {
			v := vecFor(in)
			if strings.HasPrefix(req.Input[0], "text number 2 ") {
				v = append(v, 7) // the second batch comes back 4-d
			}
			items[i] = wireItem{Index: i, Embedding: v}
		}
		writeJSON(w, http.StatusOK, map[string]any{"data": items})
		return true
	}
	c, _ := newClient(t, f, func(o *Options) { o.BatchSize = 2 })
	_, err := c.Embed(context.Background(), texts(4))
	if err == nil || !strings.Contains(err.Error(), "dimension") {
		t.Fatalf("err = %v, want a dimension error", err)
	}
}

func TestDimensionsOption(t *testing.T) {
	f := newFake(t)
	c, _ := newClient(t, f, func(o *Options) { o.Dimensions = 3 })
	if _, err := c.Embed(context.Background(), texts(2)); err != nil {
		t.Fatal(err)
	}
	if d := f.requests()[0].Dimensions; d == nil || *d != 3 {
		t.Fatalf("dimensions sent = %v, want 3", d)
	}
	c, _ = newClient(t, f, func(o *Options) { o.Dimensions = 256 })
	if _, err := c.Embed(context.Background(), texts(2)); err == nil || !strings.Contains(err.Error(), "want 256") {
		t.Fatalf("err = %v, want a dimension error", err)
	}
}

func TestCountMismatch(t *testing.T) {
	f := newFake(t)
	f.handle = func(_ int, w http.ResponseWriter, _ *http.Request, req wireRequest) bool {
		writeJSON(w, http.StatusOK, map[string]any{"data": []wireItem{{Index: 0, Embedding: vecFor(req.Input[0])}}})
		return true
	}
	c, _ := newClient(t, f, nil)
	_, err := c.Embed(context.Background(), texts(3))
	if err == nil || !strings.Contains(err.Error(), "1 embeddings for 3 inputs") {
		t.Fatalf("err = %v", err)
	}
}

func TestMalformedResponses(t *testing.T) {
	for name, body := range map[string]string{
		"not json":        `<html>502 bad gateway</html>`,
		"truncated":       `{"data":[{"index":0,"embedding":[0.1,0.`,
		"embedding type":  `{"data":[{"index":0,"embedding":{"x":1}}]}`,
		"float32 range":   `{"data":[{"index":0,"embedding":[1e300]}]}`,
		"empty embedding": `{"data":[{"index":0,"embedding":[]}]}`,
		"bad base64":      `{"data":[{"index":0,"embedding":"!!!"}]}`,
		"NaN base64":      `{"data":[{"index":0,"embedding":"` + b64(float32(math.NaN())) + `"}]}`,
		"no data":         `{"object":"list"}`,
	} {
		t.Run(name, func(t *testing.T) {
			f := newFake(t)
			f.handle = func(_ int, w http.ResponseWriter, _ *http.Request, _ wireRequest) bool {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, body)
				return true
			}
			c, _ := newClient(t, f, nil)
			if got, err := c.Embed(context.Background(), []string{"a"}); err == nil {
				t.Fatalf("got %v, want an error", got)
			}
			if n := f.calls.Load(); n != 1 {
				t.Fatalf("%d requests, want 1", n)
			}
		})
	}
}

func b64(v ...float32) string {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}

func TestBase64Embedding(t *testing.T) {
	f := newFake(t)
	f.handle = func(_ int, w http.ResponseWriter, _ *http.Request, req wireRequest) bool {
		items := make([]wireItem, len(req.Input))
		for i, in := range req.Input {
			items[i] = wireItem{Index: i, Embedding: b64(vecFor(in)...)}
		}
		writeJSON(w, http.StatusOK, map[string]any{"data": items})
		return true
	}
	c, _ := newClient(t, f, nil)
	in := texts(3)
	got, err := c.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkVecs(t, in, "", got)
}

func TestQueryPrefix(t *testing.T) {
	f := newFake(t)
	c, _ := newClient(t, f, func(o *Options) {
		o.QueryPrefix = "query: "
		o.PassagePrefix = "passage: "
	})
	in := []string{"how do I cache vectors"}
	got, err := embed.Queries(context.Background(), c, in)
	if err != nil {
		t.Fatal(err)
	}
	checkVecs(t, in, "query: ", got)
	if f.requests()[0].Input[0] != "query: how do I cache vectors" {
		t.Fatalf("sent %q", f.requests()[0].Input[0])
	}
}

func TestEmptyInput(t *testing.T) {
	f := newFake(t)
	c, _ := newClient(t, f, nil)
	got, err := c.Embed(context.Background(), nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("got %v, %v", got, err)
	}
	if n := f.calls.Load(); n != 0 {
		t.Fatalf("%d requests for no texts", n)
	}
}

func TestBaseURLForms(t *testing.T) {
	for _, base := range []string{"http://h:8000", "http://h:8000/", "http://h:8000/v1", "http://h:8000/v1/"} {
		c, err := New(Options{Config: remote.Config{BaseURL: base, Model: "m"}})
		if err != nil {
			t.Fatal(err)
		}
		if c.Endpoint() != "http://h:8000/v1/embeddings" {
			t.Errorf("%s → %s", base, c.Endpoint())
		}
	}
	c, err := New(Options{Config: remote.Config{BaseURL: "https://gw.example.com/openai/v1", Model: "m"}})
	if err != nil || c.Endpoint() != "https://gw.example.com/openai/v1/embeddings" {
		t.Fatalf("%v %v", c, err)
	}
	for _, bad := range []string{"h:8000", "ftp://h", "http://", "http://user:pw@h", "::"} {
		if _, err := New(Options{Config: remote.Config{BaseURL: bad, Model: "m"}}); err == nil {
			t.Errorf("BaseURL %q accepted", bad)
		} else if strings.Contains(err.Error(), "pw") {
			t.Errorf("error echoes credentials: %v", err)
		}
	}
	if _, err := New(Options{Config: remote.Config{BaseURL: "http://h"}}); err == nil {
		t.Error("missing Model accepted")
	}
}

func TestModelID(t *testing.T) {
	id := func(o Options) string {
		o.APIKey = "k"
		if o.Model == "" {
			o.Model = "text-embedding-3-small"
		}
		c, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		return c.ModelID()
	}
	base := id(Options{Config: remote.Config{BaseURL: "http://h:1/v1"}})
	if base != id(Options{Config: remote.Config{BaseURL: "https://h:1"}}) {
		t.Error("ModelID depends on the scheme or the /v1 suffix")
	}
	if id(Options{Config: remote.Config{BaseURL: "http://h:1", APIKey: "other", BatchSize: 3, Concurrency: 9}}) != base {
		t.Error("ModelID depends on settings that do not change vectors")
	}
	variants := []string{
		base,
		id(Options{Config: remote.Config{BaseURL: "http://other:1"}}),
		id(Options{Config: remote.Config{BaseURL: "http://h:1", Model: "text-embedding-3-large"}}),
		id(Options{Config: remote.Config{BaseURL: "http://h:1", Dimensions: 256}}),
		id(Options{Config: remote.Config{BaseURL: "http://h:1", QueryPrefix: "query: "}}),
		id(Options{Config: remote.Config{BaseURL: "http://h:1", PassagePrefix: "query: "}}),
		id(Options{Config: remote.Config{BaseURL: "http://h:1", PassagePrefix: "passage: "}}),
	}
	seen := map[string]bool{}
	for _, v := range variants {
		if seen[v] {
			t.Errorf("duplicate ModelID %q", v)
		}
		seen[v] = true
		if strings.Contains(v, "k") && strings.Contains(v, "APIKey") {
			t.Errorf("ModelID %q mentions the key", v)
		}
	}
	if !strings.Contains(base, "h%3A1") || !strings.Contains(base, "text-embedding-3-small") {
		t.Errorf("ModelID %q lacks host or model", base)
	}
}

func TestConcurrentEmbed(t *testing.T) {
	f := newFake(t)
	f.shuffle = true
	c, _ := newClient(t, f, func(o *Options) { o.BatchSize = 7 })
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			in := texts(20 + g)
			got, err := c.Embed(context.Background(), in)
			if err != nil {
				t.Error(err)
				return
			}
			for i := range in {
				if !slices.Equal(got[i], vecFor(in[i])) {
					t.Errorf("goroutine %d vector %d wrong", g, i)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestReal runs against a real endpoint when CTXSEL_TEST_OPENAI_BASE_URL and
// CTXSEL_TEST_OPENAI_MODEL are set (key in OPENAI_API_KEY).
func TestReal(t *testing.T) {
	base, model := os.Getenv("CTXSEL_TEST_OPENAI_BASE_URL"), os.Getenv("CTXSEL_TEST_OPENAI_MODEL")
	if base == "" || model == "" {
		t.Skip("set CTXSEL_TEST_OPENAI_BASE_URL and CTXSEL_TEST_OPENAI_MODEL (and OPENAI_API_KEY) to run")
	}
	c, err := New(Options{Config: remote.Config{BaseURL: base, Model: model, APIKey: os.Getenv("OPENAI_API_KEY"), BatchSize: 2}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	in := []string{"the cat sat on the mat", "a feline rested on the rug", "quarterly tax filing deadline"}
	got, err := c.Embed(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := embed.CheckVectors(got, len(in)); err != nil {
		t.Fatal(err)
	}
	if cos(got[0], got[1]) <= cos(got[0], got[2]) {
		t.Errorf("paraphrase not closer than unrelated text: %.3f vs %.3f", cos(got[0], got[1]), cos(got[0], got[2]))
	}
	t.Logf("%s: dim %d, usage %+v", c.ModelID(), len(got[0]), c.Usage())
}

func cos(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}
