package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/token"
)

func newTestServer(t testing.TB, mod func(*Config), opts Options) *Server {
	t.Helper()
	cfg := DefaultConfig()
	if mod != nil {
		mod(&cfg)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s, err := New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// call sends one request through the handler; headers come in pairs.
func call(t testing.TB, s *Server, method, path, body string, headers ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Host = "127.0.0.1" // the server listens on loopback: only loopback Host values are served
	if body != "" || method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	return rec
}

// selectResp mirrors the response for tests, decoded with encoding/json.
type selectResp struct {
	IDs         []string  `json:"ids"`
	Indices     []int     `json:"indices"`
	Scores      []float64 `json:"scores"`
	K           int       `json:"k"`
	Tokens      int       `json:"tokens"`
	TotalTokens int       `json:"total_tokens"`
	Explanation struct {
		Strategy    string             `json:"strategy"`
		Params      map[string]float64 `json:"params"`
		Caps        ctxsel.Caps        `json:"caps"`
		N           int                `json:"n"`
		StrategyK   int                `json:"strategy_k"`
		Start       int                `json:"start"`
		K           int                `json:"k"`
		Cut         int                `json:"cut"`
		Band        struct{ Start, End int }
		Decision    ctxsel.Decision `json:"decision"`
		Reason      string          `json:"reason"`
		CapsApplied []string        `json:"caps_applied"`
		Guards      []string        `json:"guards"`
		Curve       struct {
			N       int       `json:"n"`
			Min     float64   `json:"min"`
			Max     float64   `json:"max"`
			Mean    float64   `json:"mean"`
			Sampled bool      `json:"sampled"`
			Scores  []float64 `json:"scores"`
			Ranks   []int     `json:"ranks"`
		} `json:"curve"`
	} `json:"explanation"`
}

type errResp struct {
	Error struct {
		Message string  `json:"message"`
		Field   *string `json:"field"`
	} `json:"error"`
}

func decodeOK(t testing.TB, rec *httptest.ResponseRecorder) selectResp {
	t.Helper()
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("content type %q", ct)
	}
	var r selectResp
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatalf("%v: %s", err, rec.Body)
	}
	return r
}

const readmeExample = `{"strategy":"adaptivek","params":{"buffer":0},"candidates":[
	{"id":"d1","score":0.82,"tokens":120},
	{"id":"d2","score":0.79,"text":"passage text is counted with tiktoken cl100k_base"},
	{"id":"d3","score":0.31,"tokens":95},
	{"id":"d4","score":0.30,"tokens":101}]}`

func TestSelectScores(t *testing.T) {
	s := newTestServer(t, nil, Options{})
	r := decodeOK(t, call(t, s, "POST", "/v1/select", readmeExample))
	counter, _ := token.New("")
	textTokens := counter.Count("passage text is counted with tiktoken cl100k_base")
	e := r.Explanation
	if !slices.Equal(r.IDs, []string{"d1", "d2"}) || !slices.Equal(r.Indices, []int{0, 1}) || !slices.Equal(r.Scores, []float64{0.82, 0.79}) ||
		r.K != 2 || r.Tokens != 120+textTokens || r.TotalTokens != 120+textTokens+95+101 {
		t.Fatalf("selection %+v", r)
	}
	if e.Strategy != "adaptivek" || e.Params["buffer"] != 0 || e.Params["tail"] != 0.1 || e.N != 4 || e.K != 2 || e.Cut != 2 ||
		e.Band.Start != 0 || e.Band.End != 2 || e.Decision.Kind != "gap" || e.Decision.Rank != 1 ||
		*e.Decision.Above != 0.79 || *e.Decision.Below != 0.31 || !strings.Contains(e.Reason, "largest gap") || e.CapsApplied == nil {
		t.Fatalf("explanation %+v", e)
	}
	if c := e.Curve; c.N != 4 || c.Min != 0.30 || c.Max != 0.82 || math.Abs(c.Mean-0.555) > 1e-12 || c.Sampled ||
		!slices.Equal(c.Scores, []float64{0.82, 0.79, 0.31, 0.30}) || c.Ranks != nil {
		t.Fatalf("curve %+v", c)
	}
}

