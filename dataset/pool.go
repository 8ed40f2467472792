package dataset

import (
	"fmt"
	"math/rand/v2"
)

// Pool builds HELMET-style long contexts: each question keeps its own
// passages and is padded to size passages with passages drawn, seeded, from
// the other questions of the same set. Drawn passages are never gold for the
// padded question, so a drawn passage whose text equals one of the
// question's own passages (or another drawn one) is skipped. When the set
// holds fewer distinct passages than size, a question gets all it can.
// The passages are then shuffled (seeded), so document order carries no hint.
//
// Drawn passage ids are "<source record id>/<passage id>", unique within the
// padded question; a drawn passage keeps its Title (not a label). size <= 0 returns copies of the records unpadded.
func Pool(recs []Record, size int, seed uint64) ([]Record, error) {
	out := make([]Record, len(recs))
	// Every passage of the set, once per distinct text, with its origin.
	type ref struct{ rec, p int }
	var all []ref
	firstByText := map[string]bool{}
	for ri, r := range recs {
		for pi, p := range r.Passages {
			if !firstByText[p.Text] {
				firstByText[p.Text] = true
				all = append(all, ref{ri, pi})
			}
		}
	}
	for ri, r := range recs {
		rec := r
		rec.Passages = append([]Passage(nil), r.Passages...)
		rng := rand.New(rand.NewPCG(seed, uint64(ri)))
		if size > len(rec.Passages) {
			// No pool can hold more than the set's passages: size the maps
			// by that, not by a size of 3e9 (which once died out of memory).
			most := min(size, len(rec.Passages)+len(all))
			have := make(map[string]bool, most)
			ids := make(map[string]bool, most)
			for _, p := range rec.Passages {
				have[p.Text] = true
				ids[p.ID] = true
			}
			// A partial Fisher–Yates over all: draw without replacement
			// until the pool is full or the set is exhausted.
			order := make([]int32, len(all))
			for i := range order {
				order[i] = int32(i)
			}
			for i := 0; i < len(order) && len(rec.Passages) < size; i++ {
				j := i + rng.IntN(len(order)-i)
				order[i], order[j] = order[j], order[i]
				src := all[order[i]]
				if src.rec == ri {
					continue
				}
				p := recs[src.rec].Passages[src.p]
				if have[p.Text] {
					continue
				}
				id := recs[src.rec].ID + "/" + p.ID
				if ids[id] {
					return nil, fmt.Errorf("pool: passage id %q collides in record %q", id, rec.ID)
				}
				have[p.Text], ids[id] = true, true
				rec.Passages = append(rec.Passages, Passage{ID: id, Text: p.Text, Title: p.Title})
			}
		}
		if size > 0 {
			rng.Shuffle(len(rec.Passages), func(i, j int) {
				rec.Passages[i], rec.Passages[j] = rec.Passages[j], rec.Passages[i]
			})
		}
		out[ri] = rec
	}
	return out, nil
}
