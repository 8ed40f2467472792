package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

// openAIErr is the OpenAI routes' error body: OpenAI's error object (with
// ctxsel's field) and Jina's detail.
type openAIErr struct {
	Detail string `json:"detail"`
	Error  struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
		Field   string  `json:"field"`
	} `json:"error"`
}

func TestOpenAIErrorsInWireShape(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.APIKeys = []string{"k"} }, Options{Embedder: fakeEmbedder{}})
	auth := []string{"Authorization", "Bearer k"}
	for _, tc := range []struct {
		method, path, body string
		headers            []string
		status             int
		param, typ, code   string
		inMsg              string
	}{
		{"POST", "/v1/embeddings", `{"input":["a",""]}`, auth, 400, "input[1]", "invalid_request_error", "", "input[1]: empty string"},
		{"POST", "/v1/embeddings", `{"input":"a","dimensions":1024}`, auth, 400, "dimensions", "invalid_request_error", "", "1024: this model's vectors have 26"},
		{"POST", "/v1/embeddings", `{"input":"a","model":"jina-clip-v2"}`, auth, 400, "model", "invalid_request_error", "", "--embedding-alias jina-clip-v2=fake-letters"},
		{"POST", "/v1/embeddings", `{"input":"a"}`, nil, 401, "Authorization", "invalid_request_error", "invalid_api_key", "API key"},
		{"GET", "/v1/models/nope", "", auth, 404, "model", "invalid_request_error", "model_not_found", `"nope" is not served`},
		{"GET", "/v1/embeddings", "", auth, 405, "", "invalid_request_error", "", "not allowed"},
	} {
		rec := call(t, s, tc.method, tc.path, tc.body, tc.headers...)
		var e openAIErr
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
			t.Fatalf("%s %s: %v: %s", tc.path, tc.body, err, rec.Body)
		}
		param, code := "", ""
		if e.Error.Param != nil {
			param = *e.Error.Param
		}
		if e.Error.Code != nil {
			code = *e.Error.Code
		}
		msgOK := strings.Contains(e.Error.Message, tc.inMsg) && e.Detail == e.Error.Message &&
			(tc.param == "" || strings.HasPrefix(e.Error.Message, tc.param+": "))
		if rec.Code != tc.status || param != tc.param || e.Error.Field != tc.param || e.Error.Type != tc.typ || code != tc.code || !msgOK {
			t.Errorf("%s %s %s: %d %s\nwant %d, param %q, type %q, code %q, a message naming the field and containing %q, detail the same",
				tc.method, tc.path, tc.body, rec.Code, rec.Body, tc.status, tc.param, tc.typ, tc.code, tc.inMsg)
		}
	}
	// The 503 of a busy embedder is a server_error with the route's shape.
	var e openAIErr
	busy := newTestServer(t, func(c *Config) { c.EmbedConcurrency = 1; c.EmbedQueue = 0 }, Options{Embedder: fakeEmbedder{}})
	hold, _ := busy.embedder.(boundedEmbedder).limit.acquire(t.Context(), 1)
	rec := call(t, busy, "POST", "/v1/embeddings", `{"input":"a"}`)
	hold()
	if json.Unmarshal(rec.Body.Bytes(), &e); rec.Code != 503 || e.Error.Type != "server_error" || e.Error.Param != nil || !strings.Contains(e.Detail, "busy") {
		t.Errorf("busy: %d %s", rec.Code, rec.Body)
	}
}

// TestEmbeddingsModelAdvice: a model name no alias can serve gets no
// --embedding-alias advice: a rerank model's name is told where it
// belongs, a name the flag cannot carry is told the served model alone.
func TestEmbeddingsModelAdvice(t *testing.T) {
	s := newTestServer(t, nil, Options{Embedder: fakeEmbedder{}})
	for _, tc := range []struct{ model, want, not string }{
		{"ctxsel-adaptivek", "names a rerank strategy (POST /v1/rerank or /v2/rerank)", "--embedding-alias"},
		{"a=b", `send "model": "fake-letters"`, "--embedding-alias"},
		{"text-embedding-3-small", "--embedding-alias text-embedding-3-small=fake-letters", "rerank"},
	} {
		body, _ := json.Marshal(map[string]any{"input": "x", "model": tc.model})
		rec := call(t, s, "POST", "/v1/embeddings", string(body))
		var e openAIErr
		_ = json.Unmarshal(rec.Body.Bytes(), &e)
		if rec.Code != 400 || !strings.Contains(e.Detail, tc.want) || strings.Contains(e.Detail, tc.not) {
			t.Errorf("model %q: %d %s", tc.model, rec.Code, rec.Body)
		}
	}
	if _, err := New(func() Config {
		c := DefaultConfig()
		c.EmbeddingAliases = map[string]string{"ctxsel-topk": "fake-letters"}
		return c
	}(), Options{Embedder: fakeEmbedder{}}); err == nil || !strings.Contains(err.Error(), "rerank strategies") {
		t.Errorf("an alias named like a rerank strategy: %v", err)
	}
}