func TestSelectOrdersAndCaps(t *testing.T) {
	s := newTestServer(t, nil, Options{})
	body := func(extra string) string {
		return `{"candidates":[{"id":"a","score":0.1,"tokens":10},{"id":"b","score":0.9,"tokens":10},{"id":"c","score":0.5,"tokens":10},{"id":"d","score":0.7,"tokens":10},{"id":"e","score":0.3,"tokens":10}]` + extra + `}`
	}
	for _, tc := range []struct {
		extra string
		ids   string
	}{
		{`,"strategy":"topk:k=4"`, "b,d,c,e"},
		{`,"strategy":"topk:k=4","order":"document"`, "b,c,d,e"},
		{`,"strategy":"topk:k=4","order":"edges"`, "b,c,e,d"},
		{`,"strategy":"topk","params":{"k":4,"max_k":2}`, "b,d"},
		{`,"strategy":"topk:k=4,max_tokens=25"`, "b,d"},
		{`,"strategy":"threshold","params":{"min":0.5}`, "b,d,c"},
		{`,"strategy":"full","params":{"min_k":1}`, "b,d,c,e,a"},
	} {
		r := decodeOK(t, call(t, s, "POST", "/v1/select", body(tc.extra)))
		if got := strings.Join(r.IDs, ","); got != tc.ids {
			t.Errorf("%s: got %s want %s", tc.extra, got, tc.ids)
		}
	}
}

func TestSelectVectors(t *testing.T) {
	s := newTestServer(t, nil, Options{})
	r := decodeOK(t, call(t, s, "POST", "/v1/select", `{"query_vector":[2,0],"strategy":"topk:k=2","candidates":[
		{"id":"x","vector":[1,1]},{"id":"y","vector":[0,3]},{"id":"z","vector":[5,0]},{"id":"w","vector":[-1,0]}]}`))
	if !slices.Equal(r.IDs, []string{"z", "x"}) || r.Scores[0] != 1 || math.Abs(r.Scores[1]-math.Sqrt2/2) > 1e-15 {
		t.Fatalf("%+v", r)
	}
	if r.Explanation.Curve.Min != -1 {
		t.Fatalf("curve %+v", r.Explanation.Curve)
	}
	// Components near the float64 limit do not overflow the norm.
	r = decodeOK(t, call(t, s, "POST", "/v1/select", `{"query_vector":[1e300,1e300],"candidates":[{"id":"a","vector":[1e300,1e300]},{"id":"b","vector":[1e-300,0]}]}`))
	if math.Abs(r.Scores[0]-1) > 1e-15 {
		t.Fatalf("%+v", r)
	}
}

// fakeEmbedder maps a text to letter counts of a..z: deterministic, and
// texts sharing letters with the query score high.
type fakeEmbedder struct{ fail error }

func (f fakeEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if f.fail != nil {
		return nil, f.fail
	}
	out := make([][]float32, len(texts))
	for i, s := range texts {
		v := make([]float32, 26)
		for _, r := range strings.ToLower(s) {
			if r >= 'a' && r <= 'z' {
				v[r-'a']++
			}
		}
		out[i] = v
	}
	return out, nil
}

func (fakeEmbedder) ModelID() string { return "fake-letters" }

