package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
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
)

func vecFor(text string) []float32 {
	var sum int
	for _, b := range []byte(text) {
		sum += int(b)
	}
	return []float32{float32(len(text)), float32(sum % 997), 1}
}

type wireRequest struct {
	Model      string          `json:"model"`
	Input      []string        `json:"input"`
	Truncate   *bool           `json:"truncate"`
	KeepAlive  json.RawMessage `json:"keep_alive"`
	Dimensions *int            `json:"dimensions"`
}

// fakeServer speaks Ollama's /api/embed wire format.
type fakeServer struct {
	*httptest.Server
	calls  atomic.Int32
	mu     sync.Mutex
	reqs   []wireRequest
	auth   []string
	handle func(n int, w http.ResponseWriter, r *http.Request, req wireRequest) bool
}

func newFake(t *testing.T) *fakeServer {
	f := &fakeServer{}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	n := int(f.calls.Add(1))
	if r.Method != http.MethodPost || r.URL.Path != "/api/embed" {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "404 page not found"})
		return
	}
	var req wireRequest
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid JSON"})
		return
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.mu.Unlock()
	if f.handle != nil && f.handle(n, w, r, req) {
		return
	}
	embs := make([][]float32, len(req.Input))
	for i, in := range req.Input {
		embs[i] = vecFor(in)
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"model": req.Model, "embeddings": embs,
		"total_duration": 1234, "load_duration": 12, "prompt_eval_count": len(req.Input),
	})
}

func (f *fakeServer) requests() []wireRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reqs)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

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
	o := Options{Config: remote.Config{BaseURL: f.URL, Model: "nomic-embed-text:v1.5"}, sleep: sl.sleep}
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
		out[i] = fmt.Sprintf("text number %d %s", i, strings.Repeat("y", i%5))
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

func TestBatching(t *testing.T) {
	f := newFake(t)
	tr := true
	c, _ := newClient(t, f, func(o *Options) {
		o.BatchSize = 10
		o.Concurrency = 2
		o.PassagePrefix = "search_document: "
		o.Truncate = &tr
		o.KeepAlive = "10m"
	})
	in := texts(35)
	got, err := c.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkVecs(t, in, "search_document: ", got)
	reqs := f.requests()
	var sizes []int
	for _, r := range reqs {
		sizes = append(sizes, len(r.Input))
		if r.Model != "nomic-embed-text:v1.5" || r.Truncate == nil || !*r.Truncate ||
			string(r.KeepAlive) != `"10m"` || r.Dimensions != nil {
			t.Fatalf("request fields: %+v", r)
		}
	}
	slices.Sort(sizes)
	if !slices.Equal(sizes, []int{5, 10, 10, 10}) {
		t.Fatalf("batch sizes %v", sizes)
	}
}

func TestOptionalFieldsOmitted(t *testing.T) {
	f := newFake(t)
	c, _ := newClient(t, f, nil)
	if _, err := c.Embed(context.Background(), texts(1)); err != nil {
		t.Fatal(err)
	}
	r := f.requests()[0]
	if r.Truncate != nil || r.KeepAlive != nil || r.Dimensions != nil {
		t.Fatalf("unset options were sent: %+v", r)
	}
	f.mu.Lock()
	a := f.auth[0]
	f.mu.Unlock()
	if a != "" {
		t.Fatalf("Authorization sent without a key: %q", a)
	}
}

func Test429RetryAfterThenSuccess(t *testing.T) {
	f := newFake(t)
	f.handle = func(n int, w http.ResponseWriter, _ *http.Request, _ wireRequest) bool {
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			writeJSON(w, http.StatusTooManyRequests, map[string]string{"error": "server busy, please try again.  maximum pending requests exceeded"})
			return true
		}
		return false
	}
	c, sl := newClient(t, f, nil)
	in := texts(3)
	got, err := c.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkVecs(t, in, "", got)
	if n := f.calls.Load(); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
	if d := sl.got(); len(d) != 1 || d[0] != time.Second {
		t.Fatalf("waits %v, want [1s]", d)
	}
}

