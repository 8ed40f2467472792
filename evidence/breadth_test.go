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
	val := valuesOf(ss)
	neighbourPrior(ps, ss, val, 0.5, 1, 0)
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
	neighbourPrior(ps, ss, val, 1, 0, 0)
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

// With reach, neighbourPrior adds w × the values of every turn up to reach
// away on each side (as they were), not past a passage's edge, weighted
// alike without decay and 1 − decay × (d − 1) / reach at d turns away with
// it; reach 0 reads as 1, and decay does not change the ±1 prior.
func TestNeighbourPriorReach(t *testing.T) {
	c, err := token.New("")
	if err != nil {
		t.Fatal(err)
	}
	// Ann 0.4, Bo 0.01, Bea 0.01, Cy 0.3, Dee 0.3, Eve 0.3
	for _, tc := range []struct {
		reach int
		decay float64
		want  map[string]float64
	}{
		{2, 0, map[string]float64{
			"Lunch is at noon.":   0.4 + 0.5*(0.01+0.01),
			"Okay.":               0.01 + 0.5*(0.4+0.01+0.3),
			"Right.":              0.01 + 0.5*(0.01+0.4+0.3+0.3),
			"The case is yellow.": 0.3 + 0.5*(0.01+0.01+0.3+0.3),
			"It has a long cord.": 0.3 + 0.5*(0.01+0.3+0.3),
			"And a rubber grip.":  0.3 + 0.5*(0.3+0.3),
		}},
		{8, 0, map[string]float64{ // every other turn of the passage
			"Lunch is at noon.":   0.4 + 0.5*0.92,
			"Okay.":               0.01 + 0.5*1.31,
			"Right.":              0.01 + 0.5*1.31,
			"The case is yellow.": 0.3 + 0.5*1.02,
			"It has a long cord.": 0.3 + 0.5*1.02,
			"And a rubber grip.":  0.3 + 0.5*1.02,
		}},
		{2, 0.5, map[string]float64{ // the turn 2 away weighs 1 − 0.5 × 1/2
			"Lunch is at noon.":   0.4 + 0.5*(0.01+0.75*0.01),
			"Okay.":               0.01 + 0.5*(0.4+0.01+0.75*0.3),
			"Right.":              0.01 + 0.5*(0.01+0.75*0.4+0.3+0.75*0.3),
			"The case is yellow.": 0.3 + 0.5*(0.01+0.75*0.01+0.3+0.75*0.3),
			"It has a long cord.": 0.3 + 0.5*(0.3+0.75*0.01+0.3),
			"And a rubber grip.":  0.3 + 0.5*(0.3+0.75*0.3),
		}},
		{8, 1, map[string]float64{ // a triangle: 1, 7/8, 6/8, 5/8, 4/8 at 1 … 5 away
			"Lunch is at noon.":   0.4 + 0.5*(0.01+0.01*7/8+0.3*6/8+0.3*5/8+0.3*4/8),
			"Okay.":               0.01 + 0.5*(0.4+0.01+0.3*7/8+0.3*6/8+0.3*5/8),
			"Right.":              0.01 + 0.5*(0.01+0.4*7/8+0.3+0.3*7/8+0.3*6/8),
			"The case is yellow.": 0.3 + 0.5*(0.01+0.01*7/8+0.4*6/8+0.3+0.3*7/8),
			"It has a long cord.": 0.3 + 0.5*(0.3+0.01*7/8+0.01*6/8+0.4*5/8+0.3),
			"And a rubber grip.":  0.3 + 0.5*(0.3+0.3*7/8+0.01*6/8+0.01*5/8+0.4*4/8),
		}},
	} {
		ps, ss := priorCandidates(t, c)
		val := valuesOf(ss)
		neighbourPrior(ps, ss, val, 0.5, tc.reach, tc.decay)
		for i, x := range ss {
			w, ok := tc.want[x.text]
			if x.kind == Context {
				w, ok = 0, true
			}
			if !ok || math.Abs(val[i]-w) > 1e-12 {
				t.Errorf("reach %d, decay %v: %q (%v): value %v, want %v", tc.reach, tc.decay, x.text, x.kind, val[i], w)
			}
		}
	}
	// reach 0 and 1 are the two turns next to a turn, with or without decay
	ps, ss := priorCandidates(t, c)
	v0, v1, vd := valuesOf(ss), valuesOf(ss), valuesOf(ss)
	neighbourPrior(ps, ss, v0, 1, 0, 0)
	neighbourPrior(ps, ss, v1, 1, 1, 0)
	neighbourPrior(ps, ss, vd, 1, 1, 1)
	if !slices.Equal(v0, v1) || !slices.Equal(v1, vd) {
		t.Errorf("reach 0 %v, reach 1 %v, reach 1 with decay %v", v0, v1, vd)
	}
}

