package main

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel/eval"
)

// The README's first command, `go run ./cmd/ctxsel eval`, prints a table a
// 100-column terminal shows without wrapping; --wide keeps every column.
// The run is the default one on the first 20 questions of the bundled
// sample: the same strategies, scorer, baselines and notes (the columns' widths
// do not grow with the questions), at a fifth of the embedding (the whole
// sample takes over 3 minutes under -race with a cold embedding cache).
func TestEvalDefaultFits100Columns(t *testing.T) {
	code, out, errs := runCLI(t, "", "eval", "--limit", "20")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	widest, at := 0, ""
	for _, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > widest {
			widest, at = n, line
		}
	}
	if widest > eval.CompactWidth {
		t.Errorf("the default eval's widest line has %d runes (> %d):\n%s", widest, eval.CompactWidth, at)
	}
	if !strings.Contains(out, "vs envelope") || !strings.Contains(out, "adaptivek:head=0.05") {
		t.Errorf("the default table lacks its columns or rows:\n%s", out)
	}

	code, out, errs = runCLI(t, "", "eval", "--wide", "--limit", "3", "--pool", "20", "--scorer", "bm25", "--strategies", "topk:k=1,adaptivek:head=0.05")
	if code != 0 {
		t.Fatalf("--wide: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "precision") || !strings.Contains(out, "envelope@tokens") {
		t.Errorf("--wide lacks the full columns:\n%s", out)
	}
}

// --versus compares every row with one of --strategies question by
// question; a name that is not among them is refused.
func TestEvalVersus(t *testing.T) {
	code, out, errs := runCLI(t, "", "eval", "--limit", "3", "--pool", "20", "--scorer", "bm25", "--baselines", "none",
		"--strategies", "topk:k=1,topk:k=3", "--versus", "topk:k=1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "against topk:k=1") || !strings.Contains(out, "Δ tokens") {
		t.Errorf("no paired difference:\n%s", out)
	}
	code, _, errs = runCLI(t, "", "eval", "--limit", "3", "--pool", "20", "--scorer", "bm25", "--baselines", "none",
		"--strategies", "topk:k=1,topk:k=3", "--versus", "topk:k=2")
	if code == 0 || !strings.Contains(errs, "topk:k=2") {
		t.Errorf("a versus that is no strategy: exit %d, %s", code, errs)
	}
}
