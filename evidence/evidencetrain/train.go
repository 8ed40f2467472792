// Package evidencetrain fits and tunes the evidence selector's sentence
// model (package evidence) on labelled data with sentence labels
// (gold_spans): the learners (FitLogistic, FitTrees), the rows (every
// candidate sentence of the train questions, labelled by the gold spans,
// both passes of the second hop), and the choice of every setting on the
// validation questions by the evidence-recall gain over the whole-passage
// top-k/budget envelope (package eval). Test questions are never read.
// `ctxsel train evidence` parses flags and calls Train.
package evidencetrain

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/eval"
	"github.com/ctxsel/ctxsel/evidence"
	"github.com/ctxsel/ctxsel/score"
)

// Options configure Train. Data, Scorer and Base.Embedder are required;
// zero values of the rest take the defaults.
type Options struct {
	// Data are labelled files (eval's format with gold_spans).
	Data []string
	// Pool pads each question to this many passages (default 1000),
	// seeded by PoolSeed (default 1); SplitSeed seeds the split by
	// question id (default 1; dataset.SplitOf).
	Pool                int
	PoolSeed, SplitSeed uint64
	// Pools, when set, replaces Pool: every file is read once per pool
	// size (0: the question's own passages, as eval --pool 0), each a set
	// of its own, so the rows and the choice on validation mix the
	// settings (an index of many documents and one file asked alone).
	Pools []int
	// Limit keeps the first Limit questions of each file (0: all).
	Limit int
	// Sample keeps Sample questions of each file (0: all), chosen by a
	// hash of their id (SampleOf) rather than by position: files in
	// document order (an episode's questions together) would otherwise
	// give a few documents. Applied after Limit, before pooling.
	Sample int
	// Folds, when above 1, cross-validates instead of the fixed split:
	// each file's train and validation questions together are cut into
	// Folds parts (FoldOf), part Fold validates and the rest train. Test
	// questions are never read either way.
	Folds, Fold int
	// Scorer scores the passages (the curve the selector reads).
	Scorer score.Scorer
	// Base holds the selector's embedder and token counter.
	Base evidence.Options
	// Learners to fit: evidence.LearnerLogistic, evidence.LearnerTrees
	// (default both).
	Learners []string
	Logistic LogisticOptions
	Trees    TreeOptions
	// TreeCounts are the boosting rounds tried on validation (prefixes of
	// one fit; default 50, 100, 200 and Trees.Trees).
	TreeCounts []int
	// Features the learners read (default every evidence.FeatureNames).
	Features []string
	// Passages are the candidate counts tried (default 20), Hops the second
	// hop's sizes (default 0 and 5; 0 is no hop), Anchors its anchors
	// (default 3).
	Passages []int
	Hops     []int
	Anchors  int
	// CostExponents, Neighbors, Floors and Stops are the packing settings
	// tried (defaults 0, 0.5, 1; 0; 0 and a few floors; 0 and a few
	// stops); Budgets the budgets the validation gain is averaged over
	// (default 300, 500, 1000, 1500).
	CostExponents []float64
	Neighbors     []int
	Floors        []float64
	Stops         []float64
	Budgets       []int
	// FloorTolerance: a floor and a stop are admitted only if validation
	// recall stays within this of the same setting without either at
	// every budget (default 0.01), since sending less raises the gain over
	// an envelope read at fewer tokens even as recall falls.
	FloorTolerance float64
	// TieTolerance: settings whose mean validation gain is within this of
	// the best are taken as tied (the differences are far inside the
	// validation noise), and the cheapest of them is chosen: fewest
	// candidate passages, then the smaller hop (default 0.005).
	TieTolerance float64
	// From, when set, fits nothing: its learner and settings are kept,
	// and only its floor and stop are chosen again on validation (stage
	// 2), as for a model this function fitted.
	From *evidence.Model
	// Workers scores questions in parallel (0: GOMAXPROCS).
	Workers int
	// Log, when set, is told the progress.
	Log io.Writer
	// Command is recorded in the model's provenance.
	Command string
}

