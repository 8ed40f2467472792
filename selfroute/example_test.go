package selfroute_test

import (
	"context"
	"fmt"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/selfroute"
)

// A reader that declines the first context is asked again with the long
// context and the long-context prompt; both calls are reported.
func ExampleSpec_Route() {
	sp, err := ctxsel.ParseSpec("selfroute:tokens=5000,prompt=adaptivek")
	if err != nil {
		panic(err)
	}
	route, err := selfroute.ParseSpec(sp)
	if err != nil {
		panic(err)
	}
	first := ctxsel.Selection{K: 2, Indices: []int{3, 0}}
	full := ctxsel.Selection{K: 6, Indices: []int{0, 1, 2, 3, 4, 5}}
	read := func(_ context.Context, sel ctxsel.Selection, prompt llm.Template) (llm.Response, error) {
		if prompt == selfroute.TemplateAdaptiveK {
			return llm.Response{Content: "- **Answer:** The question is unanswerable.", PromptTokens: 300}, nil
		}
		return llm.Response{Content: "Bob Cratchit", PromptTokens: 900}, nil
	}
	res, err := route.Route(context.Background(), first, full, route.Prompts("", llm.FactoidQA), read)
	if err != nil {
		panic(err)
	}
	tokens := 0
	for _, st := range res.Steps {
		tokens += st.Reply.PromptTokens
	}
	fmt.Println(route, res.Routed(), res.Final().Selection.K, res.Final().Reply.Content, tokens)
	// Output: selfroute:prompt=adaptivek,tokens=5000 true 6 Bob Cratchit 1200
}
