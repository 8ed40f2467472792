package dataset

import (
	"fmt"
	"testing"
)

func TestSplitOf(t *testing.T) {
	counts := map[Split]int{}
	const n = 20000
	for i := range n {
		id := fmt.Sprintf("q%d", i)
		s := SplitOf(id, 1)
		if SplitOf(id, 1) != s {
			t.Fatalf("SplitOf(%q) is not deterministic", id)
		}
		counts[s]++
	}
	for part, want := range map[Split]float64{SplitTrain: 0.6, SplitValidation: 0.2, SplitTest: 0.2} {
		if got := float64(counts[part]) / n; got < want-0.02 || got > want+0.02 {
			t.Errorf("%s share %.3f, want about %.1f", part, got, want)
		}
	}
	// another seed moves questions between parts
	moved := 0
	for i := range 1000 {
		id := fmt.Sprintf("q%d", i)
		if SplitOf(id, 1) != SplitOf(id, 2) {
			moved++
		}
	}
	if moved < 300 {
		t.Errorf("seed 2 moved only %d of 1000 questions", moved)
	}
	recs := []Record{{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "d"}, {ID: "e"}}
	total := 0
	for _, part := range []Split{SplitTrain, SplitValidation, SplitTest} {
		for _, r := range FilterSplit(recs, part, 1) {
			if SplitOf(r.ID, 1) != part {
				t.Errorf("%s in %s", r.ID, part)
			}
			total++
		}
	}
	if total != len(recs) {
		t.Errorf("parts hold %d of %d records", total, len(recs))
	}
	if _, err := ParseSplit("dev"); err == nil {
		t.Error("ParseSplit(dev) accepted")
	}
}

// TestSplitShare: a seeded share of the questions, the same for a seed.
func TestSplitShare(t *testing.T) {
	recs := make([]Record, 50)
	for i := range recs {
		recs[i] = Record{ID: fmt.Sprint("r", i), Question: "?", Passages: []Passage{{ID: "g", Text: fmt.Sprint(i), Gold: true}}}
	}
	tr, te := SplitShare(recs, 0.8, 1)
	if len(tr) != 40 || len(te) != 10 {
		t.Fatalf("split %d/%d", len(tr), len(te))
	}
	tr2, _ := SplitShare(recs, 0.8, 1)
	for i := range tr {
		if tr[i].ID != tr2[i].ID {
			t.Fatal("split is not deterministic")
		}
	}
	_, te3 := SplitShare(recs, 0.8, 2)
	same := 0
	ids := IDs(te)
	for _, r := range te3 {
		if ids[r.ID] {
			same++
		}
	}
	if same == 10 {
		t.Error("another seed gave the same split")
	}
	if got := Filter(recs, IDs(te)); len(got) != 10 {
		t.Errorf("Filter kept %d", len(got))
	}
}