func TestSelectTexts(t *testing.T) {
	s := newTestServer(t, nil, Options{Embedder: fakeEmbedder{}})
	r := decodeOK(t, call(t, s, "POST", "/v1/select", `{"query":"aaa","strategy":"topk:k=2","candidates":[
		{"id":"1","text":"bbb"},{"id":"2","text":"aab"},{"id":"3","text":"a","tokens":7},{"id":"4","text":""}]}`))
	if !slices.Equal(r.IDs, []string{"3", "2"}) || r.Scores[0] != 1 {
		t.Fatalf("%+v", r)
	}
	if r.Tokens != 7+1 { // "aab" is one cl100k token
		t.Fatalf("tokens %d", r.Tokens)
	}
	rec := call(t, newTestServer(t, nil, Options{Embedder: fakeEmbedder{fail: errors.New("backend down")}}),
		"POST", "/v1/select", `{"query":"a","candidates":[{"id":"1","text":"a"}]}`)
	if rec.Code != http.StatusBadGateway || !strings.Contains(rec.Body.String(), "embedder failed (request") || strings.Contains(rec.Body.String(), "backend down") {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}

func TestSelectErrors(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.MaxCandidates = 3; c.MaxTextBytes = 10; c.MaxVectorDim = 3 }, Options{})
	cands := `"candidates":[{"id":"a","score":0.5},{"id":"b","score":0.4}]`
	for _, tc := range []struct {
		body   string
		status int
		field  string
		msg    string
	}{
		{`{"candidates":[`, 400, "candidates[0]", "malformed JSON"},
		{`{}`, 400, "candidates", "no candidates"},
		{`{"candidates":[]}`, 400, "candidates", "no candidates"},
		{`{"candidates":[{"id":"a","score":1e999}]}`, 400, "candidates[0].score", "out of range"},
		{`{"candidates":[{"id":"a","score":NaN}]}`, 400, "candidates[0].score", "malformed"},
		{`{"candidates":[{"id":"a","score":1},{"id":"b","score":2},{"id":"a","score":3}]}`, 400, "candidates[2].id", `duplicate id "a" (also candidates[0])`},
		{`{"candidates":[{"id":"a","score":1},{"id":"b"}]}`, 400, "candidates[1].score", "every candidate needs one"},
		{`{"candidates":[{"id":"a"}]}`, 400, "candidates[0]", "needs a"},
		{`{"candidates":[{"id":"a","score":1,"vector":[1]}],"query_vector":[1]}`, 400, "candidates[0].vector", "not both"},
		{`{"strategy":"nope",` + cands + `}`, 400, "strategy", `unknown strategy "nope"`},
		{`{"strategy":"adaptivek:head=2",` + cands + `}`, 400, "strategy", "head=2 out of range"},
		{`{"strategy":"adaptivek:head",` + cands + `}`, 400, "strategy", "not key=value"},
		{`{"strategy":"adaptivek","params":{"head":2},` + cands + `}`, 400, "params.head", "out of range [0, 0.999999]"},
		{`{"strategy":"adaptivek","params":{"head":0.6,"tail":0.5},` + cands + `}`, 400, "params", "head+tail"},
		{`{"strategy":"adaptivek:head=0.1","params":{"head":0.2},` + cands + `}`, 400, "params.head", "also given"},
		{`{"strategy":"adaptivek:head=0.1","params":{"buffer":-1,"head":0.2},` + cands + `}`, 400, "params.buffer", "out of range"},
		{`{"strategy":"adaptivek:head=0.1","params":{"head":0.2,"buffer":-1},` + cands + `}`, 400, "params.head", "also given"},
		{`{"strategy":"topk","params":{"k":1.5},` + cands + `}`, 400, "params.k", "whole number"},
		{`{"strategy":"topk","params":{"k":0},` + cands + `}`, 400, "params.k", "out of range"},
		{`{"strategy":"topk","params":{"kk":1},` + cands + `}`, 400, "params.kk", "unknown parameter"},
		{`{"strategy":"topk","params":{"min_k":5,"max_k":2},` + cands + `}`, 400, "params", "exceeds"},
		{`{"strategy":"topk","params":{"max_tokens":-1},` + cands + `}`, 400, "params.max_tokens", "out of range"},
		{`{"order":"sideways",` + cands + `}`, 400, "order", "order"},
		{`{"query_vector":[1,0],"candidates":[{"id":"a","vector":[1,0]},{"id":"b","vector":[1,0,0]}]}`, 400, "candidates[1].vector", "dimension 3"},
		{`{"query_vector":[1,0],"candidates":[{"id":"a","vector":[0,0]}]}`, 400, "candidates[0].vector", "zero-norm"},
		{`{"query_vector":[0,0],"candidates":[{"id":"a","vector":[1,0]}]}`, 400, "query_vector", "zero-norm"},
		{`{"candidates":[{"id":"a","vector":[1,0]}]}`, 400, "query_vector", "missing"},
		{`{"query":"q","candidates":[{"id":"a","text":"x"}]}`, 400, "candidates[0].text", "no embedder"},
		{`{"candidates":[{"id":"a","score":1},{"id":"b","score":1},{"id":"c","score":1},{"id":"d","score":1}]}`, 413, "candidates", "more than 3"},
		{`{"candidates":[{"id":"a","score":1,"text":"01234567890"}]}`, 413, "candidates[0].text", "over the limit"},
		{`{"query_vector":[1,0,0,0],"candidates":[]}`, 413, "query_vector", "more than 3"},
		{`{"strategy":"topk", "strategy":"knee",` + cands + `}`, 400, "strategy", "twice"},
		{`{"stratgy":"topk",` + cands + `}`, 400, "stratgy", "unknown field"},
		{`{` + cands + `} {}`, 400, "", "after the top-level object"},
		{``, 400, "", "empty request body"},
	} {
		rec := call(t, s, "POST", "/v1/select", tc.body)
		var e errResp
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Field == nil {
			t.Errorf("%s: not an error body (%v): %s", tc.body, err, rec.Body)
			continue
		}
		if rec.Code != tc.status || *e.Error.Field != tc.field || !strings.Contains(e.Error.Message, tc.msg) {
			t.Errorf("%s:\n got %d field %q %q\nwant %d field %q containing %q", tc.body, rec.Code, *e.Error.Field, e.Error.Message, tc.status, tc.field, tc.msg)
		}
	}
}

