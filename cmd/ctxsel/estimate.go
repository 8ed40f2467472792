package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/internal/atomicfile"
	"github.com/ctxsel/ctxsel/internal/progress"
	"github.com/ctxsel/ctxsel/lengthest"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/token"
)

// envLengthEstimate names the estimate file that budget:tokens=auto reads
// when --estimate is not given.
const envLengthEstimate = "CTXSEL_LENGTH_ESTIMATE"

func cmdEstimateLength(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("estimate-length", `Usage: ctxsel estimate-length --data FILE --panel SPEC,SPEC,... --summarizer SPEC --out report.json [flags]

Estimates the retrieval length (tokens) that gives the best summaries for one
dataset, retriever and summarizer, without gold summaries (Pratapa & Mitamura,
hybrid RAG context length): a panel of LMs writes silver references in full
context, MBR keeps the best, and the summarizer is run at every budget; the
estimate is the smallest budget within one std of the best. Use it with
--strategy budget:tokens=auto --estimate report.json (or ask --budget auto).

The paper's utility (A3CU) is a model we cannot ship: --utility is ROUGE-L F1
(default) or the embedded model's cosine similarity.

`+llmHelp+`

Example:
  ctxsel estimate-length --data ../shared/data/summhay_news.jsonl.gz --dry-run \
    --panel openai:qwen2.5-72b@http://127.0.0.1:8000/v1#window=128000,openai:llama3.3-70b@http://127.0.0.1:8001/v1 \
    --summarizer openai:qwen2.5-7b@http://127.0.0.1:8002/v1#window=32768 --out est.json --plot est.svg`, stderr)
	data := fs.String("data", "", "examples, JSON lines (the common format; .gz read as is)")
	panel := fs.String("panel", "", "comma-separated LLM specs of the panel that writes the silver references")
	summarizer := fs.String("summarizer", "", "LLM spec of the summarizer whose retrieval length is estimated")
	retriever := fs.String("retriever", "use-lite", "document retriever: use-lite, bm25 or hybrid (z-score fusion, equal weights)")
	sample := fs.Float64("sample", lengthest.DefaultSampleFrac, "fraction of the examples used, drawn without replacement")
	seed := fs.Uint64("seed", 1, "seed of the sample of examples")
	budgets := fs.String("budgets", lengthest.DefaultBudgets, "budgets searched: FROM:TO:STEP or a comma-separated list of tokens")
	samples := fs.Int("samples", lengthest.DefaultSamples, "summaries per model and input")
	words := fs.Int("words", lengthest.DefaultWords, "the prompt's word limit ({num_words})")
	docTokens := fs.Int("doc-tokens", lengthest.DefaultDocTokens, "each retrieved document is cut to this many tokens, at a sentence boundary")
	window := fs.Int("window", lengthest.DefaultWindow, "context window of a model whose spec has no #window=N")
	utility := fs.String("utility", "rouge-l", "similarity for MBR and scoring: rouge-l or use-lite (cosine)")
	encoding := fs.String("encoding", token.Default, "tokenizer the budgets are counted in: "+strings.Join(token.Encodings, ", "))
	out := fs.String("out", "", "report file (JSON); required unless --dry-run")
	plot := fs.String("plot", "", "write an SVG of score against budget here")
	perExample := fs.Bool("per-example", false, "report each example's best budget and a per-example oracle's gain")
	dryRun := fs.Bool("dry-run", false, "print the number of calls and a token estimate, and stop")
	lf := addLLMFlags(fs)
	// the paper samples at τ = 0.5: the shared flag's default for this command
	lf.temperature = lengthest.DefaultTemperature
	fs.Lookup("temperature").DefValue = strconv.FormatFloat(lengthest.DefaultTemperature, 'g', -1, 64)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *data == "":
		return usageError{fmt.Errorf("estimate-length: --data is required")}
	case *panel == "" || *summarizer == "":
		return usageError{fmt.Errorf("estimate-length: --panel and --summarizer are required")}
	case *out == "" && !*dryRun:
		return usageError{fmt.Errorf("estimate-length: --out is required")}
	case !(*sample > 0 && *sample <= 1):
		return usageError{fmt.Errorf("--sample=%v must be in (0, 1]", *sample)}
	case *samples < 1 || *samples > 100:
		return usageError{fmt.Errorf("--samples=%d must be in 1..100", *samples)}
	case *words < 1 || *docTokens < 8 || *window < 1:
		return usageError{fmt.Errorf("--words, --window must be positive and --doc-tokens at least 8")}
	}
	grid, err := lengthest.ParseBudgets(*budgets)
	if err != nil {
		return usageError{err}
	}
	tok, err := token.New(*encoding)
	if err != nil {
		return usageError{err}
	}
	var panelSpecs []llm.Spec
	for _, s := range strings.Split(*panel, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		sp, err := llm.ParseSpec(s)
		if err != nil {
			return usageError{fmt.Errorf("--panel: %w", err)}
		}
		panelSpecs = append(panelSpecs, sp)
	}
	sumSpec, err := llm.ParseSpec(*summarizer)
	if err != nil {
		return usageError{fmt.Errorf("--summarizer: %w", err)}
	}
	if len(panelSpecs) == 0 {
		return usageError{fmt.Errorf("--panel names no model")}
	}
	if *retriever != "use-lite" && *retriever != "bm25" && *retriever != "hybrid" {
		return usageError{fmt.Errorf("--retriever=%q: want use-lite, bm25 or hybrid", *retriever)}
	}
	if *utility != "rouge-l" && *utility != "use-lite" {
		return usageError{fmt.Errorf("--utility=%q: want rouge-l or use-lite", *utility)}
	}

	recs, err := dataset.LoadFile(*data)
	if err != nil {
		return usageError{err}
	}
	var exs []lengthest.Example
	for _, i := range lengthest.Sample(len(recs), *sample, *seed) {
		r := recs[i]
		ex := lengthest.Example{ID: r.ID, Question: r.Question}
		for _, p := range r.Passages {
			ex.Docs = append(ex.Docs, p.Text)
		}
		exs = append(exs, ex)
	}
	fmt.Fprintf(stderr, "estimate-length: %d of %d examples sampled (%.0f%%, seed %d)\n", len(exs), len(recs), *sample*100, *seed)

	cfg := lengthest.Config{Tokenizer: tok, Budgets: grid, Samples: *samples, Temperature: lf.temperature,
		Words: *words, MaxTokens: lf.maxTokens, DocTokens: *docTokens, DefaultWindow: *window, PerExample: *perExample}
	if lf.seed >= 0 {
		cfg.Seed = lf.seed
	}
	for _, sp := range panelSpecs {
		cfg.Panel = append(cfg.Panel, lengthest.Model{Name: sp.String(), Window: sp.Window})
	}
	cfg.Summarizer = lengthest.Model{Name: sumSpec.String(), Window: sumSpec.Window}
	plan, err := lengthest.MakePlan(cfg, exs)
	if err != nil {
		return err
	}
	if *dryRun {
		return plan.Write(stdout)
	}
	if err := plan.Write(stderr); err != nil {
		return err
	}

	open, cache, err := lf.open(stderr)
	if err != nil {
		return err
	}
	if cache != nil {
		defer cache.Close()
	}
	for i := range cfg.Panel {
		if cfg.Panel[i].Client, err = open(panelSpecs[i].String()); err != nil {
			return usageError{fmt.Errorf("--panel: %w", err)}
		}
	}
	if cfg.Summarizer.Client, err = open(sumSpec.String()); err != nil {
		return usageError{fmt.Errorf("--summarizer: %w", err)}
	}
	// The retriever by name (hybrid: score's default fusion over use-lite
	// and BM25); the utility's model shares the retriever's embedder.
	scorers := newScorerSet()
	defer scorers.Close()
	if cfg.Retriever, err = scorers.Get(*retriever); err != nil {
		return err
	}
	if *utility == "use-lite" {
		dense, err := scorers.EmbedderOf("use-lite")
		if err != nil {
			return err
		}
		cfg.Utility = lengthest.Embedding{Label: "use-lite", Embedder: dense}
	}
	cfg.Progress = newPhaseProgress(stderr).update

	rep, err := lengthest.Run(ctx, cfg, exs)
	if err != nil {
		return err
	}
	rep.Config.Data, rep.Config.Examples, rep.Config.SampleFraction, rep.Config.SampleSeed = *data, len(recs), *sample, *seed
	if err := atomicfile.Write(*out, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if *plot != "" {
		title := fmt.Sprintf("%s · %s · %s", sumSpec.Model, rep.Config.Retriever, rep.Config.Utility)
		if err := atomicfile.Write(*plot, func(w io.Writer) error { return lengthest.WritePlot(w, rep, title) }); err != nil {
			return fmt.Errorf("write plot: %w", err)
		}
	}
	return lengthest.WriteTable(stdout, rep)
}

