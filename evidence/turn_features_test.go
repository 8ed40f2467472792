package evidence_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/evidence"
	"github.com/ctxsel/ctxsel/index/indextest"
)

// The turn-neighbour features read the turns next to a sentence's turn:
// the reply to the line that matches the question sees that line's match
// (prev_turn_match), the line sees its reply's (next_turn_match), the
// question naming a turn's speaker marks that turn's sentences only, and
// a prose passage's sentences have them all 0.
func TestTurnNeighbourFeatures(t *testing.T) {
	chat := "[10:00] Ana: Where did the crew park the blue van last night?\n" +
		"[10:01] Ben: Behind the old mill. Near the river gate.\n" +
		"[10:02] Ana: Thanks.\n" +
		"[10:03] Cid: Lunch is ready in the kitchen.\n"
	prose := "The blue van was painted in spring. It carries the crew to the mill every day."
	q := query(t, "Where did Ben park the blue van?", chat, prose)
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
	prev, next, run, speaker := col("prev_turn_match"), col("next_turn_match"), col("turn_run"), col("speaker_in_question")

	// the chat's turns in order: each turn's sentences and its match
	type turn struct {
		text  string
		sents []evidence.SentenceFeatures
		match float64
	}
	var turns []*turn
	var proseSents []evidence.SentenceFeatures
	for _, f := range fs {
		if f.Passage == 1 {
			proseSents = append(proseSents, f)
			continue
		}
		if f.Kind != evidence.Turn {
			continue
		}
		text := chat[f.Span[0]:f.Span[1]]
		// a turn's sentences follow one another on one line
		if n := len(turns); n > 0 && !strings.Contains(chat[turns[n-1].sents[len(turns[n-1].sents)-1].Span[1]:f.Span[0]], "\n") {
			turns[n-1].sents = append(turns[n-1].sents, f)
			turns[n-1].text += " " + text
			continue
		}
		turns = append(turns, &turn{text: text, sents: []evidence.SentenceFeatures{f}})
	}
	if len(turns) != 4 || len(turns[1].sents) != 2 {
		t.Fatalf("want 4 turns, the second of two sentences; got %d", len(turns))
	}
	for _, tn := range turns {
		tn.match = math.Inf(-1)
		for _, f := range tn.sents {
			tn.match = max(tn.match, (f.Features[bmZ]+f.Features[denseZ])/2)
		}
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	for ti, tn := range turns {
		wantPrev, wantNext := 0.0, 0.0
		if ti > 0 {
			wantPrev = turns[ti-1].match
		}
		if ti < len(turns)-1 {
			wantNext = turns[ti+1].match
		}
		sum, n := 0.0, 0
		for d := -2; d <= 2; d++ {
			if j := ti + d; d != 0 && j >= 0 && j < len(turns) {
				sum += turns[j].match
				n++
			}
		}
		wantSpeaker := 0.0
		if ti == 1 {
			wantSpeaker = 1 // Ben
		}
		for _, f := range tn.sents {
			x := f.Features
			if !near(x[prev], wantPrev) || !near(x[next], wantNext) || !near(x[run], sum/float64(n)) || x[speaker] != wantSpeaker {
				t.Errorf("turn %d %q: prev %v next %v run %v speaker %v, want %v %v %v %v", ti, tn.text,
					x[prev], x[next], x[run], x[speaker], wantPrev, wantNext, sum/float64(n), wantSpeaker)
			}
		}
	}
	// Ben's reply follows the line that matches the question best, Cid's does not.
	if b, c := turns[1].sents[0].Features[prev], turns[3].sents[0].Features[prev]; b <= c {
		t.Errorf("Ben's prev_turn_match %v not above Cid's %v", b, c)
	}
	if len(proseSents) != 2 {
		t.Fatalf("want the prose passage's 2 sentences, got %d", len(proseSents))
	}
	for _, f := range proseSents {
		for _, c := range []int{prev, next, run, speaker} {
			if f.Features[c] != 0 {
				t.Errorf("prose %q: %s = %v, want 0", prose[f.Span[0]:f.Span[1]], evidence.FeatureNames[c], f.Features[c])
			}
		}
	}
}