// TestModelsListEveryRerankName: /v1/models lists each rerank name the
// rerank routes accept, the evidence selector's with its budget, and each
// listed name is accepted by /v1/rerank.
func TestModelsListEveryRerankName(t *testing.T) {
	s := evidenceServer(t, nil, fakeEmbedder{})
	var l struct {
		Data []struct {
			ID     string `json:"id"`
			Ctxsel struct {
				Kind, Form, Doc string
			} `json:"ctxsel"`
		} `json:"data"`
		Ctxsel struct {
			OtherRerankModels string `json:"other_rerank_models"`
		} `json:"ctxsel"`
	}
	rec := call(t, s, "GET", "/v1/models", "")
	if err := json.Unmarshal(rec.Body.Bytes(), &l); err != nil {
		t.Fatal(err)
	}
	forms := map[string]string{}
	for _, m := range l.Data {
		if m.Ctxsel.Kind != "rerank" {
			continue
		}
		forms[m.ID] = m.Ctxsel.Form
		if m.Ctxsel.Doc == "" {
			t.Errorf("%s has no doc", m.ID)
		}
		body, _ := json.Marshal(map[string]any{"model": m.ID, "query": "capital of france", "documents": []string{"Paris is the capital of France. It is large.", "Bananas are yellow."}})
		if rec := call(t, s, "POST", "/v1/rerank", string(body)); rec.Code != 200 {
			t.Errorf("listed model %s: %d %s", m.ID, rec.Code, rec.Body)
		}
	}
	if forms["ctxsel-evidence:budget=1500"] != "ctxsel-evidence:budget=N" || forms["ctxsel-topk"] != "ctxsel-topk[:k=N]" {
		t.Errorf("rerank entries: %v", forms)
	}
	if !strings.Contains(l.Ctxsel.OtherRerankModels, "rerank-english-v3.0") {
		t.Errorf("the list does not say what other names get: %q", l.Ctxsel.OtherRerankModels)
	}
	// A server without the evidence selector's dependencies lists none.
	rec = call(t, newTestServer(t, nil, Options{Embedder: fakeEmbedder{}}), "GET", "/v1/models", "")
	if strings.Contains(rec.Body.String(), "ctxsel-evidence") {
		t.Errorf("a server without the evidence selector lists it: %s", rec.Body)
	}
}

