package ctxsel

import (
	"errors"
	"slices"
	"testing"
)

func TestSelectSet(t *testing.T) {
	c, err := NewCurve([]Candidate{
		{ID: "a", Score: 0.1, Tokens: 10}, {ID: "b", Score: 0.9, Tokens: 20},
		{ID: "c", Score: 0.5, Tokens: 30}, {ID: "d", Score: 0.7, Tokens: 40},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		set     []int
		caps    Caps
		order   Order
		ids     []string
		tokens  int
		applied []string
	}{
		{"rank order", []int{0, 2, 1}, Caps{}, RankOrder, []string{"b", "c", "a"}, 60, nil},
		{"document order", []int{2, 0, 1}, Caps{}, DocumentOrder, []string{"a", "b", "c"}, 60, nil},
		{"max_k keeps the best ranked", []int{0, 2, 1}, Caps{MaxK: 2}, RankOrder, []string{"b", "c"}, 50, []string{"max_k"}},
		{"max_tokens stops before crossing", []int{0, 2, 1}, Caps{MaxTokens: 55}, RankOrder, []string{"b", "c"}, 50, []string{"max_tokens"}},
		{"min_k tops up from the ranking", []int{0}, Caps{MinK: 3}, RankOrder, []string{"b", "d", "a"}, 70, []string{"min_k"}},
	} {
		sel, err := SelectSet(c, tc.set, tc.caps, tc.order, Explanation{Strategy: "pick"})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !slices.Equal(sel.IDs, tc.ids) || sel.Tokens != tc.tokens || !slices.Equal(sel.Explanation.CapsApplied, tc.applied) {
			t.Fatalf("%s: got %v tokens %d caps %v", tc.name, sel.IDs, sel.Tokens, sel.Explanation.CapsApplied)
		}
		if sel.Explanation.Strategy != "pick" || sel.Explanation.StrategyK != len(tc.set) || sel.K != len(tc.ids) {
			t.Fatalf("%s: explanation %+v", tc.name, sel.Explanation)
		}
	}
	for _, bad := range [][]int{{4}, {-1}, {1, 1}} {
		if _, err := SelectSet(c, bad, Caps{}, RankOrder, Explanation{}); !errors.Is(err, ErrInvalidInput) {
			t.Fatalf("set %v: err %v", bad, err)
		}
	}
}
