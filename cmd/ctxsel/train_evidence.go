package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/ctxsel/ctxsel/embed/embedders"
	"github.com/ctxsel/ctxsel/score"
	"io"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ctxsel/ctxsel/evidence"
	"github.com/ctxsel/ctxsel/evidence/evidencetrain"
	"github.com/ctxsel/ctxsel/internal/atomicfile"
	"github.com/ctxsel/ctxsel/token"
)

// cmdTrainEvidence fits the evidence selector's sentence model: `ctxsel
// train evidence`. The work is package evidencetrain's; this parses flags.
func cmdTrainEvidence(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("train evidence", `Usage: ctxsel train evidence --data FILE[,FILE] --out MODEL.json [flags]

Fits the sentence model of the evidence selector (package evidence; the
work is package evidencetrain's): "this sentence is gold evidence" from its
features (evidence.FeatureNames), by logistic regression or boosted trees.
Each --data file needs gold_spans and is split by question id
(dataset.SplitOf, --split-seed; 60 % train, 20 % validation, 20 % test). The
models are fitted on the train questions of every file (each question
weighing the same): on the first pass's candidate sentences and, for the
second hop (--hops), on the second pass's, its anchors from two-fold
first-pass models. Every setting (learner, --tree-counts, --hops,
--cost-exponents, --neighbors, then --floors and --stops for the best) is
chosen by the evidence-recall gain over the whole-passage top-k/budget
envelope, averaged over --budgets and the validation questions of all files.
A floor or a stop is admitted only if validation recall stays within
--floor-tolerance of neither at every budget. With --folds K --fold F the
train and validation questions are cut into K folds instead (by id): fold F
validates, the others train (cross-validation; test is never read). With
--from MODEL nothing is fitted: MODEL's learner and settings are kept and only
its floor and stop are chosen again (--floors, --stops) on the validation
questions, by the same rule. With --from MODEL --calibrate METHOD (isotonic,
platt, auto, none) nothing is chosen either: MODEL's probabilities on the
validation questions are measured (expected calibration error in
--calibration-bins bins of equal count, per file, in --report) and, unless
METHOD is none, a monotone map fitted on them is written into the model (auto:
both fitted on one half of validation, the better on the other half kept;
--calibrate-kinds: one more per kind of text, evidence.TextKind);
choose the floor and stop of the calibrated model again with --from. With
--from MODEL --kind turns=FILE,table=FILE the models in FILE score the units
of the passages the splitter reads as that kind of text (evidence.RouteOf:
turns, table rows), MODEL everything else (evidence.Model.Kinds, format
version 4), --blend W giving each of them the prose model's weight W in its
units' log-odds (a fit has none: the shipped turns model's 0.5 is set so); without --data the combined model is written as it is, with
--data its floor and stop are chosen again (or, with --calibrate, it is
calibrated) as for any --from model. Settings within --tie-tolerance of the best mean gain tie, and the
cheapest of them (fewest passages, then the smaller hop) is chosen. Test questions are never read.
`, stderr)
	data := fs.String("data", "", "labelled JSONL files with gold_spans, comma-separated")
	out := fs.String("out", "", "write the model (JSON) here")
	report := fs.String("report", "", "write every validated setting (JSON) here")
	pool := fs.Int("pool", 1000, "pad each question to this many passages")
	poolsList := fs.String("pools", "", "instead of --pool: read every file at each of these pool sizes (0: its own passages), e.g. 1000,0")
	poolSeed := fs.Uint64("pool-seed", 1, "pooling seed")
	splitSeed := fs.Uint64("split-seed", 1, "seed of the train/validation/test split by question id")
	scorerName := fs.String("scorer", score.DefaultScorer, "passage scorer: "+strings.Join(newScorerSet().Names(), ", "))
	learners := fs.String("learner", "logistic,trees", "learners to fit and compare: logistic, trees")
	trees := fs.Int("trees", 400, "boosting rounds of the trees learner")
	treeCounts := fs.String("tree-counts", "50,100,200,400", "rounds tried on validation (prefixes of one fit)")
	depth := fs.Int("depth", 3, "depth of every tree")
	rate := fs.Float64("rate", 0.1, "learning rate of the trees")
	features := fs.String("features", "all", "features the learners read: all, v1 (the first 14), or names, comma-separated")
	passagesList := fs.String("passages", "20", "candidate passage counts to try (models fitted for each)")
	hops := fs.String("hops", "0,5", "second-hop sizes to try (0: none)")
	anchors := fs.Int("anchors", 3, "first-pass sentences the second hop reads for titles")
	betas := fs.String("cost-exponents", "0,0.5,1", "token prices to try: a sentence's priority is p / tokens^β")
	neighborsList := fs.String("neighbors", "0", "neighbor settings to try")
	floors := fs.String("floors", "0,0.001,0.002,0.005,0.01,0.02", "probability floors tried on the best setting")
	stops := fs.String("stops", "0,0.98,0.985,0.99,0.995", "early stops tried with the floors: packing ends once the kept sentences hold this share of the expected evidence (0: none)")
	floorTol := fs.Float64("floor-tolerance", 0.01, "a floor or stop must keep validation recall within this at every budget")
	tieTol := fs.Float64("tie-tolerance", 0.005, "settings within this mean validation gain of the best tie; the cheapest is chosen")
	budgets := fs.String("budgets", "300,500,1000,1500", "token budgets the validation gain is averaged over")
	l2 := fs.Float64("l2", 1, "ridge penalty of the logistic learner (standardised weights) and of the trees' leaves")
	workers := fs.Int("workers", 0, "questions scored in parallel (0 = number of CPUs)")
	limit := fs.Int("limit", 0, "use only the first N questions of each file (0 = all)")
	calibrate := fs.String("calibrate", "", "with --from: fit a calibration map (isotonic, platt, auto) or only measure (none)")
	calKinds := fs.Bool("calibrate-kinds", false, "with --calibrate: also a map per kind of text (turns, table, prose; evidence.TextKind)")
	calPlot := fs.String("calibration-plot", "", "with --calibrate: write the reliability plot (SVG) here")
	calBins := fs.Int("calibration-bins", 15, "with --calibrate: bins of equal count of the calibration error")
	sampleN := fs.Int("sample", 0, "use only N questions of each file, chosen by a hash of their id (0 = all)")
	from := fs.String("from", "", "fit nothing: choose only the floor and stop of this model file again on validation")
	kindList := fs.String("kind", "", "with --from: models by kind of text, KIND=FILE comma-separated (kinds: "+strings.Join(evidence.RouteKinds(), ", ")+")")
	blend := fs.Float64("blend", -1, "with --kind: the blend weight w of each model given (the prose model's share of its units' log-odds, 0…1; a fit carries none: without --blend a kind's model is scored alone)")
	folds := fs.Int("folds", 0, "cross-validate: cut train and validation into this many folds by question id (0: the fixed split)")
	fold := fs.Int("fold", 0, "with --folds: the fold that validates (0 … folds-1)")
	encoding := fs.String("encoding", token.Default, "token encoding: "+strings.Join(token.Encodings, ", "))
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	measureOnly := *calibrate == evidencetrain.CalibrationNone
	if *kindList != "" && *from == "" {
		return usageError{errors.New("train evidence: --kind needs --from (the model of everything else)")}
	}
	if *blend != -1 && (*kindList == "" || math.IsNaN(*blend) || *blend < 0 || *blend > 1) {
		return usageError{fmt.Errorf("train evidence: --blend %v: want 0 ≤ w ≤ 1, with --kind", *blend)}
	}
	if *kindList != "" && *data == "" && *out != "" && *calibrate == "" {
		m, err := combineKinds(*from, *kindList, *blend, stderr)
		if err != nil {
			return err
		}
		m.Provenance["kinds_command"] = "ctxsel train evidence " + strings.Join(args, " ")
		return writeEvidenceModel(m, *out, stdout)
	}
	if *data == "" || (*out == "" && !measureOnly) {
		return usageError{errors.New("train evidence: --data and --out are required")}
	}
	if *calibrate != "" && (*from == "" || (measureOnly && *report == "")) {
		return usageError{errors.New("train evidence: --calibrate needs --from (and --calibrate none needs --report)")}
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
	floats := func(name, s string, hi float64) ([]float64, error) {
		var v []float64
		for _, x := range splitList(s) {
			f, err := strconv.ParseFloat(x, 64)
			if err != nil || f < 0 || f > hi {
				return nil, usageError{fmt.Errorf("train evidence: --%s: bad value %q (want 0…%g)", name, x, hi)}
			}
			v = append(v, f)
		}
		if len(v) == 0 {
			return nil, usageError{fmt.Errorf("train evidence: --%s is empty", name)}
		}
		return v, nil
	}
	opt := evidencetrain.Options{Data: splitList(*data), Pool: *pool, PoolSeed: *poolSeed, SplitSeed: *splitSeed, Anchors: *anchors,
		FloorTolerance: *floorTol, TieTolerance: *tieTol, Workers: *workers, Limit: *limit, Sample: *sampleN, Folds: *folds, Fold: *fold, Log: stderr, Learners: splitList(*learners),
		Logistic: evidencetrain.LogisticOptions{L2: *l2}, Trees: evidencetrain.TreeOptions{Trees: *trees, Depth: *depth, Rate: *rate, L2: *l2},
		Command: "ctxsel train evidence " + strings.Join(args, " ")}
	var err error
	if opt.TreeCounts, err = ints("tree-counts", *treeCounts); err != nil {
		return err
	}
	if *poolsList != "" {
		if opt.Pools, err = ints("pools", *poolsList); err != nil {
			return err
		}
	}
	if opt.Passages, err = ints("passages", *passagesList); err != nil {
		return err
	}
	if opt.Hops, err = ints("hops", *hops); err != nil {
		return err
	}
	if opt.Neighbors, err = ints("neighbors", *neighborsList); err != nil {
		return err
	}
	if opt.Budgets, err = ints("budgets", *budgets); err != nil {
		return err
	}
	if opt.CostExponents, err = floats("cost-exponents", *betas, 2); err != nil {
		return err
	}
	if opt.Floors, err = floats("floors", *floors, 0.999); err != nil {
		return err
	}
	if opt.Stops, err = floats("stops", *stops, 0.999); err != nil {
		return err
	}
	if *from != "" {
		if opt.From, err = readEvidenceModel("--from", *from); err != nil {
			return fmt.Errorf("train evidence: %w", err)
		}
		if *kindList != "" {
			if opt.From, err = combineKinds(*from, *kindList, *blend, stderr); err != nil {
				return err
			}
		}
	}
	if *folds < 0 || *folds == 1 || (*folds > 1 && (*fold < 0 || *fold >= *folds)) {
		return usageError{fmt.Errorf("train evidence: --folds %d --fold %d: want folds ≥ 2 and 0 ≤ fold < folds", *folds, *fold)}
	}
	switch *features {
	case "all":
	case "v1":
		opt.Features = evidence.V1Features
	default:
		opt.Features = splitList(*features)
	}
	counter, err := token.New(*encoding)
	if err != nil {
		return usageError{err}
	}
	scorers := newScorerSet()
	defer scorers.Close()
	if opt.Scorer, err = scorers.Get(*scorerName); err != nil {
		return err
	}
	e, err := scorers.EmbedderOf(embedders.Default)
	if err != nil {
		return fmt.Errorf("train evidence: %w", err)
	}
	opt.Base = evidence.Options{Embedder: e, Counter: counter, Neighbors: -1}
	if *calibrate != "" {
		return calibrateEvidence(ctx, opt, *calibrate, *calBins, *calKinds, *from, *out, *report, *calPlot, stdout)
	}
	res, err := evidencetrain.Train(ctx, opt)
	if err != nil {
		return err
	}
	if err := evidencetrain.WriteTable(stdout, res, opt.Budgets); err != nil {
		return err
	}
	b, err := res.Model.Marshal()
	if err != nil {
		return err
	}
	if err := atomicfile.Write(*out, func(w io.Writer) error { _, err := w.Write(append(b, '\n')); return err }); err != nil {
		return err
	}
	if *report != "" {
		if err := atomicfile.Write(*report, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", " ")
			return enc.Encode(res)
		}); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "wrote %s (%d bytes)\n", *out, len(b)+1)
	return nil
}

