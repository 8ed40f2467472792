package main

import (
	"strings"
	"testing"
)

// Each command's -h says what the issue found missing (issue 14, item 14).
func TestHelpTexts(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		want, not []string
	}{
		// strategies promises ranges: it lists them; it has no flags, so no
		// empty "Flags:".
		{[]string{"strategies", "-h"}, []string{"range"}, []string{"Flags:"}},
		{[]string{"index", "stats", "-h"}, []string{"Prints what the index holds", "Flags:"}, nil},
		{[]string{"ask", "-h"}, []string{"CTXSEL_LLM_TIMEOUT", "CTXSEL_LLM_MAX_TOKENS", "CTXSEL_LLM_MODEL"}, nil},
		{[]string{"train", "band", "-h"}, []string{"-1 = the --size preset's", "(default -1)"}, nil},
		// Every command, train evidence included.
		{[]string{"help"}, []string{"ctxsel train band", "ctxsel train evidence"}, nil},
	} {
		code, out, errs := runCLI(t, "", tc.args...)
		text := out + errs
		if code != 0 {
			t.Errorf("%v: exit %d", tc.args, code)
		}
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("%v: help lacks %q:\n%s", tc.args, w, text)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(text, n) {
				t.Errorf("%v: help has %q:\n%s", tc.args, n, text)
			}
		}
	}
}

// strategies lists every parameter's range, and topp's own floor no longer
// carries the name of the min_k cap.
func TestStrategiesListsRanges(t *testing.T) {
	code, out, _ := runCLI(t, "", "strategies")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, w := range []string{
		"k                   default 10       [1, 2147483647] whole",
		"p                   default 0.9      (0, 1]",
		"temperature         default 0.05     (0, ∞)",
		"min                 default 0.5      (-∞, ∞)",
		"keep_min            default 1        [0, 2147483647] whole",
		"tokens              default 2000     [0, 1099511627776] whole",
		"max_tokens          default 0        [0, 2147483647] whole",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("strategies lacks %q:\n%s", w, out)
		}
	}
	topp := out[strings.Index(out, "topp —"):strings.Index(out, "caps, accepted")]
	if strings.Contains(topp, "min_k") {
		t.Errorf("topp lists a parameter named min_k, the cap's name:\n%s", topp)
	}
}

// An empty question is an error of one line, not the flags' 70.
func TestAskEmptyQuestion(t *testing.T) {
	for _, args := range [][]string{{"ask", ""}, {"ask", "  "}, {"ask"}} {
		code, _, errs := runCLI(t, "", args...)
		if code != 2 || !strings.Contains(errs, "no question given") || strings.Contains(errs, "Flags:") || strings.Count(errs, "\n") > 1 {
			t.Errorf("%q: exit %d\n%s", args, code, errs)
		}
	}
}
