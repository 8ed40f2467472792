package eval

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/dataset"
)

// lastSentence is a pruning selector for tests: from each of the best two
// passages it sends the part after the last ". " (10 tokens), or, with
// cut, only the first cut bytes of that part.
type lastSentence struct{ cut int }

func (lastSentence) Name() string { return "last" }

func (l lastSentence) SelectTexts(_ context.Context, q ctxsel.TextQuery) (ctxsel.Selection, error) {
	top := q.Curve.Top(2)
	sel := ctxsel.Selection{Indices: top, K: len(top)}
	for _, idx := range top {
		t := q.Texts[idx]
		s := strings.LastIndex(t, ". ") + 2
		e := len(t)
		if l.cut > 0 {
			e = min(len(t), s+l.cut)
		}
		sel.IDs = append(sel.IDs, q.Curve.Candidate(idx).ID)
		sel.Evidence = append(sel.Evidence, ctxsel.Evidence{Spans: [][2]int{{s, e}}, Text: t[s:e], Tokens: 10})
		sel.Tokens += 10
	}
	return sel, nil
}

func spanOf(text, sentence string) [2]int {
	i := strings.Index(text, sentence)
	return [2]int{i, i + len(sentence)}
}

func evidenceRecords() []dataset.Record {
	a := "0.9 100 Intro words here. The capital is Paris."
	b := "0.5 100 Nothing relevant here. Really nothing."
	c := "0.3 100 Other fact. Second gold sentence."
	d := "0.8 100 Yes it is. It was built in 1900."
	return []dataset.Record{
		{ID: "q1", Question: "capital?", Answers: []string{"Paris"}, Passages: []dataset.Passage{
			{ID: "a", Text: a, Gold: true, GoldSpans: [][2]int{spanOf(a, "The capital is Paris.")}},
			{ID: "b", Text: b},
			{ID: "c", Text: c, Gold: true, GoldSpans: [][2]int{spanOf(c, "Second gold sentence.")}},
		}},
		{ID: "q2", Question: "old?", Answers: []string{"yes"}, Passages: []dataset.Passage{
			{ID: "d", Text: d, Gold: true, GoldSpans: [][2]int{spanOf(d, "It was built in 1900.")}},
			{ID: "b", Text: b},
		}},
	}
}