// stretchMeeting holds a likely pair of turns (Ann, Bo at 0.5) apart
// from a stretch of seven turns the model values less (Cy … Ian at 0.2),
// eight fillers (0.01) between them.
const stretchMeeting = "Meeting\n[10:01] Ann: The budget is tight.\n[10:02] Bo: The budget is fixed.\n" +
	"[10:03] Fil: Okay.\n[10:04] Gil: Right.\n[10:05] Hal: Hm.\n[10:05] Jo: Yes.\n" +
	"[10:05] Kim: Sure.\n[10:05] Lou: Mm.\n[10:05] Max: Yep.\n[10:05] Ned: Good.\n" +
	"[10:06] Cy: The case is yellow.\n[10:07] Dee: It has a long cord.\n[10:08] Eve: And a rubber grip.\n[10:09] Fay: The grip is soft.\n" +
	"[10:10] Gus: The cord is grey.\n[10:11] Hue: The case is round.\n[10:12] Ian: The case is light.\n"

// A prior that reads four turns each way starts in the middle of the long
// stretch of likely turns; the ±1 prior starts at the isolated pair the
// model values more. A budget for three turns sends three of the stretch
// with the wide prior, the pair without it.
func TestPackPriorReach(t *testing.T) {
	c, err := token.New("")
	if err != nil {
		t.Fatal(err)
	}
	ps, ss := stretchMeetingAt(t, c, 0.2)
	set := packSettings{budget: 1000, whole: TurnUnits, prior: 1, reach: 1}
	// ±1: Ann 1.01, Bo 1.01 (+0.01), Dee … Hue 0.6, Cy 0.41, Ian 0.4
	if got := turnOrder(ss, pack(ps, ss, set, nil, c))[:2]; !slices.Equal(got, []string{"Ann:", "Bo:"}) && !slices.Equal(got, []string{"Bo:", "Ann:"}) {
		t.Errorf("reach 1: first turns %v, want Ann and Bo", got)
	}
	set.reach = 4
	// ±4: Eve 0.2 + 6 × 0.2 + 2 × 0.01 = 1.42 first, then Fay 1.41 and
	// Gus 1.4; Ann 0.5 + 0.5 + 3 × 0.01 = 1.03, the best filler 0.86
	on := pack(ps, ss, set, nil, c)
	if got := turnOrder(ss, on)[:3]; !slices.Equal(got, []string{"Eve:", "Fay:", "Gus:"}) {
		t.Errorf("reach 4: first turns %v (order %v), want Eve, Fay, Gus", got, turnOrder(ss, on))
	}
	three := "Meeting\n[10:08] Eve: And a rubber grip.\n[10:09] Fay: The grip is soft.\n[10:10] Gus: The cord is grey."
	set.budget = c.Count(three) + 6 // the estimate counts a joiner per unit
	if got := pack(ps, ss, set, nil, c).texts[0]; got != three {
		t.Errorf("reach 4, budget %d: sent %q, want %q", set.budget, got, three)
	}
	set.reach = 1
	if got := pack(ps, ss, set, nil, c).texts[0]; !strings.Contains(got, "Ann:") || !strings.Contains(got, "Bo:") {
		t.Errorf("reach 1, budget %d: sent %q, want Ann's and Bo's turns", set.budget, got)
	}
}

// twoPassages are two one-passage candidate sets joined: a's passage
// first (score sa), b's second (score sb).
func twoPassages(t *testing.T, c token.Counter, a, aBest string, sa float64, b, bBest string, sb float64) ([]passage, []sentence) {
	t.Helper()
	psA, ssA := wholeCandidates(t, a, aBest, c)
	psB, ssB := wholeCandidates(t, b, bBest, c)
	psA[0].score, psB[0].score, psB[0].rank, psB[0].input = sa, sb, 1, 1
	psB[0].first = len(ssA)
	for i := range ssB {
		ssB[i].passage = 1
		for k := range ssB[i].needs {
			ssB[i].needs[k] += len(ssA)
		}
	}
	return append(psA, psB...), append(ssA, ssB...)
}

