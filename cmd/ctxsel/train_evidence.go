package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/eval"
	"github.com/ctxsel/ctxsel/evidence"
	"github.com/ctxsel/ctxsel/internal/atomicfile"
	"github.com/ctxsel/ctxsel/token"
)

// cmdTrainEvidence fits the evidence selector's sentence model: `ctxsel
// train evidence`.
func cmdTrainEvidence(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("train evidence", `Usage: ctxsel train evidence --data FILE[,FILE] --out MODEL.json [flags]

Fits the sentence model of the evidence selector (package evidence): a
logistic regression of "this sentence is gold evidence" on its BM25 and
dense similarity to the question, its passage's score and rank, its
position and length, its neighbours' and its header's match. Each --data file
needs gold_spans and is split by question id (eval.SplitOf, --split-seed;
60 % train, 20 % validation, 20 % test): the model is fitted on the train
questions of every file (each question weighing the same) and the packing
settings (--passages, --cost-exponents, --neighbors) are chosen by the
evidence-recall gain over the whole-passage top-k/budget envelope, averaged
over --budgets and over the validation questions of all files (each file's
gain weighted by its questions). Test questions are never read.
`, stderr)
	data := fs.String("data", "", "labelled JSONL files with gold_spans, comma-separated")
	out := fs.String("out", "", "write the model (JSON) here")
	pool := fs.Int("pool", 1000, "pad each question to this many passages")
	poolSeed := fs.Uint64("pool-seed", 1, "pooling seed")
	splitSeed := fs.Uint64("split-seed", 1, "seed of the train/validation/test split by question id")
	scorerName := fs.String("scorer", defaultScorer, "passage scorer: "+strings.Join(scorerNames(), ", "))
	passagesList := fs.String("passages", "10,20,30", "candidate passage counts to try (a model is fitted for each)")
	betas := fs.String("cost-exponents", "0,0.5,1", "token prices to try: a sentence's priority is p / tokens^β")
	neighborsList := fs.String("neighbors", "0,1", "neighbor settings to try")
	budgets := fs.String("budgets", "300,500,1000", "token budgets the validation gain is averaged over")
	l2 := fs.Float64("l2", 1, "ridge penalty on the standardised weights")
	encoding := fs.String("encoding", token.Default, "token encoding: "+strings.Join(token.Encodings, ", "))
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *data == "" || *out == "" {
		return usageError{errors.New("train evidence: --data and --out are required")}
	}
	ints := func(name, s string) ([]int, error) {
		var v []int
		for _, x := range splitList(s) {
			n, err := strconv.Atoi(x)
			if err != nil || n < 0 {
				return nil, usageError{fmt.Errorf("train evidence: --%s: bad value %q", name, x)}
			}
			v = append(v, n)
		}
		if len(v) == 0 {
			return nil, usageError{fmt.Errorf("train evidence: --%s is empty", name)}
		}
		return v, nil
	}
	passes, err := ints("passages", *passagesList)
	if err != nil {
		return err
	}
	nbrs, err := ints("neighbors", *neighborsList)
	if err != nil {
		return err
	}
	buds, err := ints("budgets", *budgets)
	if err != nil {
		return err
	}
	var bs []float64
	for _, x := range splitList(*betas) {
		v, err := strconv.ParseFloat(x, 64)
		if err != nil || v < 0 || v > 2 {
			return usageError{fmt.Errorf("train evidence: --cost-exponents: bad value %q (want 0…2)", x)}
		}
		bs = append(bs, v)
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
	base, err := evidenceBase(scorers, counter)
	if err != nil {
		return err
	}
	start := time.Now()
	type set struct {
		name       string
		train, val []dataset.Record
		curves     []eval.QuestionCurve
	}
	var sets []set
	for _, path := range splitList(*data) {
		recs, err := dataset.LoadFile(path)
		if err != nil {
			return err
		}
		pooled, err := dataset.Pool(recs, *pool, *poolSeed)
		if err != nil {
			return err
		}
		s := set{name: filepath.Base(path), train: dataset.FilterSplit(pooled, dataset.SplitTrain, *splitSeed), val: dataset.FilterSplit(pooled, dataset.SplitValidation, *splitSeed)}
		var keep []dataset.Record
		for _, r := range s.train {
			if r.HasSpans() {
				keep = append(keep, r)
			}
		}
		s.train = keep
		if len(s.train) == 0 || len(s.val) == 0 {
			return fmt.Errorf("train evidence: %s: %d train and %d validation questions with gold_spans", path, len(s.train), len(s.val))
		}
		fmt.Fprintf(stderr, "%s: %d train, %d validation questions (pool %d)\n", s.name, len(s.train), len(s.val), *pool)
		if s.curves, _, err = eval.Curves(ctx, s.train, scorer, counter, 0); err != nil {
			return err
		}
		sets = append(sets, s)
	}

	// one model per candidate count, fitted on the train questions
	models := map[int]*evidence.Model{}
	for _, m := range passes {
		var xs [][]float64
		var ys []bool
		var qRows []int // rows per question
		pos := 0
		for _, s := range sets {
			opt := base
			opt.Budget, opt.Passages = 1, m
			sel, err := evidence.New(opt)
			if err != nil {
				return err
			}
			for qi, r := range s.train {
				q, err := textQuery(r, s.curves[qi])
				if err != nil {
					return err
				}
				fs, err := sel.Features(ctx, q)
				if err != nil {
					return fmt.Errorf("train evidence: %s %s: %w", s.name, r.ID, err)
				}
				for _, f := range fs {
					xs = append(xs, f.Features)
					gold := goldSentence(r.Passages[f.Passage].GoldSpans, f.Span)
					ys = append(ys, gold)
					if gold {
						pos++
					}
				}
				qRows = append(qRows, len(fs))
			}
		}
		// every question weighs the same, whatever its sentences; the
		// weights sum to the rows, so the ridge penalty means the same
		// whatever the data's size
		var ws []float64
		for _, n := range qRows {
			for range n {
				ws = append(ws, float64(len(xs))/float64(len(qRows)*n))
			}
		}
		model, err := evidence.Fit(xs, ys, ws, evidence.FitOptions{L2: *l2})
		if err != nil {
			return fmt.Errorf("train evidence: passages=%d: %w", m, err)
		}
		model.Passages = m
		models[m] = model
		fmt.Fprintf(stderr, "passages=%d: fitted on %d sentences (%d gold) in %s\n", m, len(xs), pos, time.Since(start).Round(time.Second))
	}

	// choose the packing settings on the validation questions
	type setting struct {
		m     int
		beta  float64
		nbr   int
		gains map[string]float64 // per file and budget
		mean  float64
	}
	var grid []*setting
	var sels []ctxsel.TextSelector
	var owner []*setting
	var budgetOf []int
	for _, m := range passes {
		for _, b := range bs {
			for _, n := range nbrs {
				st := &setting{m: m, beta: b, nbr: n, gains: map[string]float64{}}
				grid = append(grid, st)
				model := *models[m]
				model.CostExponent, model.Neighbors = b, n
				for _, bud := range buds {
					opt := base
					opt.Budget, opt.Model, opt.Neighbors = bud, &model, -1
					s, err := evidence.New(opt)
					if err != nil {
						return err
					}
					sels = append(sels, namedSelector{s, fmt.Sprintf("m=%d,beta=%g,nbr=%d,budget=%d", m, b, n, bud)})
					owner = append(owner, st)
					budgetOf = append(budgetOf, bud)
				}
			}
		}
	}
	nVal := 0
	for _, s := range sets {
		nVal += len(s.val)
	}
	for _, s := range sets {
		rep, err := eval.Run(ctx, s.val, scorer, eval.Options{Counter: counter, TextSelectors: sels, Bootstrap: -1})
		if err != nil {
			return fmt.Errorf("train evidence: validate on %s: %w", s.name, err)
		}
		for i, r := range rep.Results {
			if r.EvidenceResult == nil {
				return fmt.Errorf("train evidence: %s has no gold_spans on its validation questions", s.name)
			}
			owner[i].gains[fmt.Sprintf("%s@%d", s.name, budgetOf[i])] = r.EvidenceGain
			// every validation question weighs the same
			owner[i].mean += r.EvidenceGain * float64(len(s.val)) / float64(nVal*len(buds))
		}
		fmt.Fprintf(stderr, "validated on %s (%s)\n", s.name, time.Since(start).Round(time.Second))
	}
	sort.SliceStable(grid, func(a, b int) bool { return grid[a].mean > grid[b].mean })
	best := grid[0]
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	var cols []string
	for _, s := range sets {
		for _, b := range buds {
			cols = append(cols, fmt.Sprintf("%s@%d", s.name, b))
		}
	}
	fmt.Fprintf(tw, "passages\tβ\tneighbors\t%s\tmean gain\t\n", strings.Join(cols, "\t"))
	for _, st := range grid {
		fmt.Fprintf(tw, "%d\t%g\t%d\t", st.m, st.beta, st.nbr)
		for _, c := range cols {
			fmt.Fprintf(tw, "%+.3f\t", st.gains[c])
		}
		fmt.Fprintf(tw, "%+.3f\t\n", st.mean)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "gain = evidence recall − whole passages' top-k/budget envelope at the same mean tokens, on the validation questions.")
	model := *models[best.m]
	model.CostExponent, model.Neighbors = best.beta, best.nbr
	model.Provenance = map[string]string{
		"data":    *data,
		"split":   fmt.Sprintf("eval.SplitOf seed %d: fitted on train, settings chosen on validation; test never read", *splitSeed),
		"scorer":  scorer.Name(),
		"pool":    fmt.Sprintf("%d passages, seed %d", *pool, *poolSeed),
		"chosen":  fmt.Sprintf("passages=%d cost_exponent=%g neighbors=%d: mean validation gain %+.4f over budgets %s", best.m, best.beta, best.nbr, best.mean, *budgets),
		"command": "ctxsel train evidence " + strings.Join(args, " "),
	}
	b, err := model.Marshal()
	if err != nil {
		return err
	}
	if err := atomicfile.Write(*out, func(w io.Writer) error { _, err := w.Write(append(b, '\n')); return err }); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "chose passages=%d, cost exponent %g, neighbors=%d (mean validation gain %+.3f); wrote %s\n", best.m, best.beta, best.nbr, best.mean, *out)
	return nil
}