func (o *Options) defaults() {
	if o.Pool == 0 {
		o.Pool = 1000
	}
	if o.PoolSeed == 0 {
		o.PoolSeed = 1
	}
	if o.SplitSeed == 0 {
		o.SplitSeed = 1
	}
	if len(o.Learners) == 0 {
		o.Learners = []string{evidence.LearnerLogistic, evidence.LearnerTrees}
	}
	o.Trees.defaults()
	if len(o.TreeCounts) == 0 {
		o.TreeCounts = []int{50, 100, 200, o.Trees.Trees}
	}
	if len(o.Features) == 0 {
		o.Features = evidence.FeatureNames
	}
	if len(o.Passages) == 0 {
		o.Passages = []int{20}
	}
	if len(o.Hops) == 0 {
		o.Hops = []int{0, 5}
	}
	if o.Anchors == 0 {
		o.Anchors = 3
	}
	if len(o.CostExponents) == 0 {
		o.CostExponents = []float64{0, 0.5, 1}
	}
	if len(o.Neighbors) == 0 {
		o.Neighbors = []int{0}
	}
	if len(o.Floors) == 0 {
		o.Floors = []float64{0, 0.001, 0.002, 0.005, 0.01, 0.02}
	}
	if len(o.Stops) == 0 {
		o.Stops = []float64{0, 0.98, 0.985, 0.99, 0.995}
	}
	if len(o.Budgets) == 0 {
		o.Budgets = []int{300, 500, 1000, 1500}
	}
	if o.FloorTolerance == 0 {
		o.FloorTolerance = 0.01
	}
	if o.TieTolerance == 0 {
		o.TieTolerance = 0.005
	}
}

// Setting is one model and packing measured on the validation questions.
type Setting struct {
	Learner      string  `json:"learner"`
	Trees        int     `json:"trees,omitempty"`
	Passages     int     `json:"passages"`
	Hop          int     `json:"hop"`
	HopRows      bool    `json:"hop_rows"` // fitted on the second pass's rows
	CostExponent float64 `json:"cost_exponent"`
	Neighbors    int     `json:"neighbors"`
	Floor        float64 `json:"floor"`
	Stop         float64 `json:"stop,omitempty"`
	// Gain and Recall per budget, over every validation question (each
	// file weighted by its questions); Mean is Gain's mean over the
	// budgets, the figure the choice maximises.
	Gain     map[int]float64 `json:"gain"`
	Recall   map[int]float64 `json:"recall"`
	Tokens   map[int]float64 `json:"tokens"`
	Mean     float64         `json:"mean_gain"`
	Admitted bool            `json:"admitted"`

	model *evidence.Model
}

func (s *Setting) name() string {
	l := s.Learner
	if s.Trees > 0 {
		l += ":" + strconv.Itoa(s.Trees)
	}
	rows := "pass1"
	if s.HopRows {
		rows = "pass2"
	}
	return fmt.Sprintf("%s/%s,m=%d,hop=%d,beta=%g,nbr=%d,floor=%g,stop=%g", l, rows, s.Passages, s.Hop, s.CostExponent, s.Neighbors, s.Floor, s.Stop)
}

// Result is what Train chose and everything it measured.
type Result struct {
	Model    *evidence.Model
	Chosen   *Setting
	Settings []*Setting
	// Train and Validation count the questions per file.
	Train, Validation map[string]int
}

type labelledSet struct {
	name       string
	train, val []dataset.Record
	curves     []eval.QuestionCurve
}

