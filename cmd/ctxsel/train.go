package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/ldar"
	"github.com/ctxsel/ctxsel/ldar/ldartrain"
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
	scorerName := fs.String("scorer", score.DefaultScorer, "passage scorer: "+strings.Join(newScorerSet().Names(), ", "))
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
	files := splitList(*data)
	onLaRA := false
	for _, path := range files {
		onLaRA = onLaRA || strings.HasPrefix(path, "lara:")
	}
	var llmReward *ldartrain.LLMReward
	if *rewardName == "llm" {
		if llmReward, rewardDesc, err = lf.reward(stderr, counter, onLaRA); err != nil {
			return err
		}
		defer lf.close()
	}
	scorers := newScorerSet()
	defer scorers.Close()
	scorer, err := scorers.Get(*scorerName)
	if err != nil {
		return err
	}
	if cs, ok := scorer.(score.ChannelScorer); *channels > 0 && (!ok || len(cs.Channels()) < *channels) {
		return usageError{fmt.Errorf("train band: --channels %d needs a scorer with that many channels (hybrid has 2)", *channels)}
	}
	base, err := scorers.Baselines(scorer)
	if err != nil {
		return err
	}
	return ldartrain.Run(ctx, ldartrain.Config{
		Data: files, Out: *out,
		LoadLaRA: func(ctx context.Context, name string) ([]dataset.Record, error) {
			return loadLaRA(ctx, *laraDir, name, counter)
		},
		Pool: *pool, PoolSeed: *poolSeed, Aug: *aug, Split: *split, SplitSeed: *splitSeed, Val: *valShare, CacheDir: *cacheDir,
		Train: ldar.TrainOptions{
			Config: cfg, Seed: *seed, Epochs: *epochs, Batch: *batch, Samples: *samples, Baseline: *baseline,
			LR: *lr, LRFinal: *lrFinal, Normalize: *normalize, Entropy: *entropy, EntropyEnd: *entropyEnd, Workers: *workers,
			Checkpoint: *checkpoint, Resume: *resume,
		},
		WindowGiven: *window >= 0,
		Reward:      reward, LLMReward: llmReward, RewardDesc: rewardDesc,
		Scorer: scorer, Baselines: base, Counter: counter,
		EvalFiles: splitList(*evalFiles),
		Report:    *report, PlotCurves: *plotCurves, PlotBands: *plotBands, PlotFrontier: *plotFrontier,
		Command: "ctxsel train band " + strings.Join(args, " "),
	}, stdout, stderr)
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

func defaultCacheDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "ctxsel", "ldar")
	}
	return filepath.Join(os.TempDir(), "ctxsel-ldar")
}
