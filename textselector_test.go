package ctxsel_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/ctxsel/ctxsel"
)

func TestStrategyTextsMatchesSelect(t *testing.T) {
	c, err := ctxsel.NewCurve([]ctxsel.Candidate{
		{ID: "a", Score: 0.9, Tokens: 10}, {ID: "b", Score: 0.2, Tokens: 10},
		{ID: "c", Score: 0.8, Tokens: 10}, {ID: "d", Score: 0.1, Tokens: 10},
	})
	if err != nil {
		t.Fatal(err)
	}
	s, caps, err := ctxsel.Parse("topk:k=2")
	if err != nil {
		t.Fatal(err)
	}
	want, err := ctxsel.Select(c, s, caps, ctxsel.DocumentOrder)
	if err != nil {
		t.Fatal(err)
	}
	ts := ctxsel.StrategyTexts(s)
	q := ctxsel.TextQuery{Question: "q", Curve: c, Texts: []string{"A", "B", "C", "D"}, Caps: caps, Order: ctxsel.DocumentOrder}
	got, err := ts.SelectTexts(context.Background(), q)
	if err != nil || !reflect.DeepEqual(got, want) || ts.Name() != s.Name() {
		t.Fatalf("got %+v, %v; want %+v", got, err, want)
	}
	if !reflect.DeepEqual(got.IDs, []string{"a", "c"}) {
		t.Fatalf("ids %v", got.IDs)
	}

	q.Texts = q.Texts[:3]
	if _, err := ts.SelectTexts(context.Background(), q); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("texts/candidates mismatch: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	q.Texts = []string{"A", "B", "C", "D"}
	if _, err := ts.SelectTexts(ctx, q); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}
