package cutoff_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
)

// The curve families real scorers produce, built from one integer base curve
// by exact affine maps, so every gap and second difference is computed
// without rounding and the strategies that read only the curve's shape must
// agree across them.
//
// base: 980 978 977 976 | cliff of 65 | 911 908 906 905 902 900 899 … (steps
// 3, 2, 1 repeating), 40 scores.
func baseCurve() []float64 {
	v := []float64{980, 978, 977, 976}
	x, step := 911.0, 0
	for len(v) < 40 {
		v = append(v, x)
		x -= float64(3 - step%3)
		step++
	}
	return v
}

// families maps the base onto real score scales: cosine scores bunched in
// 0.65–0.71 (k/16384, exact), reranker logits around 0, and all-negative
// log-probabilities.
func families(base []float64) map[string][]float64 {
	m := func(f func(float64) float64) []float64 {
		out := make([]float64, len(base))
		for i, v := range base {
			out[i] = f(v)
		}
		return out
	}
	return map[string][]float64{
		"bunched 0.65-0.71": m(func(v float64) float64 { return (10650 + v) / 16384 }),
		"logits":            m(func(v float64) float64 { return (v - 940) / 4 }),
		"negative":          m(func(v float64) float64 { return -(1024 - v) / 8 }),
	}
}

func selection(t *testing.T, spec string, scores []float64, tokens []int) ctxsel.Selection {
	t.Helper()
	return selectIDs(t, spec, scores, tokens, ctxsel.RankOrder)
}

// TestCutsAcrossScoreScales: the shape-reading strategies keep the same
// number of passages on every scale (hand-derived on the base curve); the
// scale-bound ones (threshold, topp) are shown failing in the documented way.
func TestCutsAcrossScoreScales(t *testing.T) {
	shape := []struct {
		spec string
		k    int
		why  string
	}{
		{"adaptivek", 9, "largest gap after rank 3 (65), + buffer 5"},
		{"adaptivek:buffer=0", 4, "the cliff"},
		{"moving_avg:buffer=0", 4, "window 3: drops (s[j] − s[j+3])/3 = 4/3, 67/3, 69/3, 70/3, 6/3 …: j* = 3"},
		{"2diff_spike:buffer=0", 5, "d2 = 1 0 −64 62 …: the drop stops accelerating at i = 2, t = 4"},
		// span 980 − 846 = 134 over 39 ranks (3.4 a rank): the head's steps
		// of 2, 1, 1 stay under the diagonal, the cliff rises above it, and
		// the tail's steps of at most 3 fall back: one peak, at rank 4.
		{"knee", 4, "the first local maximum of the normalised curve is the first passage after the cliff"},
		{"topk:k=7", 7, "rank-based"},
		{"budget:tokens=100", 10, "ten passages of 10 tokens"},
	}
	tokens := make([]int, 40)
	for i := range tokens {
		tokens[i] = 10
	}
	for fam, scores := range families(baseCurve()) {
		for _, tc := range shape {
			sel := selection(t, tc.spec, scores, tokens)
			if sel.K != tc.k {
				t.Errorf("%s on %s: k=%d, want %d (%s); %s", tc.spec, fam, sel.K, tc.k, tc.why, sel.Explanation.Reason)
			}
			if len(sel.Explanation.Guards) != 0 {
				t.Errorf("%s on %s: guards %v fired on a plain curve", tc.spec, fam, sel.Explanation.Guards)
			}
		}
	}
	fam := families(baseCurve())
	// An absolute threshold is bound to its scale: 0.5 keeps every bunched
	// cosine score and no negative one, where the min_k fallback keeps the
	// best and says so.
	if sel := selection(t, "threshold:min=0.5", fam["bunched 0.65-0.71"], nil); sel.K != 40 {
		t.Errorf("threshold 0.5 on bunched scores: k=%d, want all 40", sel.K)
	}
	neg := selection(t, "threshold:min=0.5", fam["negative"], nil)
	if neg.K != 1 || !slices.Contains(neg.Explanation.Guards, "min_k_fallback") || !strings.Contains(neg.Explanation.Reason, "min_k=1") {
		t.Errorf("threshold 0.5 on negative scores: k=%d guards %v reason %q, want the min_k fallback to keep 1", neg.K, neg.Explanation.Guards, neg.Explanation.Reason)
	}
	if sel := selection(t, "threshold:min=0.5,min_k=0", fam["negative"], nil); sel.K != 0 || len(sel.Explanation.Guards) != 0 {
		t.Errorf("threshold with min_k=0: k=%d guards %v, want an empty selection, unflagged", sel.K, sel.Explanation.Guards)
	}
	// topp's softmax temperature is on the score scale: at the default 0.05
	// bunched cosines (spread 0.06) are nearly uniform and most are kept,
	// while logits (spread 17) put all the mass on the best passage.
	if sel := selection(t, "topp", fam["bunched 0.65-0.71"], nil); sel.K < 30 {
		t.Errorf("topp on bunched scores: k=%d, want most of 40", sel.K)
	}
	if sel := selection(t, "topp", fam["logits"], nil); sel.K != 1 {
		t.Errorf("topp on logits: k=%d, want 1", sel.K)
	}
}

