package llm

import (
	"os"
	"strings"
	"testing"
)

// TestFactoidQAMatchesPaper compares the template with Appendix A.1.1 of the
// paper when the text is at hand (../shared/papers in the project
// workspace), ignoring trailing white space on lines.
func TestFactoidQAMatchesPaper(t *testing.T) {
	b, err := os.ReadFile("../../shared/papers/adaptive-k.txt")
	if err != nil {
		t.Skip("paper text not available")
	}
	text := string(b)
	start := strings.Index(text, "A.1.1 Prompt template for the factoid QA tasks")
	end := strings.Index(text, "A.1.2 ")
	if start < 0 || end < start {
		t.Fatal("appendix not found")
	}
	sec := text[start:end]
	sec = sec[strings.Index(sec, "\n"):]
	// the paper's text is the instruction, then a fenced block holding the rest
	instr, rest, _ := strings.Cut(strings.TrimSpace(sec), "\n```\n")
	rest = strings.TrimSuffix(strings.TrimSpace(rest), "```")
	norm := func(s string) string {
		lines := strings.Split(strings.TrimSpace(s), "\n")
		for i := range lines {
			lines[i] = strings.TrimRight(lines[i], " ")
		}
		return strings.Join(lines, "\n")
	}
	want := norm(strings.TrimSpace(instr) + "\n\n" + strings.TrimSpace(rest))
	if got := norm(string(FactoidQA)); got != want {
		t.Fatalf("template differs from the paper\n got:\n%s\nwant:\n%s", got, want)
	}
}

func TestRender(t *testing.T) {
	ctx := FormatContext([]Passage{{Label: "a.md#0", Text: " first {context} passage \n"}, {Text: "second"}})
	if ctx != "[1] a.md#0\nfirst {context} passage\n\n[2]\nsecond" {
		t.Fatalf("context %q", ctx)
	}
	p, err := FactoidQA.Render("Why {question}?", ctx)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(p, "Why {question}?") != 2 || !strings.Contains(p, "first {context} passage") || strings.Count(p, "{context}") != 1 {
		t.Fatalf("render:\n%s", p)
	}
	if _, err := Template("no placeholders").Render("q", "c"); err == nil {
		t.Fatal("bad template accepted")
	}
}

// wordCounter counts words: an easy token count to work out by hand.
type wordCounter struct{}

func (wordCounter) Count(s string) int { return len(strings.Fields(s)) }

func TestPassageBudget(t *testing.T) {
	tmpl := Template("Context: {context} Question: {question} Answer:")
	// The empty prompt "Context:  Question: who is it? Answer:" is 6 words.
	if got := PassageBudget(100, 10, tmpl, "who is it?", wordCounter{}); got != 100-10-6 {
		t.Fatalf("budget %d, want 84", got)
	}
	if got := PassageBudget(10, 8, tmpl, "who is it?", wordCounter{}); got > 0 {
		t.Fatalf("a window smaller than the prompt left %d", got)
	}
	// A template that does not render is counted as written.
	bad := Template("no placeholders here")
	if got := PassageBudget(100, 0, bad, "q", wordCounter{}); got != 97 {
		t.Fatalf("unrenderable template: budget %d, want 97", got)
	}
}
