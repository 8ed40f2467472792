package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// rerankErr is the rerank routes' error body: Cohere's message, Jina's
// detail and ctxsel's own object.
type rerankErr struct {
	Message string `json:"message"`
	Detail  string `json:"detail"`
	Error   struct {
		Message string `json:"message"`
		Field   string `json:"field"`
	} `json:"error"`
}

func TestRerankErrorsInWireShapes(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.APIKeys = []string{"k"}; c.MaxTextBytes = 64 }, Options{Embedder: fakeEmbedder{}})
	auth := []string{"Authorization", "Bearer k"}
	for _, path := range []string{"/v1/rerank", "/v2/rerank"} {
		for _, tc := range []struct {
			method, body string
			headers      []string
			status       int
			field, inMsg string
		}{
			{"POST", `{"model":"ctxsel-nope","query":"q","documents":["a"]}`, auth, 400, "model", "unknown strategy"},
			{"POST", `{"query":"q","documents":[{"image":"data:image/png;base64,AAAA"}]}`, auth, 400, "documents[0]", "no text to rank"},
			{"POST", `{"query":"q","documents":["` + strings.Repeat("a", 65) + `"]}`, auth, 413, "documents[0]", "max_text_bytes"},
			{"POST", `{"query":"q","documents":["a"]}`, nil, 401, "Authorization", "API key"},
			{"GET", "", auth, 405, "", "not allowed"},
		} {
			rec := call(t, s, tc.method, path, tc.body, tc.headers...)
			var e rerankErr
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
				t.Fatalf("%s %s: %v: %s", path, tc.body, err, rec.Body)
			}
			want := e.Error.Message
			if tc.field != "" {
				want = tc.field + ": " + want
			}
			if rec.Code != tc.status || e.Error.Field != tc.field || !strings.Contains(e.Error.Message, tc.inMsg) ||
				e.Message != want || e.Detail != want {
				t.Errorf("%s %s %.60s: %d %s\nwant %d with message = detail = %q", path, tc.method, tc.body, rec.Code, rec.Body, tc.status, want)
			}
		}
	}
	// Other routes keep ctxsel's shape alone.
	rec := call(t, s, "POST", "/v1/select", `{"candidates":[],"x":1}`, auth...)
	if strings.Contains(rec.Body.String(), `"detail"`) || !strings.Contains(rec.Body.String(), `"error":{`) {
		t.Errorf("/v1/select error: %s", rec.Body)
	}
	rec = call(t, s, "POST", "/v1/select", readmeExample)
	if rec.Code != 401 || rec.Header().Get("WWW-Authenticate") == "" || strings.Contains(rec.Body.String(), `"detail"`) {
		t.Errorf("/v1/select without a key: %d %q %s", rec.Code, rec.Header().Get("WWW-Authenticate"), rec.Body)
	}
}

// TestRerankSaysItsScoring: every rerank response names its scoring, in
// the body and in a header, the BM25 fallback of a server without an
// embedder included.
func TestRerankSaysItsScoring(t *testing.T) {
	body := `{"query":"capital","documents":["capital city","zzz"]}`
	for _, tc := range []struct {
		opts    Options
		body    string
		scoring string
	}{
		{Options{Embedder: fakeEmbedder{}}, body, "dense"},
		{Options{Embedder: fakeEmbedder{}}, `{"query":"capital","documents":["capital city","zzz"],"scoring":"hybrid"}`, "hybrid"},
		{Options{}, body, "bm25"},
	} {
		rec := call(t, newTestServer(t, nil, tc.opts), "POST", "/v1/rerank", tc.body)
		var r struct {
			Ctxsel struct{ Scoring string } `json:"ctxsel"`
		}
		_ = json.Unmarshal(rec.Body.Bytes(), &r)
		if rec.Code != 200 || r.Ctxsel.Scoring != tc.scoring || rec.Header().Get("X-Ctxsel-Scoring") != tc.scoring {
			t.Errorf("%s: %d scoring %q header %q, want %q", tc.body, rec.Code, r.Ctxsel.Scoring, rec.Header().Get("X-Ctxsel-Scoring"), tc.scoring)
		}
	}
}

// TestMCPWithoutKeyNoOAuth: /mcp refuses a missing or wrong key with 403,
// a JSON-RPC error carrying ctxsel's message and no WWW-Authenticate
// challenge, so a client does not start an OAuth flow (the TypeScript
// SDK's behaviour is pinned in clienttest).
func TestMCPWithoutKeyNoOAuth(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.APIKeys = []string{"secret"} }, Options{MCP: true})
	for _, key := range []string{"", "Bearer wrong"} {
		for _, method := range []string{"POST", "GET", "DELETE"} {
			rec := call(t, s, method, "/mcp", `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`, "Authorization", key)
			var e struct {
				JSONRPC string `json:"jsonrpc"`
				Error   struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			_ = json.Unmarshal(rec.Body.Bytes(), &e)
			if rec.Code != http.StatusForbidden || rec.Header().Get("WWW-Authenticate") != "" || e.JSONRPC != "2.0" ||
				e.Error.Code != codeUnauthorized || !strings.Contains(e.Error.Message, "API key") {
				t.Errorf("%s /mcp key %q: %d WWW-Authenticate %q %s", method, key, rec.Code, rec.Header().Get("WWW-Authenticate"), rec.Body)
			}
		}
	}
}