// TestHeadOutlierGuard plants one passage far above the base curve: the
// largest gap (and the first knee) now follows rank 0.
func TestHeadOutlierGuard(t *testing.T) {
	scores := append([]float64{2000}, baseCurve()...)
	cases := []struct {
		spec  string
		k     int
		guard bool
	}{
		{"adaptivek:buffer=0,head_guard=0", 1, false}, // the official cut collapses to the outlier
		{"adaptivek:buffer=0", 1, false},              // and so does the default: Algorithm 1
		{"adaptivek", 6, false},                       // 1 + buffer 5
		{"adaptivek:buffer=0,head_guard=1", 5, true},  // ctxsel's guard cuts at the cliff (now after rank 4)
		{"adaptivek:head_guard=1", 10, true},
		{"adaptivek:head_n=1,buffer=0", 5, false}, // skipping the top gap by hand needs no guard
		{"moving_avg:buffer=0,head_guard=0", 1, false},
		{"moving_avg:buffer=0", 1, false},
		// window 3 below the outlier: drops 3/3, 2/3, 66/3, 68/3, 5/3: j* = 4.
		{"moving_avg:buffer=0,head_guard=1", 5, true},
		// d2 = 1018 1 0 −64 62: the spike at t = 5 is unaffected by the outlier.
		{"2diff_spike:buffer=0", 6, false},
		{"knee:head_guard=0", 1, false},
		{"knee", 5, true},
		{"topk:k=3", 3, false},
		{"budget:tokens=100", 10, false},
	}
	tokens := make([]int, len(scores))
	for i := range tokens {
		tokens[i] = 10
	}
	for fam, s := range families(scores) {
		for _, tc := range cases {
			sel := selection(t, tc.spec, s, tokens)
			fired := slices.Contains(sel.Explanation.Guards, "head_guard")
			if sel.K != tc.k || fired != tc.guard {
				t.Errorf("%s on %s: k=%d guard=%v, want k=%d guard=%v; %s", tc.spec, fam, sel.K, fired, tc.k, tc.guard, sel.Explanation.Reason)
			}
			if fired && !strings.Contains(sel.Explanation.Reason, "head guard") {
				t.Errorf("%s: the guard fired but the reason does not say so: %q", tc.spec, sel.Explanation.Reason)
			}
			// With the guard off, a cut that keeps only the best passage is
			// still flagged: never silent.
			detected := slices.Contains(sel.Explanation.Guards, "head_gap")
			want := sel.K < 10 && sel.Explanation.Decision.Rank == 0 && !strings.HasPrefix(tc.spec, "topk") && !strings.HasPrefix(tc.spec, "budget")
			if detected != want {
				t.Errorf("%s on %s: head_gap flagged=%v, want %v; %s", tc.spec, fam, detected, want, sel.Explanation.Reason)
			}
		}
	}
	// The gap after the outlier (1020 base units) is 15.7 times the cliff (65):
	// the reason calls it an outlier.
	sel := selection(t, "adaptivek:head_guard=1", scores, nil)
	if !strings.Contains(sel.Explanation.Reason, "an outlier against") {
		t.Errorf("reason %q does not call the head gap an outlier", sel.Explanation.Reason)
	}
	// A second cliff comparable to the head gap is called comparable.
	two := []float64{100, 60, 59, 58, 30, 29, 28, 27, 26, 25, 24}
	sel = selection(t, "adaptivek:buffer=0,head_guard=1", two, nil)
	if sel.K != 4 || !strings.Contains(sel.Explanation.Reason, "comparable to") {
		t.Errorf("two cliffs: k=%d reason %q, want the cut after rank 3, called comparable", sel.K, sel.Explanation.Reason)
	}
}

