package lengthest

import (
	"os"
	"strings"
	"testing"
)

// TestSummaryPromptMatchesPaper compares the template with the prompt of
// App. A.2.1 of the paper (../shared/papers in the project workspace).
func TestSummaryPromptMatchesPaper(t *testing.T) {
	b, err := os.ReadFile("../../shared/papers/hybrid-rag-context-length.txt")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("paper text missing in CI: %v", err)
		}
		t.Skip("paper text not available")
	}
	text := string(b)
	start := strings.Index(text, "We use the following prompt for the summarization task,")
	if start < 0 {
		t.Fatal("prompt not found in the paper")
	}
	_, block, ok := strings.Cut(text[start:], "```\n")
	block, _, ok2 := strings.Cut(block, "\n```")
	if !ok || !ok2 {
		t.Fatal("prompt's fenced block not found")
	}
	if block != SummaryPrompt {
		t.Fatalf("template differs from the paper\n got:\n%s\nwant:\n%s", SummaryPrompt, block)
	}
}

func TestRenderPrompt(t *testing.T) {
	p := RenderPrompt([]string{"doc {question} one", "doc two"}, "What {num_words}?", 150)
	want := "```\ndoc {question} one\n\ndoc two\n```\nQuestion: What {num_words}?\nAnswer the question based on the provided document.\n" +
		"Be concise and directly address only the specific question asked.\nLimit your response to a maximum of 150 words."
	if p != want {
		t.Fatalf("RenderPrompt:\n%s\nwant:\n%s", p, want)
	}
}
