package llm_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/ctxsel/ctxsel/llm"
)

// Render the factoid QA prompt of Adaptive-k (Appendix A.1.1) from selected
// passages.
func ExampleTemplate_Render() {
	context := llm.FormatContext([]llm.Passage{
		{Label: "paris.txt#0", Text: "Paris is the capital of France."},
		{Label: "rome.txt#2", Text: "Rome is the capital of Italy."},
	})
	prompt, err := llm.FactoidQA.Render("What is the capital of France?", context)
	if err != nil {
		log.Fatal(err)
	}
	_, tail, _ := strings.Cut(prompt, "- **Context:**\n")
	fmt.Println(tail)
	// Output:
	// ```
	// [1] paris.txt#0
	// Paris is the capital of France.
	//
	// [2] rome.txt#2
	// Rome is the capital of Italy.
	// ```
	//
	// - **Question:**
	// ```
	// What is the capital of France?
	// ```
	//
	// **Response:**
	// - **Answer:**
}

// Ask an OpenAI-compatible server (here a stand-in speaking the wire format).
// llm.FromEnv builds the same client from CTXSEL_LLM_BASE_URL,
// CTXSEL_LLM_MODEL and CTXSEL_LLM_API_KEY.
func ExampleNewOpenAI() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"model":"gpt-4o-mini","choices":[{"message":{"role":"assistant","content":"Paris."},"finish_reason":"stop"}],
			"usage":{"prompt_tokens":31,"completion_tokens":2,"total_tokens":33}}`)
	}))
	defer srv.Close()
	c, err := llm.NewOpenAI(llm.Options{BaseURL: srv.URL, Model: "gpt-4o-mini"})
	if err != nil {
		log.Fatal(err)
	}
	r, err := llm.Ask(context.Background(), c, "What is the capital of France?")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Content, r.PromptTokens, r.CompletionTokens)
	// Output: Paris. 31 2
}
