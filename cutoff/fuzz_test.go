package cutoff

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/ctxsel/ctxsel"
)

// scoresFrom decodes fuzz bytes as float64s, dropping non-finite ones.
func scoresFrom(raw []byte) []float64 {
	var s []float64
	for len(raw) >= 8 {
		x := math.Float64frombits(binary.LittleEndian.Uint64(raw))
		raw = raw[8:]
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			s = append(s, x)
		}
	}
	for _, b := range raw { // leftover bytes as small values: many ties
		s = append(s, float64(b%4))
	}
	return s
}

func FuzzAdaptiveKMatchesReference(f *testing.F) {
	f.Add([]byte{1, 2, 3, 3, 3, 0, 9}, 0.0, 0.1, 5)
	f.Add(make([]byte, 64), 0.05, 0.1, 0)
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xef, 0x7f, 0, 0, 0, 0, 0, 0, 0xf0, 0xff, 1}, 0.0, 0.0, 1)
	f.Fuzz(func(t *testing.T, raw []byte, head, tail float64, buffer int) {
		s := scoresFrom(raw)
		p := AdaptiveKParams{Head: head, Tail: tail, Buffer: buffer % 1000}
		got, err1 := AdaptiveK(s, p)
		want, err2 := AdaptiveKReference(s, p)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("errors differ: %v / %v", err1, err2)
		}
		if err1 != nil {
			return
		}
		if got != want {
			t.Fatalf("scores %v %+v:\nfast      %+v\nreference %+v", s, p, got, want)
		}
		if len(s) > 0 && (got.K < 1 || got.K > len(s)) {
			t.Fatalf("k=%d outside [1, %d]", got.K, len(s))
		}
	})
}

func FuzzKneeMatchesReference(f *testing.F) {
	f.Add([]byte{9, 9, 8, 1, 1, 0, 3}, 1)
	f.Add(make([]byte, 40), 2)
	f.Fuzz(func(t *testing.T, raw []byte, cutoff int) {
		s := scoresFrom(raw)
		got, err1 := Knee(s, cutoff)
		want, err2 := KneeReference(s, cutoff)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("errors differ: %v / %v", err1, err2)
		}
		if err1 == nil && got != want {
			t.Fatalf("scores %v cutoff %d: fast %+v reference %+v", s, cutoff, got, want)
		}
	})
}

// FuzzStrategySpecs drives every registered strategy through the user-facing
// path (spec text → Parse → Select): bad specs are errors, never panics, and
// a selection keeps min_k passages whenever the curve has them.
func FuzzStrategySpecs(f *testing.F) {
	for _, spec := range []string{"moving_avg:window=2,head_n=3", "2diff_spike:float32=1,ignore_below_median=1",
		"adaptivek:factor=1.5,buffer=0,tail_n=2", "knee:head_guard=0", "threshold:min=3", "threshold:min=3,min_k=0",
		"moving_avg:window=1024", "adaptivek:head=0.4,ignore_below_median=1", "topk:k=2"} {
		f.Add(spec, []byte{9, 9, 8, 1, 1, 0, 3, 2, 2, 7})
	}
	f.Fuzz(func(t *testing.T, spec string, raw []byte) {
		s := scoresFrom(raw)
		if len(s) == 0 || len(s) > 500 {
			return
		}
		st, caps, err := ctxsel.Parse(spec)
		if err != nil {
			if !errors.Is(err, ctxsel.ErrInvalidInput) {
				t.Fatalf("%q: error %v does not wrap ErrInvalidInput", spec, err)
			}
			return
		}
		c, err := ctxsel.NewScoreCurve(s)
		if err != nil {
			t.Fatal(err)
		}
		sel, err := ctxsel.Select(c, st, caps, ctxsel.RankOrder)
		if err != nil {
			if !errors.Is(err, ctxsel.ErrInvalidInput) {
				t.Fatalf("%q on %v: %v", spec, s, err)
			}
			return
		}
		if sel.K < min(caps.MinK, len(s)) || sel.K > len(s) {
			t.Fatalf("%q on %d scores: k=%d with min_k=%d", spec, len(s), sel.K, caps.MinK)
		}
	})
}
