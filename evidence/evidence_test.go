package evidence_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	_ "github.com/ctxsel/ctxsel/cutoff" // registers topk
	"github.com/ctxsel/ctxsel/evidence"
	"github.com/ctxsel/ctxsel/index/indextest"
	"github.com/ctxsel/ctxsel/token"
)

func counter(t testing.TB) *token.Tiktoken {
	t.Helper()
	c, err := token.New("")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newSelector(t testing.TB, spec string) ctxsel.TextSelector {
	t.Helper()
	s, err := evidence.Parse(spec, evidence.Options{Embedder: indextest.HashEmbedder{}, Counter: counter(t)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// query builds a text query whose scores fall with the passage's index.
func query(t testing.TB, question string, texts ...string) ctxsel.TextQuery {
	t.Helper()
	c := counter(t)
	cands := make([]ctxsel.Candidate, len(texts))
	for i, tx := range texts {
		cands[i] = ctxsel.Candidate{ID: fmt.Sprintf("p%d", i), Score: 1 - float64(i)/float64(len(texts)), Tokens: c.Count(tx)}
	}
	curve, err := ctxsel.NewCurve(cands)
	if err != nil {
		t.Fatal(err)
	}
	return ctxsel.TextQuery{Question: question, Curve: curve, Texts: texts}
}

func TestSplitHeaders(t *testing.T) {
	cases := []struct {
		text, header string
		sentences    int
	}{
		{"Ed Wood (film)\nEd Wood is a 1994 film. It stars Johnny Depp.", "Ed Wood (film)", 2},
		{"# Install\nRun the script. Then wait.", "# Install", 2},
		{"  Scott Derrickson\n  He is a director.", "Scott Derrickson", 1},
		{"The Normans were a people. They lived in France.", "", 2}, // no line: no header
		{"A sentence that ends.\nAnother one.", "", 2},              // punctuation: prose
		{"Just a title\n", "", 1},                                   // nothing after it
		{"Steps:\n1. Open\n2. Close", "", 3},                        // a colon ends no title
		// a chunk cut mid-text: a quoted sentence end, a lower-case start
		{"again; and followed it up with “Humbug.”\n\n“Don’t be cross!” said he.", "", 2},
		{"ready on the spur of the moment, said Bah\nHe left.", "", 2},
		{"", "", 0},
	}
	for _, tc := range cases {
		u := evidence.Split(tc.text)
		h := ""
		if u.Header != nil {
			h = tc.text[u.Header[0]:u.Header[1]]
		}
		if h != tc.header || len(u.Sentences) != tc.sentences {
			t.Errorf("Split(%q): header %q, %d sentences; want %q, %d", tc.text, h, len(u.Sentences), tc.header, tc.sentences)
		}
		for _, s := range u.Sentences {
			if u.Header != nil && s[0] < u.Header[1] {
				t.Errorf("Split(%q): sentence %v overlaps the header %v", tc.text, s, *u.Header)
			}
		}
	}
}

var passages = []string{
	"Ada Lovelace\nAda Lovelace was an English mathematician. She was born in London in 1815. She worked with Charles Babbage on the Analytical Engine. Her notes hold the first published algorithm.",
	"Charles Babbage\nCharles Babbage was an English polymath. He designed the Difference Engine. He was born in London.",
	"London\nLondon is the capital of England. It stands on the River Thames. Its population is about nine million.",
	"Paris\nParis is the capital of France. It is known for the Eiffel Tower.",
}

func TestSelectPrunesToTheBudget(t *testing.T) {
	c := counter(t)
	s := newSelector(t, "evidence:budget=40")
	q := query(t, "In which city was Ada Lovelace born?", passages...)
	sel, err := s.SelectTexts(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if sel.K == 0 || len(sel.Evidence) != sel.K || len(sel.IDs) != sel.K {
		t.Fatalf("selection %+v", sel)
	}
	total := 0
	for i, ev := range sel.Evidence {
		if got := c.Count(ev.Text); got != ev.Tokens {
			t.Errorf("passage %s: %d tokens reported, the text has %d", sel.IDs[i], ev.Tokens, got)
		}
		if ev.PassageTokens != q.Curve.TokensOf(sel.Indices[i]) || ev.Tokens >= ev.PassageTokens {
			t.Errorf("passage %s: %d of %d tokens", sel.IDs[i], ev.Tokens, ev.PassageTokens)
		}
		checkPruned(t, q.Texts[sel.Indices[i]], ev)
		total += ev.Tokens
	}
	if total != sel.Tokens || total > 40 || sel.Explanation.Tokens != total {
		t.Fatalf("tokens %d (sum %d) for a budget of 40", sel.Tokens, total)
	}
	// the sentence holding the answer is sent, with its passage's title
	if sel.IDs[0] != "p0" || !strings.Contains(sel.Evidence[0].Text, "She was born in London in 1815.") || !strings.HasPrefix(sel.Evidence[0].Text, "Ada Lovelace\n") {
		t.Fatalf("first passage %s: %q", sel.IDs[0], sel.Evidence[0].Text)
	}
	ex := sel.Explanation
	if ex.Strategy != "evidence:budget=40" || ex.Decision.Kind != "evidence" || ex.Decision.Above == nil || !strings.Contains(ex.Reason, "kept") {
		t.Fatalf("explanation %+v", ex)
	}
	if ev := sel.Evidence[0]; ev.DroppedScore == nil || ev.KeptScore <= 0 {
		t.Fatalf("why: %+v", ev)
	}
}

// checkPruned checks that a pruned text is the passage's own bytes: the
// header, then the kept spans, joined by the passage's white space where
// adjacent and by the gap marker elsewhere.
func checkPruned(t *testing.T, text string, ev ctxsel.Evidence) {
	t.Helper()
	checkPrunedUnits(t, text, ev, evidence.DefaultModel().Units())
}

// checkPrunedUnits is checkPruned for a selector reading the structures
// of on.
func checkPrunedUnits(t *testing.T, text string, ev ctxsel.Evidence, on evidence.Structures) {
	t.Helper()
	checkPrunedUnitsAbove(t, text, "", ev, on)
}

// checkPrunedUnitsAbove is checkPrunedUnits for a passage the source gave
// lines above (TextQuery.Above): they are sent after the title, spaces
// made single (a text table's header keeps its layout).
func checkPrunedUnitsAbove(t *testing.T, text, above string, ev ctxsel.Evidence, on evidence.Structures) {
	t.Helper()
	u := evidence.SplitUnitsAbove(text, on, above)
	index := map[[2]int]int{}
	for i, s := range u.Sentences {
		index[s] = i
	}
	var b strings.Builder
	prevEnd, prevIndex := -1, -2
	if ev.Title != "" { // a title the source gave: a line of its own
		if ev.Header != nil {
			t.Fatalf("a title %q and a header %v", ev.Title, *ev.Header)
		}
		b.WriteString(ev.Title + "\n")
	}
	if ev.Above != "" {
		if want := evidence.AboveText(above); ev.Above != want {
			t.Fatalf("above %q sent as %q", above, ev.Above)
		}
		b.WriteString(ev.Above + "\n")
	}
	if ev.Header != nil {
		if u.Header == nil || *u.Header != *ev.Header {
			t.Fatalf("header %v, the passage's is %v", *ev.Header, u.Header)
		}
		b.WriteString(text[ev.Header[0]:ev.Header[1]])
		prevEnd, prevIndex = ev.Header[1], -1
	} else if b.Len() > 0 && len(ev.Spans) > 0 && index[ev.Spans[0]] > 0 && (ev.Above == "" || evidence.Joiner(text, u, index[ev.Spans[0]]) == evidence.Gap) {
		if jn := evidence.Joiner(text, u, index[ev.Spans[0]]); len(jn) > 1 && jn[0] == '\n' {
			b.WriteString("…\n") // before an indented line, on a line of its own
		} else {
			b.WriteString(strings.TrimLeft(evidence.Gap, " "))
		}
	}
	for _, sp := range ev.Spans {
		j, ok := index[sp]
		if !ok || sp[0] < max(prevEnd, 0) {
			t.Fatalf("span %v is not a sentence of the passage after %d", sp, prevEnd)
		}
		switch {
		case prevEnd < 0:
			if jn := evidence.Joiner(text, u, j); strings.HasPrefix(jn, "\n") && (strings.HasSuffix(b.String(), "\n") || (b.Len() == 0 && j > 0)) {
				b.WriteString(jn[1:]) // the line's indent
			}
		case j == prevIndex+1:
			b.WriteString(text[prevEnd:sp[0]])
		default:
			b.WriteString(evidence.Joiner(text, u, j))
		}
		b.WriteString(text[sp[0]:sp[1]])
		prevEnd, prevIndex = sp[1], j
	}
	// every unit sent is sent with its context line and heading path
	sent := map[int]bool{}
	for _, sp := range ev.Spans {
		sent[index[sp]] = true
	}
	for j := range sent {
		if u.Kind(j) == evidence.Context && !slices.ContainsFunc(ev.Spans, func(sp [2]int) bool { return u.Needs != nil && slices.Contains(u.Needs[index[sp]], j) }) {
			t.Fatalf("context line %q sent alone", text[u.Sentences[j][0]:u.Sentences[j][1]])
		}
		if u.Needs == nil {
			continue
		}
		for _, k := range u.Needs[j] {
			if !sent[k] {
				t.Fatalf("unit %q sent without %q", text[u.Sentences[j][0]:u.Sentences[j][1]], text[u.Sentences[k][0]:u.Sentences[k][1]])
			}
		}
	}
	if b.String() != ev.Text {
		t.Fatalf("pruned text %q is not built from the passage's spans (%q)", ev.Text, b.String())
	}
}

func TestBudgetAndCaps(t *testing.T) {
	c := counter(t)
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("the a river city born london paris engine she he was is in of capital english french mathematician")
	var texts []string
	for i := range 30 {
		var b strings.Builder
		fmt.Fprintf(&b, "Title %d\n", i)
		for range 1 + rng.IntN(8) {
			for w := range 3 + rng.IntN(20) {
				if w > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(words[rng.IntN(len(words))])
			}
			b.WriteString(". ")
		}
		texts = append(texts, strings.TrimSpace(b.String()))
	}
	q := query(t, "Where was she born, in London or Paris?", texts...)
	for _, budget := range []int{5, 60, 120, 400, 5000} {
		sel, err := newSelector(t, fmt.Sprintf("evidence:budget=%d,passages=30", budget)).SelectTexts(context.Background(), q)
		if budget == 5 { // no sentence and header fit in 5 tokens
			if !errors.Is(err, ctxsel.ErrInvalidInput) || !strings.Contains(err.Error(), "fits in the budget") {
				t.Fatalf("budget 5: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("budget %d: %v", budget, err)
		}
		sum := 0
		for i, ev := range sel.Evidence {
			if c.Count(ev.Text) != ev.Tokens {
				t.Fatalf("budget %d: inexact count", budget)
			}
			checkPruned(t, texts[sel.Indices[i]], ev)
			sum += ev.Tokens
		}
		if sum > budget || sum != sel.Tokens {
			t.Fatalf("budget %d: sent %d (reported %d)", budget, sum, sel.Tokens)
		}
		if budget == 5000 {
			// random words: the model does not expect one gold sentence
			// among them, so the gate leaves the floor and the stop off
			if !strings.Contains(sel.Explanation.Reason, "under min_expected=1") {
				t.Fatalf("the default's gate did not open on random words: %s", sel.Explanation.Reason)
			}
			// with the gate off, the model's floor and stop hold back
			// sentences it deems all but worthless; without both a budget
			// above everything sends every passage
			sel, err = newSelector(t, "evidence:budget=5000,passages=30,min_expected=0").SelectTexts(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			floor := sel.Explanation.Params["floor"]
			for _, ev := range sel.Evidence {
				if ev.KeptScore < floor {
					t.Fatalf("a sentence of p=%v sent below the floor %v", ev.KeptScore, floor)
				}
			}
			all, err := newSelector(t, "evidence:budget=5000,passages=30,floor=0,stop=0").SelectTexts(context.Background(), q)
			if err != nil || all.K != 30 {
				t.Fatalf("without a floor or stop a budget above everything sends every passage, got %d (%v)", all.K, err)
			}
			if sel.Tokens >= all.Tokens {
				t.Fatalf("the model's floor and stop sent %d tokens, none %d: want fewer", sel.Tokens, all.Tokens)
			}
		}
		// rank order: passages in the curve's order
		for i := 1; i < len(sel.Indices); i++ {
			if sel.Indices[i] < sel.Indices[i-1] {
				t.Fatalf("budget %d: not in rank order: %v", budget, sel.Indices)
			}
		}
	}
	// caps: max_k bounds the passages, max_tokens the budget
	qc := q
	qc.Caps = ctxsel.Caps{MaxK: 2, MaxTokens: 60}
	sel, err := newSelector(t, "evidence:budget=400,passages=30").SelectTexts(context.Background(), qc)
	if err != nil {
		t.Fatal(err)
	}
	if sel.K > 2 || sel.Tokens > 60 || !strings.Contains(strings.Join(sel.Explanation.CapsApplied, ","), "max_tokens") {
		t.Fatalf("caps: k=%d tokens=%d %+v", sel.K, sel.Tokens, sel.Explanation)
	}
}

func TestDocumentOrder(t *testing.T) {
	q := query(t, "London born", passages...)
	// make the last passage the best
	cands := make([]ctxsel.Candidate, len(passages))
	for i := range passages {
		cands[i] = ctxsel.Candidate{ID: fmt.Sprintf("p%d", i), Score: float64(i), Tokens: 50}
	}
	var err error
	if q.Curve, err = ctxsel.NewCurve(cands); err != nil {
		t.Fatal(err)
	}
	rank, err := newSelector(t, "evidence:budget=200").SelectTexts(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := newSelector(t, "evidence:budget=200,order=document").SelectTexts(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if rank.K < 2 || rank.Indices[0] <= rank.Indices[1] || doc.Indices[0] >= doc.Indices[1] {
		t.Fatalf("rank order %v, document order %v", rank.Indices, doc.Indices)
	}
	// the query's document order wins over the selector's rank order
	q.Order = ctxsel.DocumentOrder
	byQuery, err := newSelector(t, "evidence:budget=200").SelectTexts(context.Background(), q)
	if err != nil || byQuery.Indices[0] >= byQuery.Indices[1] {
		t.Fatalf("query's document order: %v %v", byQuery.Indices, err)
	}
}

func TestBadInput(t *testing.T) {
	long := strings.Repeat("word ", 5000) + "end."
	ctx := context.Background()
	s := newSelector(t, "evidence:budget=500")

	// one 5,000-token sentence: nothing fits
	_, err := s.SelectTexts(ctx, query(t, "what word?", long))
	if !errors.Is(err, ctxsel.ErrInvalidInput) || !strings.Contains(err.Error(), `passage "p0", is one sentence of 5002 tokens`) {
		t.Fatalf("one long sentence: %v", err)
	}
	// beside a normal passage it is left out and named
	sel, err := s.SelectTexts(ctx, query(t, "what word?", long, "The word is bird. Really."))
	if err != nil || sel.K != 1 || sel.IDs[0] != "p1" || !strings.Contains(strings.Join(sel.Explanation.Guards, ","), "oversized_sentence") {
		t.Fatalf("long beside short: %+v %v", sel, err)
	}
	// empty texts
	if _, err := s.SelectTexts(ctx, query(t, "q?", "", "  \n ")); !errors.Is(err, ctxsel.ErrInvalidInput) || !strings.Contains(err.Error(), "hold no text") {
		t.Fatalf("empty texts: %v", err)
	}
	// invalid UTF-8
	if _, err := s.SelectTexts(ctx, query(t, "q?", "fine text.", "bad \xff text.")); !errors.Is(err, ctxsel.ErrInvalidInput) || !strings.Contains(err.Error(), `"p1" is not valid UTF-8`) {
		t.Fatalf("invalid UTF-8: %v", err)
	}
	// empty question, no candidates, texts that do not match the curve
	if _, err := s.SelectTexts(ctx, query(t, " ", "a text.")); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("empty question: %v", err)
	}
	q := query(t, "q?", "a.", "b.")
	q.Texts = q.Texts[:1]
	if _, err := s.SelectTexts(ctx, q); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("texts/candidates: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.SelectTexts(cancelled, query(t, "q?", "a.")); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	// options
	for _, spec := range []string{"evidence", "evidence:budget=0", "evidence:budget=x", "evidence:budget=5,header=2", "evidence:budget=5,neighbors=3",
		"evidence:budget=5,order=edges", "evidence:budget=5,colour=1", "evidence:budget=5,budget=6", "evidence:budget=5,passages=0", "topk:k=x+evidence:budget=5",
		"topk+topk+evidence:budget=5"} {
		if _, err := evidence.Parse(spec, evidence.Options{Embedder: indextest.HashEmbedder{}}); !errors.Is(err, ctxsel.ErrInvalidInput) {
			t.Errorf("%s: %v", spec, err)
		}
	}
	if _, err := evidence.New(evidence.Options{Budget: 10}); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Errorf("no embedder: %v", err)
	}
}

func TestAfterPrunesTheStrategysPassages(t *testing.T) {
	s := newSelector(t, "topk:k=2+evidence:budget=300")
	if s.Name() != "topk:k=2+evidence:budget=300" {
		t.Fatalf("name %q", s.Name())
	}
	sel, err := s.SelectTexts(context.Background(), query(t, "Where is the Eiffel Tower?", passages...))
	if err != nil {
		t.Fatal(err)
	}
	for _, idx := range sel.Indices {
		if idx > 1 {
			t.Fatalf("passage %d is outside the top 2: %v", idx, sel.Indices)
		}
	}
	if !strings.Contains(sel.Explanation.Reason, "topk kept 2 of 4") || !strings.Contains(sel.Explanation.Reason, "the 2 passages the strategy kept") {
		t.Fatalf("reason %q", sel.Explanation.Reason)
	}
}

func TestNeighbors(t *testing.T) {
	// with neighbors=1 a kept sentence comes with the one before it
	q := query(t, "Which engine did she work on?", passages[0])
	sel, err := newSelector(t, "evidence:budget=30,neighbors=1").SelectTexts(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	ev := sel.Evidence[0]
	if strings.Contains(ev.Text, evidence.Gap) && len(ev.Spans) < 2 {
		t.Fatalf("neighbors: %q", ev.Text)
	}
	// every kept sentence is the first, or comes with the one before it,
	// or is itself the one before a kept sentence
	u := evidence.Split(passages[0])
	kept := map[int]bool{}
	for _, sp := range ev.Spans {
		for i, s := range u.Sentences {
			if s == sp {
				kept[i] = true
			}
		}
	}
	for i := range kept {
		if i > 0 && !kept[i-1] && !kept[i+1] {
			t.Fatalf("sentence %d sent alone: %q", i, ev.Text)
		}
	}
}

func TestDefaultModelIsValid(t *testing.T) {
	m := evidence.DefaultModel()
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	b, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := evidence.ParseModel(b); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`{}`, `{"version": 2}`, strings.Replace(string(b), `"passages": `, `"passages": -`, 1), `[`} {
		if _, err := evidence.ParseModel([]byte(bad)); err == nil {
			t.Errorf("ParseModel accepted %.60q", bad)
		}
	}
}
