package server

import (
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/fusion"
	"github.com/ctxsel/ctxsel/internal/vecmath"
	"github.com/ctxsel/ctxsel/lexical"
)

type rerankResult struct {
	Index          int             `json:"index"`
	RelevanceScore float64         `json:"relevance_score"`
	Document       json.RawMessage `json:"document"`
}

type rerankResponse struct {
	ID      string         `json:"id"`
	Model   string         `json:"model"`
	Results []rerankResult `json:"results"`
	Meta    struct {
		APIVersion struct {
			Version string `json:"version"`
		} `json:"api_version"`
	} `json:"meta"`
	Usage struct {
		TotalTokens int `json:"total_tokens"`
	} `json:"usage"`
	Ctxsel struct {
		K           int    `json:"k"`
		N           int    `json:"n"`
		Strategy    string `json:"strategy"`
		Scoring     string `json:"scoring"`
		Reason      string `json:"reason"`
		Explanation struct {
			CapsApplied []string `json:"caps_applied"`
			Caps        struct {
				MaxK int `json:"max_k"`
			} `json:"caps"`
		} `json:"explanation"`
	} `json:"ctxsel"`
}

func rerank(t *testing.T, s *Server, path, body string) rerankResponse {
	t.Helper()
	rec := call(t, s, http.MethodPost, path, body)
	if rec.Code != http.StatusOK {
		t.Fatalf("%s: %d %s", body, rec.Code, rec.Body)
	}
	var out rerankResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("%v: %s", err, rec.Body)
	}
	return out
}

// Documents whose letters match the query's score high under fakeEmbedder.
const capitalDocs = `["zzzz qqqq xxxx", "capital of the united states", "capital city", "vvvv wwww", "the capital"]`

func TestRerankTopNCapsAndRankOrder(t *testing.T) {
	s := newTestServer(t, nil, Options{Embedder: fakeEmbedder{}})
	out := rerank(t, s, "/v1/rerank", `{"model":"ctxsel-topk","query":"capital of the united states","documents":`+capitalDocs+`,"top_n":2}`)
	if len(out.Results) != 2 || out.Ctxsel.K != 2 || out.Ctxsel.N != 5 {
		t.Fatalf("top_n=2 over topk (k=10): got %d results, k=%d n=%d", len(out.Results), out.Ctxsel.K, out.Ctxsel.N)
	}
	if out.Results[0].Index != 1 {
		t.Errorf("best document: index %d, want 1 (the exact match)", out.Results[0].Index)
	}
	// top_n below the strategy's own min_k wins over it.
	low := rerank(t, s, "/v1/rerank", `{"strategy":"topk:k=4,min_k=3","query":"capital of the united states","documents":`+capitalDocs+`,"top_n":1}`)
	if len(low.Results) != 1 || low.Ctxsel.Explanation.Caps.MaxK != 1 || low.Results[0].Index != 1 {
		t.Fatalf("top_n=1 under min_k=3: %d results, caps %+v", len(low.Results), low.Ctxsel.Explanation.Caps)
	}
	if out.Results[0].RelevanceScore < out.Results[1].RelevanceScore {
		t.Errorf("not in rank order: %+v", out.Results)
	}
	if out.Ctxsel.Explanation.Caps.MaxK != 2 || !strings.Contains(strings.Join(out.Ctxsel.Explanation.CapsApplied, ","), "max_k") {
		t.Errorf("top_n should act as max_k: caps %+v applied %v", out.Ctxsel.Explanation.Caps, out.Ctxsel.Explanation.CapsApplied)
	}
	if out.Ctxsel.Scoring != scoringDense || out.Model != "ctxsel-topk" || out.Meta.APIVersion.Version != "1" || out.Ctxsel.Reason == "" {
		t.Errorf("scoring %q model %q version %q reason %q", out.Ctxsel.Scoring, out.Model, out.Meta.APIVersion.Version, out.Ctxsel.Reason)
	}
	// /v1 returns the documents by default (as Jina does), /v2 not (as
	// Cohere v2); return_documents decides either way.
	if string(out.Results[0].Document) != `{"text":"capital of the united states"}` {
		t.Errorf("/v1 default: document %s", out.Results[0].Document)
	}
	for _, tc := range []struct {
		path, extra string
		want        bool
	}{{"/v1/rerank", `,"return_documents":false`, false}, {"/v2/rerank", ``, false}, {"/v2/rerank", `,"return_documents":true`, true}} {
		out := rerank(t, s, tc.path, `{"query":"capital","documents":`+capitalDocs+tc.extra+`}`)
		if got := out.Results[0].Document != nil; got != tc.want {
			t.Errorf("%s %s: document returned %v", tc.path, tc.extra, got)
		}
	}
	if out.Usage.TotalTokens <= 0 {
		t.Errorf("usage.total_tokens %d", out.Usage.TotalTokens)
	}
}

