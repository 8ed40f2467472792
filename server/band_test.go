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