// The passage prior multiplies a turn's value by 1 + γ × its passage's
// normalised score: a turn of the best passage goes before a likelier
// turn of the worst, and prose keeps its value; equal scores change
// nothing.
func TestPassagePrior(t *testing.T) {
	c, err := token.New("")
	if err != nil {
		t.Fatal(err)
	}
	ps, ss := twoPassages(t, c,
		"Design\n[10:01] Ann: The case is yellow.\n[10:02] Bo: Okay.\n", "The case is yellow.", 2,
		"Lunch\n[11:01] Cy: Lunch is at noon.\n[11:02] Dee: Fine.\n", "Lunch is at noon.", 1)
	for i := range ss {
		if ss[i].text == "The case is yellow." {
			ss[i].p = 0.3 // Cy's 0.9 is three times likelier
		}
	}
	val := valuesOf(ss)
	passagePrior(ps, ss, val, 3)
	for i, x := range ss {
		want := x.p
		if x.kind == Turn && x.passage == 0 {
			want = 4 * x.p // the best passage: 1 + 3 × 1
		}
		if math.Abs(val[i]-want) > 1e-12 {
			t.Errorf("%q: value %v, want %v", x.text, val[i], want)
		}
	}
	set := packSettings{budget: 1000, whole: TurnUnits}
	if got := turnOrder(ss, pack(ps, ss, set, nil, c))[0]; got != "Cy:" {
		t.Errorf("without the passage prior: first turn %s, want Cy", got)
	}
	set.passage = 3
	on := pack(ps, ss, set, nil, c)
	if got := turnOrder(ss, on)[0]; got != "Ann:" {
		t.Errorf("passage=3: first turn %s, want Ann", got)
	}
	set.passage = 1 // Ann 0.6 < Cy 0.9
	if got := turnOrder(ss, pack(ps, ss, set, nil, c))[0]; got != "Cy:" {
		t.Errorf("passage=1: first turn %s, want Cy", got)
	}

	// equal scores, and prose: values unchanged
	ps[1].score = ps[0].score
	for i := range ss {
		val[i] = ss[i].p
	}
	passagePrior(ps, ss, val, 3)
	for i, x := range ss {
		if val[i] != x.p {
			t.Errorf("equal scores: %q valued %v, want %v", x.text, val[i], x.p)
		}
	}
	ps, ss = twoPassages(t, c, "Ada Lovelace\nShe was born in London. She wrote notes.", "She wrote notes.", 2,
		"Bo Diddley\nHe was born in Mississippi. He played guitar.", "He played guitar.", 1)
	for i := range ss {
		val[i] = ss[i].p
	}
	passagePrior(ps, ss, val[:len(ss)], 3)
	for i, x := range ss {
		if val[i] != x.p {
			t.Errorf("prose: %q valued %v, want %v", x.text, val[i], x.p)
		}
	}
}

// stretchCandidates are stretchMeeting's units: Ann and Bo at 0.5, the
// seven turns Cy … Ian at 0.25, the fillers at 0.01.
func stretchCandidates(t *testing.T, c token.Counter) ([]passage, []sentence) {
	t.Helper()
	return stretchMeetingAt(t, c, 0.25)
}

// stretchMeetingAt is stretchMeeting's candidates with the two budget
// turns at p 0.5, the seven turns Cy … Ian at p, the fillers at 0.01.
func stretchMeetingAt(t *testing.T, c token.Counter, p float64) ([]passage, []sentence) {
	t.Helper()
	ps, ss := wholeCandidates(t, stretchMeeting, "The budget is tight.", c)
	for i := range ss {
		switch ss[i].text {
		case "The budget is tight.", "The budget is fixed.":
			ss[i].p = 0.5
		case "The case is yellow.", "It has a long cord.", "And a rubber grip.", "The grip is soft.", "The cord is grey.", "The case is round.", "The case is light.":
			ss[i].p = p
		}
	}
	return ps, ss
}

// valuesOf is each candidate's p: the values packing starts from.
func valuesOf(ss []sentence) []float64 {
	val := make([]float64, len(ss))
	for i := range ss {
		val[i] = ss[i].p
	}
	return val
}