// Train fits the models on the train questions of every file and chooses
// the model and its settings on the validation questions.
func Train(ctx context.Context, opt Options) (*Result, error) {
	opt.defaults()
	if len(opt.Data) == 0 || opt.Scorer == nil || opt.Base.Embedder == nil {
		return nil, fmt.Errorf("evidence train: data, a scorer and an embedder are required")
	}
	for _, t := range opt.TreeCounts {
		if t < 1 || t > opt.Trees.Trees {
			return nil, fmt.Errorf("evidence train: tree count %d outside 1…%d", t, opt.Trees.Trees)
		}
	}
	start := time.Now()
	logf := func(format string, a ...any) {
		if opt.Log != nil {
			fmt.Fprintf(opt.Log, "[%s] "+format+"\n", append([]any{time.Since(start).Round(time.Second)}, a...)...)
		}
	}
	res := &Result{Train: map[string]int{}, Validation: map[string]int{}}
	var sets []*labelledSet
	for _, path := range opt.Data {
		recs, err := dataset.LoadFile(path)
		if err != nil {
			return nil, err
		}
		if opt.Limit > 0 && len(recs) > opt.Limit {
			recs = recs[:opt.Limit]
		}
		recs = sample(recs, opt.Sample)
		for _, size := range opt.pools() {
			pooled, err := dataset.Pool(recs, size, opt.PoolSeed)
			if err != nil {
				return nil, err
			}
			d := &labelledSet{name: setName(path, size, opt), val: dataset.FilterSplit(pooled, dataset.SplitValidation, opt.SplitSeed)}
			trainPart := dataset.FilterSplit(pooled, dataset.SplitTrain, opt.SplitSeed)
			if opt.Folds > 1 {
				trainPart, d.val = crossSplit(append(trainPart, d.val...), opt.Folds, opt.Fold)
			}
			for _, r := range trainPart {
				if r.HasSpans() {
					d.train = append(d.train, r)
				}
			}
			if len(d.train) == 0 || len(d.val) == 0 {
				return nil, fmt.Errorf("evidence train: %s: %d train and %d validation questions with gold_spans", path, len(d.train), len(d.val))
			}
			counter := opt.Base.Counter
			if opt.From == nil {
				if d.curves, _, err = eval.Curves(ctx, d.train, opt.Scorer, counter, opt.Workers); err != nil {
					return nil, err
				}
			}
			res.Train[d.name], res.Validation[d.name] = len(d.train), len(d.val)
			logf("%s: %d train, %d validation questions (pool %d), train scored", d.name, len(d.train), len(d.val), size)
			sets = append(sets, d)
		}
	}

	var stage1 []*Setting
	var top, best *Setting
	if opt.From != nil {
		s := fromSetting(opt.From)
		stage1 = []*Setting{s}
		if err := validate(ctx, sets, opt, stage1, logf); err != nil {
			return nil, err
		}
		s.Admitted, top, best = true, s, s
	} else {
		var err error
		if stage1, top, best, err = fitStage1(ctx, sets, opt, logf); err != nil {
			return nil, err
		}
	}

	// stage 2: floors and stops for the best setting, admitted only if
	// recall stays within the tolerance at every budget
	var stage2 []*Setting
	for _, f := range opt.Floors {
		for _, st := range opt.Stops {
			if f == 0 && st == 0 {
				continue
			}
			s := *best
			mod := *best.model
			mod.Floor, mod.Stop = f, st
			s.Floor, s.Stop, s.model, s.Admitted = f, st, &mod, false
			stage2 = append(stage2, &s)
		}
	}
	if len(stage2) > 0 {
		if err := validate(ctx, sets, opt, stage2, logf); err != nil {
			return nil, err
		}
	}
	chosen := best
	for _, s := range stage2 {
		s.Admitted = true
		for _, b := range opt.Budgets {
			if s.Recall[b] < best.Recall[b]-opt.FloorTolerance {
				s.Admitted = false
			}
		}
		if s.Admitted && s.Mean > chosen.Mean {
			chosen = s
		}
	}
	res.Settings = append(stage1, stage2...)
	res.Chosen = chosen
	model := *chosen.model
	if opt.From != nil {
		// the learner is From's: its provenance stays, the new packing is added
		model.Provenance = maps.Clone(opt.From.Provenance)
		if model.Provenance == nil {
			model.Provenance = map[string]string{}
		}
		model.Provenance["packing"] = fmt.Sprintf("floor and stop chosen again on validation (%s; %s): %s, mean validation gain %+.4f over budgets %v (%+.4f with floor 0 and stop 0)",
			strings.Join(opt.Data, ","), splitText(opt), chosen.name(), chosen.Mean, opt.Budgets, best.Mean)
		if opt.Command != "" {
			model.Provenance["packing_command"] = opt.Command
		}
	} else {
		model.Provenance = map[string]string{
			"data":     strings.Join(opt.Data, ","),
			"split":    splitText(opt),
			"scorer":   opt.Scorer.Name(),
			"pool":     poolText(opt),
			"learner":  learnerText(chosen, opt),
			"chosen":   fmt.Sprintf("%s: mean validation gain %+.4f over budgets %v (the best stage-1 setting, %s, %+.4f; ties within %g broken toward the cheapest)", chosen.name(), chosen.Mean, opt.Budgets, top.name(), top.Mean, opt.TieTolerance),
			"features": strings.Join(opt.Features, ","),
		}
		if opt.Command != "" {
			model.Provenance["command"] = opt.Command
		}
	}
	if err := model.Validate(); err != nil {
		return nil, fmt.Errorf("evidence train: the chosen model: %w", err)
	}
	res.Model = &model
	return res, nil
}

