package cutoff

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ctxsel/ctxsel"
)

func TestAdaptiveKHandComputed(t *testing.T) {
	p := func(head, tail float64, buf int) AdaptiveKParams {
		return AdaptiveKParams{Head: head, Tail: tail, Buffer: buf}
	}
	cases := []struct {
		name    string
		scores  []float64
		p       AdaptiveKParams
		wantK   int
		wantGap int
	}{
		{"n=1 selects everything", []float64{0.3}, DefaultAdaptiveK, 1, -1},
		{"n=2 buffer 0", []float64{0.2, 0.9}, p(0, 0.1, 0), 1, 0},
		{"n=2 default buffer capped", []float64{0.2, 0.9}, DefaultAdaptiveK, 2, 0},
		{"all equal: first gap", []float64{0.5, 0.5, 0.5, 0.5}, p(0, 0.1, 0), 1, 0},
		{"all equal with buffer", []float64{0.5, 0.5, 0.5, 0.5}, DefaultAdaptiveK, 4, 0},
		// gaps 0.25, 0, 0.25, 0.25: the first of the tied largest gaps wins.
		{"ties: first largest gap", []float64{0.25, 1, 0.75, 0.5, 0.75}, p(0, 0, 0), 1, 0},
		// gaps .5 .5 2 .5 .5 .5 .5 .5 .5 14: the 14 sits in the excluded last
		// int(10·0.1) = 1 gap, so the cut falls at the gap of 2.
		{"largest gap in excluded tail", []float64{10, 9.5, 9, 7, 6.5, 6, 5.5, 5, 4.5, 4, -10}, p(0, 0.1, 0), 3, 2},
		{"same curve, tail 0", []float64{10, 9.5, 9, 7, 6.5, 6, 5.5, 5, 4.5, 4, -10}, p(0, 0, 0), 10, 9},
		// gaps 5, then ten of 0.5 … with head 0.05 and n = 21, h = int(20·0.05) = 1
		// skips the big first gap; the first 0.5 gap (index 1) wins.
		{"head excludes the top gap", []float64{20, 15, 14.5, 14, 13.5, 13, 12.5, 12, 11.5, 11, 10.5, 10, 9.5, 9, 8.5, 8, 7.5, 7, 6.5, 6, 5.5}, p(0.05, 0.1, 0), 2, 1},
		{"same curve, head 0", []float64{20, 15, 14.5, 14, 13.5, 13, 12.5, 12, 11.5, 11, 10.5, 10, 9.5, 9, 8.5, 8, 7.5, 7, 6.5, 6, 5.5}, p(0, 0.1, 0), 1, 0},
		// 10·0.8999999999999999 rounds up to 9, and int(10·0.1) = 1, leaving
		// gap indices [9, 9): the last gap before the tail (index 8) is searched.
		{"rounding leaves no gap to search", []float64{20, 19, 18, 17, 16, 15, 14, 13, 12, 2, 1}, p(0.8999999999999999, 0.1, 0), 9, 8},
		{"buffer past n", []float64{4, 3, 1, 0}, p(0, 0.1, 10), 4, 1},
		{"default buffer 5", []float64{0.9, 0.88, 0.5, 0.49, 0.48, 0.47, 0.46, 0.45, 0.44, 0.43, 0.42, 0.41}, DefaultAdaptiveK, 7, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for name, f := range map[string]func([]float64, AdaptiveKParams) (AdaptiveKResult, error){"fast": AdaptiveK, "reference": AdaptiveKReference} {
				r, err := f(tc.scores, tc.p)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if r.K != tc.wantK || r.GapIndex != tc.wantGap {
					t.Errorf("%s: k=%d gap index=%d, want k=%d gap index=%d", name, r.K, r.GapIndex, tc.wantK, tc.wantGap)
				}
			}
		})
	}
}

