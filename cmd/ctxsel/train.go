package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ctxsel/ctxsel/eval"
	"github.com/ctxsel/ctxsel/internal/progress"
	"github.com/ctxsel/ctxsel/ldar"
	"github.com/ctxsel/ctxsel/ldar/ldareval"
	"github.com/ctxsel/ctxsel/score"
	"github.com/ctxsel/ctxsel/token"
)

// cmdTrain trains a learned selector: `ctxsel train band ...`.
func cmdTrain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "evidence" {
		return cmdTrainEvidence(ctx, args[1:], stdout, stderr)
	}
	if len(args) == 0 || (args[0] != "band" && !strings.HasPrefix(args[0], "-")) {
		return usageError{errors.New("train: want `ctxsel train band [flags]` or `ctxsel train evidence [flags]`")}
	}
	if args[0] == "band" {
		args = args[1:]
	}
	fs := newFlags("train band", `Usage: ctxsel train band --data FILE[,FILE] --out POLICY [flags]
       ctxsel train band --data lara:32k/book --reward llm --reader SPEC [--judge SPEC] --out POLICY [flags]

Trains the LDAR band policy (package ldar) by policy gradient on labelled
questions. Each data file is split by question (--split, seeded by
--split-seed); the training questions are pooled to --pool passages with
--aug pool seeds (--pool-seed, +1, …), scored (--scorer) and a --val share of
them is held out for the learning curve. The reward is recall minus --lambda
per 1,000 selected tokens (or Context-Picker's, --reward picker). A
checkpoint is written atomically after every epoch (--checkpoint, default
OUT.ckpt); --resume continues from it. Afterwards every test split (and each
--eval file) is measured with eval.Run beside fixed top-k, budgets, Adaptive-k and
the knee: recall, tokens and gain at the same mean tokens over the top-k
frontier, over the top-k/budget envelope of the same scorer and over the
best single scorer's. With a hybrid scorer, --channels 2 trains a policy
that reads the dense and the lexical curve too. --reward llm is LDAR's own
reward: a --reader answers from every sampled band and --judge scores the
answer (calls cached and limited; an estimate is printed first;
--max-llm-tokens caps the spend); it is the only reward for data without
gold passages (LaRA).
`+llmHelp, stderr)
	data := fs.String("data", "", "labelled JSONL file(s) to train on, comma-separated")
	out := fs.String("out", "", "write the trained policy (safetensors) here")
	pool := fs.Int("pool", 1000, "pad each question to this many passages")
	poolSeed := fs.Uint64("pool-seed", 1, "pooling seed of the test contexts and of the first training copy")
	aug := fs.Int("aug", 4, "training copies of each question, pooled with seeds pool-seed, pool-seed+1, …")
	seed := fs.Uint64("seed", 1, "training seed (initialisation, shuffling, sampling)")
	splitSeed := fs.Uint64("split-seed", 1, "seed of the train/test split by question")
	split := fs.Float64("split", 0.8, "share of each file's questions used for training")
	valShare := fs.Float64("val", 0.2, "share of the training questions held out for validation")
	scorerName := fs.String("scorer", defaultScorer, "passage scorer: "+strings.Join(scorerNames(), ", "))
	cacheDir := fs.String("cache", defaultCacheDir(), "cache directory for scored curves (\"\" = none); embeddings use the embedding cache")
	rewardName := fs.String("reward", "recall", "reward: recall (recall − λ·tokens/1000), picker (Context-Picker Eq. 6) or llm (LDAR's: a --reader answers from the band, --judge scores it)")
	lf := addLLMRewardFlags(fs)
	laraDir := fs.String("lara-dir", laraDefaultDir, "the LaRA benchmark's directory, for --data lara:LENGTH/KIND[/LEVEL] (needs --reward llm)")
	lambda := fs.Float64("lambda", 0.5, "price of 1,000 selected tokens in recall (reward recall)")
	gamma := fs.Float64("gamma", 1, "redundancy penalty (reward picker)")
	margin := fs.Int("margin", 3, "redundancy margin in passages (reward picker)")
	epochs := fs.Int("epochs", 20, "training epochs")
	batch := fs.Int("batch", 32, "questions per gradient step")
	samples := fs.Int("samples", 16, "bands sampled per question per step")
	baseline := fs.String("baseline", "rloo", "baseline: rloo (per-question leave-one-out) or ema (paper)")
	lr := fs.Float64("lr", 1e-3, "Adam learning rate (cosine decay to --lr-final × it)")
	lrFinal := fs.Float64("lr-final", 0.1, "final learning rate as a fraction of --lr")
	normalize := fs.Bool("normalize", false, "divide each question's advantages by the spread of its sampled rewards (GRPO-style)")
	entropy := fs.Float64("entropy", 0.01, "entropy bonus at the first epoch (0 = none)")
	entropyEnd := fs.Float64("entropy-end", 0.001, "entropy bonus at the last epoch (geometric decay)")
	size := fs.String("size", "default", "network size: default or paper")
	window := fs.Int("window", -1, "override: top ranks read and banded (0 = whole curve; -1 = the --size preset's)")
	dim := fs.Int("dim", 0, "override: token width d (0 = the --size preset's)")
	layers := fs.Int("layers", -1, "override: encoder layers (-1 = the --size preset's; 0 = none)")
	head := fs.String("head", "", "override: Beta head activation, exp or softplus")
	pooling := fs.String("pooling", "", "override: token pooling, attention, pointer or flatten")
	channels := fs.Int("channels", 0, "score channels the policy reads beside the curve (2 with a hybrid scorer: its dense and lexical curves, their agreement)")
	workers := fs.Int("workers", 1, "questions of a batch computed in parallel")
	checkpoint := fs.String("checkpoint", "", "checkpoint file (default OUT.ckpt)")
	resume := fs.Bool("resume", false, "continue from the checkpoint")
	evalFiles := fs.String("eval", "", "also measure on these files (zero-shot transfer): their test split and all questions")
	report := fs.String("report", "", "write the learning curve and every report as JSON here")
	plotCurves := fs.String("plot-curves", "", "write the learning curve (reward per epoch) as SVG here")
	plotBands := fs.String("plot-bands", "", "write test questions' curves with the chosen bands as SVG here")
	plotFrontier := fs.String("plot-frontier", "", "write the first test split's recall/token frontier with every strategy as SVG here")
	encoding := fs.String("encoding", token.Default, "token encoding: "+strings.Join(token.Encodings, ", "))
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *data == "" || *out == "" {
		return usageError{errors.New("train band: --data and --out are required")}
	}
	if *pool < 0 || *aug < 1 || !(*split > 0 && *split < 1) || *valShare < 0 || *valShare >= 1 {
		return usageError{errors.New("train band: want --pool ≥ 0, --aug ≥ 1, 0 < --split < 1, 0 ≤ --val < 1")}
	}
	cfg := ldar.DefaultConfig
	switch *size {
	case "default":
	case "paper":
		cfg = ldar.PaperConfig
	default:
		return usageError{fmt.Errorf("train band: --size %q: want default or paper", *size)}
	}
	if *window >= 0 {
		cfg.Window = *window
	}
	if *dim > 0 {
		cfg.Dim, cfg.Hidden = *dim, *dim
		cfg.FFN = 2 * *dim
	}
	if *layers >= 0 {
		cfg.Layers = *layers
	}
	if *head != "" {
		cfg.Head = *head
	}
	if *pooling != "" {
		cfg.Pool = *pooling
	}
	cfg.Channels = *channels
	var reward ldar.Reward
	rewardDesc := ""
	switch *rewardName {
	case "recall":
		reward = ldar.RecallPrice{Lambda: *lambda}
		rewardDesc = fmt.Sprintf("recall − %g·tokens/1000", *lambda)
	case "picker":
		reward = ldar.Picker{Gamma: *gamma, Margin: *margin}
		rewardDesc = fmt.Sprintf("context-picker gamma=%g margin=%d", *gamma, *margin)
	case "llm":
	default:
		return usageError{fmt.Errorf("train band: --reward %q: want recall, picker or llm", *rewardName)}
	}
	counter, err := token.New(*encoding)
	if err != nil {
		return usageError{err}
	}
	var llmReward *eval.LLMReward
	onLaRA := false
	for _, path := range splitList(*data) {
		onLaRA = onLaRA || strings.HasPrefix(path, "lara:")
	}
	if *rewardName == "llm" {
		if llmReward, rewardDesc, err = lf.reward(stderr, counter, onLaRA); err != nil {
			return err
		}
		defer lf.close()
		reward = llmReward
	}
	scorers := newScorerSet()
	defer scorers.Close()
	scorer, err := scorers.get(*scorerName)
	if err != nil {
		return err
	}
	if cs, ok := scorer.(score.ChannelScorer); *channels > 0 && (!ok || len(cs.Channels()) < *channels) {
		return usageError{fmt.Errorf("train band: --channels %d needs a scorer with that many channels (hybrid has 2)", *channels)}
	}
	base, err := scorers.baselines(scorer)
	if err != nil {
		return err
	}

	files := splitList(*data)
	type split3 struct {
		path        string
		train, test []eval.Record
		all         []eval.Record
	}
	var sets []split3
	var trainQ, valQ []ldar.Question
	load := func(path string) ([]eval.Record, []eval.Record, int, error) {
		if !strings.HasPrefix(path, "lara:") {
			recs, err := eval.LoadFile(path)
			return recs, nil, *pool, err
		}
		if *rewardName != "llm" {
			return nil, nil, 0, usageError{fmt.Errorf("train band: %s has no gold passages: train on it with --reward llm", path)}
		}
		recs, err := loadLaRA(ctx, *laraDir, path, counter)
		return recs, recs, 0, err // a LaRA question's pool is its own document
	}
	for _, path := range files {
		recs, given, filePool, err := load(path)
		if err != nil {
			return err
		}
		tr, te := ldareval.Split(recs, *split, *splitSeed)
		// validation: the last --val share of a seeded shuffle of train
		fit, val := ldareval.Split(tr, 1-*valShare, *splitSeed+1)
		sets = append(sets, split3{path: path, train: tr, test: te, all: recs})
		fitIDs, valIDs := ldareval.IDs(fit), ldareval.IDs(val)
		for a := range *aug {
			spec := ldareval.CurveSpec{Path: path, Records: given, Pool: filePool, PoolSeed: *poolSeed + uint64(a), Scorer: scorer.Name(), Encoding: counter.Encoding()}
			fmt.Fprintf(stderr, "scoring %s (pool %d, seed %d) with %s\n", filepath.Base(path), filePool, spec.PoolSeed, scorer.Name())
			qs, err := ldareval.Questions(ctx, spec, scorer, counter, *cacheDir)
			if err != nil {
				return err
			}
			if llmReward != nil { // the reader needs the texts
				pooled, err := eval.Pool(recs, filePool, spec.PoolSeed)
				if err != nil {
					return err
				}
				if err := ldareval.WithTexts(qs, pooled); err != nil {
					return err
				}
			}
			trainQ = append(trainQ, ldareval.SelectQuestions(qs, fitIDs)...)
			valQ = append(valQ, ldareval.SelectQuestions(qs, valIDs)...)
		}
	}
	if onLaRA && *window < 0 {
		// LDAR bands the whole curve (train_ldar.py: low/high over every
		// chunk), and closed models take wide bands there: the window
		// reaches the longest LaRA curve (64 chunks at 32k, 256 at 128k).
		longest := 0
		for _, q := range append(slices.Clone(trainQ), valQ...) {
			longest = max(longest, len(q.Scores))
		}
		if longest > cfg.Window && cfg.Window > 0 {
			fmt.Fprintf(stderr, "note: LaRA data: the policy reads and bands the whole curve (--window %d, the longest question's passages; LDAR's setting); --window N overrides\n", longest)
			cfg.Window = longest
		}
	}
	if llmReward != nil && llmReward.Answering.Judge == nil {
		var all []eval.Record
		for _, st := range sets {
			all = append(all, st.all...)
		}
		warnSubEMOnSentences(stderr, all)
	}
	ckpt := *checkpoint
	if ckpt == "" {
		ckpt = *out + ".ckpt"
	}
	bar := progress.New(stderr, "training")
	opt := ldar.TrainOptions{
		Config: cfg, Seed: *seed, Epochs: *epochs, Batch: *batch, Samples: *samples, Baseline: *baseline,
		LR: *lr, LRFinal: *lrFinal, Normalize: *normalize, Entropy: *entropy, EntropyEnd: *entropyEnd, Workers: *workers, Reward: reward,
		Progress: bar.Update, Checkpoint: ckpt, Resume: *resume,
		Log: func(e ldar.EpochStats) {
			fmt.Fprintf(stderr, "epoch %3d/%d  train reward %.4f  val reward %.4f  val recall %.3f  val tokens %.0f  val k %.1f  (%.0f ms/step)\n",
				e.Epoch, *epochs, e.TrainReward, e.ValReward, e.ValRecall, e.ValTokens, e.ValK, e.MsPerStep)
		},
		Meta: map[string]string{
			"scorer":  scorer.Name(),
			"data":    strings.Join(baseNames(files), ","),
			"reward":  rewardDesc,
			"command": "ctxsel train band " + strings.Join(args, " "),
			"trained": time.Now().UTC().Format(time.DateOnly),
		},
	}
	fmt.Fprintf(stderr, "training on %d curves (%d questions × %d pool seeds), validating on %d; reward %s; network %+v\n",
		len(trainQ), len(trainQ) / *aug, *aug, len(valQ), rewardDesc, cfg)
	if *epochs == 0 {
		return nil // curves only
	}
	if llmReward != nil {
		estimateLLMSpend(stderr, trainQ, valQ, opt, llmReward.Answering.Judge, counter)
	}
	policy, history, err := ldar.Train(ctx, trainQ, valQ, opt)
	if llmReward != nil {
		st := llmReward.Stats()
		fmt.Fprintf(stderr, "LLM reward: %d calls made, %d from the cache, %d tokens spent, %d judge verdicts unreadable (scored 0)\n",
			st.Calls, st.Cached, st.Tokens, st.JudgeInvalid)
	}
	if err != nil {
		return err
	}
	if err := policy.Save(*out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "policy written to %s (best epoch %s of %d)\n", *out, policy.Meta["best_epoch"], *epochs)

	type namedReport struct {
		Name   string       `json:"name"`
		Report *eval.Report `json:"report"`
	}
	var reports []namedReport
	evalSet := func(name, path string, ids map[string]bool) error {
		recs, given, _, err := load(path)
		if err != nil {
			return err
		}
		if given != nil {
			fmt.Fprintf(stdout, "\n%s: no gold passages, so no recall report; measure the policy's answers with\n  %s=%s ctxsel eval --data %s --reader … --strategies band,topk:k=5,adaptivek\n",
				name, envBandPolicy, *out, path)
			return nil
		}
		pooled, err := eval.Pool(recs, *pool, *poolSeed)
		if err != nil {
			return err
		}
		if ids != nil {
			pooled = ldareval.Filter(pooled, ids)
		}
		rep, err := ldareval.Report(ctx, pooled, scorer, counter, policy, base)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\n%s · pool %d · seed %d\n", name, *pool, *poolSeed)
		if err := eval.WriteTable(stdout, rep); err != nil {
			return err
		}
		reports = append(reports, namedReport{name, rep})
		return nil
	}
	for _, s := range sets {
		if err := evalSet(filepath.Base(s.path)+" test split", s.path, ldareval.IDs(s.test)); err != nil {
			return err
		}
	}
	for _, path := range splitList(*evalFiles) {
		recs, _, _, err := load(path)
		if err != nil {
			return err
		}
		_, te := ldareval.Split(recs, *split, *splitSeed)
		if err := evalSet(filepath.Base(path)+" test split (zero-shot)", path, ldareval.IDs(te)); err != nil {
			return err
		}
		if err := evalSet(filepath.Base(path)+" all questions (zero-shot)", path, nil); err != nil {
			return err
		}
	}
	if *report != "" {
		err := writeFile(*report, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(map[string]any{"policy": policy.Meta, "history": history, "reports": reports})
		})
		if err != nil {
			return err
		}
	}
	if *plotCurves != "" {
		title := fmt.Sprintf("LDAR band training: %s, %s scorer, %s", strings.Join(baseNames(files), "+"), scorer.Name(), rewardDesc)
		if err := writeFile(*plotCurves, func(w io.Writer) error { return ldareval.PlotLearning(w, history, title) }); err != nil {
			return err
		}
	}
	if *plotFrontier != "" && len(reports) > 0 {
		r := reports[0]
		title := fmt.Sprintf("%s, pool %d, %s scorer", r.Name, *pool, r.Report.Scorer)
		if err := writeFile(*plotFrontier, func(w io.Writer) error { return eval.WritePlot(w, r.Report, title) }); err != nil {
			return err
		}
	}
	if *plotBands != "" && len(sets) > 0 {
		s := sets[0]
		_, given, filePool, err := load(s.path)
		if err != nil {
			return err
		}
		spec := ldareval.CurveSpec{Path: s.path, Records: given, Pool: filePool, PoolSeed: *poolSeed, Scorer: scorer.Name(), Encoding: counter.Encoding()}
		qs, err := ldareval.Questions(ctx, spec, scorer, counter, *cacheDir)
		if err != nil {
			return err
		}
		test := ldareval.SelectQuestions(qs, ldareval.IDs(s.test))
		title := fmt.Sprintf("%s test questions, %s scores: chosen bands", filepath.Base(s.path), scorer.Name())
		if err := writeFile(*plotBands, func(w io.Writer) error { return ldareval.PlotBands(w, policy, test, 6, title) }); err != nil {
			return err
		}
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func baseNames(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return out
}

func defaultCacheDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "ctxsel", "ldar")
	}
	return filepath.Join(os.TempDir(), "ctxsel-ldar")
}