// fromSetting is the setting of a given model without a floor or stop.
func fromSetting(m *evidence.Model) *Setting {
	mod := *m
	mod.Floor, mod.Stop = 0, 0
	s := &Setting{Learner: mod.Learner, Passages: mod.Passages, Hop: mod.Hop, HopRows: mod.Hop > 0, CostExponent: mod.CostExponent,
		Neighbors: mod.Neighbors, model: &mod}
	if s.Learner == "" {
		s.Learner = evidence.LearnerLogistic
	}
	if mod.Forest != nil {
		s.Trees = len(mod.Forest.Trees)
	}
	return s
}

// fitStage1 fits the models on the train questions and measures every
// model (tree counts as prefixes), hop, cost exponent and neighbours
// setting, without a floor or stop, on the validation questions: stage1
// holds them all, top the best, best the cheapest of those tied with it.
func fitStage1(ctx context.Context, sets []*labelledSet, opt Options, logf func(string, ...any)) (stage1 []*Setting, top, best *Setting, err error) {
	// the models: per candidate count and learner, one fitted on the first
	// pass's rows and, when a hop is tried, one on the second pass's
	type variant struct {
		learner string
		m       int
		hopRows bool
		model   *evidence.Model
	}
	var variants []variant
	maxHop := slices.Max(opt.Hops)
	for _, m := range opt.Passages {
		rows1, err := collectRows(ctx, sets, opt, m, nil)
		if err != nil {
			return nil, nil, nil, err
		}
		logf("passages=%d: %d first-pass rows (%d gold)", m, len(rows1.rows.X), rows1.positives())
		for _, l := range opt.Learners {
			m0, err := fit(l, rows1.rows, opt)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("evidence train: passages=%d %s: %w", m, l, err)
			}
			m0.Passages = m
			variants = append(variants, variant{l, m, false, m0})
			logf("passages=%d: %s fitted on the first pass", m, l)
			if maxHop == 0 {
				continue
			}
			// anchors for the second pass's rows come from a model that
			// did not see the question (two folds), as at inference
			folds := [2]*evidence.Model{}
			for k := range folds {
				if folds[k], err = fit(l, rows1.fold(k), opt); err != nil {
					return nil, nil, nil, fmt.Errorf("evidence train: passages=%d %s fold %d: %w", m, l, k, err)
				}
				folds[k].Passages = m
			}
			rows2, err := collectRows(ctx, sets, opt, m, func(q int) *evidence.Model {
				other := folds[1-q%2]
				c := *other
				c.Hop, c.Anchors = maxHop, opt.Anchors
				return &c
			})
			if err != nil {
				return nil, nil, nil, err
			}
			m1, err := fit(l, rows2.rows, opt)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("evidence train: passages=%d %s second pass: %w", m, l, err)
			}
			m1.Passages, m1.Anchors = m, opt.Anchors
			variants = append(variants, variant{l, m, true, m1})
			logf("passages=%d: %s fitted on %d second-pass rows (%d gold)", m, l, len(rows2.rows.X), rows2.positives())
		}
	}

	// stage 1: every model (tree counts as prefixes) and hop, every cost
	// exponent and neighbours, without a floor
	for _, v := range variants {
		counts := []int{0}
		if v.learner == evidence.LearnerTrees {
			counts = opt.TreeCounts
		}
		hops := []int{0}
		if v.hopRows {
			hops = opt.Hops
		}
		for _, t := range counts {
			base := v.model
			if t > 0 {
				base = v.model.Truncated(t)
			}
			for _, h := range hops {
				for _, beta := range opt.CostExponents {
					for _, nbr := range opt.Neighbors {
						mod := *base
						mod.CostExponent, mod.Neighbors, mod.Hop, mod.Floor = beta, nbr, h, 0
						if h == 0 {
							mod.Anchors = 0
						} else {
							mod.Anchors = opt.Anchors
						}
						stage1 = append(stage1, &Setting{Learner: v.learner, Trees: t, Passages: v.m, Hop: h, HopRows: v.hopRows,
							CostExponent: beta, Neighbors: nbr, model: &mod})
					}
				}
			}
		}
	}
	if err := validate(ctx, sets, opt, stage1, logf); err != nil {
		return nil, nil, nil, err
	}
	top = stage1[0]
	for _, s := range stage1 {
		s.Admitted = true
		if s.Mean > top.Mean {
			top = s
		}
	}
	best = cheapest(stage1, top.Mean-opt.TieTolerance)
	logf("stage 1: best %s, mean validation gain %+.4f; chosen (the cheapest within %g) %s, %+.4f", top.name(), top.Mean, opt.TieTolerance, best.name(), best.Mean)
	return stage1, top, best, nil
}