func TestHTTPBasics(t *testing.T) {
	s := newTestServer(t, nil, Options{})
	for _, tc := range []struct {
		method, path, body, ctype string
		status                    int
		contains                  string
	}{
		{"GET", "/healthz", "", "", 200, `"ok"`},
		{"HEAD", "/healthz", "", "", 200, ""},
		{"GET", "/readyz", "", "", 200, `"ready"`},
		{"POST", "/healthz", "", "", 405, "use GET, HEAD"},
		{"GET", "/v1/select", "", "", 405, "use POST"},
		{"GET", "/nowhere", "", "", 404, "no such endpoint"},
		{"GET", "/assets/nope.js", "", "", 404, "no such asset"},
		{"GET", "/", "", "", 200, "<title>ctxsel"},
		{"GET", "/assets/app.js", "", "", 200, "use strict"},
		{"GET", "/assets/demo.json", "", "", 200, `"candidates"`},
		{"GET", "/openapi.json", "", "", 200, `"openapi"`},
		{"POST", "/v1/select", readmeExample, "text/plain", 415, "send application/json"},
		{"POST", "/v1/select", readmeExample, "application/x-www-form-urlencoded", 415, "Content-Type"},
		{"POST", "/v1/select", readmeExample, "application/json; charset=utf-8", 200, `"ids"`},
		{"POST", "/v1/select", readmeExample, "application/vnd.api+json", 200, `"ids"`},
	} {
		req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
		req.Host = "127.0.0.1" // the server listens on loopback: only loopback Host values are served
		if tc.ctype != "" {
			req.Header.Set("Content-Type", tc.ctype)
		}
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.contains) {
			t.Errorf("%s %s: %d %s", tc.method, tc.path, rec.Code, rec.Body)
		}
		if rec.Header().Get("X-Request-Id") == "" {
			t.Errorf("%s %s: no request id", tc.method, tc.path)
		}
	}
	rec := call(t, s, "GET", "/", "")
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
	// An ETag revalidation is a 304.
	etag := call(t, s, "GET", "/assets/app.js", "").Header().Get("ETag")
	if rec = call(t, s, "GET", "/assets/app.js", "", "If-None-Match", etag); rec.Code != http.StatusNotModified {
		t.Errorf("revalidation: %d", rec.Code)
	}
}

func TestRequestID(t *testing.T) {
	s := newTestServer(t, nil, Options{})
	if got := call(t, s, "GET", "/healthz", "", "X-Request-Id", "trace-42.a:b").Header().Get("X-Request-Id"); got != "trace-42.a:b" {
		t.Errorf("echo: %q", got)
	}
	for _, bad := range []string{"has space", strings.Repeat("x", 129), "quote\""} {
		got := call(t, s, "GET", "/healthz", "", "X-Request-Id", bad).Header().Get("X-Request-Id")
		if got == bad || got == "" {
			t.Errorf("%q: kept or empty %q", bad, got)
		}
	}
	a := call(t, s, "GET", "/healthz", "").Header().Get("X-Request-Id")
	b := call(t, s, "GET", "/healthz", "").Header().Get("X-Request-Id")
	if a == b {
		t.Errorf("generated ids repeat: %q", a)
	}
}

