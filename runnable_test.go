package ctxsel_test

import (
	"context"
	"slices"
	"testing"

	"github.com/ctxsel/ctxsel"
)

// Every kind but a route runs as one Selector: a text selector and a
// composition with their usage passed on, a route not at all.
func TestRunnable(t *testing.T) {
	c, texts := textCurve(t)
	r := ctxsel.Resolver{Deps: markerDeps}
	ctx := context.Background()
	for _, spec := range []string{"testpick:max=2", "topk:k=4+testpick:max=2"} {
		res, err := r.Resolve(spec)
		if err != nil {
			t.Fatal(err)
		}
		run := res.Runnable()
		if run == nil || !run.ReadsTexts() || run.Name() != res.Selector.Name() {
			t.Fatalf("%s: runnable %v", spec, run)
		}
		q := ctxsel.TextQuery{Question: "q", Curve: c, Texts: texts, Order: ctxsel.RankOrder}
		want, wantU, _ := res.Selector.(ctxsel.MeteredSelector).SelectMetered(ctx, q)
		got, u, err := run.Select(ctx, q)
		if err != nil || !slices.Equal(got.IDs, want.IDs) || u.Calls != 1 || !u.Metered || u.PromptTokens != wantU.PromptTokens {
			t.Fatalf("%s: %v %+v %v, want %v %+v", spec, got.IDs, u, err, want.IDs, wantU)
		}
		if _, _, err := run.Select(ctx, ctxsel.TextQuery{Curve: c}); err == nil {
			t.Fatalf("%s: ran without the texts it reads", spec)
		}
	}
	res, err := r.Resolve("teststep")
	if err != nil || res.Runnable() != nil {
		t.Fatalf("route runnable: %v %v", res.Runnable(), err)
	}
	if (ctxsel.Resolved{}).Runnable() != nil {
		t.Fatal("zero Resolved is runnable")
	}
}

// A query's max_k below the spec's min_k wins over it, as a server's
// top_n does.
func TestRunnableCapsTighten(t *testing.T) {
	c, _ := textCurve(t)
	res, err := ctxsel.Resolve("topk:k=3,min_k=3")
	if err != nil {
		t.Fatal(err)
	}
	sel, _, err := res.Runnable().Select(context.Background(), ctxsel.TextQuery{Curve: c, Caps: ctxsel.Caps{MaxK: 2}})
	if err != nil || sel.K != 2 {
		t.Fatalf("k %d %v, want 2", sel.K, err)
	}
	if _, _, err := res.Runnable().Select(context.Background(), ctxsel.TextQuery{}); err == nil {
		t.Fatal("no curve: no error")
	}
}
