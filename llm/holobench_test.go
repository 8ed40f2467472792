package llm

import (
	"os"
	"strings"
	"testing"
)

// TestHoloBenchMatchesPaper compares the template with Appendix A.1.2 of
// the paper: the instruction, then the fenced block, trailing spaces
// ignored.
func TestHoloBenchMatchesPaper(t *testing.T) {
	b, err := os.ReadFile("../../shared/papers/adaptive-k.txt")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("paper text missing in CI: %v", err)
		}
		t.Skip("paper text not available")
	}
	text := string(b)
	start := strings.Index(text, "A.1.2 Prompt template for the HoloBench tasks")
	end := strings.Index(text, "A.1.3 ")
	if start < 0 || end < start {
		t.Fatal("appendix A.1.2 not found")
	}
	sec := text[start:end]
	sec = sec[strings.Index(sec, "\n"):]
	instr, rest, ok := strings.Cut(strings.TrimSpace(sec), "\n```\n")
	if !ok {
		t.Fatal("no fenced block in A.1.2")
	}
	rest = strings.TrimSuffix(strings.TrimSpace(rest), "```")
	norm := func(s string) string {
		lines := strings.Split(strings.TrimSpace(s), "\n")
		for i := range lines {
			lines[i] = strings.TrimRight(lines[i], " ")
		}
		return strings.Join(lines, "\n")
	}
	want := norm(strings.TrimSpace(instr) + "\n\n" + strings.TrimSpace(rest))
	if got := norm(string(HoloBench)); got != want {
		t.Fatalf("template differs from the paper\n got:\n%s\nwant:\n%s", got, want)
	}
	if err := HoloBench.Check(); err != nil {
		t.Fatal(err)
	}
}