// stretch is the contiguous window of turns, within the limit, whose
// values sum highest: the likely pair when only two turns fit, five of
// the seven less likely turns when five fit, every turn when all fit;
// nothing when no turn fits, and nothing in prose.
func TestStretch(t *testing.T) {
	c, err := token.New("")
	if err != nil {
		t.Fatal(err)
	}
	ps, ss := stretchCandidates(t, c)
	val := valuesOf(ss)
	none := func(int) bool { return false }
	cost := func(m []int) int { // what stretch counts: sentences, prefixes, header
		n := ps[0].headerTokens
		for _, i := range m {
			n += ss[i].tokens + ss[i-1].tokens
		}
		return n
	}
	idx := func(texts ...string) []int {
		var m []int
		for i, x := range ss {
			if slices.Contains(texts, x.text) {
				m = append(m, i)
			}
		}
		return m
	}
	pair := idx("The budget is tight.", "The budget is fixed.")
	if got := stretch(ps, ss, val, cost(pair), none); !slices.Equal(got, pair) {
		t.Errorf("limit %d: %v, want the pair %v", cost(pair), got, pair)
	}
	five := idx("The case is yellow.", "It has a long cord.", "And a rubber grip.", "The grip is soft.", "The cord is grey.")
	got := stretch(ps, ss, val, cost(five), none)
	sum := 0.0
	for n, i := range got {
		sum += val[i]
		if ss[i].kind != Turn || (n > 0 && got[n-1] != i-2) {
			t.Errorf("limit %d: %v is not a run of turns", cost(five), got)
		}
	}
	if sum < 1.25-1e-9 || cost(got) > cost(five) || slices.Contains(got, pair[0]) {
		t.Errorf("limit %d: %v (worth %v, %d tokens), want five of the 0.25 turns", cost(five), got, sum, cost(got))
	}
	all := idx()
	for i, x := range ss {
		if x.kind == Turn {
			all = append(all, i)
		}
	}
	if got := stretch(ps, ss, val, cost(all), none); !slices.Equal(got, all) {
		t.Errorf("limit %d: %v, want every turn", cost(all), got)
	}
	if got := stretch(ps, ss, val, ps[0].headerTokens+2, none); got != nil {
		t.Errorf("limit of a header: %v, want none", got)
	}
	// a turn skipped (sent from elsewhere) is neither counted nor returned
	if got := stretch(ps, ss, val, cost(pair), func(i int) bool { return i == pair[0] }); slices.Contains(got, pair[0]) {
		t.Errorf("Ann skipped: %v", got)
	}
	pps, pss := wholeCandidates(t, "Ada Lovelace\nShe was born in London. She wrote notes.", "She wrote notes.", c)
	if got := stretch(pps, pss, []float64{1, 1}, 1000, none); got != nil {
		t.Errorf("prose: %v, want none", got)
	}
}

// With a stretch, pack keeps the best window of turns first and fills the
// rest unit by unit: with room for five of the 0.25 turns it sends them,
// not the likely pair it sends first without one. Prose is unchanged.
func TestPackStretch(t *testing.T) {
	c, err := token.New("")
	if err != nil {
		t.Fatal(err)
	}
	ps, ss := stretchCandidates(t, c)
	five := "Meeting\n[10:06] Cy: The case is yellow.\n[10:07] Dee: It has a long cord.\n[10:08] Eve: And a rubber grip.\n[10:09] Fay: The grip is soft.\n[10:10] Gus: The cord is grey."
	set := packSettings{budget: c.Count(five) + 10, whole: TurnUnits}
	off := pack(ps, ss, set, nil, c)
	if got := turnOrder(ss, off); len(got) < 2 || got[0] != "Ann:" || got[1] != "Bo:" || off.stretched != 0 {
		t.Errorf("without a stretch: turns chosen %v (stretched %d), want Ann and Bo first", got, off.stretched)
	}
	set.stretch = 1
	on := pack(ps, ss, set, nil, c)
	got := turnOrder(ss, on)
	if on.stretched < 5 || slices.Contains(got, "Ann:") || !slices.Contains(got, "Eve:") || on.total > set.budget {
		t.Errorf("stretch=1: turns chosen %v (%d sentences stretched, %d tokens of %d), want five of Cy … Ian", got, on.stretched, on.total, set.budget)
	}
	if math.Abs(on.keptP-0.25*float64(on.stretched)) > 0.05 {
		t.Errorf("stretch=1: kept p %v for %d stretched sentences", on.keptP, on.stretched)
	}

	text := "Ada Lovelace\nShe was born in London. Her father was a poet. She wrote the first program. It ran on no machine."
	ps, ss = wholeCandidates(t, text, "Her father was a poet.", c)
	for _, budget := range []int{12, 20, 40} {
		set := packSettings{budget: budget, beta: 1, whole: TurnUnits}
		off := pack(ps, ss, set, nil, c)
		set.stretch, set.passage = 1, 3
		on := pack(ps, ss, set, nil, c)
		if !slices.Equal(on.order, off.order) || on.texts[0] != off.texts[0] || on.stretched != 0 {
			t.Errorf("prose, budget %d: stretch sent %q (order %v), without %q (%v)", budget, on.texts[0], on.order, off.texts[0], off.order)
		}
	}
}