// goldSentence labels a candidate sentence: it holds at least SpanCoverage
// of a gold span's bytes, or at least half its own bytes are gold (a gold
// sentence our splitter cut in two).
func goldSentence(gold [][2]int, s [2]int) bool {
	for _, g := range gold {
		lo, hi := max(g[0], s[0]), min(g[1], s[1])
		if hi <= lo {
			continue
		}
		in := float64(hi - lo)
		if in >= eval.SpanCoverage*float64(g[1]-g[0]) || in >= 0.5*float64(s[1]-s[0]) {
			return true
		}
	}
	return false
}

// textQuery rebuilds the query a selector sees for a scored record.
func textQuery(r dataset.Record, q eval.QuestionCurve) (ctxsel.TextQuery, error) {
	cands := make([]ctxsel.Candidate, len(r.Passages))
	texts := make([]string, len(r.Passages))
	for i, p := range r.Passages {
		cands[i] = ctxsel.Candidate{ID: p.ID, Score: q.Scores[i], Tokens: q.Tokens[i]}
		texts[i] = p.Text
	}
	c, err := ctxsel.NewCurve(cands)
	if err != nil {
		return ctxsel.TextQuery{}, err
	}
	return ctxsel.TextQuery{Question: r.Question, Curve: c, Texts: texts}, nil
}

// evidenceBase is the options every evidence selector of a run shares: the
// use-lite embedder of the scorer set (one cache) and the token counter.
func evidenceBase(scorers *scorerSet, counter token.Counter) (evidence.Options, error) {
	e, err := scorers.embedderOf(defaultDense)
	if err != nil {
		return evidence.Options{}, fmt.Errorf("evidence: %w", err)
	}
	return evidence.Options{Embedder: e, Counter: counter, Neighbors: -1}, nil
}

// namedSelector renames a selector's report row.
type namedSelector struct {
	ctxsel.TextSelector
	name string
}

func (n namedSelector) Name() string { return n.name }
