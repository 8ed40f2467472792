package evidence_test

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/evidence"
	"github.com/ctxsel/ctxsel/index/indextest"
	"github.com/ctxsel/ctxsel/score"
)

// pooledQuery is the first question of hotpotqa_sf_dev53 padded with other
// questions' passages to n passages, scored by BM25: a real curve whose
// spread over the whole pool differs from its top's.
func pooledQuery(t *testing.T, n int) ctxsel.TextQuery {
	t.Helper()
	recs, err := dataset.LoadFile("../../shared/data/hotpotqa_sf_dev53.jsonl")
	if err != nil {
		t.Fatalf("test data: %v", err)
	}
	pooled, err := dataset.Pool(recs[:1+n/10], n, 1)
	if err != nil {
		t.Fatal(err)
	}
	r := pooled[0]
	texts := make([]string, len(r.Passages))
	for i, p := range r.Passages {
		texts[i] = p.Text
	}
	scores := score.BM25Scores(r.Question, texts)
	c := counter(t)
	cands := make([]ctxsel.Candidate, len(texts))
	for i := range texts {
		cands[i] = ctxsel.Candidate{ID: fmt.Sprint("p", i), Score: scores[i], Tokens: c.Count(texts[i])}
	}
	curve, err := ctxsel.NewCurve(cands)
	if err != nil {
		t.Fatal(err)
	}
	return ctxsel.TextQuery{Question: r.Question, Curve: curve, Texts: texts}
}

