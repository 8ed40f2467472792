package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/lengthest"
	"github.com/ctxsel/ctxsel/llm/llmtest"
	"github.com/ctxsel/ctxsel/score"
	"github.com/ctxsel/ctxsel/token"
)

const summhayPath = "../../../shared/data/summhay_news.jsonl.gz"

func summhayRecords(t *testing.T) []dataset.Record {
	t.Helper()
	if _, err := os.Stat(summhayPath); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("SummHay data missing in CI: %v", err)
		}
		t.Skip("SummHay data not available")
	}
	recs, err := dataset.LoadFile(summhayPath)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// TestEstimateLengthSummHay runs estimate-length on real SummHay examples
// with scripted servers. Each example's "facts" are the first sentences of
// its first three gold documents. The summarizer writes the facts its
// prompt shows, in a fixed order; two panel models do the same in full
// context and a third writes an outlier, which MBR must drop. A summary's
// ROUGE-L F1 against the silver reference (all three facts) grows with
// every fact shown and stops growing once all are in. Without noise the
// estimate is the first budget at which every example shows all the facts
// it ever shows; with noise (the third sample leaves out its last fact) the
// table has a spread and the one-std rule may stop earlier. Both are
// computed here independently, from BM25 scores and the App. A.2 packing
// rule.
func TestEstimateLengthSummHay(t *testing.T) {
	t.Run("exact", func(t *testing.T) { testEstimateLengthSummHay(t, false) })
	t.Run("noisy", func(t *testing.T) { testEstimateLengthSummHay(t, true) })
}