// cheapest is the setting of mean gain at least floor that costs least to
// run: fewest candidate passages (sentences to embed and score), then the
// smaller hop; among equals the better gain. (Trees cost little: their
// count is chosen by gain alone.)
func cheapest(settings []*Setting, floor float64) *Setting {
	var best *Setting
	for _, s := range settings {
		if s.Mean < floor {
			continue
		}
		if best == nil {
			best = s
			continue
		}
		if c := cmp.Or(cmp.Compare(s.Passages, best.Passages), cmp.Compare(s.Hop, best.Hop)); c < 0 || (c == 0 && s.Mean > best.Mean) {
			best = s
		}
	}
	return best
}

func learnerText(s *Setting, opt Options) string {
	rows := "the first pass's rows"
	if s.HopRows {
		rows = fmt.Sprintf("the second pass's rows (anchors %d from two-fold first-pass models)", opt.Anchors)
	}
	if s.Learner == evidence.LearnerTrees {
		return fmt.Sprintf("boosted trees: %d of depth %d, rate %g, L2 %g, min Hessian %g, %d bins; fitted on %s",
			s.Trees, opt.Trees.Depth, opt.Trees.Rate, opt.Trees.L2, opt.Trees.MinHessian, opt.Trees.Bins, rows)
	}
	return fmt.Sprintf("logistic regression, L2 %g; fitted on %s", opt.Logistic.L2, rows)
}

func fit(learner string, rows Rows, opt Options) (*evidence.Model, error) {
	switch learner {
	case evidence.LearnerLogistic:
		return FitLogistic(rows, opt.Features, opt.Logistic)
	case evidence.LearnerTrees:
		return FitTrees(rows, opt.Features, opt.Trees)
	}
	return nil, fmt.Errorf("unknown learner %q (want %s or %s)", learner, evidence.LearnerLogistic, evidence.LearnerTrees)
}

// labelled are rows with the question each came from.
type labelled struct {
	rows     Rows
	question []int // a running number over every file's train questions
}

func (l labelled) positives() int {
	n := 0
	for _, y := range l.rows.Y {
		if y {
			n++
		}
	}
	return n
}

// fold is the rows of the questions not in fold k (of two, by question
// number): what a model that never saw fold k's questions is fitted on.
func (l labelled) fold(k int) Rows {
	var r Rows
	for i, q := range l.question {
		if q%2 != k {
			r.X = append(r.X, l.rows.X[i])
			r.Y = append(r.Y, l.rows.Y[i])
			r.W = append(r.W, l.rows.W[i])
		}
	}
	return r
}