// The chunk prior multiplies a turn's value by 1 + γ2 × its passage's
// normalised chunk value, the mean of its best 5 turns' model p (a turn's
// p the sum of its sentences'), read from p and not from values another
// prior raised, among the passages that hold turns: a passage of one
// likely turn and six unlikely ones stands below five fairly likely
// turns (its best turn, its sum or the mean of all its turns would rank
// it otherwise), a passage of two turns averages those two, and prose
// neither moves nor sets the scale.
func TestChunkPrior(t *testing.T) {
	c, err := token.New("")
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{
		"Design\n[10:01] Ann: Alpha one.\n[10:02] Bo: Alpha two.\n[10:03] Cy: Alpha three.\n[10:04] Dee: Alpha four.\n" +
			"[10:05] Eve: Alpha five.\n[10:06] Fay: Alpha six.\n[10:07] Gus: Alpha seven.\n",
		"Budget\n[11:01] Hal: Beta one. Beta more.\n[11:02] Ida: Beta two.\n[11:03] Jo: Beta three.\n[11:04] Kim: Beta four.\n[11:05] Lu: Beta five.\n",
		"Lunch\n[12:01] Max: Gamma one.\n[12:02] Ned: Gamma two.\n",
		"Ada Lovelace\nShe was born in London. She wrote notes.",
	}
	p := map[string]float64{"Alpha one.": 0.9, "Beta one.": 0.2, "Beta more.": 0.1, "Gamma one.": 0.1, "Gamma two.": 0.1, "She was born in London.": 0.95,
		"She wrote notes.": 0.01}
	for _, a := range []string{"two", "three", "four", "five", "six", "seven"} {
		p["Alpha "+a+"."] = 0.1
	}
	for _, b := range []string{"two", "three", "four", "five"} {
		p["Beta "+b+"."] = 0.3
	}
	var ps []passage
	var ss []sentence
	for n, text := range texts {
		pp, s1 := wholeCandidates(t, text, []string{"Alpha one.", "Beta one.", "Gamma one.", "She wrote notes."}[n], c)
		pp[0].rank, pp[0].input, pp[0].first, pp[0].score = n, n, len(ss), float64(4-n)
		for i := range s1 {
			s1[i].passage = n
			for k := range s1[i].needs {
				s1[i].needs[k] += len(ss)
			}
			if s1[i].kind != Context {
				v, ok := p[s1[i].text]
				if !ok {
					t.Fatalf("no p for %q", s1[i].text)
				}
				s1[i].p = v
			}
		}
		ps, ss = append(ps, pp...), append(ss, s1...)
	}
	// chunk values: Design (0.9 + 4 × 0.1) / 5 = 0.26, Budget 0.3, Lunch 0.1
	// (the worst), so the multipliers at γ2 = 2 are 1 + 2 × 0.8, 3 and 1
	want := []float64{2.6, 3, 1, 1}
	val := valuesOf(ss)
	for i := range val {
		if ss[i].passage == 0 {
			val[i] *= 7 // raised by another prior: the chunk value reads p, not this
		}
	}
	chunkPrior(ps, ss, val, 2)
	for i, x := range ss {
		w := x.p
		if x.passage == 0 {
			w *= 7
		}
		if x.kind == Turn {
			w *= want[x.passage]
		}
		if math.Abs(val[i]-w) > 1e-12 {
			t.Errorf("passage %d, %q: value %v, want %v", x.passage, x.text, val[i], w)
		}
	}

	// equal chunk values, and prose alone: values unchanged
	for i := range ss {
		if ss[i].kind == Turn {
			ss[i].p = 0.3 // every turn as Budget's, Hal's two sentences 0.15 each
			if ss[i].text == "Beta one." || ss[i].text == "Beta more." {
				ss[i].p = 0.15
			}
		}
	}
	val = valuesOf(ss)
	chunkPrior(ps, ss, val, 2)
	for i, x := range ss {
		if val[i] != x.p {
			t.Errorf("equal chunk values: %q valued %v, want %v", x.text, val[i], x.p)
		}
	}
	ps, ss = twoPassages(t, c, "Ada Lovelace\nShe was born in London. She wrote notes.", "She wrote notes.", 2,
		"Bo Diddley\nHe was born in Mississippi. He played guitar.", "He played guitar.", 1)
	val = valuesOf(ss)
	chunkPrior(ps, ss, val, 2)
	for i, x := range ss {
		if val[i] != x.p {
			t.Errorf("prose: %q valued %v, want %v", x.text, val[i], x.p)
		}
	}
}
