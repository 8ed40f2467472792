package evidence

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/token"
)

// Broad fires on questions for a discussion, a summary or someone's
// views, and not on questions for one fact, among them ones that hold a
// broad question's words but open as a question for one fact, or ask in
// a dialogue's present tense.
func TestBroad(t *testing.T) {
	cases := []struct {
		q    string
		want bool
	}{
		{"Summarize the discussion about the working design of the remote control.", true},
		{"summarise what was agreed", true},
		{"Can you sum up the meeting?", true},
		{"Please describe the semantic specification", true},
		{"Give me an overview of the budget", true},
		{"What was the debate about the economic bilateral relations with the UK?", true},
		{"What did the group talk about the touch screen under the limitation of the budget?", true},
		{"What did Grad F think about intermediate categories?", true},
		{"WHAT DID THE PROFESSOR THINK OF ECHOES?", true},
		{"What did the Project Manager think of the profit when discussing the financial issue and why?", true},
		{"Why did the Marketing disagree with the Project Manager?", true},
		{"Why did the group decide to give two points on usefulness?", true},
		{"Summarize the marketing expert's opinions towards user identification.", true},
		{"What was the final decision of the discussion about automatic power control?", true},
		{"What’s the conclusion of the discussion about intuitive?", true},
		{"Which color was considered more appropriate by team members when discussing the desired features?", true},
		// one fact
		{"Who opens the door ?", false},
		{"What did Kate get ?", false},
		{"Who is talking about baseball ?", false},
		{"Where are Ross and the Walthams discussing the bill ?", false},
		{"When was the wedding discussion happening ?", false},
		{"Whose views were heard first?", false},
		{"How many people discussed the budget?", false},
		{"How does Rachel describe her relationship with Ross ?", false},
		{"Why does Monica think the kiss was a problem ?", false},
		{"What does Joey think about the name ?", false},
		{"What did Rachel say Phoebe said ?", false},
		{"What was the revenue in 2019?", false},
		{"Were Scott Derrickson and Ed Wood of the same nationality?", false},
		{"", false},
		{"?!", false},
		{"discussion", true},
		{"summary" + strings.Repeat(" x", maxBroadQuestion), true},
		{strings.Repeat("x ", maxBroadQuestion) + "summarize the discussion", false}, // read from its start only
		{"Summ\u00e4rize the discussion", true},                                      // "discussion" still
		{"Summ\u00e4rize the meeting", false},                                        // ä is a space: "summ rize"
	}
	for _, c := range cases {
		if got := Broad(c.q); got != c.want {
			t.Errorf("Broad(%.60q) = %v, want %v (normalised %.60q)", c.q, got, c.want, normQuestion(c.q))
		}
	}
}

func TestNormQuestion(t *testing.T) {
	for in, want := range map[string]string{
		"  What’s  the plan?\n": "what's the plan",
		"Grad F: OK -- fine.":   "grad f ok fine",
		"":                      "",
		"¿¡":                    "",
		"A\u00a0b":              "a b",
	} {
		if got := normQuestion(in); got != want {
			t.Errorf("normQuestion(%q) = %q, want %q", in, got, want)
		}
	}
}

// priorMeeting is a meeting with an isolated likely turn (Ann) and a run
// of three somewhat likely ones (Cy, Dee, Eve) after two fillers.
const priorMeeting = "Meeting\n[10:01] Ann: Lunch is at noon.\n[10:02] Bo: Okay.\n[10:03] Bea: Right.\n" +
	"[10:04] Cy: The case is yellow.\n[10:05] Dee: It has a long cord.\n[10:06] Eve: And a rubber grip.\n"

// priorCandidates are priorMeeting's units with Ann's turn at p 0.4, Cy's,
// Dee's and Eve's at 0.3, the fillers at 0.01.
func priorCandidates(t *testing.T, c token.Counter) ([]passage, []sentence) {
	t.Helper()
	ps, ss := wholeCandidates(t, priorMeeting, "Lunch is at noon.", c)
	for i := range ss {
		switch ss[i].text {
		case "Lunch is at noon.":
			ss[i].p = 0.4
		case "The case is yellow.", "It has a long cord.", "And a rubber grip.":
			ss[i].p = 0.3
		}
	}
	return ps, ss
}

