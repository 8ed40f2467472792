package lengthest

import (
	"context"
	"math"
	"testing"
)

func TestRougeL(t *testing.T) {
	cases := []struct {
		a, b string
		want float64
	}{
		{"the cat sat", "the cat sat", 1},
		{"The cat, sat!", "the CAT sat", 1},
		{"a b c", "x y z", 0},
		{"", "a", 0},
		// LCS "a c" = 2: P = 2/3, R = 2/4, F1 = 2PR/(P+R) = 4/7
		{"a b c", "a x c y", 4.0 / 7},
		// order matters: LCS of "a b c" and "c b a" is 1
		{"a b c", "c b a", 1.0 / 3},
	}
	for _, c := range cases {
		if got := RougeLF1(c.a, c.b); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("RougeLF1(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestMBRDropsOutlier(t *testing.T) {
	cands := []Candidate{
		{Model: "a", Text: "kiwi one kiwi two kiwi three"},
		{Model: "b", Text: "kiwi one kiwi two"},
		{Model: "odd", Text: "bananas are yellow"},
		{Model: "a", Sample: 1, Text: "kiwi one kiwi two kiwi three"},
	}
	kept, err := MBR(context.Background(), RougeL{}, cands, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != 3 {
		t.Fatalf("kept %d", len(kept))
	}
	for _, k := range kept {
		if k.Model == "odd" {
			t.Fatalf("outlier kept: %+v", kept)
		}
	}
	// the two identical candidates agree most: utility (1 + F1(ab) + 0)/3
	ab := RougeLF1(cands[0].Text, cands[1].Text)
	if kept[0].Model != "a" || kept[0].Sample != 0 || math.Abs(kept[0].Utility-(1+ab)/3) > 1e-12 {
		t.Fatalf("best %+v, want a/0 with utility %v", kept[0], (1+ab)/3)
	}
}