func TestEvidenceFigures(t *testing.T) {
	specs, err := ctxsel.Resolver{}.ResolveList("topk:k=1,topk:k=3")
	if err != nil {
		t.Fatal(err)
	}
	// "The capital is Paris." is 21 bytes: 16 bytes keep 76 %, 17 keep 81 %
	rep, err := Run(context.Background(), evidenceRecords(), fakeScorer{}, Options{Counter: fakeCounter{},
		Strategies: append(specs, TextSelectors(lastSentence{}, cutSentence{lastSentence{cut: 16}}, cutSentence2{lastSentence{cut: 17}}, cutSentence5{lastSentence{cut: 5}})...)})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.SpanLabels {
		t.Fatal("span labels not seen")
	}
	want := []struct {
		name     string
		evidence float64
		present  float64
		prunes   bool
		touched  float64
	}{
		// q1: top-1 is a (1 of 2 spans, holds Paris); q2: top-1 is d (1 of 1)
		{"topk:k=1", (0.5 + 1) / 2, 1, false, (0.5 + 1) / 2},
		{"topk:k=3", 1, 1, false, 1},
		// q1: a's and b's last sentences (a's gold); q2: d's last sentence (gold)
		{"last", (0.5 + 1) / 2, 1, true, (0.5 + 1) / 2},
		// 76 % of a gold span (16 of 21 bytes) is not enough, and "Paris"
		// is cut off; 81 % (17 bytes) is; both touch it (≥ 30 %)
		{"cut16", 0, 0, true, (0.5 + 1) / 2},
		{"cut17", (0.5 + 1) / 2, 0, true, (0.5 + 1) / 2},
		// 24 % (5 bytes) does not touch it
		{"cut5", 0, 0, true, 0},
	}
	for i, w := range want {
		r := rep.Results[i]
		if r.Strategy != w.name || r.EvidenceResult == nil || r.PresenceResult == nil {
			t.Fatalf("result %d: %+v", i, r)
		}
		if r.EvidenceRecall != w.evidence || r.AnswerPresent != w.present || r.Prunes != w.prunes {
			t.Errorf("%s: evidence %v present %v prunes %v, want %v %v %v", w.name, r.EvidenceRecall, r.AnswerPresent, r.Prunes, w.evidence, w.present, w.prunes)
		}
		if r.TouchedRecall != w.touched {
			t.Errorf("%s: touched recall %v, want %v", w.name, r.TouchedRecall, w.touched)
		}
		if r.PresenceQuestions != 1 || r.YesNoQuestions != 1 || r.EvidenceQuestions != 2 {
			t.Errorf("%s: counted %d answers (%d yes/no), %d evidence questions", w.name, r.PresenceQuestions, r.YesNoQuestions, r.EvidenceQuestions)
		}
	}
	// the pruning selector sends 20 tokens on q1 and q2; whole passages'
	// top-k at 20 mean tokens interpolates from (0, 0) to k=1 (100 tokens)
	last := rep.Results[2]
	if last.EvidenceTokens != 20 || !near(last.EvidenceEnvelope, 0.2*0.75) || !near(last.EvidenceGain, 0.75-0.15) {
		t.Errorf("last: tokens %v envelope %v gain %v", last.EvidenceTokens, last.EvidenceEnvelope, last.EvidenceGain)
	}
	var buf bytes.Buffer
	if err := WriteTable(&buf, rep); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"0.750†", "evidence recall", "touched recall", "answer present", "1 yes/no questions left out"} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, buf.String())
		}
	}
	buf.Reset()
	if err := WriteJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"evidence_recall": 0.75`, `"touched_recall": 0.75`, `"answer_present": 1`, `"prunes": true`, `"evidence_gain_se"`} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("json lacks %q", s)
		}
	}

	// without sentence labels a pruning selector's passage recall is "n/c"
	recs := evidenceRecords()
	for i := range recs {
		for j := range recs[i].Passages {
			recs[i].Passages[j].GoldSpans = nil
		}
	}
	rep, err = Run(context.Background(), recs, fakeScorer{}, Options{Strategies: append(specs, TextSelectors(lastSentence{})...), Counter: fakeCounter{}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.SpanLabels || rep.Results[2].EvidenceResult != nil || rep.Results[2].PresenceResult == nil {
		t.Fatalf("no spans: %+v", rep.Results[2])
	}
	buf.Reset()
	if err := WriteTable(&buf, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "n/c") || !strings.Contains(buf.String(), "not comparable") {
		t.Errorf("table without spans:\n%s", buf.String())
	}
}

type cutSentence struct{ lastSentence }

func (cutSentence) Name() string { return "cut16" }

type cutSentence2 struct{ lastSentence }

func (cutSentence2) Name() string { return "cut17" }

type cutSentence5 struct{ lastSentence }

func (cutSentence5) Name() string { return "cut5" }

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// headerSpy is lastSentence recording the headers it was handed.
type headerSpy struct {
	lastSentence
	seen *[]string
}

func (h headerSpy) SelectTexts(ctx context.Context, q ctxsel.TextQuery) (ctxsel.Selection, error) {
	*h.seen = append(*h.seen, q.Headers...)
	return h.lastSentence.SelectTexts(ctx, q)
}

// A gold unit in two overlapping chunks (one gold id) counts once: in the
// denominator, for whole passages and for a selector; and the passages'
// titles reach a text selector as its headers.
func TestEvidenceGoldIDs(t *testing.T) {
	a := "0.9 100 Intro words here. The capital is Paris."
	b := "0.8 100 The capital is Paris. Tail words."
	c := "0.3 100 Other fact. Second gold sentence."
	recs := []dataset.Record{{ID: "q1", Question: "capital?", Answers: []string{"Paris"}, Passages: []dataset.Passage{
		{ID: "a", Text: a, Title: "atlas", Gold: true, GoldSpans: [][2]int{spanOf(a, "The capital is Paris.")}, GoldIDs: []string{"u1"}},
		{ID: "b", Text: b, Title: "atlas", Gold: true, GoldSpans: [][2]int{spanOf(b, "The capital is Paris.")}, GoldIDs: []string{"u1"}},
		{ID: "c", Text: c, Title: "atlas", Gold: true, GoldSpans: [][2]int{spanOf(c, "Second gold sentence.")}, GoldIDs: []string{"u2"}},
	}}}
	specs, err := ctxsel.Resolver{}.ResolveList("topk:k=1,topk:k=2,topk:k=3")
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	rep, err := Run(context.Background(), recs, fakeScorer{}, Options{Counter: fakeCounter{},
		Strategies: append(specs, TextSelectors(headerSpy{seen: &seen})...)})
	if err != nil {
		t.Fatal(err)
	}
	// without the ids top-2 would hold 2 of 3 spans; the selector sends a's
	// copy of u1 and b's "Tail words."
	for i, want := range []float64{0.5, 0.5, 1, 0.5} {
		if r := rep.Results[i]; r.EvidenceRecall != want {
			t.Errorf("%s: evidence recall %v, want %v", r.Strategy, r.EvidenceRecall, want)
		}
	}
	if strings.Join(seen, ",") != "atlas,atlas,atlas" {
		t.Errorf("headers %q, want the three titles", seen)
	}
}