// calibrateEvidence is train evidence --calibrate: it measures the model's
// calibration on validation and writes the model with the fitted map.
func calibrateEvidence(ctx context.Context, opt evidencetrain.Options, method string, bins int, byKind bool, from, out, report, plot string, stdout io.Writer) error {
	res, err := evidencetrain.Calibrate(ctx, opt, method, bins, byKind)
	if err != nil {
		if strings.Contains(err.Error(), "method") || strings.Contains(err.Error(), "bins") {
			return usageError{err}
		}
		return err
	}
	// the learner's figures on every validation question, then on half 1
	// the learner's and each map's fitted on half 0 (ECE, top-sentence ECE,
	// Σp ÷ gold)
	fmt.Fprintf(stdout, "%-24s %9s %6s %20s", "file", "sentences", "gold", "ECE/top/expected")
	for _, m := range []string{"learner", evidence.CalibrationIsotonic, evidence.CalibrationPlatt} {
		fmt.Fprintf(stdout, " %22s", "half 1 "+m)
	}
	fmt.Fprintln(stdout)
	for _, f := range append(res.Files, res.Pooled) {
		fmt.Fprintf(stdout, "%-24s %9d %6d %6.4f/%6.4f/%6.3f", f.Name, f.Sentences, f.Gold, f.ECE, f.TopECE, f.Expected)
		for _, m := range []string{"learner", evidence.CalibrationIsotonic, evidence.CalibrationPlatt} {
			if _, ok := f.HeldOutECE[m]; !ok {
				fmt.Fprintf(stdout, " %22s", "-")
				continue
			}
			fmt.Fprintf(stdout, " %6.4f/%6.4f/%7.3f", f.HeldOutECE[m], f.HeldOutTopECE[m], f.HeldOutExpected[m])
		}
		fmt.Fprintln(stdout)
	}
	if report != "" {
		if err := atomicfile.Write(report, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", " ")
			return enc.Encode(res)
		}); err != nil {
			return err
		}
	}
	if plot != "" {
		title := "Reliability of p(evidence) on validation questions: " + filepath.Base(from)
		if err := atomicfile.Write(plot, func(w io.Writer) error { return evidencetrain.WriteReliabilityPlot(w, res, title) }); err != nil {
			return err
		}
	}
	if res.Model == nil {
		return nil
	}
	b, err := res.Model.Marshal()
	if err != nil {
		return err
	}
	if err := atomicfile.Write(out, func(w io.Writer) error { _, err := w.Write(append(b, '\n')); return err }); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "chose %s; wrote %s (%d bytes)\n", res.Method, out, len(b)+1)
	return nil
}