// collectRows computes the features of every train question's candidate
// sentences at m candidates, with the second hop when hopModel gives a
// model for the question (by its running number), and labels them. Every
// question weighs the same, whatever its sentences; the weights sum to the
// rows, so a penalty means the same whatever the data's size.
func collectRows(ctx context.Context, sets []*labelledSet, opt Options, m int, hopModel func(q int) *evidence.Model) (labelled, error) {
	var out labelled
	var perQuestion []int
	qn := 0
	for _, d := range sets {
		for qi, r := range d.train {
			o := opt.Base
			o.Budget, o.Passages, o.Hop = 1, m, evidence.HopOff
			// the units the fitted model will read (rows as units when it
			// reads unit_row), not the embedded model's default
			o.Units = (&evidence.Model{Features: opt.Features}).Units()
			if hopModel != nil {
				o.Model, o.Hop = hopModel(qn), 0
			}
			sel, err := evidence.New(o)
			if err != nil {
				return labelled{}, err
			}
			q, err := TextQuery(r, d.curves[qi])
			if err != nil {
				return labelled{}, err
			}
			fs, err := sel.Features(ctx, q)
			if err != nil {
				return labelled{}, fmt.Errorf("evidence train: %s %s: %w", d.name, r.ID, err)
			}
			rows := 0
			for _, f := range fs {
				if f.Kind == evidence.Context {
					continue // sent only with its unit, never scored as evidence
				}
				out.rows.X = append(out.rows.X, f.Features)
				out.rows.Y = append(out.rows.Y, GoldSentence(r.Passages[f.Passage].GoldSpans, f.Span))
				out.question = append(out.question, qn)
				rows++
			}
			perQuestion = append(perQuestion, rows)
			qn++
		}
	}
	n := float64(len(out.rows.X))
	for _, q := range out.question {
		out.rows.W = append(out.rows.W, n/(float64(len(perQuestion))*float64(perQuestion[q])))
	}
	return out, nil
}