// phaseProgress draws one bar per phase with the tokens spent, and on a
// non-terminal prints a line as each phase ends.
type phaseProgress struct {
	w     io.Writer
	phase string
	bar   *progress.Bar
}

func newPhaseProgress(w io.Writer) *phaseProgress { return &phaseProgress{w: w} }

func (p *phaseProgress) update(pr lengthest.Progress) {
	if pr.Phase != p.phase {
		p.phase, p.bar = pr.Phase, progress.New(p.w, pr.Phase)
	}
	s := pr.Spend
	note := fmt.Sprintf("%d calls (%d cached), %d+%d tokens", s.Calls, s.CachedCalls, s.PromptTokens, s.CompletionTokens)
	p.bar.Note(note)
	p.bar.Update(pr.Done, pr.Total)
	if pr.Done == pr.Total {
		fmt.Fprintf(p.w, "%s: %d/%d done; %s\n", pr.Phase, pr.Done, pr.Total, note)
	}
}

// autoEstimate is the CLI's hook for "auto" parameter values: tokens=auto
// (budget:tokens=auto) is the estimate in the report estimate-length wrote
// (file, or $CTXSEL_LENGTH_ESTIMATE), read when a spec asks for it.
// Strategies themselves do no I/O.
func autoEstimate(file string) func(name, param string) (float64, error) {
	return func(name, param string) (float64, error) {
		if param != "tokens" {
			return 0, usageError{fmt.Errorf("only tokens=auto has a value to fill in (a length estimate)")}
		}
		if file == "" {
			file = os.Getenv(envLengthEstimate)
		}
		if file == "" {
			return 0, usageError{fmt.Errorf("needs a length estimate: --estimate FILE or %s (from ctxsel estimate-length)", envLengthEstimate)}
		}
		est, err := lengthest.ReadEstimate(file)
		if err != nil {
			return 0, usageError{err}
		}
		return float64(est.Estimate), nil
	}
}
