//go:build !(386 || arm || mips || mipsle)

package weaviate_test

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/ctxsel/ctxsel/ask"
	"github.com/ctxsel/ctxsel/fusion"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/lexical"
)

// lexicalParity compares the embedded index's BM25 and hybrid (fusion
// minmax, the rule of Weaviate's relativeScoreFusion) with Weaviate's own
// bm25 and hybrid queries over the same chunks, and logs the agreement.
//
// Weaviate indexes each chunk's lexical.Terms, so both count the same terms;
// its BM25 leaves out the constant factor k1+1 and stores chunk lengths
// lossily (block-max WAND), so its scores times 2.2 match ours within a
// fraction of a percent, not exactly, and chunks whose fused scores differ
// by less than that may swap. The test asserts the score curves agree rank
// by rank within that tolerance, every swap is such a near tie, and the
// strategies that keep a few passages select identically; the selections of
// strategies that keep 50 to 100 passages are counted and logged.
func lexicalParity(t *testing.T, ds, ws index.Store, questions, strategies []string) {
	t.Helper()
	ctx := context.Background()
	var bmWorst, hyWorst float64
	same, total := 0, 0
	for _, q := range questions {
		if len(lexical.QueryTerms(q)) == 0 {
			// only stop words: BM25 refuses
			if _, err := index.Retrieve(ctx, ws, index.Query{Text: q, Limit: 10, Retriever: index.BM25}); err == nil {
				t.Errorf("%q: weaviate bm25 of stop words answered", q)
			}
			continue
		}
		qv := noisyVector(q)
		for _, r := range []index.Retriever{index.BM25, index.Hybrid} {
			query := index.Query{Vector: qv, Text: q, Limit: 1000, Retriever: r, Fusion: fusion.MinMax}
			dh, err := index.Retrieve(ctx, ds, query)
			if err != nil {
				t.Fatal(err)
			}
			wh, err := index.Retrieve(ctx, ws, query)
			if err != nil {
				t.Fatal(err)
			}
			scale, tol := 1.0, 2e-3
			if r == index.BM25 {
				scale, tol = 1+lexical.Default.K1, 0.005*dh[0].Score
			}
			worst := compareCurves(t, q+" "+string(r), dh, wh, scale, tol)
			if r == index.BM25 {
				bmWorst = max(bmWorst, worst/dh[0].Score)
			} else {
				hyWorst = max(hyWorst, worst)
			}
		}
		for _, spec := range strategies {
			opts := ask.Options{Strategy: spec, Retriever: index.Hybrid, Fusion: fusion.MinMax}
			da, wa := askBoth(t, ds, ws, q, opts)
			if def, err := ask.Ask(ctx, ws, noisyEmbedder{}, q, ask.Options{Strategy: spec}); err != nil || !slices.Equal(def.Selection.IDs, wa.Selection.IDs) {
				t.Errorf("%q %s: weaviate's default hybrid is not its relativeScoreFusion: %v", q, spec, err)
			}
			total++
			switch {
			case slices.Equal(da.Selection.IDs, wa.Selection.IDs):
				same++
			case slices.Contains([]string{"topk:k=5", "budget:tokens=800", "topp:p=0.5", "knee"}, spec):
				t.Errorf("hybrid %q %s: selections differ: %s", q, spec, diffIDs(da.Selection.IDs, wa.Selection.IDs))
			default:
				t.Logf("hybrid %q %s (k %d, %d): selections differ: %s", q, spec, da.Selection.K, wa.Selection.K, diffIDs(da.Selection.IDs, wa.Selection.IDs))
			}
		}
	}
	t.Logf("lexical parity: BM25 (×%.1f) scores within %.2f %% of the best score, same chunks; hybrid minmax vs relativeScoreFusion scores within %.1e; "+
		"hybrid selections identical in %d of %d (question, strategy) pairs (%.1f %%)",
		1+lexical.Default.K1, 100*bmWorst, hyWorst, same, total, 100*float64(same)/float64(total))
}

// compareCurves checks two rankings hold the same chunks, with scores
// (b's times scale) equal within tol rank by rank and by chunk, and order
// differing only among chunks whose scores are within tol. It returns the
// largest score difference.
func compareCurves(t *testing.T, what string, a, b []index.Hit, scale, tol float64) float64 {
	t.Helper()
	if len(a) != len(b) || len(a) == 0 {
		t.Errorf("%s: %d embedded hits, %d weaviate hits", what, len(a), len(b))
		return 0
	}
	byID := make(map[string]float64, len(b))
	for _, h := range b {
		byID[h.ID()] = h.Score * scale
	}
	worst := 0.0
	for i, h := range a {
		w, ok := byID[h.ID()]
		if !ok {
			t.Errorf("%s: %s only in the embedded ranking", what, h.ID())
			return worst
		}
		d := max(math.Abs(w-h.Score), math.Abs(b[i].Score*scale-h.Score))
		worst = max(worst, d)
		if d > tol {
			t.Errorf("%s rank %d: embedded %s %.6f, weaviate %s %.6f (scaled; the same chunk there %.6f)", what, i, h.ID(), h.Score, b[i].ID(), b[i].Score*scale, w)
			return worst
		}
	}
	return worst
}

// overlap is the share of a's top k chunk ids also in b's top k.
func overlap(a, b []index.Hit, k int) float64 {
	k = min(k, len(a), len(b))
	in := map[string]bool{}
	for _, h := range b[:k] {
		in[h.ID()] = true
	}
	n := 0
	for _, h := range a[:k] {
		if in[h.ID()] {
			n++
		}
	}
	return float64(n) / float64(k)
}
