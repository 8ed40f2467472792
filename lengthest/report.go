package lengthest

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"text/tabwriter"
)

// WriteTable prints the budget table, the estimate marked, and the silver
// references' models.
func WriteTable(w io.Writer, rep *Report) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "budget\tmean\tstd\tn\tdoc tokens\t\t")
	floor := rep.Best.Mean - rep.Best.Std
	for _, r := range rep.Table {
		mark := ""
		switch {
		case r.Budget == rep.Estimate:
			mark = "← estimate"
		case r.Budget == rep.Best.Budget:
			mark = "best"
		case r.Mean >= floor:
			mark = "within 1 std"
		}
		fmt.Fprintf(tw, "%d\t%.4f\t%.4f\t%d\t%.0f\t%s\t\n", r.Budget, r.Mean, r.Std, r.N, r.MeanTokens, mark)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "estimate: %d tokens (best mean %.4f ± %.4f at %d; utility %s; %d examples)\n",
		rep.Estimate, rep.Best.Mean, rep.Best.Std, rep.Best.Budget, rep.Config.Utility, rep.Config.Sampled)
	models := make([]string, 0, len(rep.SilverModels))
	for m := range rep.SilverModels {
		models = append(models, m)
	}
	slices.Sort(models)
	fmt.Fprint(w, "silver references by model:")
	for _, m := range models {
		fmt.Fprintf(w, " %s=%d", m, rep.SilverModels[m])
	}
	fmt.Fprintln(w)
	if pe := rep.PerExample; pe != nil {
		fmt.Fprintf(w, "per-example oracle: mean %.4f vs %.4f at the estimate (gain %+.4f)\n", pe.OracleMean, pe.EstimateMean, pe.Gain)
		count := map[int]int{}
		for _, e := range pe.Examples {
			count[e.Best]++
		}
		fmt.Fprint(w, "per-example best budgets:")
		for _, r := range rep.Table {
			if n := count[r.Budget]; n > 0 {
				fmt.Fprintf(w, " %s×%d", kilo(r.Budget), n)
			}
		}
		fmt.Fprintln(w)
	}
	s := rep.Spend
	_, err := fmt.Fprintf(w, "LLM calls: %d (%d from the cache); tokens: %d prompt, %d completion (%d and %d fresh)\n",
		s.Calls, s.CachedCalls, s.PromptTokens, s.CompletionTokens, s.FreshPromptTokens, s.FreshCompletionTokens)
	return err
}

// EstimateFile is the part of a report that `budget:tokens=auto` reads.
type EstimateFile struct {
	Estimate int      `json:"estimate"`
	Config   Settings `json:"config"`
}

// ReadEstimate reads the estimate from a report file written by
// estimate-length.
func ReadEstimate(path string) (EstimateFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return EstimateFile{}, fmt.Errorf("length estimate: %w", err)
	}
	var f EstimateFile
	if err := json.Unmarshal(b, &f); err != nil {
		return EstimateFile{}, invalidf("length estimate %s: %v", path, err)
	}
	if f.Estimate <= 0 || f.Estimate > maxBudget {
		return EstimateFile{}, invalidf("length estimate %s: estimate %d is not a positive token count", path, f.Estimate)
	}
	return f, nil
}