func testEstimateLengthSummHay(t *testing.T, noisy bool) {
	recs := summhayRecords(t)
	const frac, seed = 0.05, 3
	picked := lengthest.Sample(len(recs), frac, seed)
	var order []string // every fact, in one canonical order
	factsOf := map[string][]string{}
	for _, i := range picked {
		n := 0
		for _, p := range recs[i].Passages {
			if p.Gold && n < 3 {
				s := chunk.SplitSentences(p.Text)[0]
				f := p.Text[s[0]:s[1]]
				factsOf[recs[i].ID] = append(factsOf[recs[i].ID], f)
				order = append(order, f)
				n++
			}
		}
	}
	facts := func(c llmtest.Call) llmtest.Reply {
		var out []string
		for _, f := range order {
			if strings.Contains(c.Prompt(), f) {
				out = append(out, f)
			}
		}
		if noisy && c.Seed != nil && *c.Seed == 2 && len(out) > 0 {
			out = out[:len(out)-1]
		}
		return llmtest.Reply{Content: strings.Join(out, "\n")}
	}
	summ, good1, good2 := llmtest.New(facts), llmtest.New(facts), llmtest.New(facts)
	odd := llmtest.New(func(llmtest.Call) llmtest.Reply {
		return llmtest.Reply{Content: "I cannot help with that request today."}
	})
	for _, s := range []*llmtest.Server{summ, good1, good2, odd} {
		defer s.Close()
	}
	dir := t.TempDir()
	if keep := os.Getenv("CTXSEL_ESTIMATE_KEEP"); keep != "" {
		dir = filepath.Join(keep, t.Name()) // keep report, plot and table to look at
		os.MkdirAll(dir, 0o755)
	}
	t.Setenv("CTXSEL_LLM_CACHE", filepath.Join(dir, "llm-cache"))
	out, svg := filepath.Join(dir, "report.json"), filepath.Join(dir, "plot.svg")
	panel := strings.Join([]string{good1.OpenAISpec("qwen-a"), good2.OpenAISpec("llama-b"), odd.OpenAISpec("odd-c")}, ",")
	args := []string{"estimate-length", "--data", summhayPath, "--panel", panel, "--summarizer", summ.OpenAISpec("summ"),
		"--retriever", "bm25", "--sample", "0.05", "--seed", "3", "--out", out, "--plot", svg, "--per-example"}
	code, stdout, stderr := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	t.Logf("stdout:\n%s", stdout)
	for _, line := range []string{"examples sampled", "plan: ", "silver references: ", "search: "} {
		if !strings.Contains(stderr, line) || !strings.Contains(stderr, "tokens") {
			t.Fatalf("stderr lacks %q and the tokens spent:\n%s", line, stderr)
		}
	}
	os.WriteFile(filepath.Join(dir, "table.txt"), []byte(stdout), 0o644)

	var rep lengthest.Report
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	want, means := expectedEstimate(t, recs, picked, factsOf, noisy)
	if rep.Estimate != want {
		t.Fatalf("estimate %d, want %d; table %+v, want means %v", rep.Estimate, want, rep.Table, means)
	}
	for i, r := range rep.Table {
		if math.Abs(r.Mean-means[i]) > 1e-9 {
			t.Fatalf("budget %d: mean %v, want %v", r.Budget, r.Mean, means[i])
		}
	}
	if len(rep.Table) != 10 || rep.Table[0].Budget != 8*1024 || rep.Table[9].Budget != 80*1024 || rep.Table[0].N != len(picked) {
		t.Fatalf("table %+v", rep.Table)
	}
	if len(rep.Silver) != 3*len(picked) || rep.SilverModels[odd.OpenAISpec("odd-c")] != 0 {
		t.Fatalf("silver references by model %v", rep.SilverModels)
	}
	for _, s := range rep.Silver {
		if s.Text != strings.Join(factsOf[s.Example], "\n") {
			t.Fatalf("silver reference of %s lacks a fact: %q", s.Example, s.Text)
		}
	}
	c := rep.Config
	if c.Sampled != len(picked) || c.Examples != len(recs) || c.Retriever != "bm25" || c.Utility != "rouge-l" || c.Temperature != 0.5 || len(c.Panel) != 3 {
		t.Fatalf("config %+v", c)
	}
	if rep.Spend.Calls == 0 || rep.Spend.PromptTokens < 100000 || rep.PerExample == nil || rep.PerExample.Gain < 0 {
		t.Fatalf("spend %+v, per example %+v", rep.Spend, rep.PerExample)
	}
	if !strings.Contains(stdout, "← estimate") || !strings.Contains(stdout, "estimate: "+strconv.Itoa(want)) {
		t.Fatalf("stdout:\n%s", stdout)
	}
	plot, err := os.ReadFile(svg)
	if err != nil || !strings.Contains(string(plot), `class="estimate"`) || !strings.Contains(string(plot), `class="band"`) ||
		strings.Count(string(plot), `class="point"`) != 10 {
		t.Fatalf("plot: %v\n%.300s", err, plot)
	}

	if noisy {
		return // the rest is the same with or without noise
	}
	// a warm re-run calls no server
	before := summ.Requests() + good1.Requests() + odd.Requests()
	if code, _, stderr := runCLI(t, "", args...); code != 0 {
		t.Fatalf("re-run exit %d: %s", code, stderr)
	}
	if after := summ.Requests() + good1.Requests() + odd.Requests(); after != before {
		t.Fatalf("warm re-run made %d requests", after-before)
	}

	// --dry-run counts the calls the run made, and makes none
	code, dry, stderr := runCLI(t, "", append(args, "--dry-run")...)
	if code != 0 || !strings.Contains(dry, strconv.Itoa(rep.Spend.Calls)+" LLM calls") {
		t.Fatalf("dry run (exit %d): %s %s; run made %d calls", code, dry, stderr, rep.Spend.Calls)
	}

	// budget:tokens=auto reads the estimate
	in := `{"id":"a","score":0.9,"tokens":` + strconv.Itoa(want-1) + "}\n" + `{"id":"b","score":0.8,"tokens":2}` + "\n"
	k := func(out string) int {
		var v struct{ K int }
		json.Unmarshal([]byte(out), &v)
		return v.K
	}
	code, sel, stderr := runCLI(t, in, "select", "--strategy", "budget:tokens=auto", "--estimate", out)
	if code != 0 || k(sel) != 1 {
		t.Fatalf("select with tokens=auto (exit %d): %s %s", code, sel, stderr)
	}
	t.Setenv(envLengthEstimate, out)
	if code, sel, stderr = runCLI(t, in, "select", "--strategy", "budget:tokens=auto,min_k=0"); code != 0 || k(sel) != 1 {
		t.Fatalf("select with $%s (exit %d): %s %s", envLengthEstimate, code, sel, stderr)
	}
}

