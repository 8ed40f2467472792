package fusion_test

import (
	"math"
	"slices"
	"testing"

	"github.com/ctxsel/ctxsel/fusion"
)

func TestLists(t *testing.T) {
	// dense: a b c; lexical: c d. Union a b c d.
	ka, a := []string{"a", "b", "c"}, []float64{0.9, 0.7, 0.5}
	kb, b := []string{"c", "d"}, []float64{8, 2}
	keys, got, err := fusion.Lists(fusion.MinMax, 0.5, ka, a, kb, b)
	if err != nil || !slices.Equal(keys, []string{"a", "b", "c", "d"}) {
		t.Fatalf("%v %v", keys, err)
	}
	// min-max per list: a 1, b .5, c 0 | c 1, d 0; missing → 0
	want := []float64{0.5, 0.25, 0.5, 0}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("minmax %v, want %v", got, want)
		}
	}
	// z-score: a missing key takes the list's lowest z
	_, got, _ = fusion.Lists(fusion.ZScore, 0.5, ka, a, kb, b)
	za, zb := fusion.Standardize(a), fusion.Standardize(b)
	want = []float64{0.5*za[0] + 0.5*zb[1], 0.5*za[1] + 0.5*zb[1], 0.5*za[2] + 0.5*zb[0], 0.5*za[2] + 0.5*zb[1]}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("zscore %v, want %v", got, want)
		}
	}
	// RRF: a missing key contributes nothing
	_, got, _ = fusion.Lists(fusion.RRF, 0.5, ka, a, kb, b)
	if math.Abs(got[3]-0.5/62) > 1e-12 || math.Abs(got[2]-(0.5/63+0.5/61)) > 1e-12 {
		t.Fatalf("rrf %v", got)
	}
	// a one-member list scores its member 1 under min-max (Weaviate's rule)
	_, got, _ = fusion.Lists(fusion.MinMax, 0.3, ka, a, []string{"z"}, []float64{4})
	if got[3] != 0.7 {
		t.Fatalf("single-member list: %v", got)
	}
	for _, bad := range []func() error{
		func() error { _, _, err := fusion.Lists(fusion.ZScore, 0.5, ka, a[:2], kb, b); return err },
		func() error { _, _, err := fusion.Lists(fusion.ZScore, 1.5, ka, a, kb, b); return err },
		func() error { _, _, err := fusion.Lists("max", 0.5, ka, a, kb, b); return err },
	} {
		if bad() == nil {
			t.Error("bad input accepted")
		}
	}
}