func TestStrategies(t *testing.T) {
	s := newTestServer(t, nil, Options{})
	rec := call(t, s, "GET", "/v1/strategies", "")
	var doc struct {
		Default    string `json:"default"`
		Strategies []struct {
			Name   string            `json:"name"`
			Doc    string            `json:"doc"`
			Params []ctxsel.ParamDef `json:"params"`
		} `json:"strategies"`
		Routes []ctxsel.RouteDef `json:"routes"`
		Caps   []ctxsel.ParamDef `json:"caps"`
		Orders []string          `json:"orders"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	// the answering routes, from the same schema (selfroute's k and prompt)
	routes := ctxsel.RouteDefs()
	for i := range routes {
		routes[i].New = nil // not on the wire
	}
	if len(routes) == 0 || !reflect.DeepEqual(doc.Routes, routes) {
		t.Errorf("routes %+v, want %+v", doc.Routes, routes)
	}
	defs := ctxsel.Defs()
	if doc.Default != ctxsel.DefaultStrategy || len(doc.Strategies) != len(defs) || len(doc.Caps) != len(ctxsel.CapParams()) || len(doc.Orders) != 3 {
		t.Fatalf("%+v", doc)
	}
	for i, d := range defs {
		got := doc.Strategies[i]
		if got.Name != d.Name || got.Doc != d.Doc || len(got.Params) != len(d.Params) {
			t.Errorf("%s: %+v", d.Name, got)
		}
		for j, p := range d.Params {
			if !reflect.DeepEqual(got.Params[j], p) {
				t.Errorf("%s.%s: %+v want %+v", d.Name, p.Name, got.Params[j], p)
			}
		}
	}
}

// TestSelectMatchesInProcess compares the service with ctxsel.Select on
// random curves and every strategy, so the HTTP layer adds nothing and loses
// nothing.
func TestSelectMatchesInProcess(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.MaxCurvePoints = 50 }, Options{})
	rng := rand.New(rand.NewPCG(1, 2))
	specs := []string{"adaptivek", "adaptivek:head=0.05,buffer=0", "knee", "knee:cutoff=2", "topk:k=7", "budget:tokens=900",
		"threshold:min=0.6", "topp:p=0.8,temperature=0.05", "full", "adaptivek:max_tokens=500,min_k=3",
		"moving_avg", "2diff_spike:buffer=0", "threshold:min=2", "topk:k=3"}
	for trial := range 60 {
		n := 1 + rng.IntN(120)
		cands := make([]ctxsel.Candidate, n)
		var b strings.Builder
		b.WriteString(`{"candidates":[`)
		for i := range cands {
			score := math.Round(rng.Float64()*1e6) / 1e6
			if rng.IntN(5) == 0 && i > 0 {
				score = cands[i-1].Score // ties
			}
			cands[i] = ctxsel.Candidate{ID: fmt.Sprintf("p%d", i), Score: score, Tokens: rng.IntN(300)}
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"id":%q,"score":%s,"tokens":%d}`, cands[i].ID, strconv.FormatFloat(score, 'g', -1, 64), cands[i].Tokens)
		}
		spec := specs[trial%len(specs)]
		order := []string{"rank", "document", "edges"}[trial%3]
		fmt.Fprintf(&b, `],"strategy":%q,"order":%q}`, spec, order)

		st, caps, err := ctxsel.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		ord, _ := ctxsel.ParseOrder(order)
		curve, err := ctxsel.NewCurve(cands)
		if err != nil {
			t.Fatal(err)
		}
		want, err := ctxsel.Select(curve, st, caps, ord)
		if err != nil {
			t.Fatal(err)
		}
		got := decodeOK(t, call(t, s, "POST", "/v1/select", b.String()))
		e := got.Explanation
		if !slices.Equal(got.IDs, want.IDs) || !slices.Equal(got.Indices, want.Indices) || got.K != want.K || got.Tokens != want.Tokens ||
			e.K != want.Explanation.K || e.StrategyK != want.Explanation.StrategyK || e.Decision.Kind != want.Explanation.Decision.Kind ||
			e.Decision.Rank != want.Explanation.Decision.Rank || e.Reason != want.Explanation.Reason ||
			!slices.Equal(e.Guards, want.Explanation.Guards) || e.Guards == nil {
			t.Fatalf("%s n=%d: got %+v\nwant %+v", spec, n, got, want)
		}
		sorted := curve.Sorted()
		c := e.Curve
		if c.N != n || c.Max != sorted[0] || c.Min != sorted[n-1] || len(c.Scores) > 50 || c.Sampled != (n > 50) {
			t.Fatalf("curve n=%d: %+v", n, c)
		}
		if c.Sampled {
			if len(c.Ranks) != len(c.Scores) || !slices.IsSorted(c.Ranks) || c.Ranks[0] != 0 || c.Ranks[len(c.Ranks)-1] != n-1 {
				t.Fatalf("ranks %v", c.Ranks)
			}
			for i, r := range c.Ranks {
				if c.Scores[i] != sorted[r] {
					t.Fatalf("point %d: rank %d score %v want %v", i, r, c.Scores[i], sorted[r])
				}
			}
			for _, r := range []int{e.Cut - 1, e.Cut, e.Decision.Rank, e.Decision.Rank + 1} {
				if r >= 0 && r < n && !slices.Contains(c.Ranks, r) {
					t.Fatalf("rank %d around the cut was sampled away: %v", r, c.Ranks)
				}
			}
		} else if !slices.Equal(c.Scores, sorted) {
			t.Fatalf("scores %v want %v", c.Scores, sorted)
		}
	}
}

type fakeAsker struct {
	err  error
	seen *AskRequest
}

