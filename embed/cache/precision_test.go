package cache_test

import (
	"context"
	"slices"
	"testing"

	"github.com/ctxsel/ctxsel/embed/cache"
	"github.com/ctxsel/ctxsel/embed/uselite"
)

// TestWrapKeepsPrecisionsApart: the embedded model's precisions share one
// cache without mixing: each precision gets its own vectors back, the
// ones its model computes, whichever filled the cache first.
func TestWrapKeepsPrecisionsApart(t *testing.T) {
	s, err := cache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	texts := []string{"The cat sat on the mat.", "Stock markets fell sharply today."}
	want := map[uselite.Precision][][]float32{}
	ids := map[string]bool{}
	for _, p := range uselite.Precisions {
		m, err := uselite.New(uselite.Options{Precision: p, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		if ids[m.ModelID()] {
			t.Fatalf("%s shares its ModelID %q with another precision", p, m.ModelID())
		}
		ids[m.ModelID()] = true
		if want[p], err = m.Embed(ctx, texts); err != nil {
			t.Fatal(err)
		}
	}
	if slices.Equal(want[uselite.FP32][0], want[uselite.Int8][0]) {
		t.Fatal("fp32 and int8 vectors are equal: the test would not see a mix-up")
	}
	for round := range 2 { // the first fills, the second reads
		for _, p := range uselite.Precisions {
			m, _ := uselite.New(uselite.Options{Precision: p, Workers: 1})
			got, err := cache.Wrap(m, s).Embed(ctx, texts)
			if err != nil {
				t.Fatal(err)
			}
			for i := range texts {
				if !slices.Equal(got[i], want[p][i]) {
					t.Fatalf("round %d, %s, text %d: the cache returned another precision's vector", round, p, i)
				}
			}
		}
	}
}
