package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxsel/ctxsel"
)

// connectMemory connects a Go SDK client to s's MCP server over the
// in-memory transport.
func connectMemory(t *testing.T, s *Server) *mcp.ClientSession {
	t.Helper()
	ctx := t.Context()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.MCPServer().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any, into any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	if into != nil && !res.IsError {
		text := res.Content[0].(*mcp.TextContent).Text
		if err := json.Unmarshal([]byte(text), into); err != nil {
			t.Fatalf("%s: %v: %s", name, err, text)
		}
		// The structured content is the same document.
		sc, _ := json.Marshal(res.StructuredContent)
		var a, b any
		_ = json.Unmarshal([]byte(text), &a)
		_ = json.Unmarshal(sc, &b)
		if ja, _ := json.Marshal(a); string(ja) != func() string { jb, _ := json.Marshal(b); return string(jb) }() {
			t.Errorf("%s: structured content differs from the text", name)
		}
	}
	return res
}

func errorText(res *mcp.CallToolResult) string {
	if !res.IsError || len(res.Content) == 0 {
		return ""
	}
	return res.Content[0].(*mcp.TextContent).Text
}

func TestMCPTools(t *testing.T) {
	cs := connectMemory(t, newTestServer(t, nil, Options{Asker: fakeAsker{}, Embedder: fakeEmbedder{}}))
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		schema, _ := json.Marshal(tool.InputSchema)
		if !strings.Contains(string(schema), `"type":"object"`) {
			t.Errorf("%s: input schema %s", tool.Name, schema)
		}
	}
	for _, tool := range tools.Tools {
		if schema, _ := json.Marshal(tool.InputSchema); tool.Name == "select_context" && !strings.Contains(string(schema), `"candidates"`) {
			t.Errorf("select_context schema lacks candidates: %s", schema)
		}
	}
	slices.Sort(names)
	if want := []string{"ask", "search", "select_context", "strategies"}; !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}

	var sel struct {
		IDs         []string `json:"ids"`
		K           int      `json:"k"`
		Explanation struct {
			Reason string `json:"reason"`
		} `json:"explanation"`
	}
	callTool(t, cs, "select_context", map[string]any{
		"candidates": []map[string]any{{"id": "a", "score": 0.9}, {"id": "b", "score": 0.85}, {"id": "c", "score": 0.1}},
		"strategy":   "adaptivek", "params": map[string]float64{"buffer": 0},
	}, &sel)
	if !slices.Equal(sel.IDs, []string{"a", "b"}) || sel.K != 2 || sel.Explanation.Reason == "" {
		t.Errorf("select_context: %+v", sel)
	}
	// Texts are embedded and scored against the query.
	callTool(t, cs, "select_context", map[string]any{"query": "capital",
		"candidates": []map[string]any{{"id": "x", "text": "zzz"}, {"id": "y", "text": "capital"}}, "strategy": "topk:k=1"}, &sel)
	if !slices.Equal(sel.IDs, []string{"y"}) {
		t.Errorf("select_context over texts: %+v", sel)
	}

	var search struct {
		Passages []struct {
			ID    string  `json:"id"`
			Score float64 `json:"score"`
			Text  string  `json:"text"`
		} `json:"passages"`
	}
	callTool(t, cs, "search", map[string]any{"query": "answer", "top_n": 2}, &search)
	if len(search.Passages) != 2 || search.Passages[0].ID != "top" || search.Passages[1].ID != "mid" {
		t.Errorf("search: %+v", search)
	}

	var ans struct {
		Answer string   `json:"answer"`
		IDs    []string `json:"ids"`
	}
	callTool(t, cs, "ask", map[string]any{"query": "what?", "strategy": "topk:k=1"}, &ans)
	if ans.Answer != "42" || !slices.Equal(ans.IDs, []string{"top"}) {
		t.Errorf("ask: %+v", ans)
	}

	var cat struct {
		Default       string `json:"default"`
		SelectDefault string `json:"select_default"`
		Strategies    []struct {
			Name string `json:"name"`
		} `json:"strategies"`
	}
	callTool(t, cs, "strategies", map[string]any{}, &cat)
	if cat.Default != ctxsel.DefaultStrategy || cat.SelectDefault != ctxsel.DefaultSelectStrategy || len(cat.Strategies) < 5 {
		t.Errorf("strategies: %+v", cat)
	}
}

