package evidence_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/evidence"
	"github.com/ctxsel/ctxsel/index/indextest"
)

// The region features read the turns within eight of a sentence's turn
// (region_match, region_max) and its passage's best turn (turn_standing,
// best_turn_distance): in a 20-turn meeting a window of 7 or 9 turns, or
// one that reaches into the next passage's turns, gives other figures
// than the ones computed here from each turn's own match; a prose
// passage's sentences have them all 0.
func TestRegionFeatures(t *testing.T) {
	topics := []string{"budget", "lunch", "printer", "holiday", "parking", "crew rota", "river gate", "old mill",
		"coffee", "website", "blue paint", "van keys", "van insurance", "night shift", "crew van", "mill roof",
		"weather", "tickets", "speakers", "minutes"}
	var meeting strings.Builder
	for i, topic := range topics {
		fmt.Fprintf(&meeting, "[10:%02d] Speaker%c: We should talk about the %s next week\n", i, 'A'+i%4, topic)
	}
	small := "[11:00] Ana: The kitchen is closed today\n" +
		"[11:01] Ben: The printer needs paper\n" +
		"[11:02] Cid: Lunch is at noon\n" +
		"[11:03] Dee: The van is parked\n" +
		"[11:04] Eve: See you tomorrow\n"
	prose := "The blue van was painted in spring. It carries the crew to the mill every day."
	q := query(t, "What did they say about the crew van keys and the van insurance?", meeting.String(), small, prose)
	s, err := evidence.New(evidence.Options{Budget: 200, Embedder: indextest.HashEmbedder{}, Counter: counter(t)})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := s.Features(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) int {
		i := slices.Index(evidence.FeatureNames, name)
		if i < 0 {
			t.Fatalf("no feature %s", name)
		}
		return i
	}
	bmZ, denseZ := col("bm25_z"), col("dense_z")
	names := []string{"region_match", "region_max", "turn_standing", "best_turn_distance"}
	cols := make([]int, len(names))
	for k, n := range names {
		cols[k] = col(n)
	}

	// each passage's turns in order (one sentence a turn here)
	turns := make([][]evidence.SentenceFeatures, 3)
	for _, f := range fs {
		if f.Passage == 2 || f.Kind == evidence.Turn {
			turns[f.Passage] = append(turns[f.Passage], f)
		}
	}
	if len(turns[0]) != len(topics) || len(turns[1]) != 5 || len(turns[2]) != 2 {
		t.Fatalf("want %d, 5 and 2 units; got %d, %d, %d", len(topics), len(turns[0]), len(turns[1]), len(turns[2]))
	}
	match := func(f evidence.SentenceFeatures) float64 { return (f.Features[bmZ] + f.Features[denseZ]) / 2 }
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	bestOf := make([]float64, 2)
	for p, ts := range turns[:2] {
		best := 0
		for i, f := range ts {
			if match(f) > match(ts[best]) {
				best = i
			}
		}
		bestOf[p] = match(ts[best])
		if p == 0 && (best < 11 || best > 14) {
			t.Fatalf("the meeting's best turn is %d, want one of the van's (11 to 14)", best)
		}
		for i, f := range ts {
			sum, top, n := 0.0, math.Inf(-1), 0
			for d := -8; d <= 8; d++ {
				if j := i + d; d != 0 && j >= 0 && j < len(ts) {
					sum += match(ts[j])
					top = max(top, match(ts[j]))
					n++
				}
			}
			want := []float64{sum / float64(n), top, match(f) - match(ts[best]), math.Log1p(math.Abs(float64(i - best)))}
			for k, c := range cols {
				if !near(f.Features[c], want[k]) {
					t.Errorf("passage %d turn %d: %s = %v, want %v", p, i, names[k], f.Features[c], want[k])
				}
			}
		}
	}
	// the small passage's best turn stands at 0 in its own passage, below the meeting's best
	if bestOf[1] >= bestOf[0] {
		t.Fatalf("the small passage's best match %v is not below the meeting's %v: the test cannot tell passages apart", bestOf[1], bestOf[0])
	}
	for _, f := range turns[2] {
		for k, c := range cols {
			if f.Features[c] != 0 {
				t.Errorf("prose %q: %s = %v, want 0", prose[f.Span[0]:f.Span[1]], names[k], f.Features[c])
			}
		}
	}
}