// GoldSentence labels a candidate sentence: it holds at least
// eval.SpanCoverage of a gold span's bytes, or at least half its own bytes
// are gold (a gold sentence the splitter cut in two).
func GoldSentence(gold [][2]int, s [2]int) bool {
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

// TextQuery rebuilds the query a selector sees for a scored record.
func TextQuery(r dataset.Record, q eval.QuestionCurve) (ctxsel.TextQuery, error) {
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

// validate measures every setting at every budget on the validation
// questions of every file (one eval run per file; each model scores a
// question once, shared by its packings) and fills Gain, Recall, Tokens
// and Mean.
func validate(ctx context.Context, sets []*labelledSet, opt Options, settings []*Setting, logf func(string, ...any)) error {
	var sels []ctxsel.TextSelector
	type slot struct {
		s      *Setting
		budget int
	}
	var slots []slot
	preps := map[any]*prepCache{} // by ScoringKey
	for _, s := range settings {
		for _, b := range opt.Budgets {
			o := opt.Base
			o.Budget, o.Model, o.Neighbors = b, s.model, -1
			sel, err := evidence.New(o)
			if err != nil {
				return err
			}
			// packings of one scoring share its cache: the same learner,
			// candidates and hop
			key := sel.ScoringKey()
			if preps[key] == nil {
				preps[key] = newPrepCache()
			}
			sels = append(sels, &replay{name: fmt.Sprintf("%s@%d", s.name(), b), sel: sel, cache: preps[key]})
			slots = append(slots, slot{s, b})
		}
		s.Gain, s.Recall, s.Tokens, s.Mean = map[int]float64{}, map[int]float64{}, map[int]float64{}, 0
	}
	nVal := 0
	for _, d := range sets {
		nVal += len(d.val)
	}
	for _, d := range sets {
		rep, err := eval.Run(ctx, d.val, opt.Scorer, eval.Options{Counter: opt.Base.Counter, Strategies: eval.TextSelectors(sels...), Bootstrap: -1, Workers: opt.Workers})
		if err != nil {
			return fmt.Errorf("evidence train: validate on %s: %w", d.name, err)
		}
		w := float64(len(d.val)) / float64(nVal)
		for i, r := range rep.Results {
			if r.EvidenceResult == nil {
				return fmt.Errorf("evidence train: %s has no gold_spans on its validation questions", d.name)
			}
			sl := slots[i]
			sl.s.Gain[sl.budget] += w * r.EvidenceGain
			sl.s.Recall[sl.budget] += w * r.EvidenceRecall
			sl.s.Tokens[sl.budget] += w * r.EvidenceTokens
		}
		logf("validated %d settings on %s", len(settings), d.name)
	}
	for _, s := range settings {
		for _, b := range opt.Budgets {
			s.Mean += s.Gain[b] / float64(len(opt.Budgets))
		}
	}
	return nil
}

// WriteTable prints the validation table, best first.
func WriteTable(w io.Writer, res *Result, budgets []int) error {
	ss := slices.Clone(res.Settings)
	sort.SliceStable(ss, func(a, b int) bool { return cmp.Compare(ss[b].Mean, ss[a].Mean) < 0 })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "setting\t")
	for _, b := range budgets {
		fmt.Fprintf(tw, "recall@%d\tgain@%d\t", b, b)
	}
	fmt.Fprint(tw, "mean gain\tadmitted\t\n")
	for _, s := range ss {
		fmt.Fprintf(tw, "%s\t", s.name())
		for _, b := range budgets {
			fmt.Fprintf(tw, "%.3f\t%+.3f\t", s.Recall[b], s.Gain[b])
		}
		fmt.Fprintf(tw, "%+.4f\t%v\t\n", s.Mean, s.Admitted)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "gain = evidence recall − whole passages' top-k/budget envelope at the same mean tokens, on the validation questions (each file weighted by its questions); chose %s\n", res.Chosen.name())
	return err
}

func splitText(opt Options) string {
	if opt.Folds > 1 {
		return fmt.Sprintf("dataset.SplitOf seed %d, train and validation cut in %d folds (evidencetrain.FoldOf): fitted on the others, settings chosen on fold %d; test never read", opt.SplitSeed, opt.Folds, opt.Fold)
	}
	return fmt.Sprintf("dataset.SplitOf seed %d: fitted on train, settings chosen on validation; test never read", opt.SplitSeed)
}

// pools are the pool sizes each file is read at: Pools, else Pool.
func (o Options) pools() []int {
	if len(o.Pools) > 0 {
		return o.Pools
	}
	return []int{o.Pool}
}

// setName names a file read at one pool size: its base name, and the
// size after "@" when several sizes are read.
func setName(path string, size int, o Options) string {
	if len(o.Pools) > 1 {
		return fmt.Sprintf("%s@%d", filepath.Base(path), size)
	}
	return filepath.Base(path)
}

// poolText is the provenance of the pooling.
func poolText(o Options) string {
	if len(o.Pools) > 1 {
		return fmt.Sprintf("each file at %v passages (0: its own), seed %d", o.Pools, o.PoolSeed)
	}
	return fmt.Sprintf("%d passages, seed %d", o.pools()[0], o.PoolSeed)
}

// FoldOf is a question's part of folds for cross-validation: a hash of its
// id (SHA-256 of "fold:" and the id), independent of dataset.SplitOf.
func FoldOf(id string, folds int) int {
	h := sha256.Sum256([]byte("fold:" + id))
	return int(binary.BigEndian.Uint64(h[:8]) % uint64(folds))
}

// SampleOf is a question's sampling key: the questions with the smallest
// keys are the ones Options.Sample keeps (SHA-256 of "sample:" and the id,
// independent of dataset.SplitOf and FoldOf, so a sample keeps the split's
// proportions).
func SampleOf(id string) uint64 {
	h := sha256.Sum256([]byte("sample:" + id))
	return binary.BigEndian.Uint64(h[:8])
}

// sample keeps the n records of smallest SampleOf, in their order (all of
// them when n is 0 or at least their number).
func sample(recs []dataset.Record, n int) []dataset.Record {
	if n <= 0 || len(recs) <= n {
		return recs
	}
	keys := make([]uint64, len(recs))
	for i, r := range recs {
		keys[i] = SampleOf(r.ID)
	}
	sorted := append([]uint64(nil), keys...)
	slices.Sort(sorted)
	cut := sorted[n-1]
	out := make([]dataset.Record, 0, n)
	for i, r := range recs {
		if keys[i] <= cut && len(out) < n {
			out = append(out, r)
		}
	}
	return out
}

// crossSplit cuts records into the train part (every fold but fold) and
// the validation part (fold).
func crossSplit(recs []dataset.Record, folds, fold int) (train, val []dataset.Record) {
	for _, r := range recs {
		if FoldOf(r.ID, folds) == fold {
			val = append(val, r)
		} else {
			train = append(train, r)
		}
	}
	return train, val
}