// TestRerankSelectsFewer: the point of the endpoint. A strategy that cuts at
// the gap returns fewer documents than top_n.
func TestRerankSelectsFewer(t *testing.T) {
	s := newTestServer(t, nil, Options{Embedder: fakeEmbedder{}})
	out := rerank(t, s, "/v2/rerank", `{"model":"ctxsel-threshold","params":{"min":0.9},"query":"capital of the united states","documents":`+capitalDocs+`,"top_n":4}`)
	if len(out.Results) != 1 || out.Results[0].Index != 1 {
		t.Fatalf("threshold 0.9 should keep only the exact match: %+v", out.Results)
	}
	if out.Meta.APIVersion.Version != "2" {
		t.Errorf("/v2/rerank answered version %q", out.Meta.APIVersion.Version)
	}
}

func TestRerankDocumentsEchoed(t *testing.T) {
	s := newTestServer(t, nil, Options{Embedder: fakeEmbedder{}})
	out := rerank(t, s, "/v1/rerank", `{"query":"capital","strategy":"topk:k=2","return_documents":true,
		"documents":[{"text":"capital","url":"u0","n":[1,2]},"zzz",{"text":"capitals","title":"t"}]}`)
	if len(out.Results) != 2 {
		t.Fatalf("%+v", out.Results)
	}
	want := map[int]string{0: `{"text":"capital","url":"u0","n":[1,2]}`, 2: `{"text":"capitals","title":"t"}`}
	for _, r := range out.Results {
		if string(r.Document) != want[r.Index] {
			t.Errorf("document %d echoed as %s, want %s", r.Index, r.Document, want[r.Index])
		}
	}
	// A string document comes back as {"text": ...}.
	out = rerank(t, s, "/v1/rerank", `{"query":"zzz","strategy":"topk:k=1","return_documents":true,"documents":["capital","zzz"]}`)
	if len(out.Results) != 1 || string(out.Results[0].Document) != `{"text":"zzz"}` {
		t.Errorf("%+v", out.Results)
	}
}

func TestRerankRankFields(t *testing.T) {
	s := newTestServer(t, nil, Options{Embedder: fakeEmbedder{}})
	// Scored on title, not text: the title of document 1 is the match.
	out := rerank(t, s, "/v1/rerank", `{"query":"qqqq","strategy":"topk:k=1","rank_fields":["title"],
		"documents":[{"text":"qqqq","title":"abc"},{"text":"abc","title":"qqqq"}]}`)
	if len(out.Results) != 1 || out.Results[0].Index != 1 {
		t.Fatalf("rank_fields ignored: %+v", out.Results)
	}
}

func TestRerankDefaults(t *testing.T) {
	s := newTestServer(t, nil, Options{Embedder: fakeEmbedder{}})
	// A model name that is not ctxsel's gets the default strategy.
	out := rerank(t, s, "/v1/rerank", `{"model":"rerank-english-v3.0","query":"capital","documents":`+capitalDocs+`}`)
	if !strings.HasPrefix(out.Ctxsel.Strategy, ctxsel.DefaultSelectStrategy) || out.Model != "rerank-english-v3.0" {
		t.Errorf("strategy %q model %q", out.Ctxsel.Strategy, out.Model)
	}
	// Without an embedder the only scorer is BM25.
	plain := newTestServer(t, nil, Options{})
	out = rerank(t, plain, "/v1/rerank", `{"query":"capital city","strategy":"topk:k=1","documents":["the capital city of Nevada","dogs bark"]}`)
	if out.Ctxsel.Scoring != scoringBM25 || out.Results[0].Index != 0 {
		t.Errorf("scoring %q results %+v", out.Ctxsel.Scoring, out.Results)
	}
}

