package llmtest

import (
	"fmt"
	"strings"
	"testing"
)

func call(prompt string) Call { return Call{Messages: []Message{{Role: "user", Content: prompt}}} }

func TestReaderNeedsAllGold(t *testing.T) {
	r := Reader([]Question{
		{Question: "Who wrote Hamlet?", Gold: []string{"Hamlet is a tragedy", "written by Shakespeare"}, Answer: "Shakespeare"},
		{Question: "Capital of France?", Gold: []string{"Paris is the capital"}, Answer: "Paris"},
	}, ReaderOptions{})
	cases := []struct{ prompt, want string }{
		{"Hamlet is a tragedy. It was written by Shakespeare.\nQ: Who wrote Hamlet?", "Shakespeare"},
		{"Hamlet is a tragedy.\nQ: Who wrote Hamlet?", "unanswerable"},
		{"Paris is the capital of France. Q: Capital of France?", "Paris"},
		{"Paris is the capital of France. Q: something else", "unanswerable"},
	}
	for _, c := range cases {
		if got := r(call(c.prompt)).Content; got != c.want {
			t.Errorf("%q → %q, want %q", c.prompt, got, c.want)
		}
	}
}

func TestReaderDistractionGrowsWithLength(t *testing.T) {
	q := Question{Question: "Q?", Gold: []string{"gold"}, Answer: "A"}
	r := Reader([]Question{q}, ReaderOptions{DistractionPer1k: 0.5, Seed: 1})
	rate := func(words int) float64 {
		wrong := 0
		for i := 0; i < 400; i++ {
			p := fmt.Sprintf("variant %d gold Q? %s", i, strings.Repeat("filler ", words))
			if r(call(p)).Content != "A" {
				wrong++
			}
		}
		return float64(wrong) / 400
	}
	short, long := rate(10), rate(1500)
	if short > 0.05 || long < 0.5 {
		t.Fatalf("distraction rate short %.2f long %.2f; want ≈0.005 and ≈0.75", short, long)
	}
	p := "gold Q? " + strings.Repeat("x ", 900)
	if r(call(p)) != r(call(p)) {
		t.Fatal("not deterministic")
	}
}
