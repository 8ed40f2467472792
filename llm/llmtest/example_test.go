package llmtest_test

import (
	"context"
	"fmt"
	"log"

	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/llm/llmtest"
)

// A simulated reader behind a real OpenAI-compatible endpoint: it answers
// only when the prompt holds the question's gold passage. It checks
// plumbing; its answers are no model's accuracy.
func Example() {
	srv := llmtest.New(llmtest.Reader([]llmtest.Question{
		{Question: "What is the capital of France?", Gold: []string{"Paris is the capital of France."}, Answer: "Paris"},
	}, llmtest.ReaderOptions{}))
	defer srv.Close()

	c, _, err := llm.OpenSpec(srv.OpenAISpec("sim"), llm.Options{})
	if err != nil {
		log.Fatal(err)
	}
	for _, ctx := range []string{"Paris is the capital of France.", "Rome is the capital of Italy."} {
		r, err := llm.Ask(context.Background(), c, ctx+"\nQuestion: What is the capital of France?")
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(r.Content)
	}
	srv.Script(llmtest.Fault{Status: 401})
	_, err = llm.Ask(context.Background(), c, "anything")
	fmt.Println(err != nil, srv.Requests())
	// Output:
	// Paris
	// unanswerable
	// true 3
}