// tiedCurve has 5 distinct leaders, 231 passages tied at 0.5, and a tail.
func tiedCurve() ([]float64, []int) {
	var s []float64
	s = append(s, 0.9, 0.88, 0.86, 0.84, 0.82)
	for range 231 {
		s = append(s, 0.5)
	}
	for i := range 20 {
		s = append(s, 0.3-float64(i)/128)
	}
	tokens := make([]int, len(s))
	for i := range tokens {
		tokens[i] = 10
	}
	return s, tokens
}

// TestTiesDoNotMoveCuts shuffles the input order of a curve with 231 tied
// scores: every strategy keeps the same number of passages; the selected set
// is the same whenever the cut falls on a strict drop, and when it splits
// the tie the explanation flags tie_split and the kept tied passages are the
// first in input order — the Curve's stated rule.
func TestTiesDoNotMoveCuts(t *testing.T) {
	scores, tokens := tiedCurve()
	allTied := make([]float64, 231)
	for i := range allTied {
		allTied[i] = 0.7
	}
	specs := []string{"topk:k=10", "topk:k=5", "budget:tokens=100", "full", "adaptivek", "adaptivek:buffer=0",
		"moving_avg", "moving_avg:buffer=0", "2diff_spike", "2diff_spike:buffer=0", "knee", "threshold:min=0.5",
		"threshold:min=0.6", "topp", "topp:temperature=1", "adaptivek:float32=1"}
	// On the leaders+ties curve: a fixed k of 10 or a buffer reaching into
	// the ties splits them; cuts at the drop to the ties (the largest gap
	// with no buffer, the knee, a threshold) do not.
	splits := map[string]bool{"topk:k=10": true, "budget:tokens=100": true, "adaptivek": true,
		"adaptivek:buffer=0": false, "knee": false, "threshold:min=0.5": false, "threshold:min=0.6": false, "topk:k=5": false}
	r := rand.New(rand.NewPCG(231, 1))
	for _, curveName := range []string{"leaders+ties+tail", "all tied"} {
		sc, tk := scores, tokens
		if curveName == "all tied" {
			sc, tk = allTied, nil
		}
		for _, spec := range specs {
			ref := shuffledSelect(t, spec, sc, tk, identity(len(sc)))
			if want, ok := splits[spec]; ok && curveName != "all tied" && slices.Contains(ref.Explanation.Guards, "tie_split") != want {
				t.Errorf("%s: tie_split=%v, want %v (k=%d)", spec, !want, want, ref.K)
			}
			for range 20 {
				perm := r.Perm(len(sc))
				sel := shuffledSelect(t, spec, sc, tk, perm)
				if sel.K != ref.K {
					t.Fatalf("%s on %s: k=%d after shuffling, %d before", spec, curveName, sel.K, ref.K)
				}
				split := slices.Contains(sel.Explanation.Guards, "tie_split")
				if split != slices.Contains(ref.Explanation.Guards, "tie_split") {
					t.Fatalf("%s on %s: tie_split flagged in one order only", spec, curveName)
				}
				got, want := idSet(sel.IDs), idSet(ref.IDs)
				if !split && !slices.Equal(got, want) {
					t.Fatalf("%s on %s: the selected set changed with the input order although no tie was split", spec, curveName)
				}
				if split {
					checkTieRule(t, spec, sc, perm, sel)
				}
			}
		}
	}
}

