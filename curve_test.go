package ctxsel_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ctxsel/ctxsel"
)

func TestTopMatchesFullSort(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 500 {
		n := 1 + r.IntN(2000)
		s := make([]float64, n)
		levels := 1 + r.IntN(50)
		for i := range s {
			s[i] = float64(r.IntN(levels))
		}
		// The reference: a stable sort by score descending, ties by input order.
		want := make([]int, n)
		for i := range want {
			want[i] = i
		}
		slices.SortStableFunc(want, func(a, b int) int {
			switch {
			case s[a] > s[b]:
				return -1
			case s[a] < s[b]:
				return 1
			}
			return 0
		})
		c, err := ctxsel.NewScoreCurve(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []int{1 + r.IntN(n), r.IntN(300), n} { // growing and shrinking requests
			m = min(m, n)
			if got := c.Top(m); !slices.Equal(got, want[:m]) {
				t.Fatalf("trial %d n=%d m=%d: Top differs from the stable sort", trial, n, m)
			}
		}
		fresh, _ := ctxsel.NewScoreCurve(s)
		if got := fresh.Top(n + 5); !slices.Equal(got, want) {
			t.Fatalf("trial %d: Top(n+5) differs", trial)
		}
	}
}

// bandStrategy selects a fixed band of ranks, as learned band selectors do.
type bandStrategy struct{ lo, hi int }

func (b bandStrategy) Name() string               { return "testband" }
func (b bandStrategy) Params() map[string]float64 { return nil }
func (b bandStrategy) Cut(c *ctxsel.Curve) (ctxsel.Cut, error) {
	return ctxsel.Cut{Start: b.lo, End: b.hi, Decision: ctxsel.Decision{Kind: "band"}}, nil
}

func TestSelectBandAndCaps(t *testing.T) {
	cands := []ctxsel.Candidate{{ID: "a", Score: 0.1, Tokens: 10}, {ID: "b", Score: 0.9, Tokens: 10}, {ID: "c", Score: 0.5, Tokens: 10}, {ID: "d", Score: 0.7, Tokens: 10}, {ID: "e", Score: 0.3, Tokens: 10}}
	// ranks: b d c e a
	c, err := ctxsel.NewCurve(cands)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		s     ctxsel.Strategy
		caps  ctxsel.Caps
		order ctxsel.Order
		want  string
	}{
		{bandStrategy{1, 3}, ctxsel.Caps{}, ctxsel.RankOrder, "[d c]"},
		{bandStrategy{1, 3}, ctxsel.Caps{}, ctxsel.DocumentOrder, "[c d]"},
		{bandStrategy{1, 3}, ctxsel.Caps{MinK: 3}, ctxsel.RankOrder, "[d c e]"},
		{bandStrategy{1, 3}, ctxsel.Caps{MinK: 9}, ctxsel.RankOrder, "[d c e a]"},
		{bandStrategy{1, 4}, ctxsel.Caps{MaxK: 1}, ctxsel.RankOrder, "[d]"},
		{bandStrategy{1, 4}, ctxsel.Caps{MaxTokens: 25}, ctxsel.RankOrder, "[d c]"},
		{bandStrategy{0, 5}, ctxsel.Caps{MinK: 2, MaxTokens: 5}, ctxsel.RankOrder, "[]"},
		{bandStrategy{0, 5}, ctxsel.Caps{}, ctxsel.EdgesOrder, "[b c a e d]"},
		{bandStrategy{2, 2}, ctxsel.Caps{}, ctxsel.RankOrder, "[]"},
	}
	for i, tc := range cases {
		sel, err := ctxsel.Select(c, tc.s, tc.caps, tc.order)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if got := fmt.Sprint(sel.IDs); got != tc.want {
			t.Errorf("case %d: got %s, want %s", i, got, tc.want)
		}
		if sel.K != len(sel.IDs) || sel.Tokens != 10*sel.K {
			t.Errorf("case %d: k=%d tokens=%d", i, sel.K, sel.Tokens)
		}
	}
	for _, bad := range []bandStrategy{{-1, 2}, {3, 2}, {0, 6}} {
		if _, err := ctxsel.Select(c, bad, ctxsel.Caps{}, ctxsel.RankOrder); err == nil {
			t.Errorf("band %v accepted", bad)
		}
	}
	if _, err := ctxsel.Select(c, bandStrategy{0, 1}, ctxsel.Caps{MinK: 3, MaxK: 2}, ctxsel.RankOrder); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Errorf("min_k > max_k: %v", err)
	}
	if _, err := ctxsel.Select(nil, bandStrategy{0, 1}, ctxsel.Caps{}, ctxsel.RankOrder); err == nil {
		t.Error("nil curve accepted")
	}
}

func TestNewScoreCurveRejectsNaN(t *testing.T) {
	for _, s := range [][]float64{{math.NaN()}, {1, math.Inf(1)}, nil} {
		if _, err := ctxsel.NewScoreCurve(s); !errors.Is(err, ctxsel.ErrInvalidInput) {
			t.Errorf("%v: err = %v", s, err)
		}
	}
}

func TestParseOrder(t *testing.T) {
	for in, want := range map[string]ctxsel.Order{"": ctxsel.RankOrder, "rank": ctxsel.RankOrder, "document": ctxsel.DocumentOrder, "edges": ctxsel.EdgesOrder} {
		got, err := ctxsel.ParseOrder(in)
		if err != nil || got != want || (in != "" && got.String() != in) {
			t.Errorf("ParseOrder(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ctxsel.ParseOrder("middle"); err == nil {
		t.Error("bad order accepted")
	}
}
