package server

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/llm/llmtest"
	"github.com/ctxsel/ctxsel/picker"
)

// What a failing service behind the server may say: a key its error body
// echoes, its address, a damaged file's path and checksum.
const upstreamDetail = "HTTP 401: Incorrect API key provided: sk-live-5ecret; POST http://10.9.8.7:8000/v1 failed; " +
	"/srv/ctxsel/idx/seg-000003.ctxseg: checksum mismatch (computed 8f00aa11, manifest 1234abcd)"

var leaks = []string{"sk-live-5ecret", "10.9.8.7", "/srv/ctxsel", "seg-000003", "8f00aa11", "1234abcd"}

func leaked(s string) string {
	for _, l := range leaks {
		if strings.Contains(s, l) {
			return l
		}
	}
	return ""
}

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type failingAsker struct{ err error }

func (a failingAsker) Ask(context.Context, AskRequest) (AskResponse, error) {
	return AskResponse{}, a.err
}
func (a failingAsker) Search(context.Context, string, int) ([]Passage, error) {
	return nil, a.err
}

// An upstream failure reaches the client as what failed and the request
// id; the detail is in the log under that id, on /v1/ask and on the MCP
// ask and search tools (in memory and over stdio).
func TestUpstreamDetailStaysInTheLog(t *testing.T) {
	var logs syncBuffer
	s := newTestServer(t, nil, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), Asker: failingAsker{errors.New(upstreamDetail)}})
	rec := call(t, s, "POST", "/v1/ask", `{"query":"q"}`)
	id := rec.Header().Get("X-Request-Id")
	if rec.Code != http.StatusBadGateway || leaked(rec.Body.String()) != "" || !strings.Contains(rec.Body.String(), id) {
		t.Errorf("/v1/ask: %d %s", rec.Code, rec.Body)
	}
	if !strings.Contains(logs.String(), "request_id="+id) || !strings.Contains(logs.String(), "sk-live-5ecret") {
		t.Errorf("the detail is not logged with the request id: %s", logs.String())
	}
	cs := connectMemory(t, s)
	for _, tool := range []string{"ask", "search"} {
		msg := errorText(callTool(t, cs, tool, map[string]any{"query": "q"}, nil))
		if msg == "" || leaked(msg) != "" || !strings.Contains(msg, "request ") {
			t.Errorf("MCP %s: %q", tool, msg)
		}
		if msg := stdioTool(t, s, tool, `{"query":"q"}`); msg == "" || leaked(msg) != "" {
			t.Errorf("MCP %s over stdio: %q", tool, msg)
		}
	}
	// An LLM's own deadline is not request_timeout: the message says which.
	s = newTestServer(t, nil, Options{Asker: failingAsker{errors.Join(errors.New("llm: openai: call exceeded its total deadline of 8s"), context.DeadlineExceeded)}})
	rec = call(t, s, "POST", "/v1/ask", `{"query":"q"}`)
	if rec.Code != http.StatusGatewayTimeout || strings.Contains(rec.Body.String(), "1m0s") || !strings.Contains(rec.Body.String(), "service behind this server timed out") {
		t.Errorf("an upstream deadline: %d %s", rec.Code, rec.Body)
	}
}

// The picker's fallback reason names the kind of failure, not the LLM
// server's error body; the operator's log has the body.
func TestPickerCallFailureKeepsBodyInLog(t *testing.T) {
	srv := llmtest.New(nil)
	defer srv.Close()
	srv.Script(llmtest.Fault{Status: 401, Message: "Incorrect API key provided: sk-live-5ecret"})
	c, err := llm.NewOpenAI(llm.Options{BaseURL: srv.URL, Model: "m", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	p, err := picker.New(c, picker.Config{Budget: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	s := newTestServer(t, nil, Options{Picker: p, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	rec := call(t, s, "POST", "/v1/select", `{"query":"q","strategy":"picker","candidates":[{"id":"a","score":1,"text":"x"},{"id":"b","score":0.5,"text":"y"}]}`)
	if rec.Code != http.StatusOK || leaked(rec.Body.String()) != "" || !strings.Contains(rec.Body.String(), "HTTP 401") {
		t.Errorf("picker fallback: %d %s", rec.Code, rec.Body)
	}
	if !strings.Contains(logs.String(), "sk-live-5ecret") || !strings.Contains(logs.String(), "request_id=") {
		t.Errorf("the call's failure is not logged: %s", logs.String())
	}
}

type readiness struct {
	fakeAsker
	err *error
}

func (r readiness) Ready(context.Context) error { return *r.err }

// /readyz fails while the Asker's check fails (a damaged index), without
// the check's detail, and recovers when it passes; the change is logged
// once, not on every probe.
func TestReadyzFollowsTheIndexCheck(t *testing.T) {
	var logs syncBuffer
	var checkErr error
	s := newTestServer(t, nil, Options{Asker: readiness{err: &checkErr}, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if rec := call(t, s, "GET", "/readyz", ""); rec.Code != http.StatusOK {
		t.Fatalf("sound: %d", rec.Code)
	}
	checkErr = errors.New(upstreamDetail)
	for range 3 {
		if rec := call(t, s, "GET", "/readyz", ""); rec.Code != http.StatusServiceUnavailable || leaked(rec.Body.String()) != "" {
			t.Fatalf("damaged: %d %s", rec.Code, rec.Body)
		}
	}
	if n := strings.Count(logs.String(), "not ready"); n != 1 {
		t.Errorf("logged %d times: %s", n, logs.String())
	}
	checkErr = nil
	if rec := call(t, s, "GET", "/readyz", ""); rec.Code != http.StatusOK {
		t.Errorf("repaired: %d", rec.Code)
	}
}

// relayEmbedder is a remote embedder: its ModelID names its server.
type relayEmbedder struct{ fakeEmbedder }

func (relayEmbedder) ModelID() string {
	return "openai:base=10.9.8.7%3A8000&model=text-embedding-3-small"
}
func (relayEmbedder) ModelName() string { return "text-embedding-3-small" }

// /v1/embeddings over a relayed model reports and accepts the model's own
// name, and never the server's address.
func TestEmbeddingsRelayedModelName(t *testing.T) {
	s := newTestServer(t, nil, Options{Embedder: relayEmbedder{}})
	rec := call(t, s, "POST", "/v1/embeddings", `{"input":"hello","model":"text-embedding-3-small"}`)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"model":"text-embedding-3-small"`) || leaked(rec.Body.String()) != "" {
		t.Errorf("the relayed model: %d %.300s", rec.Code, rec.Body)
	}
	rec = call(t, s, "POST", "/v1/embeddings", `{"input":"hello","model":"other"}`)
	if rec.Code != http.StatusBadRequest || leaked(rec.Body.String()) != "" || !strings.Contains(rec.Body.String(), "text-embedding-3-small") {
		t.Errorf("another model: %d %s", rec.Code, rec.Body)
	}
	s = newTestServer(t, nil, Options{Embedder: relayEmbedder{fakeEmbedder{fail: errors.New(upstreamDetail)}}})
	rec = call(t, s, "POST", "/v1/embeddings", `{"input":"hello"}`)
	if rec.Code != http.StatusBadGateway || leaked(rec.Body.String()) != "" {
		t.Errorf("a failing embedder: %d %s", rec.Code, rec.Body)
	}
}