func TestRerankHybridScores(t *testing.T) {
	s := newTestServer(t, nil, Options{Embedder: fakeEmbedder{}})
	docs := []string{"capital of the united states", "capital city", "vvvv wwww", "the capital"}
	query := "capital city"
	b, _ := json.Marshal(map[string]any{"query": query, "documents": docs, "strategy": "full", "scoring": "hybrid"})
	out := rerank(t, s, "/v1/rerank", string(b))
	// The expected scores, from the parts: cosine of letter counts and BM25.
	vecs, _ := fakeEmbedder{}.Embed(t.Context(), append([]string{query}, docs...))
	q, _ := vecmath.Unit(vecmath.F64(vecs[0]))
	dense := make([]float64, len(docs))
	terms := make([][]string, len(docs))
	for i := range docs {
		dense[i], _ = vecmath.CosineUnit(q, vecmath.F64(vecs[i+1]))
		terms[i] = lexical.Terms(docs[i])
	}
	want, err := fusion.Fuse(fusion.ZScore, 0.5, dense, lexical.Default.Score(lexical.QueryTerms(query), terms))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != len(docs) || out.Ctxsel.Scoring != scoringHybrid {
		t.Fatalf("%+v", out)
	}
	for _, r := range out.Results {
		if math.Abs(r.RelevanceScore-want[r.Index]) > 1e-9 {
			t.Errorf("document %d: score %v, want %v", r.Index, r.RelevanceScore, want[r.Index])
		}
	}
}