// combineKinds is --from FILE --kind KIND=FILE,… [--blend W]: the model
// of FILE with the models by kind of text read from the others, each
// given blend weight W (blend < 0: as read). A replaced kind's model that
// had a blend the new one lacks is named on warn, since a fit carries
// none and the shipped turns model has one.
func combineKinds(from, list string, blend float64, warn io.Writer) (*evidence.Model, error) {
	top, err := readEvidenceModel("--from", from)
	if err != nil {
		return nil, fmt.Errorf("train evidence: %w", err)
	}
	kinds := map[string]*evidence.Model{}
	for _, item := range splitList(list) {
		kind, path, ok := strings.Cut(item, "=")
		if !ok || path == "" || !slices.Contains(evidence.RouteKinds(), kind) {
			return nil, usageError{fmt.Errorf("train evidence: --kind %q: want KIND=FILE, KIND one of %s", item, strings.Join(evidence.RouteKinds(), ", "))}
		}
		if _, dup := kinds[kind]; dup {
			return nil, usageError{fmt.Errorf("train evidence: --kind %s given twice", kind)}
		}
		if kinds[kind], err = readEvidenceModel("--kind "+kind, path); err != nil {
			return nil, fmt.Errorf("train evidence: %w", err)
		}
		sub := kinds[kind]
		if blend >= 0 {
			sub.Blend = blend
			sub.Provenance = maps.Clone(sub.Provenance)
			if sub.Provenance == nil {
				sub.Provenance = map[string]string{}
			}
			sub.Provenance["blend"] = fmt.Sprintf("%g, set by train evidence --blend", blend)
		} else if old := top.Kinds[kind]; old != nil && old.Blend != 0 && sub.Blend == 0 {
			fmt.Fprintf(warn, "train evidence: note: the %s model replaced had blend %g, %s has none (--blend W sets one)\n", kind, old.Blend, path)
		}
	}
	m, err := evidencetrain.Combine(top, kinds)
	if err != nil {
		return nil, fmt.Errorf("train evidence: %w", err)
	}
	return m, nil
}

// writeEvidenceModel writes a model file (atomically) and says so.
func writeEvidenceModel(m *evidence.Model, out string, stdout io.Writer) error {
	b, err := m.Marshal()
	if err != nil {
		return err
	}
	if err := atomicfile.Write(out, func(w io.Writer) error { _, err := w.Write(append(b, '\n')); return err }); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (%d bytes)\n", out, len(b)+1)
	return nil
}
