package evidence_test

import (
	"context"
	"fmt"

	"github.com/ctxsel/ctxsel"
	_ "github.com/ctxsel/ctxsel/cutoff" // registers topk
	"github.com/ctxsel/ctxsel/evidence"
	"github.com/ctxsel/ctxsel/index/indextest"
	"github.com/ctxsel/ctxsel/token"
)

// Keep the sentences that answer the question, each passage's title once,
// within 45 tokens. (A real deployment embeds with the embedded USE-lite
// model, wrapped in embed/cache; a test embedder keeps this example fast.)
func Example() {
	texts := []string{
		"Ada Lovelace\nAda Lovelace was an English mathematician. She was born in London in 1815. She worked with Charles Babbage on the Analytical Engine.",
		"Charles Babbage\nCharles Babbage was an English polymath. He designed the Difference Engine.",
		"Paris\nParis is the capital of France.",
	}
	counter, _ := token.New("")
	cands := make([]ctxsel.Candidate, len(texts))
	for i, t := range texts {
		cands[i] = ctxsel.Candidate{ID: fmt.Sprint("p", i), Score: 1 / float64(i+1), Tokens: counter.Count(t)}
	}
	curve, _ := ctxsel.NewCurve(cands)
	sel, err := evidence.New(evidence.Options{Budget: 45, Embedder: indextest.HashEmbedder{}, Counter: counter})
	if err != nil {
		panic(err)
	}
	out, err := sel.SelectTexts(context.Background(), ctxsel.TextQuery{Question: "Where was Ada Lovelace born?", Curve: curve, Texts: texts})
	if err != nil {
		panic(err)
	}
	for i, ev := range out.Evidence {
		fmt.Printf("%s: %d of %d tokens\n%s\n", out.IDs[i], ev.Tokens, ev.PassageTokens, ev.Text)
	}
	fmt.Println("sent", out.Tokens, "tokens")
	// Output:
	// p0: 37 of 37 tokens
	// Ada Lovelace
	// Ada Lovelace was an English mathematician. She was born in London in 1815. She worked with Charles Babbage on the Analytical Engine.
	// sent 37 tokens
}

// Resolve a spec — alone or composed after a passage strategy — with the
// dependencies the evidence kind asks for: the embedder (required), the
// token counter and the model (optional).
func Example_resolve() {
	texts := []string{
		"Ada Lovelace\nAda Lovelace was an English mathematician. She was born in London in 1815. She worked with Charles Babbage on the Analytical Engine.",
		"Charles Babbage\nCharles Babbage was an English polymath. He designed the Difference Engine.",
		"Paris\nParis is the capital of France.",
	}
	counter, _ := token.New("")
	cands := make([]ctxsel.Candidate, len(texts))
	for i, t := range texts {
		cands[i] = ctxsel.Candidate{ID: fmt.Sprint("p", i), Score: 1 / float64(i+1), Tokens: counter.Count(t)}
	}
	curve, _ := ctxsel.NewCurve(cands)
	r := ctxsel.Resolver{Deps: ctxsel.DepsOf(map[string]any{
		ctxsel.DepEmbedder: indextest.HashEmbedder{}, // the embedded USE-lite model in a deployment
		ctxsel.DepCounter:  counter,
	})}
	res, err := r.Resolve("topk:k=2+evidence:budget=30") // import cutoff for topk
	if err != nil {
		panic(err)
	}
	out, err := res.Selector.SelectTexts(context.Background(), ctxsel.TextQuery{Question: "Where was Ada Lovelace born?", Curve: curve, Texts: texts})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Spec)
	for i, ev := range out.Evidence {
		fmt.Printf("%s: %s\n%s\n", out.IDs[i], ev.Why, ev.Text)
	}
	// Output:
	// topk:k=2+evidence:budget=30
	// p0: kept 2 of 3 sentences of the passage ranked 0 (weakest kept p=0.050, best left out p=0.023)
	// Ada Lovelace
	// Ada Lovelace was an English mathematician. She was born in London in 1815.
}
