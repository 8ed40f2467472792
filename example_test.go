package ctxsel_test

import (
	"context"
	"fmt"

	"github.com/ctxsel/ctxsel"
	_ "github.com/ctxsel/ctxsel/cutoff" // registers topk, budget, adaptivek, knee, …
)

// Select the passages before the largest drop in similarity, and see why.
func Example() {
	candidates := []ctxsel.Candidate{
		{ID: "intro", Score: 0.31, Tokens: 180},
		{ID: "answer", Score: 0.82, Tokens: 120},
		{ID: "context", Score: 0.79, Tokens: 140},
		{ID: "footnote", Score: 0.30, Tokens: 60},
	}
	curve, err := ctxsel.NewCurve(candidates)
	if err != nil {
		panic(err)
	}
	strategy, caps, err := ctxsel.Parse("adaptivek:buffer=0")
	if err != nil {
		panic(err)
	}
	sel, err := ctxsel.Select(curve, strategy, caps, ctxsel.RankOrder)
	if err != nil {
		panic(err)
	}
	fmt.Println(sel.IDs, sel.Tokens, "of", sel.Explanation.TotalTokens, "tokens")
	fmt.Println(sel.Explanation.Reason)
	// Output:
	// [answer context] 260 of 500 tokens
	// largest gap 0.48 between ranks 1 and 2 (scores 0.79 → 0.31), searched gap indices [0, 3); kept 2 + buffer 0
}

// Caps bound any strategy: here a fixed top-5 that must fit 300 tokens.
func ExampleSelect_caps() {
	curve, _ := ctxsel.NewCurve([]ctxsel.Candidate{
		{ID: "a", Score: 0.9, Tokens: 200}, {ID: "b", Score: 0.8, Tokens: 150}, {ID: "c", Score: 0.7, Tokens: 50},
	})
	strategy, caps, _ := ctxsel.Parse("topk:k=5,max_tokens=300")
	sel, _ := ctxsel.Select(curve, strategy, caps, ctxsel.RankOrder)
	fmt.Println(sel.IDs, sel.Explanation.CapsApplied)
	// Output: [a] [max_tokens]
}

// Whatever a spec names (a strategy, a text selector, a composition), the
// caller runs what it resolved one way; texts are needed only by one that
// reads them.
func ExampleResolved_Runnable() {
	curve, _ := ctxsel.NewCurve([]ctxsel.Candidate{
		{ID: "a", Score: 0.9, Tokens: 200}, {ID: "b", Score: 0.8, Tokens: 150}, {ID: "c", Score: 0.7, Tokens: 50},
	})
	res, err := ctxsel.Resolve("topk:k=3")
	if err != nil {
		panic(err)
	}
	run := res.Runnable()
	q := ctxsel.TextQuery{Curve: curve, Caps: ctxsel.Caps{MaxTokens: 300}} // the caller's cap tightens the spec's
	if run.ReadsTexts() {
		q.Question, q.Texts = "the question", []string{"text of a", "text of b", "text of c"}
	}
	sel, usage, err := run.Select(context.Background(), q)
	if err != nil {
		panic(err)
	}
	fmt.Println(run.Name(), sel.IDs, sel.Tokens, usage.Calls)
	// Output:
	// topk [a] 200 0
}
