package evidence

import (
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/token"
)

// runMeeting is a meeting whose second turn holds the evidence; the turn
// after it is long, the last two are short.
const runMeeting = "Meeting\n[10:01] Ann: So what about lunch.\n[10:02] Bo: The remote needs a battery.\n" +
	"[10:03] Cy: It could be a rubber case in yellow with a long cord, made in the same plant as the last one.\n" +
	"[10:04] Dee: Lunch is at noon today.\n[10:05] Eve: Okay.\n"

// turnOrder is the speakers of the turns pk chose, in the order chosen.
func turnOrder(ss []sentence, pk *packing) []string {
	var who []string
	for _, i := range pk.order {
		if ss[i].kind == Turn {
			who = append(who, strings.Fields(ss[i-1].text)[1])
		}
	}
	return who
}

// With run, a kept turn's neighbours go before turns the model values as
// much but that are cheaper, and the next ones out after them: the run
// around the evidence is sent first. Without run, the cheap turns go
// first. The stop counts the model's own p either way.
func TestPackRun(t *testing.T) {
	c, err := token.New("")
	if err != nil {
		t.Fatal(err)
	}
	ps, ss := wholeCandidates(t, runMeeting, "The remote needs a battery.", c)
	set := packSettings{budget: 1000, beta: 1, whole: TurnUnits}

	off := pack(ps, ss, set, nil, c)
	if got, want := turnOrder(ss, off), []string{"Bo:", "Eve:", "Ann:", "Dee:", "Cy:"}; !slices.Equal(got, want) {
		t.Errorf("without run: turns chosen %v, want %v", got, want)
	}

	set.run = 0.5
	on := pack(ps, ss, set, nil, c)
	// Bo lends Ann and Cy 0.45 each; Ann is cheaper. Then Cy, then Dee
	// (lent 0.225 by Cy), then Eve (lent 0.1125 by Dee).
	if got, want := turnOrder(ss, on), []string{"Bo:", "Ann:", "Cy:", "Dee:", "Eve:"}; !slices.Equal(got, want) {
		t.Errorf("run=0.5: turns chosen %v, want %v", got, want)
	}
	if on.keptP != off.keptP || on.texts[0] != off.texts[0] {
		t.Errorf("run=0.5: kept p %v and text %q; without run %v and %q", on.keptP, on.texts[0], off.keptP, off.texts[0])
	}

	// a budget for Bo's turn and one more: the neighbour with run, the
	// cheapest turn without
	bo := "Meeting\n[10:02] Bo: The remote needs a battery."
	set.budget = c.Count(bo+"\n[10:01] Ann: So what about lunch.") + 4 // the estimate counts a joiner per unit
	if c.Count(bo+"\n[10:01] Ann: So what about lunch.\n[10:05] Eve: Okay.") <= set.budget {
		t.Fatalf("Ann's and Eve's turns fit in %d tokens: no test", set.budget)
	}
	if got := pack(ps, ss, set, nil, c).texts[0]; got != "Meeting\n[10:01] Ann: So what about lunch.\n[10:02] Bo: The remote needs a battery." {
		t.Errorf("run=0.5, budget %d: sent %q", set.budget, got)
	}
	set.run = 0
	if got := pack(ps, ss, set, nil, c).texts[0]; !strings.Contains(got, "Eve: Okay.") || strings.Contains(got, "Ann:") {
		t.Errorf("without run, budget %d: sent %q, want Bo's and Eve's turns", set.budget, got)
	}
}

// Prose has no turns: run changes nothing there.
func TestPackRunProse(t *testing.T) {
	c, err := token.New("")
	if err != nil {
		t.Fatal(err)
	}
	text := "Ada Lovelace\nShe was born in London. Her father was a poet. She wrote the first program. It ran on no machine."
	ps, ss := wholeCandidates(t, text, "Her father was a poet.", c)
	for _, budget := range []int{12, 20, 40} {
		set := packSettings{budget: budget, beta: 1, whole: TurnUnits}
		off := pack(ps, ss, set, nil, c)
		set.run = 0.9
		on := pack(ps, ss, set, nil, c)
		if !slices.Equal(on.order, off.order) || on.texts[0] != off.texts[0] {
			t.Errorf("budget %d: run=0.9 sent %q (order %v), without %q (%v)", budget, on.texts[0], on.order, off.texts[0], off.order)
		}
	}
}

// turnAt and neighbourTurn step over a turn's prefix to the next turn's
// sentences, and stop at a passage's ends.
func TestNeighbourTurn(t *testing.T) {
	c, err := token.New("")
	if err != nil {
		t.Fatal(err)
	}
	text := "Chat\n[10:01] Ann: One. Two.\n[10:02] Bo: Three.\n[10:03] Cy: Four. Five. Six.\n"
	ps, ss := wholeCandidates(t, text, "Three.", c)
	of := func(s string) int {
		i := slices.IndexFunc(ss, func(x sentence) bool { return x.text == s })
		if i < 0 {
			t.Fatalf("no unit %q", s)
		}
		return i
	}
	tr, ok := turnAt(ps, ss, of("Five."))
	if !ok || tr != [2]int{of("Four."), of("Six.") + 1} {
		t.Errorf("turnAt(Five.) = %v, %v", tr, ok)
	}
	if _, ok := turnAt(ps, ss, of("Three.")-1); ok {
		t.Errorf("a prefix read as a turn")
	}
	bo, _ := turnAt(ps, ss, of("Three."))
	if nb, ok := neighbourTurn(ps, ss, bo, -1); !ok || nb != [2]int{of("One."), of("Two.") + 1} {
		t.Errorf("before Bo: %v, %v", nb, ok)
	}
	if nb, ok := neighbourTurn(ps, ss, bo, 1); !ok || nb != tr {
		t.Errorf("after Bo: %v, %v", nb, ok)
	}
	if _, ok := neighbourTurn(ps, ss, tr, 1); ok {
		t.Errorf("a turn after the last")
	}
	ann, _ := turnAt(ps, ss, of("One."))
	if _, ok := neighbourTurn(ps, ss, ann, -1); ok {
		t.Errorf("a turn before the first")
	}
}
