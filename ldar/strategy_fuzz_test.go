package ldar

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
)

// FuzzBandSelect drives the band strategy, the entry point users reach, with
// arbitrary curves: it must never panic, must select a contiguous band of
// the ranking within the caps, and must be deterministic.
func FuzzBandSelect(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, []byte{10, 200}, uint16(0))
	f.Add(make([]byte, 80), []byte{}, uint16(3))
	// 1.7e308 twice and −1.7e308: the sum and the differences overflow
	f.Add([]byte{0x76, 0x3b, 0x77, 0x30, 0xd1, 0x42, 0xee, 0x7f, 0x76, 0x3b, 0x77, 0x30, 0xd1, 0x42, 0xee, 0x7f, 0x76, 0x3b, 0x77, 0x30, 0xd1, 0x42, 0xee, 0xff, 1, 2}, []byte{}, uint16(0))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xef, 0x7f, 0, 0, 0, 0, 0, 0, 0xf0, 0xff}, []byte{0}, uint16(1))
	f.Fuzz(func(t *testing.T, raw, toks []byte, maxK uint16) {
		var scores []float64
		for len(raw) >= 8 {
			x := math.Float64frombits(binary.LittleEndian.Uint64(raw))
			raw = raw[8:]
			if !math.IsNaN(x) && !math.IsInf(x, 0) {
				scores = append(scores, x)
			}
		}
		for _, b := range raw {
			scores = append(scores, float64(b)/255)
		}
		if len(scores) == 0 || len(scores) > 5000 {
			return
		}
		cands := make([]ctxsel.Candidate, len(scores))
		for i, s := range scores {
			cands[i] = ctxsel.Candidate{ID: fmt.Sprint(i), Score: s}
			if len(toks) > 0 {
				cands[i].Tokens = int(toks[i%len(toks)]) * 7
			}
		}
		st, caps, err := ctxsel.Parse(fmt.Sprintf("band:max_k=%d", maxK%50))
		if err != nil {
			t.Fatal(err)
		}
		c, err := ctxsel.NewCurve(cands)
		if err != nil {
			t.Fatal(err)
		}
		sel, err := ctxsel.Select(c, st, caps, ctxsel.RankOrder)
		if err != nil {
			t.Fatalf("select: %v", err)
		}
		if strings.Contains(sel.Explanation.Reason, "NaN") {
			t.Fatalf("scores %v: %s", scores, sel.Explanation.Reason)
		}
		start := sel.Explanation.Start
		if caps.MaxK > 0 && sel.K > caps.MaxK || start < 0 || start+sel.K > len(scores) {
			t.Fatalf("band [%d, %d) of %d, max_k %d", start, start+sel.K, len(scores), caps.MaxK)
		}
		want := c.Top(len(scores))[start : start+sel.K]
		if !slices.Equal(sel.Indices, want) {
			t.Fatalf("selection %v is not ranks [%d, %d) = %v", sel.Indices, start, start+sel.K, want)
		}
		c2, _ := ctxsel.NewCurve(cands)
		again, err := ctxsel.Select(c2, st, caps, ctxsel.RankOrder)
		if err != nil || !slices.Equal(again.IDs, sel.IDs) {
			t.Fatalf("not deterministic: %v / %v (%v)", sel.IDs, again.IDs, err)
		}
	})
}