func TestAdaptiveKRejectsBadInput(t *testing.T) {
	bad := []struct {
		scores []float64
		p      AdaptiveKParams
	}{
		{[]float64{1, math.NaN()}, DefaultAdaptiveK},
		{[]float64{1, math.Inf(1)}, DefaultAdaptiveK},
		{[]float64{1, 0}, AdaptiveKParams{Head: -0.1, Tail: 0.1}},
		{[]float64{1, 0}, AdaptiveKParams{Head: 0.5, Tail: 0.5}},
		{[]float64{1, 0}, AdaptiveKParams{Tail: 1}},
		{[]float64{1, 0}, AdaptiveKParams{Buffer: -1}},
		{[]float64{1, 0}, AdaptiveKParams{Head: math.NaN()}},
	}
	for i, b := range bad {
		if _, err := AdaptiveK(b.scores, b.p); !errors.Is(err, ctxsel.ErrInvalidInput) {
			t.Errorf("case %d: err = %v, want ErrInvalidInput", i, err)
		}
	}
}

// randomScores draws n scores; with few distinct levels it makes many ties,
// the case where a fast path most easily departs from the reference.
func randomScores(r *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	switch r.IntN(4) {
	case 0: // heavy ties
		levels := 1 + r.IntN(6)
		for i := range s {
			s[i] = float64(r.IntN(levels)) / 4
		}
	case 1: // similarity-like: a few relevant on top of noise
		for i := range s {
			s[i] = 0.2 + 0.05*r.NormFloat64()
			if r.IntN(20) == 0 {
				s[i] += 0.3
			}
		}
	case 2: // wide magnitudes
		for i := range s {
			s[i] = (r.Float64() - 0.5) * math.Pow(10, float64(r.IntN(30)-15))
		}
	default:
		for i := range s {
			s[i] = r.Float64()
		}
	}
	return s
}

func TestAdaptiveKFastMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 3000 {
		n := 1 + r.IntN(300)
		if trial%100 == 0 {
			n = 5000 + r.IntN(5000)
		}
		s := randomScores(r, n)
		p := AdaptiveKParams{Head: []float64{0, 0, 0.05, 0.3}[r.IntN(4)], Tail: []float64{0, 0.1, 0.1, 0.5}[r.IntN(4)], Buffer: r.IntN(7)}
		got, err1 := AdaptiveK(s, p)
		want, err2 := AdaptiveKReference(s, p)
		if err1 != nil || err2 != nil {
			t.Fatalf("errors: %v / %v", err1, err2)
		}
		if got != want {
			t.Fatalf("trial %d n=%d %+v:\nfast      %+v\nreference %+v", trial, n, p, got, want)
		}
	}
}

func TestKneeFastMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 3000 {
		n := 1 + r.IntN(400)
		s := randomScores(r, n)
		cut := 1 + r.IntN(3)
		got, err1 := Knee(s, cut)
		want, err2 := KneeReference(s, cut)
		if err1 != nil || err2 != nil {
			t.Fatalf("errors: %v / %v", err1, err2)
		}
		if got != want {
			t.Fatalf("trial %d n=%d cutoff=%d: fast %+v reference %+v", trial, n, cut, got, want)
		}
	}
}

func TestKneeHandComputed(t *testing.T) {
	cases := []struct {
		name   string
		scores []float64
		cutoff int
		want   int
	}{
		// y = 0, .024, .048, .952, .976, 1 against x = 0, .2, …, 1: d peaks at
		// rank 3, the first passage after the drop, so three are kept.
		{"one drop", []float64{0.9, 0.89, 0.88, 0.5, 0.49, 0.48}, 1, 3},
		{"all equal", []float64{0.4, 0.4, 0.4, 0.4}, 1, 4},
		{"two scores", []float64{0.9, 0.1}, 1, 2},
		{"straight line has no knee", []float64{5, 4, 3, 2, 1}, 1, 5},
		// two drops: the second knee keeps more.
		{"second knee", []float64{1, 0.99, 0.6, 0.59, 0.58, 0.2, 0.19, 0.18, 0.17}, 2, 5},
		{"first of two", []float64{1, 0.99, 0.6, 0.59, 0.58, 0.2, 0.19, 0.18, 0.17}, 1, 2},
	}
	for _, tc := range cases {
		r, err := Knee(tc.scores, tc.cutoff)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if r.K != tc.want {
			t.Errorf("%s: k=%d, want %d", tc.name, r.K, tc.want)
		}
	}
}
