package evidencetrain

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ctxsel/ctxsel/dataset"
)

// sample keeps n questions chosen by their id's hash, in file order, the
// same ones whatever the order of the file.
func TestSampleKeepsTheSmallestKeysInOrder(t *testing.T) {
	var recs []dataset.Record
	for i := range 50 {
		recs = append(recs, dataset.Record{ID: fmt.Sprintf("q%d", i)})
	}
	got := sample(recs, 10)
	if len(got) != 10 {
		t.Fatalf("%d kept", len(got))
	}
	var keys []uint64
	for _, r := range recs {
		keys = append(keys, SampleOf(r.ID))
	}
	slices.Sort(keys)
	last := -1
	for _, r := range got {
		if SampleOf(r.ID) > keys[9] {
			t.Fatalf("%s kept: its key is not among the 10 smallest", r.ID)
		}
		i := slices.IndexFunc(recs, func(x dataset.Record) bool { return x.ID == r.ID })
		if i <= last {
			t.Fatalf("order lost at %s", r.ID)
		}
		last = i
	}
	reversed := slices.Clone(recs)
	slices.Reverse(reversed)
	back := sample(reversed, 10)
	ids := func(rs []dataset.Record) []string {
		var s []string
		for _, r := range rs {
			s = append(s, r.ID)
		}
		slices.Sort(s)
		return s
	}
	if !slices.Equal(ids(got), ids(back)) {
		t.Fatal("another order of the file gives another sample")
	}
	if len(sample(recs, 0)) != 50 || len(sample(recs, 80)) != 50 {
		t.Fatal("0 or more than the file must keep all")
	}
}
