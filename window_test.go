package ctxsel_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
)

func TestFitWindow(t *testing.T) {
	// scores fall with the index except p3, the best; 100 tokens each
	cands := []ctxsel.Candidate{{ID: "p0", Score: 0.9, Tokens: 100}, {ID: "p1", Score: 0.8, Tokens: 100}, {ID: "p2", Score: 0.7, Tokens: 100},
		{ID: "p3", Score: 0.95, Tokens: 100}, {ID: "p4", Score: 0.1, Tokens: 100}}
	c, err := ctxsel.NewCurve(cands)
	if err != nil {
		t.Fatal(err)
	}
	full, err := ctxsel.Select(c, fullStrategy{}, ctxsel.Caps{}, ctxsel.RankOrder)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ctxsel.FitWindow(c, full, 330, 10, ctxsel.DocumentOrder)
	if err != nil {
		t.Fatal(err)
	}
	// the best three (p3, p0, p1) fit in 330 with 10 per passage; document order
	if !slices.Equal(got.IDs, []string{"p0", "p1", "p3"}) || got.K != 3 || got.Tokens != 300 || got.Explanation.Tokens != 300 {
		t.Fatalf("fit: %+v", got)
	}
	if !strings.Contains(got.Explanation.Reason, "dropped 2") || !slices.Contains(got.Explanation.CapsApplied, "window") {
		t.Fatalf("explanation %+v", got.Explanation)
	}
	// a selection that fits keeps every passage and says nothing more
	same, err := ctxsel.FitWindow(c, full, 10000, 10, ctxsel.RankOrder)
	if err != nil || same.K != 5 || same.Explanation.Reason != full.Explanation.Reason || same.IDs[0] != "p3" {
		t.Fatalf("fits: %+v %v", same, err)
	}
	for _, b := range []int{0, -5} {
		if _, err := ctxsel.FitWindow(c, full, b, 0, ctxsel.RankOrder); !errors.Is(err, ctxsel.ErrInvalidInput) {
			t.Fatalf("budget %d: %v", b, err)
		}
	}
	bad := full
	bad.Indices = []int{7}
	if _, err := ctxsel.FitWindow(c, bad, 100, 0, ctxsel.RankOrder); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("out of range index: %v", err)
	}
}

func FuzzFitWindow(f *testing.F) {
	f.Add(uint8(5), 330, 10, uint64(1))
	f.Add(uint8(1), 1, 0, uint64(7))
	f.Fuzz(func(t *testing.T, n uint8, budget, per int, seed uint64) {
		if n == 0 {
			return
		}
		cands := make([]ctxsel.Candidate, n)
		for i := range cands {
			cands[i] = ctxsel.Candidate{ID: string(rune('a'+i%26)) + strings.Repeat("x", i/26), Score: float64((seed >> (i % 64)) & 7), Tokens: int((seed>>(i%60))&31) + 1}
		}
		c, err := ctxsel.NewCurve(cands)
		if err != nil {
			return
		}
		sel, err := ctxsel.Select(c, fullStrategy{}, ctxsel.Caps{}, ctxsel.RankOrder)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ctxsel.FitWindow(c, sel, budget, per, ctxsel.DocumentOrder)
		if err != nil {
			if !errors.Is(err, ctxsel.ErrInvalidInput) {
				t.Fatal(err)
			}
			return
		}
		if got.K != len(got.Indices) || got.Tokens+got.K*per > budget || !slices.IsSorted(got.Indices) {
			t.Fatalf("budget %d per %d: %+v", budget, per, got)
		}
	})
}

// fullStrategy keeps every passage (the cutoff package registers "full";
// the root tests must not import it).
type fullStrategy struct{}

func (fullStrategy) Name() string               { return "full" }
func (fullStrategy) Params() map[string]float64 { return nil }
func (fullStrategy) Cut(c *ctxsel.Curve) (ctxsel.Cut, error) {
	return ctxsel.Cut{End: c.Len(), Reason: "all"}, nil
}

func TestFitWindowCountsPrunedText(t *testing.T) {
	cands := []ctxsel.Candidate{{ID: "a", Score: 0.9, Tokens: 500}, {ID: "b", Score: 0.8, Tokens: 500}, {ID: "c", Score: 0.7, Tokens: 500}}
	c, err := ctxsel.NewCurve(cands)
	if err != nil {
		t.Fatal(err)
	}
	// a pruning selector sent 40, 50 and 60 tokens of the three passages
	sel := ctxsel.Selection{IDs: []string{"c", "a", "b"}, Indices: []int{2, 0, 1}, K: 3, Tokens: 150,
		Evidence: []ctxsel.Evidence{{Text: "c…", Tokens: 60}, {Text: "a…", Tokens: 40}, {Text: "b…", Tokens: 50}}}
	got, err := ctxsel.FitWindow(c, sel, 100, 0, ctxsel.DocumentOrder)
	if err != nil {
		t.Fatal(err)
	}
	// whole passages would not fit at all; pruned, the best two (a, b) do
	if !slices.Equal(got.IDs, []string{"a", "b"}) || got.Tokens != 90 || len(got.Evidence) != 2 ||
		got.Evidence[0].Text != "a…" || got.Evidence[1].Text != "b…" {
		t.Fatalf("fit: %+v", got)
	}
	sel.Evidence = sel.Evidence[:2]
	if _, err := ctxsel.FitWindow(c, sel, 100, 0, ctxsel.RankOrder); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("misaligned evidence: %v", err)
	}
}