func identity(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

// shuffledSelect selects on the candidates p0 … p(n−1) presented in the order
// perm (candidate perm[j] at input position j).
func shuffledSelect(t *testing.T, spec string, scores []float64, tokens []int, perm []int) ctxsel.Selection {
	t.Helper()
	cands := make([]ctxsel.Candidate, len(scores))
	for j, i := range perm {
		cands[j] = ctxsel.Candidate{ID: fmt.Sprintf("p%d", i), Score: scores[i]}
		if tokens != nil {
			cands[j].Tokens = tokens[i]
		}
	}
	c, err := ctxsel.NewCurve(cands)
	if err != nil {
		t.Fatal(err)
	}
	s, caps, err := ctxsel.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	sel, err := ctxsel.Select(c, s, caps, ctxsel.RankOrder)
	if err != nil {
		t.Fatal(err)
	}
	return sel
}

// checkTieRule: the selection is every passage scoring above the split
// score, plus the tied passages that come first in input order.
func checkTieRule(t *testing.T, spec string, scores []float64, perm []int, sel ctxsel.Selection) {
	t.Helper()
	last := scores[perm[sel.Indices[len(sel.Indices)-1]]]
	var want []string
	tiedKept := 0
	for _, id := range sel.IDs {
		var i int
		fmt.Sscanf(id, "p%d", &i)
		if scores[i] == last {
			tiedKept++
		}
	}
	for _, i := range perm { // input order
		if scores[i] > last {
			want = append(want, fmt.Sprintf("p%d", i))
		}
	}
	for _, i := range perm {
		if scores[i] == last && tiedKept > 0 {
			want = append(want, fmt.Sprintf("p%d", i))
			tiedKept--
		}
	}
	if !slices.Equal(idSet(sel.IDs), idSet(want)) {
		t.Fatalf("%s: a split tie kept %v, want the higher scores and the first tied in input order %v", spec, sel.IDs, want)
	}
	if !strings.Contains(sel.Explanation.Reason, "tied at score") {
		t.Fatalf("%s: tie_split flagged but the reason does not say so: %q", spec, sel.Explanation.Reason)
	}
}

func idSet(ids []string) []string {
	s := slices.Clone(ids)
	slices.Sort(s)
	return s
}

// TestMinKFallback: no strategy returns an empty context unless min_k=0 is
// given, except budget, whose budget is a hard limit.
func TestMinKFallback(t *testing.T) {
	scores := []float64{0.3, 0.2, 0.1}
	tokens := []int{50, 50, 50}
	for _, d := range ctxsel.Defs() {
		sel := selection(t, d.Name, scores, tokens)
		if sel.K == 0 && !d.AllowEmpty {
			t.Errorf("%s selected nothing by default", d.Name)
		}
	}
	cases := []struct {
		spec     string
		k        int
		fallback bool
	}{
		{"threshold:min=0.9", 1, true},
		{"threshold:min=0.9,min_k=2", 2, true},
		{"threshold:min=0.9,min_k=0", 0, false},
		{"threshold:min=0.25", 1, false}, // the strategy chose one: no fallback
		{"budget:tokens=10", 0, false},   // a hard budget stays empty
		{"budget:tokens=10,min_k=1", 1, true},
		{"threshold:min=0.9,min_k=3,max_tokens=60", 1, true}, // max_tokens still wins over min_k
	}
	for _, tc := range cases {
		sel := selection(t, tc.spec, scores, tokens)
		fell := slices.Contains(sel.Explanation.Guards, "min_k_fallback")
		if sel.K != tc.k || fell != tc.fallback {
			t.Errorf("%s: k=%d fallback=%v, want k=%d fallback=%v", tc.spec, sel.K, fell, tc.k, tc.fallback)
		}
	}
}