func TestRerankErrors(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.MaxCandidates = 3; c.MaxTextBytes = 20 }, Options{Embedder: fakeEmbedder{}})
	plain := newTestServer(t, nil, Options{})
	for _, tc := range []struct {
		s      *Server
		body   string
		status int
		field  string
	}{
		{s, `{"query":"q","documents":["a"],"model":"ctxsel-nope"}`, 400, "model"},
		{s, `{"query":"q","documents":["a"],"model":"ctxsel-topk","strategy":"knee"}`, 400, "strategy"},
		{s, `{"query":"q","documents":["a"],"top_n":0}`, 400, "top_n"},
		{s, `{"query":"q","documents":["a"],"top_n":-1}`, 400, "top_n"},
		{s, `{"query":"q"}`, 400, "documents"},
		{s, `{"query":"q","documents":[]}`, 400, "documents"},
		{s, `{"documents":["a"]}`, 400, "query"},
		{s, `{"query":"q","documents":["a",3]}`, 400, "documents[1]"},
		{s, `{"query":"q","documents":[{"text":5}]}`, 400, "documents[0].text"},
		{s, `{"query":"q","documents":["a","b","c","d"]}`, 413, "documents"},
		{s, `{"query":"q","documents":["aaaaaaaaaaaaaaaaaaaaaaaaa"]}`, 413, "documents[0]"},
		{s, `{"query":"q","documents":["a"],"return_documents":"yes"}`, 400, "return_documents"},
		{s, `{"query":"q","documents":["a"],"order":"document"}`, 400, "order"},
		{s, `{"query":"q","documents":["a"],"scoring":"magic"}`, 400, "scoring"},
		{s, `{"query":"q","documents":["a"],"surprise":1}`, 400, "surprise"},
		{s, `{"query":"q","documents":["a"],"top_n":1,"top_n":2}`, 400, "top_n"},
		{s, `{"query":"q","documents":["a"],"params":{"bogus":1}}`, 400, "params.bogus"},
		{s, `{"query":"q","documents":[{"title":"t"}],"rank_fields":["title"],"return_documents":true,"max_chunks_per_doc":10}`, 200, ""},
		{plain, `{"query":"q","documents":["a"],"scoring":"dense"}`, 400, "scoring"},
	} {
		rec := call(t, tc.s, http.MethodPost, "/v1/rerank", tc.body)
		if rec.Code != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.body, rec.Code, rec.Body, tc.status)
			continue
		}
		if tc.status == 200 {
			continue
		}
		var e struct {
			Error struct{ Field string } `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Field != tc.field {
			t.Errorf("%s: field %q (%v), want %q: %s", tc.body, e.Error.Field, err, tc.field, rec.Body)
		}
	}
}

func TestRerankEmbedderDown(t *testing.T) {
	s := newTestServer(t, nil, Options{Embedder: fakeEmbedder{fail: errors.New("dial tcp 10.0.0.7:443: connection refused")}})
	rec := call(t, s, http.MethodPost, "/v1/rerank", `{"query":"q","documents":["a"]}`)
	if rec.Code != http.StatusBadGateway || strings.Contains(rec.Body.String(), "10.0.0.7") || !strings.Contains(rec.Body.String(), "request") {
		t.Errorf("%d %s", rec.Code, rec.Body)
	}
}

func TestRerankAuthAndMetrics(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.APIKeys = []string{"secret"} }, Options{Embedder: fakeEmbedder{}})
	body := `{"query":"capital","documents":["capital","zzz"]}`
	if rec := call(t, s, http.MethodPost, "/v1/rerank", body); rec.Code != http.StatusUnauthorized {
		t.Fatalf("no key: %d", rec.Code)
	}
	if rec := call(t, s, http.MethodPost, "/v1/rerank", body, "Authorization", "Bearer secret"); rec.Code != http.StatusOK {
		t.Fatalf("with key: %d %s", rec.Code, rec.Body)
	}
	m := call(t, s, http.MethodGet, "/metrics", "", "Authorization", "Bearer secret").Body.String()
	if !strings.Contains(m, `route="/v1/rerank",code="200"`) {
		t.Errorf("no rerank request counted:\n%s", m)
	}
}

func FuzzRerankRequest(f *testing.F) {
	for _, seed := range []string{
		`{"model":"ctxsel-topk","query":"capital","documents":["a b","capital"],"top_n":1,"return_documents":true}`,
		`{"query":"q","documents":[{"text":"x","url":"u"},{"text":"y"}],"rank_fields":["url","text"],"return_documents":true}`,
		`{"query":"q","documents":["x"],"scoring":"hybrid","strategy":"knee","params":{"cutoff":2}}`,
		"{\"query\":\"q\",\"documents\":[{\"text\":\"\xff\",\"t\":\"\xfe\"}],\"return_documents\":true}",
		`{"query":"q","documents":["x"],"max_tokens_per_doc":4,"priority":0,"truncation":true}`,
		`{"query":"q","documents":["aaa bbb ccc ddd eee é日本 fff ggg","short"],"max_tokens_per_doc":3,"model":"ctxsel-full"}`,
		`[]`, `{"documents":null}`,
		`{"model":"ctxsel-evidence:budget=20","query":"who is it","documents":["A title\nOne sentence. Two sentences here.","x. y."],"return_evidence":true}`,
		`{"model":"ctxsel-topk:k=1","query":"q","documents":["a. b. c.","d"],"evidence_budget":5,"return_evidence":true,"top_n":1}`,
	} {
		f.Add(seed)
	}
	s, err := New(DefaultConfig(), Options{Logger: slog.New(slog.DiscardHandler), Embedder: fakeEmbedder{},
		SelectorDeps: ctxsel.DepsOf(map[string]any{ctxsel.DepEmbedder: fakeEmbedder{}})})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var r rerankRequest
		if err := decodeRerank(body, &r, s.limits()); err == nil && !json.Valid([]byte(body)) {
			t.Fatalf("decoded invalid JSON %q", body)
		}
		req := httptest.NewRequest(http.MethodPost, "/v1/rerank", strings.NewReader(body))
		req.Host = "127.0.0.1" // the server listens on loopback: only loopback Host values are served
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusOK && (rec.Code < 400 || rec.Code >= 500) {
			t.Fatalf("%q: status %d %s", body, rec.Code, rec.Body)
		}
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("%q: response is not JSON: %s", body, rec.Body)
		}
		if !utf8.Valid(rec.Body.Bytes()) {
			t.Fatalf("%q: response is not UTF-8: %q", body, rec.Body)
		}
		if rec.Code == http.StatusOK {
			var out rerankResponse
			if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || len(out.Results) == 0 {
				t.Fatalf("%q: %v %s", body, err, rec.Body)
			}
		}
	})
}

// A document with nothing to rank (no "text", empty, or none of its
// rank_fields) is refused naming it, not scored as an empty text.
func TestRerankDocumentWithoutText(t *testing.T) {
	s := newTestServer(t, nil, Options{Embedder: fakeEmbedder{}})
	for _, tc := range []struct{ body, field string }{
		{`{"query":"q","documents":[{"text":"alpha"},{"title":"no text"}]}`, "documents[1]"},
		{`{"query":"q","documents":["alpha",""]}`, "documents[1]"},
		{`{"query":"q","documents":[{"text":"  "}]}`, "documents[0]"},
		{`{"query":"q","rank_fields":["title"],"documents":[{"title":"t"},{"text":"only text"}]}`, "documents[1]"},
	} {
		for _, path := range []string{"/v1/rerank", "/v2/rerank"} {
			rec := call(t, s, "POST", path, tc.body)
			if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"field":"`+tc.field+`"`) {
				t.Errorf("%s %s: %d %s", path, tc.body, rec.Code, rec.Body)
			}
		}
	}
}