func Test503ThenSuccess(t *testing.T) {
	f := newFake(t)
	f.handle = func(n int, w http.ResponseWriter, _ *http.Request, _ wireRequest) bool {
		if n == 1 {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "model is loading"})
			return true
		}
		return false
	}
	c, sl := newClient(t, f, nil)
	if _, err := c.Embed(context.Background(), texts(2)); err != nil {
		t.Fatal(err)
	}
	if n := f.calls.Load(); n != 2 || len(sl.got()) != 1 {
		t.Fatalf("%d requests, %d waits", n, len(sl.got()))
	}
}

func TestModelNotFoundNoRetry(t *testing.T) {
	f := newFake(t)
	f.handle = func(_ int, w http.ResponseWriter, _ *http.Request, req wireRequest) bool {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("model %q not found, try pulling it first", req.Model)})
		return true
	}
	c, sl := newClient(t, f, nil)
	_, err := c.Embed(context.Background(), texts(2))
	if err == nil || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), "try pulling it first") {
		t.Fatalf("err = %v", err)
	}
	if n := f.calls.Load(); n != 1 || len(sl.got()) != 0 {
		t.Fatalf("%d requests, %d waits; want 1 and 0", n, len(sl.got()))
	}
}

func Test400NoRetry(t *testing.T) {
	f := newFake(t)
	f.handle = func(_ int, w http.ResponseWriter, _ *http.Request, _ wireRequest) bool {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "the input length exceeds the context length"})
		return true
	}
	c, _ := newClient(t, f, nil)
	_, err := c.Embed(context.Background(), texts(2))
	if err == nil || !strings.Contains(err.Error(), "input length exceeds the context length") || !strings.Contains(err.Error(), "400") {
		t.Fatalf("err = %v", err)
	}
	if n := f.calls.Load(); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
}

