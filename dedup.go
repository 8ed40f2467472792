package ctxsel

import (
	"hash/maphash"
	"sync"
)

var idSeed = maphash.MakeSeed()

// idTables are pooled open-addressing hash sets: checking a few thousand ids
// for duplicates on every request should not allocate a map each time.
var idTables = sync.Pool{New: func() any { return new([]int32) }}

// firstDuplicate reports the first candidate j whose id repeats an earlier
// candidate i's.
func firstDuplicate(cands []Candidate) (i, j int, dup bool) {
	size := 16
	for size < 2*len(cands) {
		size *= 2
	}
	tp := idTables.Get().(*[]int32)
	defer idTables.Put(tp)
	if cap(*tp) < size {
		*tp = make([]int32, size)
	}
	table := (*tp)[:size]
	clear(table)
	mask := uint64(size - 1)
	for j := range cands {
		id := cands[j].ID
		for slot := maphash.String(idSeed, id) & mask; ; slot = (slot + 1) & mask {
			k := table[slot]
			if k == 0 { // empty: remember j (stored +1 so that 0 means empty)
				table[slot] = int32(j + 1)
				break
			}
			if cands[k-1].ID == id {
				return int(k - 1), j, true
			}
		}
	}
	return 0, 0, false
}
