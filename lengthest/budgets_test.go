package lengthest

import (
	"errors"
	"slices"
	"testing"

	"github.com/ctxsel/ctxsel"
)

func TestParseBudgets(t *testing.T) {
	good := map[string][]int{
		DefaultBudgets:     {8 * 1024, 16 * 1024, 24 * 1024, 32 * 1024, 40 * 1024, 48 * 1024, 56 * 1024, 64 * 1024, 72 * 1024, 80 * 1024},
		"8000:80000:8000":  {8000, 16000, 24000, 32000, 40000, 48000, 56000, 64000, 72000, 80000},
		"1000:3500:1000":   {1000, 2000, 3000},
		"72000,8000,16000": {8000, 16000, 72000},
		" 5 , 5, 3 ":       {3, 5},
		"4000:4000:1":      {4000},
		"100:300:1000000":  {100},
	}
	for in, want := range good {
		got, err := ParseBudgets(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseBudgets(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "8000:80000", "0:10:1", "10:5:1", "1:2:0", "a,b", "-5", "8000,,16000", "1:2000000:1", "9999999999999"} {
		if _, err := ParseBudgets(in); !errors.Is(err, ctxsel.ErrInvalidInput) {
			t.Errorf("ParseBudgets(%q) err = %v, want ErrInvalidInput", in, err)
		}
	}
}

func FuzzParseBudgets(f *testing.F) {
	for _, s := range []string{DefaultBudgets, "1,2,3", "5:1:1", "1:1073741824:1", "", ":", "1:2:3:4", "-1,2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseBudgets(s)
		if err != nil {
			if !errors.Is(err, ctxsel.ErrInvalidInput) {
				t.Fatalf("%q: error %v does not wrap ErrInvalidInput", s, err)
			}
			return
		}
		if len(got) == 0 || len(got) > MaxBudgets {
			t.Fatalf("%q: %d budgets", s, len(got))
		}
		for i, b := range got {
			if b <= 0 || b > maxBudget || i > 0 && b <= got[i-1] {
				t.Fatalf("%q: budgets %v not positive and strictly increasing", s, got)
			}
		}
	})
}

func TestSample(t *testing.T) {
	a, b := Sample(42, 0.25, 7), Sample(42, 0.25, 7)
	if !slices.Equal(a, b) || len(a) != 11 {
		t.Fatalf("Sample: %v vs %v (want 11, reproducible)", a, b)
	}
	if !slices.IsSorted(a) || len(slices.Compact(slices.Clone(a))) != len(a) || a[len(a)-1] >= 42 || a[0] < 0 {
		t.Fatalf("Sample not distinct in-range increasing indices: %v", a)
	}
	if c := Sample(42, 0.25, 8); slices.Equal(a, c) {
		t.Fatalf("seeds 7 and 8 drew the same sample %v", a)
	}
	for _, c := range []struct {
		n    int
		frac float64
		want int
	}{{10, 0, 1}, {10, 1, 10}, {10, 2, 10}, {0, .5, 0}, {3, .5, 2}} {
		if got := SampleSize(c.n, c.frac); got != c.want {
			t.Errorf("SampleSize(%d, %v) = %d, want %d", c.n, c.frac, got, c.want)
		}
	}
	// every example is drawn about equally often over many seeds
	counts := make([]int, 8)
	for seed := range uint64(4000) {
		for _, i := range Sample(8, 0.25, seed) {
			counts[i]++
		}
	}
	for i, c := range counts {
		if c < 800 || c > 1200 { // expectation 1000
			t.Fatalf("example %d drawn %d times in 4000 samples of 2 of 8", i, c)
		}
	}
}