func (f fakeAsker) Ask(ctx context.Context, req AskRequest) (AskResponse, error) {
	if f.err != nil {
		return AskResponse{}, f.err
	}
	if f.seen != nil {
		*f.seen = req
	}
	ps := []Passage{
		{ID: "low", Score: 0.1, Tokens: 5, Text: "unrelated"},
		{ID: "top", Score: 0.9, Tokens: 7, Text: "the answer is 42"},
		{ID: "mid", Score: 0.8, Tokens: 6, Text: "about the answer"},
	}
	cands := make([]ctxsel.Candidate, len(ps))
	for i, p := range ps {
		cands[i] = ctxsel.Candidate{ID: p.ID, Score: p.Score, Tokens: p.Tokens}
	}
	curve, err := ctxsel.NewCurve(cands)
	if err != nil {
		return AskResponse{}, err
	}
	st, caps := req.Strategy.Strategy, req.Strategy.Caps
	if req.Strategy.Kind != ctxsel.StrategyKind { // the Asker's default, a selector or a route: selected here as two passages
		if st, caps, err = ctxsel.Parse("topk:k=2"); err != nil {
			return AskResponse{}, err
		}
	}
	sel, err := ctxsel.Select(curve, st, caps, req.Order)
	if err != nil {
		return AskResponse{}, err
	}
	return AskResponse{Answer: "42", Passages: ps, Selection: sel}, nil
}

type askerFunc func(ctx context.Context, req AskRequest) (AskResponse, error)

func (f askerFunc) Ask(ctx context.Context, req AskRequest) (AskResponse, error) { return f(ctx, req) }

func TestAsk(t *testing.T) {
	rec := call(t, newTestServer(t, nil, Options{}), "POST", "/v1/ask", `{"query":"what?"}`)
	if rec.Code != http.StatusNotImplemented || !strings.Contains(rec.Body.String(), `"error"`) {
		t.Fatalf("without an asker: %d %s", rec.Code, rec.Body)
	}

	var seen AskRequest
	s := newTestServer(t, nil, Options{Asker: fakeAsker{seen: &seen}})
	rec = call(t, s, "POST", "/v1/ask", `{"query":"what?","strategy":"adaptivek","params":{"buffer":0,"max_k":5},"order":"document","top_n":20,"retriever":"bm25"}`)
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	var got struct {
		Answer   string   `json:"answer"`
		IDs      []string `json:"ids"`
		K        int      `json:"k"`
		Tokens   int      `json:"tokens"`
		Passages []struct {
			ID       string `json:"id"`
			Rank     int    `json:"rank"`
			Selected bool   `json:"selected"`
			Text     string `json:"text"`
		} `json:"passages"`
		Explanation struct {
			Curve struct {
				Scores []float64 `json:"scores"`
			} `json:"curve"`
		} `json:"explanation"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if seen.Query != "what?" || seen.TopN != 20 || seen.Retriever != "bm25" || seen.Strategy.Caps.MaxK != 5 || seen.Order != ctxsel.DocumentOrder || seen.Strategy.Strategy.Params()["buffer"] != 0 ||
		seen.Strategy.Kind != ctxsel.StrategyKind || seen.Strategy.Spec != "adaptivek:buffer=0,max_k=5" {
		t.Fatalf("asker saw %+v", seen)
	}
	if got.Answer != "42" || !slices.Equal(got.IDs, []string{"top", "mid"}) || got.K != 2 || got.Tokens != 13 ||
		len(got.Passages) != 3 || got.Passages[0].ID != "top" || !got.Passages[1].Selected || got.Passages[2].Selected ||
		got.Passages[2].Rank != 2 || got.Passages[0].Text != "the answer is 42" || !slices.Equal(got.Explanation.Curve.Scores, []float64{0.9, 0.8, 0.1}) {
		t.Fatalf("%s", rec.Body)
	}

	// An index that reports only the selected passages and the whole curve.
	s = newTestServer(t, nil, Options{Asker: askerFunc(func(ctx context.Context, req AskRequest) (AskResponse, error) {
		sel := ctxsel.Selection{IDs: []string{"doc#3"}, Indices: []int{7}, K: 1, Tokens: 40,
			Explanation: ctxsel.Explanation{Strategy: "topk", K: 1, StrategyK: 1, TotalTokens: 900, Decision: ctxsel.Decision{Kind: "fixed"}}}
		return AskResponse{Answer: "a", Selection: sel, Scores: []float64{0.2, 0.9, 0.5},
			Passages: []Passage{{ID: "doc#3", Score: 0.9, Tokens: 40, Text: "t"}}}, nil
	})})
	rec = call(t, s, "POST", "/v1/ask", `{"query":"q"}`)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"scores":[0.9],"k":1,"tokens":40,"total_tokens":900`) ||
		!strings.Contains(rec.Body.String(), `"curve":{"n":3,"min":0.2,"max":0.9`) || !strings.Contains(rec.Body.String(), `"selected":true`) {
		t.Fatalf("partial passages: %d %s", rec.Code, rec.Body)
	}
	// A selection naming a passage the index did not return is the index's
	// bug: 500, not 400.
	s = newTestServer(t, nil, Options{Asker: askerFunc(func(ctx context.Context, req AskRequest) (AskResponse, error) {
		return AskResponse{Selection: ctxsel.Selection{IDs: []string{"ghost"}}}, nil
	})})
	if rec = call(t, s, "POST", "/v1/ask", `{"query":"q"}`); rec.Code != http.StatusInternalServerError {
		t.Fatalf("ghost selection: %d %s", rec.Code, rec.Body)
	}

	for _, tc := range []struct {
		asker  Asker
		body   string
		status int
		field  string
	}{
		{fakeAsker{}, `{}`, 400, "query"},
		{fakeAsker{}, `{"query":"q","strategy":"nope"}`, 400, "strategy"},
		{fakeAsker{}, `{"query":"q","top_n":-1}`, 400, "top_n"},
		{fakeAsker{}, `{"query":"q","retriever":1}`, 400, "retriever"},
		{fakeAsker{}, `{"query":"q","retriever":"bm25","retriever":"dense"}`, 400, "retriever"},
		{fakeAsker{}, `{"query":"q","candidates":[]}`, 400, "candidates"},
		{fakeAsker{err: fmt.Errorf("%w: empty index", ctxsel.ErrInvalidInput)}, `{"query":"q"}`, 400, ""},
		{fakeAsker{err: errors.New("llm down")}, `{"query":"q"}`, 502, ""},
		{fakeAsker{err: context.DeadlineExceeded}, `{"query":"q"}`, 504, ""},
	} {
		rec := call(t, newTestServer(t, nil, Options{Asker: tc.asker}), "POST", "/v1/ask", tc.body)
		var e errResp
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || rec.Code != tc.status || e.Error.Field == nil || *e.Error.Field != tc.field {
			t.Errorf("%s: %d %s", tc.body, rec.Code, rec.Body)
		}
	}
}

