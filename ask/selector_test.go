package ask_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/ask"
	"github.com/ctxsel/ctxsel/index/indextest"
)

// lastText picks the candidate whose text contains a word, reading texts
// as an LLM picker would: it checks that ask hands a TextSelector the
// question and every candidate's text.
type lastText struct {
	word     string
	question string
}

func (l *lastText) Name() string { return "lastText" }

func (l *lastText) SelectTexts(_ context.Context, q ctxsel.TextQuery) (ctxsel.Selection, error) {
	l.question = q.Question
	var set []int
	for i, t := range q.Texts {
		if strings.Contains(t, l.word) {
			set = append(set, i)
		}
	}
	return ctxsel.SelectSet(q.Curve, set, q.Caps, q.Order, ctxsel.Explanation{Strategy: "lastText", Reason: "texts with " + l.word})
}

func TestAskWithTextSelector(t *testing.T) {
	sel := &lastText{word: "crater"}
	a, err := ask.Ask(context.Background(), build(t), indextest.HashEmbedder{}, "Etna volcano", ask.Options{Resolved: ctxsel.Resolved{Kind: ctxsel.SelectorKind, Selector: sel}})
	if err != nil {
		t.Fatal(err)
	}
	if sel.question != "Etna volcano" || a.Selection.Explanation.Strategy != "lastText" || len(a.Passages) == 0 {
		t.Fatalf("question %q, selection %+v", sel.question, a.Selection)
	}
	for _, p := range a.Passages {
		if !strings.Contains(p.Text, "crater") {
			t.Fatalf("passage %q selected", p.Text)
		}
	}
}