func TestAuthHeaderAndKeyNotInErrors(t *testing.T) {
	const key = "ollama-SECRET-key"
	f := newFake(t)
	f.handle = func(n int, w http.ResponseWriter, _ *http.Request, _ wireRequest) bool {
		if n == 2 {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "bad token " + key})
			return true
		}
		return false
	}
	c, _ := newClient(t, f, func(o *Options) { o.APIKey = key })
	if _, err := c.Embed(context.Background(), texts(1)); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	auth := f.auth[0]
	f.mu.Unlock()
	if auth != "Bearer "+key {
		t.Fatalf("Authorization = %q", auth)
	}
	_, err := c.Embed(context.Background(), texts(1))
	if err == nil || strings.Contains(fmt.Sprintf("%v %+v %#v", err, err, err), key) {
		t.Fatalf("err = %v (must exist and not contain the key)", err)
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newFake(t)
	f.handle = func(_ int, w http.ResponseWriter, _ *http.Request, _ wireRequest) bool {
		w.Header().Set("Retry-After", "3600")
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "busy"})
		// Cancel once the client is (most likely) asleep for the hour.
		time.AfterFunc(20*time.Millisecond, cancel)
		return true
	}
	c, err := New(Options{Config: remote.Config{BaseURL: f.URL, Model: "m", RetryMaxDelay: 2 * time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Embed(ctx, texts(2))
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

func TestNetworkErrorRetried(t *testing.T) {
	f := newFake(t)
	f.handle = func(n int, w http.ResponseWriter, _ *http.Request, _ wireRequest) bool {
		if n == 1 {
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				conn.Close()
			}
			return true
		}
		return false
	}
	c, _ := newClient(t, f, nil)
	in := texts(2)
	got, err := c.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkVecs(t, in, "", got)
	if n := f.calls.Load(); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
}

func TestServerDownRetriedThenFails(t *testing.T) {
	f := newFake(t)
	url := f.URL
	f.Close() // nothing listens any more: connection refused
	c, err := New(Options{Config: remote.Config{BaseURL: url, Model: "m", MaxRetries: 2}, sleep: (&sleeps{}).sleep})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Embed(context.Background(), texts(1))
	if err == nil || !strings.Contains(err.Error(), "after 3 attempts") {
		t.Fatalf("err = %v", err)
	}
}

func TestDimensionMismatch(t *testing.T) {
	f := newFake(t)
	f.handle = func(n int, w http.ResponseWriter, _ *http.Request, req wireRequest) bool {
		embs := make([][]float32, len(req.Input))
		for i, in := range req.Input {
			embs[i] = vecFor(in)
			if i == 1 {
				embs[i] = append(embs[i], 9)
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"embeddings": embs})
		return true
	}
	c, _ := newClient(t, f, nil)
	if _, err := c.Embed(context.Background(), texts(3)); err == nil || !strings.Contains(err.Error(), "dimension") {
		t.Fatalf("err = %v, want a dimension error", err)
	}

	f2 := newFake(t)
	c, _ = newClient(t, f2, func(o *Options) { o.Dimensions = 768 })
	if _, err := c.Embed(context.Background(), texts(3)); err == nil || !strings.Contains(err.Error(), "want 768") {
		t.Fatalf("err = %v, want a dimension error", err)
	}
	if d := f2.requests()[0].Dimensions; d == nil || *d != 768 {
		t.Fatalf("dimensions sent = %v", d)
	}
}

func TestCountMismatch(t *testing.T) {
	f := newFake(t)
	f.handle = func(_ int, w http.ResponseWriter, _ *http.Request, req wireRequest) bool {
		writeJSON(w, http.StatusOK, map[string]any{"embeddings": [][]float32{vecFor(req.Input[0])}})
		return true
	}
	c, _ := newClient(t, f, nil)
	if _, err := c.Embed(context.Background(), texts(2)); err == nil || !strings.Contains(err.Error(), "1 embeddings for 2 inputs") {
		t.Fatalf("err = %v", err)
	}
}

func TestMalformedResponses(t *testing.T) {
	for name, body := range map[string]string{
		"not json":      `Internal Server Error`,
		"truncated":     `{"model":"m","embeddings":[[0.1,0.2`,
		"wrong type":    `{"embeddings":"nope"}`,
		"empty vector":  `{"embeddings":[[]]}`,
		"null vector":   `{"embeddings":[null]}`,
		"float32 range": `{"embeddings":[[1e39]]}`,
		"missing":       `{"model":"m"}`,
	} {
		t.Run(name, func(t *testing.T) {
			f := newFake(t)
			f.handle = func(_ int, w http.ResponseWriter, _ *http.Request, _ wireRequest) bool {
				_, _ = io.WriteString(w, body)
				return true
			}
			c, _ := newClient(t, f, nil)
			if got, err := c.Embed(context.Background(), []string{"a"}); err == nil {
				t.Fatalf("got %v, want an error", got)
			}
		})
	}
}

func TestQueryPrefix(t *testing.T) {
	f := newFake(t)
	c, _ := newClient(t, f, func(o *Options) {
		o.QueryPrefix = "search_query: "
		o.PassagePrefix = "search_document: "
	})
	in := []string{"what is ctxsel"}
	got, err := embed.Queries(context.Background(), c, in)
	if err != nil {
		t.Fatal(err)
	}
	checkVecs(t, in, "search_query: ", got)
}

func TestParseHost(t *testing.T) {
	for in, want := range map[string]string{
		"":                          "http://127.0.0.1:11434",
		"0.0.0.0":                   "http://0.0.0.0:11434",
		"example.com":               "http://example.com:11434",
		"example.com:8080":          "http://example.com:8080",
		":1234":                     "http://127.0.0.1:1234",
		"http://example.com":        "http://example.com:80",
		"https://example.com":       "https://example.com:443",
		"https://example.com:9000/": "https://example.com:9000",
		"http://h:1/ollama":         "http://h:1/ollama",
		"[::1]:11434":               "http://[::1]:11434",
		"::1":                       "http://[::1]:11434",
	} {
		u, err := ParseHost(in)
		if err != nil {
			t.Errorf("ParseHost(%q): %v", in, err)
			continue
		}
		if got := strings.TrimSuffix(u.String(), "/"); got != want {
			t.Errorf("ParseHost(%q) = %s, want %s", in, got, want)
		}
	}
	// Stricter than the ollama CLI, as the chat client (llm) always was: a
	// bad port or a space is an error, not the default port.
	for _, bad := range []string{"ftp://h", "http://u:p@h", "h?x=1", "h:99999", "h x:1"} {
		if _, err := ParseHost(bad); err == nil {
			t.Errorf("ParseHost(%q) accepted", bad)
		}
		if _, err := New(Options{Config: remote.Config{Model: "m", BaseURL: bad}}); err == nil || !strings.Contains(err.Error(), "host") {
			t.Errorf("New with BaseURL %q: %v", bad, err)
		}
	}
}

func TestBaseURLFromEnv(t *testing.T) {
	t.Setenv(EnvHost, "ollama.internal:7000")
	c, err := New(Options{Config: remote.Config{Model: "m"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Endpoint() != "http://ollama.internal:7000/api/embed" {
		t.Fatalf("endpoint %s", c.Endpoint())
	}
	t.Setenv(EnvHost, "")
	c, _ = New(Options{Config: remote.Config{Model: "m"}})
	if c.Endpoint() != "http://127.0.0.1:11434/api/embed" {
		t.Fatalf("endpoint %s", c.Endpoint())
	}
	c, _ = New(Options{Config: remote.Config{Model: "m", BaseURL: "http://h:1/api/"}})
	if c.Endpoint() != "http://h:1/api/embed" {
		t.Fatalf("endpoint %s", c.Endpoint())
	}
	if _, err := New(Options{Config: remote.Config{Model: "m"}, KeepAlive: "-1"}); err == nil {
		t.Fatal("bad KeepAlive accepted")
	}
}

func TestModelID(t *testing.T) {
	tr, fa := true, false
	id := func(o Options) string {
		if o.Model == "" {
			o.Model = "nomic-embed-text"
		}
		if o.BaseURL == "" {
			o.BaseURL = "http://h:1"
		}
		c, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		return c.ModelID()
	}
	base := id(Options{})
	if id(Options{Config: remote.Config{BatchSize: 3, Concurrency: 4}, KeepAlive: "1m"}) != base {
		t.Error("ModelID depends on settings that do not change vectors")
	}
	seen := map[string]bool{}
	for _, v := range []string{
		base,
		id(Options{Config: remote.Config{BaseURL: "http://other:1"}}),
		id(Options{Config: remote.Config{Model: "mxbai-embed-large"}}),
		id(Options{Config: remote.Config{Dimensions: 256}}),
		id(Options{Truncate: &tr}),
		id(Options{Truncate: &fa}),
		id(Options{Config: remote.Config{QueryPrefix: "q: "}}),
		id(Options{Config: remote.Config{PassagePrefix: "q: "}}),
	} {
		if seen[v] {
			t.Errorf("duplicate ModelID %q", v)
		}
		seen[v] = true
	}
}

func TestEmptyInputAndNaNFree(t *testing.T) {
	f := newFake(t)
	c, _ := newClient(t, f, nil)
	got, err := c.Embed(context.Background(), []string{})
	if err != nil || len(got) != 0 || f.calls.Load() != 0 {
		t.Fatalf("got %v, %v after %d calls", got, err, f.calls.Load())
	}
	got, err = c.Embed(context.Background(), []string{""})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range got[0] {
		if math.IsNaN(float64(x)) {
			t.Fatal("NaN")
		}
	}
}

// TestReal runs against a real Ollama when CTXSEL_TEST_OLLAMA_HOST and
// CTXSEL_TEST_OLLAMA_MODEL are set.
func TestReal(t *testing.T) {
	host, model := os.Getenv("CTXSEL_TEST_OLLAMA_HOST"), os.Getenv("CTXSEL_TEST_OLLAMA_MODEL")
	if host == "" || model == "" {
		t.Skip("set CTXSEL_TEST_OLLAMA_HOST and CTXSEL_TEST_OLLAMA_MODEL to run")
	}
	c, err := New(Options{Config: remote.Config{BaseURL: host, Model: model, BatchSize: 2, Timeout: 5 * time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	in := []string{"the cat sat on the mat", "a feline rested on the rug", "quarterly tax filing deadline"}
	got, err := c.Embed(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if cos(got[0], got[1]) <= cos(got[0], got[2]) {
		t.Errorf("paraphrase not closer than unrelated text: %.3f vs %.3f", cos(got[0], got[1]), cos(got[0], got[2]))
	}
	t.Logf("%s: dim %d", c.ModelID(), len(got[0]))
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
