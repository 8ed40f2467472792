package lengthest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ctxsel/ctxsel"
)

// MaxBudgets bounds how many budgets one search may try: each costs
// Samples summarizer calls per example.
const MaxBudgets = 1000

// DefaultBudgets is the official grid (adithya7/hybrid-rag,
// configs/retriever.py: Flat_8K … Flat_80K, max_retrieved_tokens = 8 * 1024
// … 80 * 1024): the paper's "8K to 80K tokens in 8K intervals", K = 1,024.
const DefaultBudgets = "8192:81920:8192"

// ParseBudgets reads a budget grid: FROM:TO:STEP (TO included when the steps
// reach it) or a comma-separated list of token counts. The result is sorted
// numerically, without duplicates; every budget is a positive whole number.
func ParseBudgets(text string) ([]int, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, invalidf("budgets: empty")
	}
	var out []int
	if strings.Contains(text, ":") {
		parts := strings.Split(text, ":")
		if len(parts) != 3 {
			return nil, invalidf("budgets %q: want FROM:TO:STEP", text)
		}
		var v [3]int
		for i, p := range parts {
			n, err := positive(p)
			if err != nil {
				return nil, invalidf("budgets %q: %v", text, err)
			}
			v[i] = n
		}
		from, to, step := v[0], v[1], v[2]
		if to < from {
			return nil, invalidf("budgets %q: TO is below FROM", text)
		}
		if (to-from)/step+1 > MaxBudgets {
			return nil, invalidf("budgets %q: more than %d budgets", text, MaxBudgets)
		}
		for b := from; b <= to; b += step {
			out = append(out, b)
		}
	} else {
		for _, p := range strings.Split(text, ",") {
			n, err := positive(p)
			if err != nil {
				return nil, invalidf("budgets %q: %v", text, err)
			}
			out = append(out, n)
			if len(out) > MaxBudgets {
				return nil, invalidf("budgets %q: more than %d budgets", text, MaxBudgets)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// maxBudget keeps budgets (and sums of them) far from int overflow.
const maxBudget = 1 << 30

func positive(s string) (int, error) {
	s = strings.TrimSpace(s)
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > maxBudget {
		return 0, fmt.Errorf("%q is not a whole number of tokens in 1..%d", s, maxBudget)
	}
	return n, nil
}

// invalidf is ctxsel.Invalidf: invalid input, described in words.
var invalidf = ctxsel.Invalidf