// neighbourPrior adds w × the neighbouring turns' values (as they were)
// to each turn's, a passage's first and last turn having one neighbour;
// a context line keeps its value.
func TestNeighbourPrior(t *testing.T) {
	c, err := token.New("")
	if err != nil {
		t.Fatal(err)
	}
	ps, ss := priorCandidates(t, c)
	val := make([]float64, len(ss))
	for i := range ss {
		val[i] = ss[i].p
	}
	neighbourPrior(ps, ss, val, 0.5)
	want := map[string]float64{
		"Lunch is at noon.":   0.4 + 0.5*0.01,
		"Okay.":               0.01 + 0.5*(0.4+0.01),
		"Right.":              0.01 + 0.5*(0.01+0.3),
		"The case is yellow.": 0.3 + 0.5*(0.01+0.3),
		"It has a long cord.": 0.3 + 0.5*(0.3+0.3),
		"And a rubber grip.":  0.3 + 0.5*0.3,
	}
	for i, x := range ss {
		w, ok := want[x.text]
		if x.kind == Context {
			w, ok = 0, true
		}
		if !ok || val[i] < w-1e-12 || val[i] > w+1e-12 {
			t.Errorf("%q (%v): value %v, want %v", x.text, x.kind, val[i], w)
		}
	}

	// a turn of two sentences is raised in proportion to them; a turn
	// worth nothing gets its share evenly
	ps, ss = wholeCandidates(t, "Chat\n[10:01] Ann: One. Two.\n[10:02] Bo: Three.\n", "Three.", c)
	val = make([]float64, len(ss))
	for i, x := range ss {
		switch x.text {
		case "One.":
			val[i] = 0.1
		case "Two.":
			val[i] = 0.3
		case "Three.":
			val[i] = 0
		}
	}
	neighbourPrior(ps, ss, val, 1)
	got := map[string]float64{}
	for i, x := range ss {
		got[x.text] = val[i]
	}
	if got["One."] != 0.1 || got["Two."] != 0.3 || got["Three."] != 0.4 {
		t.Errorf("values %v, want One. 0.1, Two. 0.3 (Ann has no neighbour worth anything), Three. 0.4", got)
	}
}

// With a neighbourhood prior, the middle of a run of likely turns goes
// before an isolated turn the model values more: a budget for two turns
// sends Cy and Dee, not Ann and Cy. The stop counts the model's own p
// either way. Prose is not changed by it.
func TestPackPrior(t *testing.T) {
	c, err := token.New("")
	if err != nil {
		t.Fatal(err)
	}
	ps, ss := priorCandidates(t, c)
	set := packSettings{budget: 1000, whole: TurnUnits}
	off := pack(ps, ss, set, nil, c)
	if got, want := turnOrder(ss, off), []string{"Ann:", "Cy:", "Dee:", "Eve:", "Bo:", "Bea:"}; !slices.Equal(got, want) {
		t.Errorf("without prior: turns chosen %v, want %v", got, want)
	}
	set.prior = 0.5
	on := pack(ps, ss, set, nil, c)
	// Dee 0.6, Cy 0.455, Eve 0.45, Ann 0.405, Bo 0.215, Bea 0.165
	if got, want := turnOrder(ss, on), []string{"Dee:", "Cy:", "Eve:", "Ann:", "Bo:", "Bea:"}; !slices.Equal(got, want) {
		t.Errorf("prior=0.5: turns chosen %v, want %v", got, want)
	}
	if math.Abs(on.keptP-off.keptP) > 1e-12 || on.texts[0] != off.texts[0] {
		t.Errorf("prior=0.5: kept p %v and text %q; without %v and %q", on.keptP, on.texts[0], off.keptP, off.texts[0])
	}
	if on.lent != 6 || off.lent != 0 {
		t.Errorf("sentences valued above their p: %d with the prior, %d without; want 6 and 0", on.lent, off.lent)
	}

	two := "Meeting\n[10:04] Cy: The case is yellow.\n[10:05] Dee: It has a long cord."
	set.budget = c.Count(two) + 4 // the estimate counts a joiner per unit
	if c.Count("Meeting\n[10:01] Ann: Lunch is at noon.\n[10:04] Cy: The case is yellow.\n[10:05] Dee: It has a long cord.") <= set.budget {
		t.Fatalf("three turns fit in %d tokens: no test", set.budget)
	}
	if got := pack(ps, ss, set, nil, c).texts[0]; got != two {
		t.Errorf("prior=0.5, budget %d: sent %q, want %q", set.budget, got, two)
	}
	set.prior = 0
	if got := pack(ps, ss, set, nil, c).texts[0]; !strings.Contains(got, "Ann:") || strings.Contains(got, "Dee:") {
		t.Errorf("without prior, budget %d: sent %q, want Ann's and Cy's turns", set.budget, got)
	}

	// prose: the same choices with or without it
	text := "Ada Lovelace\nShe was born in London. Her father was a poet. She wrote the first program. It ran on no machine."
	ps, ss = wholeCandidates(t, text, "Her father was a poet.", c)
	for _, budget := range []int{12, 20, 40} {
		set := packSettings{budget: budget, beta: 1, whole: TurnUnits}
		off := pack(ps, ss, set, nil, c)
		set.prior, set.run = 1, 0.9
		on := pack(ps, ss, set, nil, c)
		if !slices.Equal(on.order, off.order) || on.texts[0] != off.texts[0] {
			t.Errorf("budget %d: prior=1 sent %q (order %v), without %q (%v)", budget, on.texts[0], on.order, off.texts[0], off.order)
		}
	}
}

// Broad reads any string without panicking, and punctuation and white
// space around the words do not change what it says.
func FuzzBroad(f *testing.F) {
	for _, s := range []string{"Summarize the discussion.", "Who opens the door ?", "What did Ann think of it?", "", "\xff\xfe", "why did  ’ x decide", "Summ\u00e4rize"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		got := Broad(q)
		if len(q) > maxBroadQuestion-4 {
			return
		}
		if again := Broad(" ¿" + q + " ?"); again != got {
			t.Fatalf("Broad(%q) = %v, with punctuation around it %v", q, got, again)
		}
	})
}