// TestRerankTruncatesDocuments: a document over max_tokens_per_doc is cut
// to it before ranking and meta.warnings names it; max_text_bytes applies
// after the cut; 0 is refused.
func TestRerankTruncatesDocuments(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.MaxTextBytes = 1 << 10 }, Options{Embedder: fakeEmbedder{}})
	long := strings.Repeat("zebra crossing ", 2000) // ~30 KB, 4000 tokens
	type resp struct {
		Results []struct {
			Index    int `json:"index"`
			Document struct{ Text string }
		} `json:"results"`
		Meta struct {
			Warnings []string `json:"warnings"`
		} `json:"meta"`
		Usage struct {
			TotalTokens int `json:"total_tokens"`
		} `json:"usage"`
	}
	body, _ := json.Marshal(map[string]any{"query": "zebra", "documents": []string{"short zebra", long}, "max_tokens_per_doc": 50, "model": "ctxsel-full", "return_documents": true})
	for _, path := range []string{"/v1/rerank", "/v2/rerank"} {
		rec := call(t, s, "POST", path, string(body))
		var r resp
		if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil || rec.Code != 200 {
			t.Fatalf("%s: %d %v %.300s", path, rec.Code, err, rec.Body)
		}
		if len(r.Results) != 2 || len(r.Meta.Warnings) != 1 || !strings.Contains(r.Meta.Warnings[0], "max_tokens_per_doc (50 tokens) before ranking: document 1") {
			t.Errorf("%s: results %d, warnings %q", path, len(r.Results), r.Meta.Warnings)
		}
		// Counted as ranked (50 tokens and the short one's 2), echoed whole.
		if r.Usage.TotalTokens > 60 {
			t.Errorf("%s: %d tokens, want the truncated count", path, r.Usage.TotalTokens)
		}
		for _, res := range r.Results {
			if res.Index == 1 && res.Document.Text != long && path == "/v1/rerank" {
				t.Errorf("the truncated document is not echoed as sent")
			}
		}
	}
	// Cohere's default, 4096 tokens, is ~30 KB here: over max_text_bytes
	// after the cut, so refused, naming the field to lower.
	body, _ = json.Marshal(map[string]any{"query": "zebra", "documents": []string{"short", long}})
	rec := call(t, s, "POST", "/v1/rerank", string(body))
	if rec.Code != 413 || !strings.Contains(rec.Body.String(), "max_tokens_per_doc") || !strings.Contains(rec.Body.String(), "documents[1]") {
		t.Errorf("over max_text_bytes after the cut: %d %s", rec.Code, rec.Body)
	}
	// Short documents: no warnings at all.
	rec = call(t, s, "POST", "/v2/rerank", `{"query":"zebra","documents":["a zebra","a horse"]}`)
	if strings.Contains(rec.Body.String(), "warnings") {
		t.Errorf("warnings without truncation: %s", rec.Body)
	}
	if rec := call(t, s, "POST", "/v2/rerank", `{"query":"zebra","documents":["a"],"max_tokens_per_doc":0}`); rec.Code != 400 {
		t.Errorf("max_tokens_per_doc 0: %d", rec.Code)
	}
}

func TestTruncateTokens(t *testing.T) {
	c, err := newTestServer(t, nil, Options{}).tokenCounter()
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"short", strings.Repeat("é日本語 ", 500), strings.Repeat(" ", 5000), strings.Repeat("word ", 3000)} {
		for _, n := range []int{1, 7, 100, 1000} {
			got, cut, err := truncateTokens(c, text, n)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(text, got) || c.Count(got) > n || cut != (got != text) || (!cut && c.Count(text) > n) {
				t.Errorf("%.20q to %d: %d tokens, cut %v", text, n, c.Count(got), cut)
			}
			if cut && c.Count(got) < n-2 && len(got) < len(text) && n < 100 {
				t.Errorf("%.20q to %d: kept only %d tokens", text, n, c.Count(got))
			}
		}
	}
}

// TestMCPRefusalCarriesID: /mcp's 403 answers with the refused request's
// id, which a JSON-RPC client matches; null when there is none to read.
func TestMCPRefusalCarriesID(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.APIKeys = []string{"k"} }, Options{MCP: true, Asker: fakeAsker{}})
	for body, want := range map[string]string{
		`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}`: `7`,
		`{"jsonrpc":"2.0","id":"abc","method":"initialize"}`:         `"abc"`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`:     `null`,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`:           `null`,
		`not json`: `null`,
		`{"jsonrpc":"2.0","id":{"x":1},"method":"initialize"}`: `null`,
	} {
		rec := call(t, s, "POST", "/mcp", body)
		var r struct {
			ID    json.RawMessage `json:"id"`
			Error struct{ Message string }
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil || rec.Code != http.StatusForbidden || string(r.ID) != want || !strings.Contains(r.Error.Message, "API key") {
			t.Errorf("%s: %d %s, want id %s", body, rec.Code, rec.Body, want)
		}
	}
}

// FuzzTruncateTokens: whatever the text, the cut is a valid UTF-8 prefix of
// it with at most n tokens, and a text is cut only when it has more.
func FuzzTruncateTokens(f *testing.F) {
	for _, seed := range []string{"short", "é日本語 é日本語 é日本語", "     ", "a\xffb c d e f g", strings.Repeat("word ", 40)} {
		f.Add(seed, 3)
	}
	c, err := newTestServer(f, nil, Options{}).tokenCounter()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string, n int) {
		if n < 1 || n > 1000 || !utf8.ValidString(text) {
			return // the decoder passes only valid UTF-8; max_tokens_per_doc is at least 1
		}
		got, cut, err := truncateTokens(c, text, n)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(text, got) || !utf8.ValidString(got) || cut != (got != text) || c.Count(got) > n || (!cut && c.Count(text) > n) {
			t.Fatalf("%q to %d: %q (cut %v, %d tokens)", text, n, got, cut, c.Count(got))
		}
	})
}