func TestAuth(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.APIKeys = []string{"k-one", "k-two"} }, Options{})
	for _, tc := range []struct {
		method, path, body, auth string
		status                   int
	}{
		{"POST", "/v1/select", readmeExample, "", 401},
		{"POST", "/v1/select", readmeExample, "Bearer wrong", 401},
		{"POST", "/v1/select", readmeExample, "Bearer k-one-and-more", 401},
		{"POST", "/v1/select", readmeExample, "Bearer k-on", 401},
		{"POST", "/v1/select", readmeExample, "Basic k-one", 401},
		{"POST", "/v1/select", readmeExample, "k-one", 401},
		{"POST", "/v1/select", readmeExample, "Bearer k-one", 200},
		{"POST", "/v1/select", readmeExample, "bearer k-two", 200},
		{"POST", "/v1/ask", `{"query":"q"}`, "", 401},
		{"GET", "/v1/strategies", "", "", 401},
		{"GET", "/v1/strategies", "", "Bearer k-two", 200},
		{"GET", "/metrics", "", "", 401},
		{"GET", "/metrics", "", "Bearer k-one", 200},
		{"GET", "/healthz", "", "", 200},
		{"GET", "/readyz", "", "", 200},
		{"GET", "/", "", "", 200},
		{"GET", "/assets/app.js", "", "", 200},
		{"GET", "/openapi.json", "", "", 200},
	} {
		rec := call(t, s, tc.method, tc.path, tc.body, "Authorization", tc.auth)
		if rec.Code != tc.status {
			t.Errorf("%s %s %q: %d %s", tc.method, tc.path, tc.auth, rec.Code, rec.Body)
		}
		if tc.status == 401 {
			if rec.Header().Get("WWW-Authenticate") == "" || !strings.Contains(rec.Body.String(), `"field":"Authorization"`) {
				t.Errorf("%s %s: 401 without challenge or field: %s", tc.method, tc.path, rec.Body)
			}
		}
	}
}