// TestMCPToolErrors: bad input is a tool error (IsError) naming the field,
// never a protocol error.
func TestMCPToolErrors(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.MaxCandidates = 2 }, Options{})
	cs := connectMemory(t, s)
	for _, tc := range []struct {
		tool string
		args any
		want string
	}{
		{"select_context", map[string]any{"candidates": []map[string]any{{"id": "a", "score": 1}, {"id": "a", "score": 2}}}, "candidates[1].id"},
		{"select_context", map[string]any{"candidates": []map[string]any{{"id": "a", "score": 1}}, "strategy": "nope"}, "unknown strategy"},
		{"select_context", map[string]any{"candidates": []map[string]any{{"id": "a", "score": 1}, {"id": "b", "score": 1}, {"id": "c", "score": 1}}}, "more than 2"},
		{"select_context", map[string]any{"candidates": []map[string]any{}}, "no candidates"},
		{"select_context", map[string]any{"candidates": "a"}, "candidates"},
		{"select_context", map[string]any{"candidates": []map[string]any{{"id": "a", "text": "t"}}, "query": "q"}, "no embedder"},
		{"select_context", map[string]any{"candidates": []map[string]any{{"id": "a", "score": 1}}, "path": "/etc/passwd"}, "path"},
		{"search", map[string]any{"query": "q"}, "no index"},
		{"search", map[string]any{"query": " "}, "query"},
		{"ask", map[string]any{"query": "q"}, "no index"},
		{"ask", map[string]any{"query": "q", "strategy": "topk:k=0.5"}, "strategy"},
	} {
		res := callTool(t, cs, tc.tool, tc.args, nil)
		if msg := errorText(res); msg == "" || !strings.Contains(msg, tc.want) {
			t.Errorf("%s %v: IsError %v %q, want an error mentioning %q", tc.tool, tc.args, res.IsError, msg, tc.want)
		}
	}
}

// TestMCPStreamableHTTP: serve's /mcp, with its auth, reached by the Go
// SDK's streamable HTTP client.
func TestMCPStreamableHTTP(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.APIKeys = []string{"secret"} }, Options{MCP: true, Asker: fakeAsker{}})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()

	// Without the key: refused before the MCP layer.
	resp, err := http.Post(ts.URL+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("WWW-Authenticate") != "" {
		t.Fatalf("no key: %d, WWW-Authenticate %q (want 403 and no OAuth challenge: wireerrors.go)", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}

	hc := &http.Client{Transport: bearer{"secret", http.DefaultTransport}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var sel struct {
		IDs []string `json:"ids"`
	}
	callTool(t, cs, "select_context", map[string]any{
		"candidates": []map[string]any{{"id": "a", "score": 0.9}, {"id": "b", "score": 0.2}}, "strategy": "topk:k=1"}, &sel)
	if !slices.Equal(sel.IDs, []string{"a"}) {
		t.Errorf("select_context over HTTP: %+v", sel)
	}
	if msg := errorText(callTool(t, cs, "select_context", map[string]any{"candidates": []map[string]any{}}, nil)); !strings.Contains(msg, "no candidates") {
		t.Errorf("error over HTTP: %q", msg)
	}
	m := call(t, s, http.MethodGet, "/metrics", "", "Authorization", "Bearer secret").Body.String()
	if !strings.Contains(m, `route="/mcp"`) {
		t.Errorf("/mcp not in the metrics")
	}
	// Without Options.MCP there is no /mcp.
	if rec := call(t, newTestServer(t, nil, Options{}), http.MethodPost, "/mcp", `{}`); rec.Code != http.StatusNotFound {
		t.Errorf("/mcp without Options.MCP: %d", rec.Code)
	}
}

type bearer struct {
	key  string
	next http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.next.RoundTrip(r)
}
