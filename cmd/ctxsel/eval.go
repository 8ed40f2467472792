package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/embed/embedders"
	"github.com/ctxsel/ctxsel/eval"
	"github.com/ctxsel/ctxsel/eval/sample"
	"github.com/ctxsel/ctxsel/internal/atomicfile"
	"github.com/ctxsel/ctxsel/internal/progress"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/score"
	"github.com/ctxsel/ctxsel/token"
)

const defaultStrategies = "topk:k=1,topk:k=3,topk:k=5,topk:k=10,topk:k=20,budget:tokens=1000,budget:tokens=2000,adaptivek,adaptivek:head=0.05,knee,topp,band"

func cmdEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("eval", `Usage: ctxsel eval [--data FILE] [--pool N] [--seed S] [--test-split SHARE] [--scorer NAME] [--split train|validation|test] [--baselines auto|none] [--strategies LIST] [--picker LLM] [--versus STRATEGY] [--json FILE] [--plot FILE] [--wide]

Measures selection strategies on labelled questions: each question's passages
are padded to --pool passages with passages of other questions (HELMET-style
long contexts), scored against the question, cut by every strategy, and
compared on context recall, tokens, and gain at the same mean token count over
the fixed top-k frontier, over the upper envelope of fixed top-k and fixed
token budgets of the same scorer, and over the best such envelope of the
single scorers (dense, bm25). --strategies default measures the shipped
default strategy. Without --data it runs the bundled sample;
--data lara:32k/book (LENGTH/KIND[/LEVEL]) reads the LaRA benchmark, chunked
600/100 tokens, unpadded and without gold passages (answers only).
An evidence strategy (evidence:budget=500, or topk:k=30+evidence:budget=500)
sends sentences instead of whole passages; every strategy is also measured
on the evidence it sends (evidence_recall, with gold_spans) and on whether the
gold answer is in it (answer_present); --split test measures the test part of
a seeded 60/20/20 split by question id.
A picker strategy (picker:budget=4000, with --picker LLM) is measured and
answered like the others; its own call's tokens and invalid-output rate are
listed apart from the reader's.
`+answerUsage+"\n"+llmHelp, stderr)
	data := fs.String("data", "", "labelled JSONL file (plain or gzip); default: the bundled 100-question HotpotQA sample")
	pool := fs.Int("pool", 1000, "pad each question to this many passages (0 = no padding)")
	seed := fs.Uint64("seed", 1, "seed for pooling")
	scorerName := fs.String("scorer", score.DefaultScorer, "passage scorer: "+strings.Join(newScorerSet().Names(), ", "))
	strategies := fs.String("strategies", defaultStrategies, "comma-separated strategy specs, e.g. topk:k=10,adaptivek:head=0.05,knee")
	jsonOut := fs.String("json", "", "write the report as JSON to this file")
	plotOut := fs.String("plot", "", "write the recall/token plot as SVG to this file")
	encoding := fs.String("encoding", token.Default, "token encoding: "+strings.Join(token.Encodings, ", "))
	limit := fs.Int("limit", 0, "use only the first N questions (0 = all)")
	workers := fs.Int("workers", 0, "questions scored in parallel (0 = number of CPUs)")
	laraDir := fs.String("lara-dir", laraDefaultDir, "the LaRA benchmark's directory (holding datasets/), for --data lara:…")
	pickerLLM := fs.String("picker", "", "picker LLM endpoint for picker strategies (picker:budget=4000,fallback=adaptivek,order=rank)")
	af := addAnswerFlags(fs) // the shared LLM flags too: one opener and cache for reader, judge and picker
	testSplit := fs.Float64("test-split", 0, "measure only the test questions of `train band`'s split with this train share (e.g. 0.8, seeded by --split-seed); 0 = every question")
	splitSeed := fs.Uint64("split-seed", 1, "seed of the --test-split split")
	split := fs.String("split", "", "measure only one part of the seeded 60/20/20 split by question id (dataset.SplitOf, seed --split-seed): train, validation or test")
	evidenceModel := fs.String("evidence-model", "", "sentence model for evidence strategies (JSON from `ctxsel train evidence`); default: the embedded one")
	wide := fs.Bool("wide", false, "print every column of the tables (precision, token share, true-k, the envelopes' recall, …); by default they fit 100 columns")
	versus := fs.String("versus", "", "one of --strategies (as written there) every other strategy is compared with question by question: the paired difference in recall, evidence and touched recall and tokens, ± standard error")
	baselines := fs.String("baselines", "auto", "single scorers every result is also compared with: auto (the dense scorer and bm25; a hybrid's own halves) or none")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *testSplit < 0 || *testSplit >= 1 {
		return usageError{fmt.Errorf("eval: --test-split %v: want 0 ≤ share < 1", *testSplit)}
	}
	if *pool < 0 || *limit < 0 || *workers < 0 {
		return usageError{fmt.Errorf("eval: --pool, --limit and --workers must not be negative")}
	}
	counter, err := token.New(*encoding)
	if err != nil {
		return usageError{err}
	}
	scorers := newScorerSet()
	defer scorers.Close()
	// Every spec is resolved before any slow work, so a bad one fails
	// first; a picker opens its LLM (the run's shared opener) here, an
	// evidence selector the scorers' use-lite embedder (one cache).
	src := &selectorSources{pickerEndpoint: *pickerLLM, openLLM: func() (func(string) (llm.Client, error), error) { return af.opener(stderr) },
		embedder: func() (embed.Embedder, error) { return scorers.EmbedderOf(embedders.Default) }, counter: counter, evidenceModel: *evidenceModel}
	defer src.Close()
	list, err := specResolver(src, "").ResolveList(*strategies)
	if err != nil {
		return fmt.Errorf("eval --strategies: %w", err)
	}
	defer af.close()
	for _, res := range list {
		if res.Route != nil && *af.reader == "" {
			return usageError{fmt.Errorf("eval --strategies: %s is an answering route: it needs --reader", res.Spec)}
		}
	}
	if *baselines != "auto" && *baselines != "none" {
		return usageError{fmt.Errorf("eval: --baselines %q: want auto or none", *baselines)}
	}
	scorer, err := scorers.Get(*scorerName)
	if err != nil {
		return err
	}
	var base []score.Scorer
	if *baselines == "auto" {
		if base, err = scorers.Baselines(scorer); err != nil {
			return err
		}
	}
	var recs []dataset.Record
	source := sample.Name
	answering, window, err := af.setup(ctx, stderr)
	if err != nil {
		return err
	}
	defer af.close()
	if *data == "" {
		recs, err = sample.HotpotQA()
	} else if strings.HasPrefix(*data, "lara:") {
		source = *data
		recs, err = loadLaRA(ctx, *laraDir, *data, counter)
		*pool = 0 // a LaRA question's pool is its own document
		if answering != nil {
			_, kind, _, _ := dataset.ParseLaRA(strings.TrimPrefix(*data, "lara:"))
			answering.Datatype = eval.LaRADatatype(kind)
			if p := *af.prompt; p == "auto" || p == "lara" {
				answering.PromptFor = eval.LaRAPrompt // LaRA's reader prompt, as LDAR answers
			}
		}
	} else if answering != nil && *af.prompt == "lara" {
		return usageError{errors.New("eval: --prompt lara needs --data lara:…")}
	} else {
		source = filepath.Base(*data)
		recs, err = dataset.LoadFile(*data)
	}
	if err != nil {
		return err
	}
	if *limit > 0 && *limit < len(recs) {
		recs = recs[:*limit]
	}
	pooled, err := dataset.Pool(recs, *pool, *seed)
	if err != nil {
		return err
	}
	if *split != "" { // pooled over the whole file first
		part, err := dataset.ParseSplit(*split)
		if err != nil {
			return usageError{fmt.Errorf("eval --split: %w", err)}
		}
		if *testSplit > 0 {
			return usageError{fmt.Errorf("eval: --split and --test-split are two different splits: give one")}
		}
		n := len(pooled)
		pooled = dataset.FilterSplit(pooled, part, *splitSeed)
		source += fmt.Sprintf(" · %s split (%d of %d questions, split seed %d)", part, len(pooled), n, *splitSeed)
	}
	if *testSplit > 0 { // pooled over the whole file first, as train band does
		_, test := dataset.SplitShare(recs, *testSplit, *splitSeed)
		pooled = dataset.Filter(pooled, dataset.IDs(test))
		source += fmt.Sprintf(" · test split (%d questions, train share %g, split seed %d)", len(test), *testSplit, *splitSeed)
	}
	prep := progress.New(stderr, "embedding")
	bar := progress.New(stderr, "questions")
	rep, runErr := eval.Run(ctx, pooled, scorer, eval.Options{
		Strategies: list, Counter: counter, Workers: *workers,
		Progress: bar.Update, PrepareProgress: prep.Update, Baselines: base,
		Window: window, Answer: answering, Versus: *versus,
		TextWorkers: af.llm.concurrency, TextProgress: progress.New(stderr, "picking").Update,
	})
	if rep == nil {
		return runErr
	}
	poolNote := strconv.Itoa(*pool)
	if most := maxPassages(pooled); *pool > most {
		poolNote = fmt.Sprintf("%d (asked %d: the set holds no more)", most, *pool)
	}
	title := fmt.Sprintf("%s · pool %s · seed %d", source, poolNote, *seed)
	if *wide {
		fmt.Fprintln(stdout, title)
		if err := eval.WriteTable(stdout, rep); err != nil {
			return err
		}
	} else if err := eval.WriteCompactTable(stdout, rep, title); err != nil {
		return err
	}
	if *jsonOut != "" {
		if err := writeFile(*jsonOut, func(w io.Writer) error { return eval.WriteJSON(w, rep) }); err != nil {
			return err
		}
	}
	if *plotOut != "" && rep.NoGoldLabels {
		fmt.Fprintln(stderr, "note: no gold passages, so no recall/token plot (--plot skipped)")
	} else if *plotOut != "" {
		title := fmt.Sprintf("%s, pool %d, %s scorer", source, *pool, rep.Scorer)
		if err := writeFile(*plotOut, func(w io.Writer) error { return eval.WritePlot(w, rep, title) }); err != nil {
			return err
		}
	}
	names := make([]string, len(rep.Results))
	for i, r := range rep.Results {
		names[i] = r.Strategy
	}
	if err := af.finish(rep, names); err != nil {
		return err
	}
	return runErr
}

// writeFile writes a report atomically, so an interrupted run never leaves
// half a file.
func writeFile(path string, write func(io.Writer) error) error {
	return atomicfile.Write(path, write)
}

func maxPassages(recs []dataset.Record) int {
	most := 0
	for _, r := range recs {
		most = max(most, len(r.Passages))
	}
	return most
}