func TestAuthKeysNeverLogged(t *testing.T) {
	var logs strings.Builder
	s := newTestServer(t, func(c *Config) { c.APIKeys = []string{"sekrit-key"} },
		Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	call(t, s, "POST", "/v1/select", readmeExample, "Authorization", "Bearer sekrit-key")
	call(t, s, "POST", "/v1/select", readmeExample, "Authorization", "Bearer sekrit-wrong")
	if strings.Contains(logs.String(), "sekrit") {
		t.Fatalf("a key reached the log:\n%s", logs.String())
	}
}

func TestBindCheck(t *testing.T) {
	for _, tc := range []struct {
		addr     string
		keys     bool
		insecure bool
		ok       bool
	}{
		{"127.0.0.1:8080", false, false, true},
		{"127.0.0.2:0", false, false, true},
		{"localhost:0", false, false, true},
		{"[::1]:0", false, false, true},
		{"[::ffff:127.0.0.1]:0", false, false, true},
		{"0.0.0.0:8080", false, false, false},
		{":8080", false, false, false},
		{"[::]:8080", false, false, false},
		{"10.1.2.3:80", false, false, false},
		{"example.com:80", false, false, false},
		{"0.0.0.0:8080", true, false, true},
		{"0.0.0.0:8080", false, true, true},
		{"no-port", false, false, false},
	} {
		err := CheckBind(tc.addr, tc.keys, tc.insecure)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ctxsel.ErrInvalidInput)) {
			t.Errorf("%+v: %v", tc, err)
		}
	}
	cfg := DefaultConfig()
	cfg.Addr = "0.0.0.0:0"
	if _, err := New(cfg, Options{}); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Errorf("New on a public address without keys: %v", err)
	}
}

func TestConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cfg := DefaultConfig()
	if err := LoadConfigFile(write("ok.json", `{"addr":"127.0.0.1:9","max_candidates":5,"read_header_timeout":"250ms"}`), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != "127.0.0.1:9" || cfg.MaxCandidates != 5 || cfg.ReadHeaderTimeout.D().Milliseconds() != 250 || cfg.MaxBodyBytes != DefaultConfig().MaxBodyBytes {
		t.Fatalf("%+v", cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"unknown.json":  `{"max_candidate":5}`,
		"duration.json": `{"read_timeout":5}`,
		"badval.json":   `{"read_timeout":"soon"}`,
		"two.json":      `{} {}`,
		"keys.json":     `{"APIKeys":["x"]}`,
	} {
		c := DefaultConfig()
		if err := LoadConfigFile(write(name, body), &c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	for _, mod := range []func(*Config){
		func(c *Config) { c.MaxBodyBytes = 0 },
		func(c *Config) { c.MaxCandidates = -1 },
		func(c *Config) { c.ReadHeaderTimeout = 0 },
		func(c *Config) { c.TokenEncoding = "nope" },
		func(c *Config) { c.MaxCurvePoints = 3 },
		func(c *Config) { c.APIKeys = []string{" "} },
	} {
		c := DefaultConfig()
		mod(&c)
		if err := c.Validate(); !errors.Is(err, ctxsel.ErrInvalidInput) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	if got := ParseAPIKeys(" a, ,b,"); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("keys %q", got)
	}
}

var metricLine = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="[^"]*"(,[a-zA-Z_][a-zA-Z0-9_]*="[^"]*")*\})? (\+Inf|-Inf|NaN|-?[0-9.]+([eE][-+]?[0-9]+)?)$`)

func TestMetrics(t *testing.T) {
	s := newTestServer(t, nil, Options{})
	call(t, s, "POST", "/v1/select", readmeExample)
	call(t, s, "POST", "/v1/select", readmeExample)
	call(t, s, "POST", "/v1/select", `{}`)
	call(t, s, "GET", "/nope", "")
	rec := call(t, s, "GET", "/metrics", "")
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("%d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	text := rec.Body.String()
	for _, want := range []string{
		`ctxsel_http_requests_total{route="/v1/select",code="200"} 2`,
		`ctxsel_http_requests_total{route="/v1/select",code="400"} 1`,
		`ctxsel_http_requests_total{route="other",code="404"} 1`,
		`ctxsel_http_request_duration_seconds_count{route="/v1/select"} 3`,
		`ctxsel_http_request_duration_seconds_bucket{route="/v1/select",le="+Inf"} 3`,
		`ctxsel_selected_k_bucket{le="2"} 2`,
		`ctxsel_selected_k_bucket{le="1"} 0`,
		`ctxsel_selected_k_sum 4`,
		`ctxsel_selected_tokens_count 2`,
		`ctxsel_http_requests_in_flight 1`, // the /metrics request itself
		"# TYPE ctxsel_selected_tokens histogram",
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("missing %q", want)
		}
	}
	// Every sample line parses, and buckets are cumulative.
	last := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if strings.HasPrefix(line, "# ") {
			continue
		}
		if !metricLine.MatchString(line) {
			t.Errorf("bad line %q", line)
			continue
		}
		if i := strings.Index(line, `le="`); i >= 0 {
			series := line[:strings.Index(line, "le=")]
			v, _ := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if v < last[series] {
				t.Errorf("bucket not cumulative: %q", line)
			}
			last[series] = v
		}
	}
}
