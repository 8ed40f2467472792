package cutoff_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	_ "github.com/ctxsel/ctxsel/cutoff"
)

func curve(t testing.TB, scores []float64, tokens []int) *ctxsel.Curve {
	t.Helper()
	cands := make([]ctxsel.Candidate, len(scores))
	for i, s := range scores {
		cands[i] = ctxsel.Candidate{ID: fmt.Sprintf("p%d", i), Score: s}
		if tokens != nil {
			cands[i].Tokens = tokens[i]
		}
	}
	c, err := ctxsel.NewCurve(cands)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func selectIDs(t *testing.T, spec string, scores []float64, tokens []int, order ctxsel.Order) ctxsel.Selection {
	t.Helper()
	s, caps, err := ctxsel.Parse(spec)
	if err != nil {
		t.Fatalf("%s: %v", spec, err)
	}
	sel, err := ctxsel.Select(curve(t, scores, tokens), s, caps, order)
	if err != nil {
		t.Fatalf("%s: %v", spec, err)
	}
	return sel
}

func TestStrategies(t *testing.T) {
	scores := []float64{0.1, 0.9, 0.5, 0.7, 0.3} // ranks: p1 p3 p2 p4 p0
	tokens := []int{10, 100, 50, 70, 30}
	cases := []struct {
		spec  string
		order ctxsel.Order
		want  string
	}{
		{"topk:k=2", ctxsel.RankOrder, "p1 p3"},
		{"topk:k=2", ctxsel.DocumentOrder, "p1 p3"},
		{"topk:k=3", ctxsel.DocumentOrder, "p1 p2 p3"},
		{"topk:k=99", ctxsel.RankOrder, "p1 p3 p2 p4 p0"},
		{"full", ctxsel.RankOrder, "p1 p3 p2 p4 p0"},
		{"topk:k=5", ctxsel.EdgesOrder, "p1 p2 p0 p4 p3"},
		// 100 + 70 = 170 fits 200; + 50 would cross, and the reference stops there
		// even though the 30-token p4 would still fit.
		{"budget:tokens=200", ctxsel.RankOrder, "p1 p3"},
		{"budget:tokens=220", ctxsel.RankOrder, "p1 p3 p2"},
		{"budget:tokens=99", ctxsel.RankOrder, ""},
		{"threshold:min=0.5", ctxsel.RankOrder, "p1 p3 p2"},
		{"threshold:min=2", ctxsel.RankOrder, "p1"}, // the min_k=1 fallback
		{"threshold:min=2,min_k=0", ctxsel.RankOrder, ""},
		{"threshold:min=2,min_k=1", ctxsel.RankOrder, "p1"},
		{"topk:k=4,max_tokens=200", ctxsel.RankOrder, "p1 p3"},
		{"topk:k=4,max_k=1", ctxsel.RankOrder, "p1"},
		{"topp:p=0.5,temperature=100", ctxsel.RankOrder, "p1 p3 p2"}, // near-uniform mass
		{"topp:p=0.5,temperature=0.01", ctxsel.RankOrder, "p1"},
		{"topp:p=0.5,temperature=0.01,min_k=2", ctxsel.RankOrder, "p1 p3"}, // the cap
		{"topp:p=0.5,temperature=0.01,keep_min=2", ctxsel.RankOrder, "p1 p3"},
		// gaps .2 .2 .2 .2 in decimal, in binary .20000000000000007,
		// .19999999999999996, .2, .19999999999999998: the official cut is at
		// rank 0 (the default); ctxsel's head guard moves it to the largest
		// gap below, rank 2.
		{"adaptivek:buffer=0,head_guard=0", ctxsel.RankOrder, "p1"},
		{"adaptivek:buffer=1,head_guard=0", ctxsel.RankOrder, "p1 p3"},
		{"adaptivek:buffer=0", ctxsel.RankOrder, "p1"},
		{"adaptivek:buffer=1", ctxsel.RankOrder, "p1 p3"},
		{"adaptivek:buffer=0,head_guard=1", ctxsel.RankOrder, "p1 p3 p2"},
		{"adaptivek:buffer=1,head_guard=1", ctxsel.RankOrder, "p1 p3 p2 p4"},
	}
	for _, tc := range cases {
		sel := selectIDs(t, tc.spec, scores, tokens, tc.order)
		if got := strings.Join(sel.IDs, " "); got != tc.want {
			t.Errorf("%s (%v): got %q, want %q", tc.spec, tc.order, got, tc.want)
		}
		sum := 0
		for _, i := range sel.Indices {
			sum += tokens[i]
		}
		if sel.Tokens != sum || sel.Explanation.Tokens != sum || sel.Explanation.TotalTokens != 260 {
			t.Errorf("%s: tokens %d / %d, want %d of 260", tc.spec, sel.Tokens, sel.Explanation.Tokens, sum)
		}
	}
}

func TestExplanation(t *testing.T) {
	sel := selectIDs(t, "adaptivek:buffer=1,max_tokens=1000", []float64{0.9, 0.85, 0.3, 0.28, 0.25}, []int{5, 5, 5, 5, 5}, ctxsel.RankOrder)
	e := sel.Explanation
	if e.Decision.Kind != "gap" || e.Decision.Rank != 1 || math.Abs(e.Decision.Value-0.55) > 1e-12 {
		t.Fatalf("decision %+v", e.Decision)
	}
	if *e.Decision.Above != 0.85 || *e.Decision.Below != 0.3 || *e.Decision.SearchFrom != 0 || *e.Decision.SearchTo != 4 {
		t.Fatalf("decision %+v", e.Decision)
	}
	if e.StrategyK != 3 || e.K != 3 || e.Params["buffer"] != 1 || e.Params["tail"] != 0.1 || e.Caps.MaxTokens != 1000 || e.N != 5 {
		t.Fatalf("explanation %+v", e)
	}
	if !strings.Contains(e.Reason, "largest gap") {
		t.Fatalf("reason %q", e.Reason)
	}
	capped := selectIDs(t, "topk:k=4,max_tokens=12", []float64{4, 3, 2, 1}, []int{5, 5, 5, 5}, ctxsel.RankOrder)
	if !slices.Equal(capped.Explanation.CapsApplied, []string{"max_tokens"}) || capped.Explanation.StrategyK != 4 || capped.K != 2 {
		t.Fatalf("caps: %+v", capped.Explanation)
	}
}

func TestBadInput(t *testing.T) {
	specs := []string{"", "nosuch", "topk:k=0", "topk:k=1.5", "topk:kk=3", "adaptivek:head=1", "adaptivek:head=0.6,tail=0.6",
		"adaptivek:buffer=-1", "topp:p=0", "topp:temperature=0", "topk:k=nan", "topk:k=inf", "topk:k=3,k=4", "k=3",
		"topk:k=3,min_k=5,max_k=2", "knee:cutoff=0", "budget:tokens=-1"}
	for _, sp := range specs {
		if _, _, err := ctxsel.Parse(sp); !errors.Is(err, ctxsel.ErrInvalidInput) {
			t.Errorf("Parse(%q) err = %v, want ErrInvalidInput", sp, err)
		}
	}
	cands := [][]ctxsel.Candidate{
		nil,
		{{ID: "a", Score: math.NaN()}},
		{{ID: "a", Score: math.Inf(-1)}},
		{{ID: "a", Score: 1}, {ID: "a", Score: 2}},
		{{ID: "", Score: 1}},
		{{ID: "a", Score: 1, Tokens: -1}},
	}
	for i, c := range cands {
		if _, err := ctxsel.NewCurve(c); !errors.Is(err, ctxsel.ErrInvalidInput) {
			t.Errorf("candidates %d: err = %v, want ErrInvalidInput", i, err)
		}
	}
}

func TestSpecList(t *testing.T) {
	specs, err := ctxsel.ParseSpecList("topk:k=10, adaptivek ,adaptivek:head=0.05,tail=0.2,knee,budget:tokens=500,max_k=3")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range specs {
		got = append(got, s.String())
	}
	want := []string{"topk:k=10", "adaptivek", "adaptivek:head=0.05,tail=0.2", "knee", "budget:max_k=3,tokens=500"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

// checkSelection asserts the properties every selection must have.
func checkSelection(t *testing.T, c *ctxsel.Curve, sel ctxsel.Selection, caps ctxsel.Caps) {
	t.Helper()
	n := c.Len()
	e := sel.Explanation
	if sel.K != len(sel.IDs) || sel.K != len(sel.Indices) || sel.K != e.K {
		t.Fatalf("k mismatch: %d ids, %d indices, k=%d, explanation k=%d", len(sel.IDs), len(sel.Indices), sel.K, e.K)
	}
	if e.Start < 0 || e.Start+sel.K > n {
		t.Fatalf("band [%d, %d) outside [0, %d)", e.Start, e.Start+sel.K, n)
	}
	if caps.MaxK > 0 && sel.K > caps.MaxK {
		t.Fatalf("k=%d above max_k=%d", sel.K, caps.MaxK)
	}
	if caps.MaxTokens > 0 && sel.Tokens > caps.MaxTokens {
		t.Fatalf("tokens=%d above max_tokens=%d", sel.Tokens, caps.MaxTokens)
	}
	// The selection must be exactly ranks [Start, Start+K) of the full sort.
	want := c.Top(n)[e.Start : e.Start+sel.K]
	got := slices.Clone(sel.Indices)
	slices.Sort(got)
	w := slices.Clone(want)
	slices.Sort(w)
	if !slices.Equal(got, w) {
		t.Fatalf("selection %v is not ranks [%d, %d) = %v", sel.Indices, e.Start, e.Start+sel.K, want)
	}
}

func FuzzSelect(f *testing.F) {
	f.Add("adaptivek", []byte{1, 200, 3, 3, 90, 0, 255}, []byte{5, 5, 1, 0})
	f.Add("knee:cutoff=2", []byte{9, 9, 9, 1, 1, 1, 0}, []byte{1})
	f.Add("budget:tokens=7,min_k=2", []byte{4, 3, 2, 1}, []byte{3, 4, 5})
	f.Add("topp:p=0.5,temperature=0.2", []byte{10, 20, 30}, []byte{})
	f.Add("adaptivek:head=0.05,tail=0.2,buffer=0,max_k=3", []byte{0, 0, 0, 255, 255}, []byte{})
	f.Add("threshold:min=0.3,max_tokens=4", []byte{100, 50, 70}, []byte{2, 2, 2})
	f.Fuzz(func(t *testing.T, spec string, raw []byte, toks []byte) {
		if len(raw) == 0 || len(raw) > 4000 {
			return
		}
		st, caps, err := ctxsel.Parse(spec)
		if err != nil {
			return
		}
		cands := make([]ctxsel.Candidate, len(raw))
		for i, b := range raw {
			cands[i] = ctxsel.Candidate{ID: fmt.Sprint(i), Score: float64(b) / 255}
			if len(toks) > 0 {
				cands[i].Tokens = int(toks[i%len(toks)])
			}
		}
		c, err := ctxsel.NewCurve(cands)
		if err != nil {
			t.Fatal(err)
		}
		sel, err := ctxsel.Select(c, st, caps, ctxsel.RankOrder)
		if err != nil {
			return // e.g. parameters only checked at cut time
		}
		checkSelection(t, c, sel, caps)
		c2, _ := ctxsel.NewCurve(cands)
		again, err := ctxsel.Select(c2, st, caps, ctxsel.RankOrder)
		if err != nil || !slices.Equal(again.IDs, sel.IDs) {
			t.Fatalf("not deterministic: %v / %v (%v)", sel.IDs, again.IDs, err)
		}
	})
}

func FuzzParseSpecList(f *testing.F) {
	for _, s := range []string{"topk:k=10,adaptivek,adaptivek:head=0.05,knee", "budget:tokens=1e3", "a:b=c", ",,", "x:=", "topp:p=0.9,min_k=2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		specs, err := ctxsel.ParseSpecList(s)
		if err != nil {
			if !errors.Is(err, ctxsel.ErrInvalidInput) {
				t.Fatalf("error not wrapping ErrInvalidInput: %v", err)
			}
			return
		}
		for _, sp := range specs {
			// The canonical form must parse back to the same spec.
			back, err := ctxsel.ParseSpec(sp.String())
			if err != nil || back.String() != sp.String() {
				t.Fatalf("round trip %q → %q (%v)", sp.String(), back.String(), err)
			}
		}
	})
}