// expectedEstimate packs each example by hand: BM25 over the full
// documents, each cut to 1,024 tokens, taken by descending score until the
// first that does not fit. Each sample's summary is the facts shown (the
// third without its last when noisy), scored by ROUGE-L F1 against all
// three facts; a run's score is the mean over examples, and the estimate
// the smallest budget whose mean over runs is within one (population) std
// of the best. Without noise that is the first budget at which every
// example shows all the facts it shows at the largest budget, which is
// checked too.
func expectedEstimate(t *testing.T, recs []dataset.Record, picked []int, factsOf map[string][]string, noisy bool) (int, []float64) {
	tok, err := token.New("")
	if err != nil {
		t.Fatal(err)
	}
	budgets, _ := lengthest.ParseBudgets(lengthest.DefaultBudgets)
	type packed struct {
		order []int    // documents by descending BM25 score
		cuts  []string // each cut to 1,024 tokens
		n     []int
	}
	cache := map[string]packed{}
	shown := func(r dataset.Record, budget int) []string {
		p, ok := cache[r.ID]
		if !ok {
			for i, d := range r.Passages {
				p.order = append(p.order, i)
				cut, _ := lengthest.TruncateSentences(tok, d.Text, 1024)
				p.cuts, p.n = append(p.cuts, cut), append(p.n, tok.Count(cut))
			}
			// the truncated documents are ranked, as the official code does
			scores, err := score.NewBM25().Score(context.Background(), r.Question, p.cuts)
			if err != nil {
				t.Fatal(err)
			}
			slices.SortStableFunc(p.order, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
			cache[r.ID] = p
		}
		used := 0
		in := map[string]bool{}
		for _, i := range p.order {
			if used+p.n[i] > budget {
				break
			}
			used += p.n[i]
			for _, f := range factsOf[r.ID] {
				if strings.Contains(p.cuts[i], f) {
					in[f] = true
				}
			}
		}
		var out []string
		for _, f := range factsOf[r.ID] {
			if in[f] {
				out = append(out, f)
			}
		}
		return out
	}
	means, stds := make([]float64, len(budgets)), make([]float64, len(budgets))
	complete := -1
	for b, budget := range budgets {
		var runs [3]float64
		done := true
		for _, i := range picked {
			got := shown(recs[i], budget)
			if len(got) != len(shown(recs[i], budgets[len(budgets)-1])) {
				done = false
			}
			ref := strings.Join(factsOf[recs[i].ID], "\n")
			for s := range 3 {
				sum := got
				if noisy && s == 2 && len(sum) > 0 {
					sum = sum[:len(sum)-1]
				}
				runs[s] += lengthest.RougeLF1(strings.Join(sum, "\n"), ref) / float64(len(picked))
			}
		}
		if done && complete < 0 {
			complete = budget
		}
		means[b] = (runs[0] + runs[1] + runs[2]) / 3
		for _, r := range runs {
			stds[b] += (r - means[b]) * (r - means[b]) / 3
		}
		stds[b] = math.Sqrt(stds[b])
	}
	best := 0
	for b := range budgets {
		if means[b] > means[best] {
			best = b
		}
	}
	for b := range budgets {
		if means[b] >= means[best]-stds[best] {
			if !noisy && budgets[b] != complete {
				t.Fatalf("without noise the rule gives %d, but every example is complete at %d", budgets[b], complete)
			}
			return budgets[b], means
		}
	}
	return -1, means
}

func TestAutoEstimate(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "est.json")
	os.WriteFile(file, []byte(`{"estimate": 24000, "table": []}`), 0o644)
	t.Setenv(envLengthEstimate, "")
	resolve := func(spec, file string) (string, error) {
		res, err := ctxsel.Resolver{Auto: autoEstimate(file)}.Resolve(spec)
		return res.Spec, err
	}
	for in, want := range map[string]string{
		"budget:tokens=auto":           "budget:tokens=24000",
		"budget:tokens = AUTO,max_k=5": "budget:max_k=5,tokens=24000",
		"topk:k=5":                     "topk:k=5",
		"budget:tokens=2000":           "budget:tokens=2000",
	} {
		got, err := resolve(in, file)
		if err != nil || got != want {
			t.Errorf("%q resolved to %q, %v; want %q", in, got, err, want)
		}
	}
	// max_tokens=auto is not the budget's tokens: no estimate stands for it
	if got, err := resolve("budget:tokens=5,max_tokens=auto", file); err == nil {
		t.Errorf("max_tokens=auto resolved to %q", got)
	}
	if _, err := resolve("budget:tokens=auto", ""); err == nil || !strings.Contains(err.Error(), envLengthEstimate) || !errors.As(err, new(usageError)) {
		t.Errorf("no estimate file: %v", err)
	}
	t.Setenv(envLengthEstimate, file)
	if got, err := resolve("budget:tokens=auto", ""); err != nil || got != "budget:tokens=24000" {
		t.Errorf("estimate from $%s: %q %v", envLengthEstimate, got, err)
	}
	t.Setenv(envLengthEstimate, "")
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"estimate": 0}`), 0o644)
	if _, err := resolve("budget:tokens=auto", bad); err == nil {
		t.Error("estimate 0 accepted")
	}
	if code, _, stderr := runCLI(t, "", "select", "--strategy", "budget:tokens=auto", "--estimate", filepath.Join(dir, "missing.json")); code != 2 {
		t.Errorf("missing estimate file: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "", "ask", "--budget", "auto", "--index", dir, "--estimate", bad, "q?"); code != 2 || !strings.Contains(stderr, "estimate") {
		t.Errorf("ask --budget auto with a bad estimate: exit %d: %s", code, stderr)
	}
}

// Any spec the CLI is given resolves without panicking; its auto values
// are filled or refused, never left in.
func FuzzAutoEstimate(f *testing.F) {
	file := filepath.Join(f.TempDir(), "est.json")
	os.WriteFile(file, []byte(`{"estimate": 16000}`), 0o644)
	for _, s := range []string{"budget:tokens=auto", "budget:TOKENS = auto,max_k=3", "topk:k=5", "budget:max_tokens=auto", "tokens=autox", "", "topk:k=3+picker:budget=auto"} {
		f.Add(s)
	}
	r := ctxsel.Resolver{Auto: autoEstimate(file)}
	f.Fuzz(func(t *testing.T, spec string) {
		res, err := r.Resolve(spec)
		if err != nil {
			if !errors.Is(err, ctxsel.ErrInvalidInput) && !errors.As(err, new(usageError)) {
				t.Fatalf("%q: %v", spec, err)
			}
			return
		}
		if strings.Contains(strings.ToLower(res.Spec), "auto") {
			t.Fatalf("%q: auto left in %q", spec, res.Spec)
		}
	})
}

func TestEstimateLengthUsage(t *testing.T) {
	spec := "openai:m@http://127.0.0.1:1/v1"
	for _, args := range [][]string{
		{"--panel", spec, "--summarizer", spec, "--out", "x.json"},
		{"--data", summhayPath, "--summarizer", spec, "--out", "x.json"},
		{"--data", summhayPath, "--panel", spec, "--summarizer", spec},
		{"--data", summhayPath, "--panel", spec, "--summarizer", spec, "--out", "x", "--budgets", "80000:8000:8000"},
		{"--data", summhayPath, "--panel", "nope", "--summarizer", spec, "--out", "x"},
		{"--data", summhayPath, "--panel", spec, "--summarizer", spec, "--out", "x", "--sample", "0"},
		{"--data", summhayPath, "--panel", spec, "--summarizer", spec, "--out", "x", "--retriever", "dense"},
		{"--data", summhayPath, "--panel", spec, "--summarizer", spec, "--out", "x", "--utility", "a3cu"},
		{"--data", summhayPath, "--panel", spec, "--summarizer", spec, "--out", "x", "--temperature", "3"},
	} {
		if code, _, stderr := runCLI(t, "", append([]string{"estimate-length"}, args...)...); code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, code, stderr)
		}
	}
	code, _, stderr := runCLI(t, "", "estimate-length", "-h")
	if code != 0 || !strings.Contains(stderr, "A3CU") || !strings.Contains(stderr, "(default 0.5)") {
		t.Errorf("help (exit %d) lacks the deviation or the τ=0.5 default:\n%s", code, stderr)
	}
}
