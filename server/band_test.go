package server

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/ldar"
)

// TestBandRunsOperatorsPolicy: a band named by a request, with or without
// request params, runs the policy the operator gave the server
// (SelectorDeps: ldar.DepPolicy), not the embedded one; a server without
// it runs the embedded one.
func TestBandRunsOperatorsPolicy(t *testing.T) {
	m, err := ldar.NewModel(ldar.Config{Window: 8, Freqs: 2, FreqSigma: 0.1, Dim: 8, Heads: 2, Layers: 1, FFN: 8, Hidden: 8, Head: "exp", Pool: "attention"}, 3)
	if err != nil {
		t.Fatal(err)
	}
	operators := ldar.NewPolicy(m, nil)
	embedded, err := ldar.Default()
	if err != nil {
		t.Fatal(err)
	}
	cands := make([]ctxsel.Candidate, 40)
	var js []string
	for i := range cands {
		cands[i] = ctxsel.Candidate{ID: fmt.Sprint("p", i), Score: 1 / float64(i+1), Tokens: 10 + i}
		js = append(js, fmt.Sprintf(`{"id":%q,"score":%v,"tokens":%d}`, cands[i].ID, cands[i].Score, cands[i].Tokens))
	}
	curve, err := ctxsel.NewCurve(cands)
	if err != nil {
		t.Fatal(err)
	}
	want := func(p *ldar.Policy) ctxsel.Selection {
		t.Helper()
		sel, err := ctxsel.Select(curve, p.Strategy(), ctxsel.Caps{MinK: 1, MaxK: 30}, ctxsel.RankOrder)
		if err != nil {
			t.Fatal(err)
		}
		return sel
	}
	wantOp, wantEmb := want(operators), want(embedded)
	if wantOp.Explanation.Reason == wantEmb.Explanation.Reason {
		t.Fatalf("both policies cut alike (%s): the test cannot tell them apart", wantOp.Explanation.Reason)
	}
	withPolicy := newTestServer(t, nil, Options{SelectorDeps: ctxsel.DepsOf(map[string]any{ldar.DepPolicy: operators})})
	plain := newTestServer(t, nil, Options{})
	list := strings.Join(js, ",")
	for _, tc := range []struct {
		name string
		s    *Server
		body string
		want ctxsel.Selection
	}{
		{"params", withPolicy, `{"strategy":"band","params":{"max_k":30},"candidates":[` + list + `]}`, wantOp},
		{"spec", withPolicy, `{"strategy":"band:max_k=30","candidates":[` + list + `]}`, wantOp},
		{"params, no policy given", plain, `{"strategy":"band","params":{"max_k":30},"candidates":[` + list + `]}`, wantEmb},
	} {
		rec := call(t, tc.s, "POST", "/v1/select", tc.body)
		if rec.Code != 200 {
			t.Fatalf("%s: %d %s", tc.name, rec.Code, rec.Body)
		}
		var out struct {
			IDs         []string
			Explanation struct{ Reason string }
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(out.IDs, tc.want.IDs) || !strings.Contains(out.Explanation.Reason, tc.want.Explanation.Reason) {
			t.Errorf("%s: ids %v reason %q\nwant ids %v reason %q", tc.name, out.IDs, out.Explanation.Reason, tc.want.IDs, tc.want.Explanation.Reason)
		}
	}
}

// TestBandPolicyOnEveryRoute: the operator's band policy reaches every
// route that resolves a strategy: /v1/ask (what the Asker is handed),
// /v1/rerank (by model and by strategy with params) and the MCP
// select_context and ask tools, not only /v1/select.
func TestBandPolicyOnEveryRoute(t *testing.T) {
	// The operator's policy reads the top 8 ranks, the embedded one 32:
	// a cut's reason says which ran.
	m, err := ldar.NewModel(ldar.Config{Window: 8, Freqs: 2, FreqSigma: 0.1, Dim: 8, Heads: 2, Layers: 1, FFN: 8, Hidden: 8, Head: "exp", Pool: "attention"}, 3)
	if err != nil {
		t.Fatal(err)
	}
	const operators, embedded = "over the top 8 of", "over the top 32 of"
	var seen AskRequest
	s := newTestServer(t, nil, Options{Asker: fakeAsker{seen: &seen}, SelectorDeps: ctxsel.DepsOf(map[string]any{ldar.DepPolicy: ldar.NewPolicy(m, nil)})})
	plain := newTestServer(t, nil, Options{Asker: fakeAsker{seen: &seen}})

	cands := make([]ctxsel.Candidate, 40)
	var js, docs []string
	for i := range cands {
		cands[i] = ctxsel.Candidate{ID: fmt.Sprint("p", i), Score: 1 / float64(i+1), Tokens: 10 + i}
		js = append(js, fmt.Sprintf(`{"id":%q,"score":%v,"tokens":%d}`, cands[i].ID, cands[i].Score, cands[i].Tokens))
		docs = append(docs, fmt.Sprintf("%q", strings.Repeat("volcano ", 40-i)+fmt.Sprint("island ", i)))
	}
	curve, err := ctxsel.NewCurve(cands)
	if err != nil {
		t.Fatal(err)
	}
	askReason := func(srv *Server, body string) string {
		t.Helper()
		seen = AskRequest{}
		if rec := call(t, srv, "POST", "/v1/ask", body); rec.Code != 200 {
			t.Fatalf("ask %s: %d %s", body, rec.Code, rec.Body)
		}
		if seen.Strategy.Kind != ctxsel.StrategyKind {
			t.Fatalf("ask %s: the Asker got %+v", body, seen.Strategy)
		}
		sel, err := ctxsel.Select(curve, seen.Strategy.Strategy, seen.Strategy.Caps, ctxsel.RankOrder)
		if err != nil {
			t.Fatal(err)
		}
		return sel.Explanation.Reason
	}
	rerankReason := func(srv *Server, body string) string {
		t.Helper()
		rec := call(t, srv, "POST", "/v1/rerank", body)
		var out struct{ Ctxsel struct{ Reason string } }
		if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &out) != nil {
			t.Fatalf("rerank %s: %d %s", body, rec.Code, rec.Body)
		}
		return out.Ctxsel.Reason
	}
	docList := strings.Join(docs, ",")
	for _, tc := range []struct {
		name, want string
		reason     func() string
	}{
		{"ask, params", operators, func() string { return askReason(s, `{"query":"q","strategy":"band","params":{"max_k":30}}`) }},
		{"ask, spec", operators, func() string { return askReason(s, `{"query":"q","strategy":"band:max_k=30"}`) }},
		{"ask, no policy given", embedded, func() string { return askReason(plain, `{"query":"q","strategy":"band","params":{"max_k":30}}`) }},
		{"rerank, model", operators, func() string {
			return rerankReason(s, `{"query":"volcano","model":"ctxsel-band","documents":[`+docList+`]}`)
		}},
		{"rerank, params", operators, func() string {
			return rerankReason(s, `{"query":"volcano","strategy":"band","params":{"max_k":30},"documents":[`+docList+`]}`)
		}},
		{"rerank, no policy given", embedded, func() string {
			return rerankReason(plain, `{"query":"volcano","model":"ctxsel-band","documents":[`+docList+`]}`)
		}},
	} {
		if got := tc.reason(); !strings.Contains(got, tc.want) {
			t.Errorf("%s: reason %q, want %q", tc.name, got, tc.want)
		}
	}

	// The MCP tools run the same ops.
	cs := connectMemory(t, s)
	var out struct{ Explanation struct{ Reason string } }
	var args map[string]any
	if err := json.Unmarshal([]byte(`{"strategy":"band","params":{"max_k":30},"candidates":[`+strings.Join(js, ",")+`]}`), &args); err != nil {
		t.Fatal(err)
	}
	if res := callTool(t, cs, "select_context", args, &out); res.IsError || !strings.Contains(out.Explanation.Reason, operators) {
		t.Errorf("select_context: %v reason %q, want %q", errorText(res), out.Explanation.Reason, operators)
	}
	seen = AskRequest{}
	if res := callTool(t, cs, "ask", map[string]any{"query": "q", "strategy": "band", "params": map[string]any{"max_k": 30}}, nil); res.IsError {
		t.Fatalf("ask tool: %s", errorText(res))
	}
	if sel, err := ctxsel.Select(curve, seen.Strategy.Strategy, seen.Strategy.Caps, ctxsel.RankOrder); err != nil || !strings.Contains(sel.Explanation.Reason, operators) {
		t.Errorf("ask tool: %v reason %q, want %q", err, sel.Explanation.Reason, operators)
	}
}