// The model was fitted on the best passages of whole curves: composed
// after a strategy that keeps the same passages (topk:k=20), evidence must
// see the same features, so it chooses the same sentences with the same
// scores as evidence:passages=20 alone. (Without the second hop: alone, it
// may add passages of the whole curve; composed, only the strategy's.)
func TestComposedSeesTheWholeCurve(t *testing.T) {
	q := pooledQuery(t, 200)
	for _, budget := range []int{60, 150, 400} {
		plain := newSelector(t, fmt.Sprintf("evidence:budget=%d,passages=20,hop=0", budget))
		composed := newSelector(t, fmt.Sprintf("topk:k=20+evidence:budget=%d,hop=0", budget))
		a, err := plain.SelectTexts(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		b, err := composed.SelectTexts(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a.Indices, b.Indices) || !reflect.DeepEqual(a.Evidence, b.Evidence) || a.Tokens != b.Tokens {
			t.Fatalf("budget %d: alone %v %+v\ncomposed %v %+v", budget, a.Indices, a.Evidence, b.Indices, b.Evidence)
		}
	}
}

// Features read a composed query's ranks and spread from its pool: a
// passage kept at rank 7 of the pool has passage_rank log(8), whatever
// its rank among the kept.
func TestFeaturesReadThePool(t *testing.T) {
	whole := pooledQuery(t, 100)
	s, err := evidence.New(evidence.Options{Budget: 100, Embedder: indextest.HashEmbedder{}, Counter: counter(t)})
	if err != nil {
		t.Fatal(err)
	}
	order := whole.Curve.Top(whole.Curve.Len())
	keep := []int{order[7], order[30]} // not a prefix: ranks 7 and 30
	cands := []ctxsel.Candidate{whole.Curve.Candidate(keep[0]), whole.Curve.Candidate(keep[1])}
	sub, err := ctxsel.NewCurve(cands)
	if err != nil {
		t.Fatal(err)
	}
	q := ctxsel.TextQuery{Question: whole.Question, Curve: sub, Texts: []string{whole.Texts[keep[0]], whole.Texts[keep[1]]},
		Pool: whole.Curve, PoolIndex: keep}
	fs, err := s.Features(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	rankAt, gapAt := -1, -1
	for i, n := range evidence.FeatureNames {
		switch n {
		case "passage_rank":
			rankAt = i
		case "passage_gap":
			gapAt = i
		}
	}
	scores := whole.Curve.Scores()
	mean, sd := 0.0, 0.0
	for _, v := range scores {
		mean += v / float64(len(scores))
	}
	for _, v := range scores {
		sd += (v - mean) * (v - mean) / float64(len(scores))
	}
	sd = math.Sqrt(sd)
	best := whole.Curve.Candidate(order[0]).Score
	for _, f := range fs {
		r := 7
		if f.Passage == 1 {
			r = 30
		}
		if got, want := f.Features[rankAt], math.Log1p(float64(r)); math.Abs(got-want) > 1e-12 {
			t.Fatalf("passage %d: passage_rank %v, want %v (rank %d of the pool)", f.Passage, got, want, r)
		}
		want := (cands[f.Passage].Score - best) / sd
		if got := f.Features[gapAt]; math.Abs(got-want) > 1e-9 {
			t.Fatalf("passage %d: passage_gap %v, want %v (the pool's best and spread)", f.Passage, got, want)
		}
	}
	// Without the pool the same passages are a curve of their own.
	q.Pool, q.PoolIndex = nil, nil
	alone, err := s.Features(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if alone[0].Features[rankAt] == fs[0].Features[rankAt] {
		t.Fatalf("the pool changed nothing: the test does not test")
	}
}

// A header the index knows for a chunk without a title line of its own is
// sent as the passage's header (Evidence.Title) and counted.
func TestHeadersFromTheSource(t *testing.T) {
	q := query(t, "Where was Ada Lovelace born?",
		"Ada Lovelace was an English mathematician. She was born in London in 1815. She worked on the Analytical Engine.",
		"Paris is the capital of France. It lies on the Seine.")
	q.Headers = []string{"Biographies › Ada\n Lovelace", ""}
	sel, err := newSelector(t, "evidence:budget=40").SelectTexts(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	var ev *ctxsel.Evidence
	for i, idx := range sel.Indices {
		if idx == 0 {
			ev = &sel.Evidence[i]
		}
	}
	if ev == nil {
		t.Fatalf("passage 0 not kept: %+v", sel)
	}
	if ev.Title != "Biographies › Ada Lovelace" || ev.Header != nil {
		t.Fatalf("title %q header %v", ev.Title, ev.Header)
	}
	if want := "Biographies › Ada Lovelace\n"; len(ev.Text) < len(want) || ev.Text[:len(want)] != want {
		t.Fatalf("text %q", ev.Text)
	}
	if c := counter(t).Count(ev.Text); c != ev.Tokens {
		t.Fatalf("tokens %d, text counts %d", ev.Tokens, c)
	}
	// header=0 sends none
	sel, err = newSelector(t, "evidence:budget=40,header=0").SelectTexts(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range sel.Evidence {
		if ev.Title != "" {
			t.Fatalf("header=0 sent %q", ev.Title)
		}
	}
	// a wrong number of headers is bad input
	q.Headers = q.Headers[:1]
	if _, err := newSelector(t, "evidence:budget=40").SelectTexts(context.Background(), q); err == nil {
		t.Fatal("1 header for 2 passages accepted")
	}
}

// Caps go with the evidence spec as with any strategy: max_tokens lowers
// the budget (and says so), max_k bounds the passages opened; min_k is
// refused, a budget cannot promise passages.
func TestSpecCaps(t *testing.T) {
	q := pooledQuery(t, 100)
	s := newSelector(t, "evidence:budget=400,max_tokens=120,max_k=2")
	if s.Name() != "evidence:budget=400,max_k=2,max_tokens=120" {
		t.Fatalf("name %q", s.Name())
	}
	sel, err := s.SelectTexts(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if sel.Tokens > 120 || sel.K > 2 || !strings.Contains(sel.Explanation.Reason, "max_tokens=120 lowered the budget of 400") {
		t.Fatalf("%d tokens, %d passages: %s", sel.Tokens, sel.K, sel.Explanation.Reason)
	}
	// a query's cap tightens the spec's
	q.Caps.MaxTokens = 60
	if sel, err = s.SelectTexts(context.Background(), q); err != nil || sel.Tokens > 60 {
		t.Fatalf("query cap 60: %d tokens, %v", sel.Tokens, err)
	}
	for _, bad := range []string{"evidence:budget=400,min_k=1", "evidence:budget=400,max_k=0", "evidence:budget=400,max_tokens=x"} {
		if _, err := evidence.Parse(bad, evidence.Options{Embedder: indextest.HashEmbedder{}}); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
