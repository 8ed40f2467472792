package selfroute_test

import (
	"context"
	"fmt"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/selfroute"
)

// A reader that declines the top-2 passages is asked again with the long
// context; both calls are reported.
func ExampleRoute() {
	top := ctxsel.Selection{K: 2, Indices: []int{3, 0}}
	full := ctxsel.Selection{K: 6, Indices: []int{0, 1, 2, 3, 4, 5}}
	read := func(_ context.Context, sel ctxsel.Selection) (llm.Response, error) {
		if sel.K < 6 {
			return llm.Response{Content: "unanswerable", PromptTokens: 300}, nil
		}
		return llm.Response{Content: "Bob Cratchit", PromptTokens: 900}, nil
	}
	res, err := selfroute.Route(context.Background(), top, full, read)
	if err != nil {
		panic(err)
	}
	tokens := 0
	for _, st := range res.Steps {
		tokens += st.Reply.PromptTokens
	}
	fmt.Println(res.Routed(), res.Final().Selection.K, res.Final().Reply.Content, tokens)
	// Output: true 6 Bob Cratchit 1200
}
