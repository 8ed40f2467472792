package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// countingAsker counts the calls that reached the back end.
type countingAsker struct{ calls *atomic.Int32 }

func (a countingAsker) Ask(ctx context.Context, req AskRequest) (AskResponse, error) {
	a.calls.Add(1)
	return fakeAsker{}.Ask(ctx, req)
}

func (a countingAsker) Search(ctx context.Context, query string, n int) ([]Passage, error) {
	a.calls.Add(1)
	return []Passage{{ID: "a", Score: 1, Text: "x"}}, nil
}

// stdioTool calls one tool over ctxsel mcp's stdio transport and returns
// the tool result's error text ("" for a success) or the JSON-RPC error.
func stdioTool(t *testing.T, s *Server, tool, args string) string {
	t.Helper()
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
	replies := replyTo(serveStdio(t, s, stdioInit+"\n"+stdioInitialized+"\n"+call+"\n"), "2")
	if len(replies) != 1 {
		t.Fatalf("%s over stdio: %d replies", tool, len(replies))
	}
	if replies[0].Error != nil {
		return fmt.Sprintf("JSON-RPC error %d: %s", replies[0].Error.Code, replies[0].Error.Message)
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(replies[0].Result, &res); err != nil {
		t.Fatal(err)
	}
	if !res.IsError {
		return ""
	}
	return res.Content[0].(*mcp.TextContent).Text
}

// One bound, every transport: a query over max_text_bytes is refused by
// /v1/ask, /v1/rerank and the MCP search and ask tools, in memory, over
// stdio and over /mcp, naming the field, before the back end is called.
func TestBoundsQueryOnEveryTransport(t *testing.T) {
	var calls atomic.Int32
	s := newTestServer(t, func(c *Config) { c.MaxTextBytes = 100 }, Options{MCP: true, Asker: countingAsker{&calls}, Embedder: fakeEmbedder{}})
	long := strings.Repeat("q", 101)
	for _, path := range []string{"/v1/ask", "/v1/rerank"} {
		rec := call(t, s, "POST", path, `{"query":"`+long+`","documents":["a"]}`)
		if path == "/v1/ask" {
			rec = call(t, s, "POST", path, `{"query":"`+long+`"}`)
		}
		if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), `"field":"query"`) {
			t.Errorf("%s: %d %s", path, rec.Code, rec.Body)
		}
	}
	cs := connectMemory(t, s)
	for _, tool := range []string{"search", "ask"} {
		args := map[string]any{"query": long}
		if msg := errorText(callTool(t, cs, tool, args, nil)); !strings.Contains(msg, "query:") || !strings.Contains(msg, "max_text_bytes") {
			t.Errorf("MCP %s in memory: %q", tool, msg)
		}
		if msg := stdioTool(t, s, tool, `{"query":"`+long+`"}`); !strings.Contains(msg, "query:") || !strings.Contains(msg, "max_text_bytes") {
			t.Errorf("MCP %s over stdio: %q", tool, msg)
		}
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	hcs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hcs.Close()
	if msg := errorText(callTool(t, hcs, "search", map[string]any{"query": long}, nil)); !strings.Contains(msg, "max_text_bytes") {
		t.Errorf("MCP search over /mcp: %q", msg)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the back end was called %d times for refused requests", n)
	}
	// Within the bound, each path reaches it.
	if msg := errorText(callTool(t, cs, "search", map[string]any{"query": "fine"}, nil)); msg != "" || calls.Load() != 1 {
		t.Errorf("a query within the bound: %q, %d calls", msg, calls.Load())
	}
}

// top_n and the retriever are checked before any work, naming the field.
func TestBoundsTopNAndRetriever(t *testing.T) {
	var calls atomic.Int32
	s := newTestServer(t, func(c *Config) { c.MaxCandidates = 50 }, Options{Asker: countingAsker{&calls}})
	for _, tc := range []struct{ body, field string }{
		{`{"query":"q","top_n":51}`, "top_n"},
		{`{"query":"q","retriever":"vectors"}`, "retriever"},
	} {
		rec := call(t, s, "POST", "/v1/ask", tc.body)
		if rec.Code/100 != 4 || !strings.Contains(rec.Body.String(), `"field":"`+tc.field+`"`) {
			t.Errorf("%s: %d %s", tc.body, rec.Code, rec.Body)
		}
	}
	if msg := errorText(callTool(t, connectMemory(t, s), "search", map[string]any{"query": "q", "top_n": 51}, nil)); !strings.Contains(msg, "top_n") {
		t.Errorf("search top_n: %q", msg)
	}
	if calls.Load() != 0 {
		t.Errorf("the back end was called %d times", calls.Load())
	}
}

// stuckAsker ignores its context (CPU-bound work on a large input) and
// returns only when released or after a long while.
type stuckAsker struct{ release chan struct{} }

func (a stuckAsker) wait() {
	select {
	case <-a.release:
	case <-time.After(20 * time.Second):
	}
}

func (a stuckAsker) Ask(ctx context.Context, req AskRequest) (AskResponse, error) {
	a.wait()
	return fakeAsker{}.Ask(context.Background(), req)
}

func (a stuckAsker) Search(ctx context.Context, query string, n int) ([]Passage, error) {
	a.wait()
	return []Passage{{ID: "a", Score: 1}}, nil
}

