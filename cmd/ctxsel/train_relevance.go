package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/eval"
	"github.com/ctxsel/ctxsel/internal/atomicfile"
	"github.com/ctxsel/ctxsel/ldar/ldareval"
	"github.com/ctxsel/ctxsel/relevance"
	"github.com/ctxsel/ctxsel/score"
	"github.com/ctxsel/ctxsel/token"
)

// cmdTrainRelevance fits the relevance selector: `ctxsel train relevance`.
func cmdTrainRelevance(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("train relevance", `Usage: ctxsel train relevance --data FILE[,FILE] --out MODEL.json [--eval FILE[,FILE]] [flags]

Fits the relevance selector (package relevance): a logistic regression of
"this passage is gold" on its scores, ranks and gaps in the fused curve and
in each channel of a hybrid scorer (dense, BM25), their agreement and its
tokens, over the top --window ranks. Each --data file is split by question
(--val of it validates, seeded by --split-seed); every file weighs the same.
The token price λ is chosen among --lambdas by the mean gain over the
top-k/budget envelope on the validation questions of the --data files, and
never on --eval files, which are then measured (all their questions) at
every λ, the chosen one named in the heading. --rerank also measures the
model as a re-ranker. Nothing is chosen on --eval files.
`, stderr)
	data := fs.String("data", "", "labelled JSONL file(s) to train on, comma-separated")
	evalFiles := fs.String("eval", "", "held-out files to measure on, comma-separated")
	out := fs.String("out", "", "write the model (JSON) here")
	pool := fs.Int("pool", 1000, "pad each question to this many passages")
	poolSeed := fs.Uint64("pool-seed", 1, "pooling seed")
	splitSeed := fs.Uint64("split-seed", 1, "seed of the fit/validation split by question")
	valShare := fs.Float64("val", 0.2, "share of each --data file's questions that validates")
	scorerName := fs.String("scorer", defaultScorer, "passage scorer: "+strings.Join(scorerNames(), ", "))
	channels := fs.Int("channels", 2, "score channels the model reads (2: a hybrid's dense and lexical curves; 0: the fused curve alone)")
	window := fs.Int("window", relevance.DefaultWindow, "top ranks read, scored and selectable")
	l2 := fs.Float64("l2", 1, "ridge penalty on the standardised weights")
	lambdas := fs.String("lambdas", "0.05,0.1,0.2,0.3,0.5,1,2", "candidate prices of 1,000 tokens in recall")
	cacheDir := fs.String("cache", defaultCacheDir(), "cache directory for scored curves (\"\" = none)")
	rerank := fs.Bool("rerank", true, "also measure the model as a re-ranker on the --eval files: fixed top-k and budgets on the curve ranked by p(gold), against the envelopes of the hybrid and of each single scorer")
	report := fs.String("report", "", "write every report as JSON here")
	encoding := fs.String("encoding", token.Default, "token encoding: "+strings.Join(token.Encodings, ", "))
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *data == "" || *out == "" {
		return usageError{errors.New("train relevance: --data and --out are required")}
	}
	if !(*valShare > 0 && *valShare < 1) || *pool < 0 || *window < 1 {
		return usageError{errors.New("train relevance: want 0 < --val < 1, --pool ≥ 0, --window ≥ 1")}
	}
	var grid []float64
	for _, s := range splitList(*lambdas) {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < 0 || math.IsInf(v, 0) {
			return usageError{fmt.Errorf("train relevance: --lambdas: bad value %q", s)}
		}
		grid = append(grid, v)
	}
	if len(grid) == 0 {
		return usageError{errors.New("train relevance: --lambdas is empty")}
	}
	counter, err := token.New(*encoding)
	if err != nil {
		return usageError{err}
	}
	scorers := newScorerSet()
	defer scorers.Close()
	scorer, err := scorers.get(*scorerName)
	if err != nil {
		return err
	}
	if cs, ok := scorer.(score.ChannelScorer); *channels > 0 && (!ok || len(cs.Channels()) < *channels) {
		return usageError{fmt.Errorf("train relevance: --channels %d needs a scorer with that many channels (hybrid has 2)", *channels)}
	}
	base, err := scorers.baselines(scorer)
	if err != nil {
		return err
	}

	type valSet struct {
		path string
		recs []eval.Record
	}
	var fit []relevance.Question
	var vals []valSet
	for _, path := range splitList(*data) {
		recs, err := eval.LoadFile(path)
		if err != nil {
			return err
		}
		tr, va := ldareval.Split(recs, 1-*valShare, *splitSeed)
		spec := ldareval.CurveSpec{Path: path, Pool: *pool, PoolSeed: *poolSeed, Scorer: scorer.Name(), Encoding: counter.Encoding()}
		fmt.Fprintf(stderr, "scoring %s (pool %d, seed %d) with %s\n", filepath.Base(path), *pool, *poolSeed, scorer.Name())
		qs, err := ldareval.Questions(ctx, spec, scorer, counter, *cacheDir)
		if err != nil {
			return err
		}
		sel := ldareval.SelectQuestions(qs, ldareval.IDs(tr))
		for _, q := range sel {
			fit = append(fit, relevance.Question{Scores: q.Scores, Tokens: q.Tokens, Gold: q.Gold, Channels: q.Channels, Weight: 1 / float64(len(sel))})
		}
		pooled, err := eval.Pool(recs, *pool, *poolSeed)
		if err != nil {
			return err
		}
		vals = append(vals, valSet{path, ldareval.Filter(pooled, ldareval.IDs(va))})
	}
	m, err := relevance.Fit(fit, relevance.FitOptions{Channels: *channels, Window: *window, L2: *l2})
	if err != nil {
		return err
	}
	relevance.Register()
	relevance.SetDefault(m)
	defer relevance.SetDefault(nil)

	specs := make([]ctxsel.Spec, 0, len(grid)+1)
	for _, l := range grid {
		specs = append(specs, ctxsel.Spec{Name: "relevance", Params: map[string]float64{"lambda": l}})
	}
	run := func(recs []eval.Record, extra ...string) (*eval.Report, error) {
		sp := specs
		for _, e := range extra {
			s, err := ctxsel.ParseSpec(e)
			if err != nil {
				return nil, err
			}
			sp = append(sp[:len(sp):len(sp)], s)
		}
		return eval.Run(ctx, recs, scorer, eval.Options{Strategies: sp, Counter: counter, Workers: 1, Baselines: base})
	}
	type namedReport struct {
		Name   string       `json:"name"`
		Report *eval.Report `json:"report"`
	}
	var reports []namedReport
	// reranked measures the model as a re-ranker: fixed top-k and budgets
	// on the curve ranked by p(gold), against the envelopes of the scorer
	// itself and of each single scorer.
	reranked := func(recs []eval.Record, name string) error {
		cs, ok := scorer.(score.ChannelScorer)
		if !ok {
			return usageError{errors.New("train relevance: --rerank needs a hybrid scorer")}
		}
		rs := &eval.Rescored{Base: cs, Label: "relevance-reranked " + scorer.Name(), Counter: counter, Rescore: m.Rescore}
		var fixed []ctxsel.Spec
		for _, s := range []string{"topk:k=1", "topk:k=2", "topk:k=3", "topk:k=5", "topk:k=7", "topk:k=10", "topk:k=15", "topk:k=20", "budget:tokens=500", "budget:tokens=1000", "budget:tokens=2000"} {
			sp, err := ctxsel.ParseSpec(s)
			if err != nil {
				return err
			}
			fixed = append(fixed, sp)
		}
		rrep, err := eval.Run(ctx, recs, rs, eval.Options{Strategies: fixed, Counter: counter, Workers: 1, Baselines: append([]score.Scorer{scorer}, base...)})
		if err != nil {
			return err
		}
		reports = append(reports, namedReport{name, rrep})
		fmt.Fprintf(stdout, "\n%s · \"best single\" is the best envelope of %s, %s and %s\n", name, scorer.Name(), base[0].Name(), base[1].Name())
		return eval.WriteTable(stdout, rrep)
	}
	// Validation: the λ with the best mean gain over the envelope.
	meanGain := make([]float64, len(grid))
	for _, v := range vals {
		rep, err := run(v.recs)
		if err != nil {
			return err
		}
		name := filepath.Base(v.path) + " validation"
		reports = append(reports, namedReport{name, rep})
		fmt.Fprintf(stdout, "\n%s · pool %d · seed %d\n", name, *pool, *poolSeed)
		if err := eval.WriteTable(stdout, rep); err != nil {
			return err
		}
		for i := range grid {
			meanGain[i] += rep.Results[i].GainVsEnvelope / float64(len(vals))
		}
		if *rerank {
			if err := reranked(v.recs, filepath.Base(v.path)+" validation, re-ranked by p(gold)"); err != nil {
				return err
			}
		}
	}
	chosen := 0
	for i := range grid {
		if meanGain[i] > meanGain[chosen] {
			chosen = i
		}
	}
	fmt.Fprintf(stdout, "\nvalidation: mean gain vs envelope per λ:")
	for i, l := range grid {
		fmt.Fprintf(stdout, " %g: %+.4f", l, meanGain[i])
	}
	fmt.Fprintf(stdout, "\nchosen on validation: lambda=%g\n", grid[chosen])
	m.Meta = map[string]string{
		"scorer":  scorer.Name(),
		"data":    strings.Join(baseNames(splitList(*data)), ","),
		"lambda":  strconv.FormatFloat(grid[chosen], 'g', -1, 64),
		"command": "ctxsel train relevance " + strings.Join(args, " "),
		"trained": time.Now().UTC().Format(time.DateOnly),
	}
	b, err := m.Marshal()
	if err != nil {
		return err
	}
	if err := atomicfile.Write(*out, func(w io.Writer) error { _, err := w.Write(append(b, '\n')); return err }); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "model written to %s\n", *out)

	for _, path := range splitList(*evalFiles) {
		recs, err := eval.LoadFile(path)
		if err != nil {
			return err
		}
		pooled, err := eval.Pool(recs, *pool, *poolSeed)
		if err != nil {
			return err
		}
		rep, err := run(pooled, "topk:k=5", "topk:k=10", "topk:k=20", "budget:tokens=500", "budget:tokens=1000")
		if err != nil {
			return err
		}
		name := filepath.Base(path) + " held out (all questions)"
		reports = append(reports, namedReport{name, rep})
		fmt.Fprintf(stdout, "\n%s · pool %d · seed %d · λ chosen on validation: relevance:lambda=%g\n", name, *pool, *poolSeed, grid[chosen])
		if err := eval.WriteTable(stdout, rep); err != nil {
			return err
		}
		if *rerank {
			if err := reranked(pooled, filepath.Base(path)+" held out, re-ranked by p(gold)"); err != nil {
				return err
			}
		}
	}
	if *report != "" {
		return writeFile(*report, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(map[string]any{"model": m, "lambdas": grid, "validation_gain": meanGain, "chosen_lambda": grid[chosen], "reports": reports})
		})
	}
	return nil
}
