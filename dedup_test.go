package ctxsel

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func TestFirstDuplicateMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for trial := range 2000 {
		n := r.IntN(3000)
		space := 1 + r.IntN(4*n+1) // small spaces force repeats
		cands := make([]Candidate, n)
		for k := range cands {
			cands[k].ID = fmt.Sprint(r.IntN(space))
		}
		wantI, wantJ, wantDup := 0, 0, false
		seen := map[string]int{}
		for k, c := range cands {
			if p, ok := seen[c.ID]; ok {
				wantI, wantJ, wantDup = p, k, true
				break
			}
			seen[c.ID] = k
		}
		i, j, dup := firstDuplicate(cands)
		if dup != wantDup || i != wantI || j != wantJ {
			t.Fatalf("trial %d: got (%d, %d, %v), want (%d, %d, %v)", trial, i, j, dup, wantI, wantJ, wantDup)
		}
	}
}