// The deadline is request_timeout on every transport, even when the back
// end does not watch its context: the request ends with a timeout that
// says which deadline passed, not with the back end's late answer.
func TestBoundsDeadlineOnEveryTransport(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	s := newTestServer(t, func(c *Config) { c.RequestTimeout = Duration(100 * time.Millisecond) }, Options{Asker: stuckAsker{release}})
	rec := call(t, s, "POST", "/v1/ask", `{"query":"q"}`)
	if rec.Code != http.StatusGatewayTimeout || !strings.Contains(rec.Body.String(), "request_timeout") {
		t.Errorf("/v1/ask: %d %s", rec.Code, rec.Body)
	}
	cs := connectMemory(t, s)
	for _, tool := range []string{"search", "ask"} {
		if msg := errorText(callTool(t, cs, tool, map[string]any{"query": "q"}, nil)); !strings.Contains(msg, "timed out after 100ms") {
			t.Errorf("MCP %s: %q", tool, msg)
		}
		if msg := stdioTool(t, s, tool, `{"query":"q"}`); !strings.Contains(msg, "timed out after 100ms") {
			t.Errorf("MCP %s over stdio: %q", tool, msg)
		}
	}
}

// /mcp takes max_body_bytes as its body limit (not the SDK's 4 MiB), and
// answers over-long and malformed requests with JSON-RPC error objects,
// never plain text naming Go types.
func TestMCPHTTPBoundsAndErrorShape(t *testing.T) {
	post := func(s *Server, body string, header ...string) (int, string, string) {
		req := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
		req.Host = "127.0.0.1" // the server listens on loopback: only loopback Host values are served
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		b, _ := io.ReadAll(rec.Body)
		return rec.Code, rec.Header().Get("Content-Type"), string(b)
	}
	// 5 MiB of candidates: over the SDK's default, within max_body_bytes.
	big := newTestServer(t, func(c *Config) { c.MaxBodyBytes = 6 << 20 }, Options{MCP: true})
	pad := strings.Repeat("x", 5<<20)
	code, _, body := post(big, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"select_context","arguments":{"candidates":[{"id":"a","score":1,"meta":"`+pad+`"}]}}}`)
	if code != http.StatusOK || !strings.Contains(body, `\"ids\":[\"a\"]`) {
		t.Errorf("5 MiB within max_body_bytes: %d %.300s", code, body)
	}

	s := newTestServer(t, func(c *Config) { c.MaxBodyBytes = 4096; c.MaxInflightBodyBytes = 1 << 20 }, Options{MCP: true})
	for _, tc := range []struct {
		name, body string
		header     []string
		status     int
		code       int
	}{
		{"over max_body_bytes", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"p":"` + strings.Repeat("x", 5000) + `"}}`, nil, 413, -32600},
		{"not json", `not json`, nil, 400, -32700},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, nil, 400, -32600},
		{"numeric method", `{"jsonrpc":"2.0","id":3,"method":5}`, nil, 400, -32600},
		{"no version", `{"id":3,"method":"tools/list"}`, nil, 400, -32600},
		{"scalar", `7`, nil, 400, -32600},
		{"bad batch member", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"id":2}]`, nil, 400, -32600},
		{"wrong accept", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, []string{"Accept", "text/html"}, 400, -32600},
		{"wrong content type", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, []string{"Content-Type", "text/plain"}, 415, -32600},
	} {
		status, ctype, body := post(s, tc.body, tc.header...)
		var e struct {
			JSONRPC string `json:"jsonrpc"`
			Error   struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if status != tc.status || !strings.HasPrefix(ctype, "application/json") || json.Unmarshal([]byte(body), &e) != nil ||
			e.JSONRPC != "2.0" || e.Error.Code != tc.code || e.Error.Message == "" || strings.Contains(body, "Go ") || strings.Contains(body, "jsonrpc2.") {
			t.Errorf("%s: %d %s %s", tc.name, status, ctype, body)
		}
	}
	// A GET (no event streams on a stateless server) is JSON too.
	rec := call(t, s, "GET", "/mcp", "")
	if !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") || !strings.Contains(rec.Body.String(), `"jsonrpc":"2.0"`) {
		t.Errorf("GET /mcp: %d %s %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
}

// stuckEmbedder runs on past its context, as the offline model does on a
// long text.
type stuckEmbedder struct{ release chan struct{} }

func (e stuckEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	select {
	case <-e.release:
	case <-time.After(20 * time.Second):
	}
	return fakeEmbedder{}.Embed(context.Background(), texts)
}

func (stuckEmbedder) ModelID() string { return "stuck" }

// Every route that embeds ends at request_timeout even when the embedder
// does not watch its context.
func TestBoundsDeadlineOverEmbedder(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	s := newTestServer(t, func(c *Config) { c.RequestTimeout = Duration(100 * time.Millisecond) }, Options{Embedder: stuckEmbedder{release}})
	for path, body := range map[string]string{
		"/v1/select":     `{"query":"q","candidates":[{"id":"a","text":"x"}]}`,
		"/v1/rerank":     `{"query":"q","documents":["x"]}`,
		"/v1/embeddings": `{"input":"x"}`,
	} {
		rec := call(t, s, "POST", path, body)
		if rec.Code != http.StatusGatewayTimeout || !strings.Contains(rec.Body.String(), "request_timeout") {
			t.Errorf("%s: %d %s", path, rec.Code, rec.Body)
		}
	}
}
