package evidence

import (
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/token"
)

// wholeChat is a chat log whose first turn holds four sentences, one of
// them the evidence.
const wholeChat = "Team chat\n[10:01] Ann: Hello all. The deploy is on Friday. It starts at noon. Bring snacks.\n[10:02] Bo: Thanks. Noted.\n"

// wholeCandidates splits text as the selector does and scores its units:
// the sentence best gets p 0.9, every other unit 0.01, context lines 0.
func wholeCandidates(t *testing.T, text, best string, c token.Counter) ([]passage, []sentence) {
	t.Helper()
	u := Split(text)
	if u.Header == nil {
		t.Fatalf("no header in %q", text)
	}
	p := passage{text: text, units: u, n: len(u.Sentences), title: text[u.Header[0]:u.Header[1]]}
	p.header, p.headerTokens = p.title, c.Count(p.title)+1
	var ss []sentence
	found := false
	for j, sp := range u.Sentences {
		x := sentence{index: j, span: sp, text: text[sp[0]:sp[1]], kind: u.Kind(j), p: 0.01}
		x.tokens = c.Count(x.text) + joinerTokens
		if u.Needs != nil {
			x.needs = u.Needs[j]
		}
		switch {
		case x.kind == Context:
			x.p = 0
		case x.text == best:
			x.p, found = 0.9, true
		}
		ss = append(ss, x)
	}
	if !found {
		t.Fatalf("no unit %q in %q", best, text)
	}
	return []passage{p}, ss
}

// Without whole a turn's best sentence is sent alone, a fragment of the
// turn under its prefix; with whole=turn the turn is sent whole, its
// prefix once, within the budget, counted exactly.
func TestPackWholeTurn(t *testing.T) {
	c, err := token.New("")
	if err != nil {
		t.Fatal(err)
	}
	const best = "The deploy is on Friday."
	ps, ss := wholeCandidates(t, wholeChat, best, c)
	set := packSettings{budget: 200, beta: 1, stop: 0.5}

	part := pack(ps, ss, set, nil, c)
	if want := "Team chat\n[10:01] Ann:" + Gap + best; part.texts[0] != want {
		t.Errorf("without whole: sent %q, want %q", part.texts[0], want)
	}

	set.whole = TurnUnits
	whole := pack(ps, ss, set, nil, c)
	turn := "[10:01] Ann: Hello all. The deploy is on Friday. It starts at noon. Bring snacks."
	if want := "Team chat\n" + turn; whole.texts[0] != want {
		t.Errorf("whole=turn: sent %q, want %q", whole.texts[0], want)
	}
	if n := strings.Count(whole.texts[0], "[10:01] Ann:"); n != 1 {
		t.Errorf("whole=turn: the prefix sent %d times", n)
	}
	if strings.Contains(whole.texts[0], "Bo:") {
		t.Errorf("whole=turn: Bo's turn sent though the stop was reached: %q", whole.texts[0])
	}
	for _, pk := range []*packing{part, whole} {
		if pk.total > set.budget || pk.total != c.Count(pk.texts[0]) {
			t.Errorf("sent %d tokens (counted %d) of a budget of %d", pk.total, c.Count(pk.texts[0]), set.budget)
		}
	}

	// a budget the turn does not fit in, the sentence does: the sentence
	// is sent alone, not nothing
	set.budget = c.Count(part.texts[0]) + 2
	if c.Count("Team chat\n"+turn) <= set.budget {
		t.Fatalf("the turn fits in %d tokens: no test", set.budget)
	}
	tight := pack(ps, ss, set, nil, c)
	if tight.texts[0] != part.texts[0] || tight.total > set.budget {
		t.Errorf("whole=turn, budget %d: sent %q (%d tokens), want %q", set.budget, tight.texts[0], tight.total, part.texts[0])
	}
}

// A list item's sentences are sent whole with whole=item, not with
// whole=turn.
func TestPackWholeItem(t *testing.T) {
	c, err := token.New("")
	if err != nil {
		t.Fatal(err)
	}
	text := "Steps\n- Open the lid. Remove the filter. Rinse it.\n- Close the lid.\n- Press start."
	ps, ss := wholeCandidates(t, text, "Remove the filter.", c)
	set := packSettings{budget: 200, beta: 1, stop: 0.5, whole: TurnUnits}
	if got, want := pack(ps, ss, set, nil, c).texts[0], "Steps\n- Open the lid. Remove the filter."; !strings.HasSuffix(got, "Remove the filter.") || strings.Contains(got, "Rinse") {
		t.Errorf("whole=turn on a list: sent %q, want the sentence alone (%q)", got, want)
	}
	set.whole = ItemUnits
	if got, want := pack(ps, ss, set, nil, c).texts[0], "Steps\n- Open the lid. Remove the filter. Rinse it."; got != want {
		t.Errorf("whole=item: sent %q, want %q", got, want)
	}
}

// When the exact count crosses the budget the estimates fitted in, a
// group is given back whole: every turn is sent whole or not at all.
func TestPackWholeGivesBackGroups(t *testing.T) {
	text := "Team chat\n[10:01] Ann: Ready here. Going soon. Leaving today.\n[10:02] Bo: Lunch first. Then the deploy.\n[10:03] Cy: Fine by me. See you. Bye now.\n"
	ps, ss := wholeCandidates(t, text, "Then the deploy.", byteCounter{})
	for i := range ss {
		ss[i].tokens = 1 // every group seems to fit
	}
	const budget = 80 // Bo's turn and Ann's first sentence fit, not Ann's whole turn
	pk := pack(ps, ss, packSettings{budget: budget, whole: TurnUnits}, nil, byteCounter{})
	if pk.fixups == 0 || pk.total > budget {
		t.Fatalf("%d given back, %d of %d tokens sent", pk.fixups, pk.total, budget)
	}
	groups := wholeGroups(ps, ss, TurnUnits)
	for i := range ss {
		g := groups[i]
		for k := g[0]; k < g[1]; k++ {
			if pk.kept[k] != pk.kept[i] {
				t.Fatalf("turn %q sent in part: %q", text[ss[g[0]].span[0]:ss[g[1]-1].span[1]], pk.texts[0])
			}
		}
	}
	if !strings.Contains(pk.texts[0], "Bo: Lunch first. Then the deploy.") {
		t.Errorf("the best turn was given back: %q", pk.texts[0])
	}
}
