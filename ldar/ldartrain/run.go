package ldartrain

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/eval"
	"github.com/ctxsel/ctxsel/internal/atomicfile"
	"github.com/ctxsel/ctxsel/internal/progress"
	"github.com/ctxsel/ctxsel/ldar"
	"github.com/ctxsel/ctxsel/ldar/ldareval"
	"github.com/ctxsel/ctxsel/score"
	"github.com/ctxsel/ctxsel/token"
)

// Config is one training run.
type Config struct {
	// Data are the labelled files to train on, or LaRA slices
	// ("lara:32k/book", read by LoadLaRA; only with an LLMReward).
	Data []string
	// LoadLaRA reads a "lara:…" data name into records (the caller knows
	// where the benchmark lies and how to chunk it).
	LoadLaRA func(ctx context.Context, name string) ([]dataset.Record, error)
	// Out is the policy file; the checkpoint is Train.Checkpoint, else
	// Out + ".ckpt".
	Out string

	// Pool pads each question to this many passages (LaRA: none, a
	// question's pool is its document); the test contexts are pooled with
	// PoolSeed, the Aug training copies with PoolSeed, PoolSeed+1, …
	Pool     int
	PoolSeed uint64
	Aug      int
	// Split is each file's share of training questions (seeded by
	// SplitSeed); Val the share of those held out for validation.
	Split     float64
	SplitSeed uint64
	Val       float64
	// CacheDir keeps scored curves ("" = none).
	CacheDir string

	// Train are ldar.Train's options: the network (Train.Config), epochs,
	// batch, samples, baseline, learning rate, entropy, workers, resume.
	// Run fills in the reward, progress, log and the policy's metadata.
	Train ldar.TrainOptions
	// WindowGiven marks a window the caller set: on LaRA data the policy
	// otherwise reads the longest question's whole curve, as LDAR does.
	WindowGiven bool
	// Reward scores sampled bands, or LLMReward does (LDAR's own, which
	// needs the passages' texts); RewardDesc describes it for the policy's
	// metadata and the log.
	Reward     ldar.Reward
	LLMReward  *LLMReward
	RewardDesc string

	// Scorer scores the passages; Baselines are the single scorers every
	// report also compares with; Counter counts tokens.
	Scorer    score.Scorer
	Baselines []score.Scorer
	Counter   token.Counter

	// EvalFiles are also measured (zero-shot transfer): their test split
	// and all their questions.
	EvalFiles []string
	// Report, PlotCurves, PlotBands and PlotFrontier, when set, are files
	// for the learning curve and every report (JSON), the learning curve,
	// test questions' curves with their bands, and the first test split's
	// frontier (SVG).
	Report, PlotCurves, PlotBands, PlotFrontier string
	// Command is the command line, kept in the policy's metadata.
	Command string
}

// namedReport is one measured set in the JSON report.
type namedReport struct {
	Name   string       `json:"name"`
	Report *eval.Report `json:"report"`
}

// split3 is one data file split by question.
type split3 struct {
	path        string
	train, test []dataset.Record
	all         []dataset.Record
}

// Run trains the policy, writes it and measures it: progress and notes go
// to stderr, the reports to stdout. Errors about the configuration wrap
// ctxsel.ErrInvalidInput.
func Run(ctx context.Context, cfg Config, stdout, stderr io.Writer) error {
	if cfg.Reward == nil && cfg.LLMReward == nil {
		return fmt.Errorf("%w: train band: no reward", ctxsel.ErrInvalidInput)
	}
	reward := cfg.Reward
	if cfg.LLMReward != nil {
		reward = cfg.LLMReward
	}
	counter, scorer := cfg.Counter, cfg.Scorer
	netCfg := cfg.Train.Config
	onLaRA := false
	for _, path := range cfg.Data {
		onLaRA = onLaRA || strings.HasPrefix(path, "lara:")
	}
	load := func(path string) ([]dataset.Record, []dataset.Record, int, error) {
		if !strings.HasPrefix(path, "lara:") {
			recs, err := dataset.LoadFile(path)
			return recs, nil, cfg.Pool, err
		}
		if cfg.LLMReward == nil {
			return nil, nil, 0, fmt.Errorf("%w: train band: %s has no gold passages: train on it with --reward llm", ctxsel.ErrInvalidInput, path)
		}
		if cfg.LoadLaRA == nil {
			return nil, nil, 0, fmt.Errorf("%w: train band: %s: no LaRA loader given", ctxsel.ErrInvalidInput, path)
		}
		recs, err := cfg.LoadLaRA(ctx, path)
		return recs, recs, 0, err // a LaRA question's pool is its own document
	}

	var sets []split3
	var trainQ, valQ []ldar.Question
	for _, path := range cfg.Data {
		recs, given, filePool, err := load(path)
		if err != nil {
			return err
		}
		tr, te := dataset.SplitShare(recs, cfg.Split, cfg.SplitSeed)
		// validation: the last Val share of a seeded shuffle of train
		fit, val := dataset.SplitShare(tr, 1-cfg.Val, cfg.SplitSeed+1)
		sets = append(sets, split3{path: path, train: tr, test: te, all: recs})
		fitIDs, valIDs := dataset.IDs(fit), dataset.IDs(val)
		for a := range cfg.Aug {
			spec := ldareval.CurveSpec{Path: path, Records: given, Pool: filePool, PoolSeed: cfg.PoolSeed + uint64(a), Scorer: scorer.Name(), Encoding: counter.Encoding()}
			fmt.Fprintf(stderr, "scoring %s (pool %d, seed %d) with %s\n", filepath.Base(path), filePool, spec.PoolSeed, scorer.Name())
			qs, err := ldareval.Questions(ctx, spec, scorer, counter, cfg.CacheDir)
			if err != nil {
				return err
			}
			if cfg.LLMReward != nil { // the reader needs the texts
				pooled, err := dataset.Pool(recs, filePool, spec.PoolSeed)
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
	if onLaRA && !cfg.WindowGiven {
		// LDAR bands the whole curve (train_ldar.py: low/high over every
		// chunk), and closed models take wide bands there: the window
		// reaches the longest LaRA curve (64 chunks at 32k, 256 at 128k).
		longest := 0
		for _, q := range append(slices.Clone(trainQ), valQ...) {
			longest = max(longest, len(q.Scores))
		}
		if longest > netCfg.Window && netCfg.Window > 0 {
			fmt.Fprintf(stderr, "note: LaRA data: the policy reads and bands the whole curve (--window %d, the longest question's passages; LDAR's setting); --window N overrides\n", longest)
			netCfg.Window = longest
		}
	}
	if cfg.LLMReward != nil && cfg.LLMReward.Answering.Judge == nil {
		var all []dataset.Record
		for _, st := range sets {
			all = append(all, st.all...)
		}
		warnSubEMOnSentences(stderr, all)
	}
	opt := cfg.Train
	opt.Config, opt.Reward = netCfg, reward
	if opt.Checkpoint == "" {
		opt.Checkpoint = cfg.Out + ".ckpt"
	}
	bar := progress.New(stderr, "training")
	opt.Progress = bar.Update
	opt.Log = func(e ldar.EpochStats) {
		fmt.Fprintf(stderr, "epoch %3d/%d  train reward %.4f  val reward %.4f  val recall %.3f  val tokens %.0f  val k %.1f  (%.0f ms/step)\n",
			e.Epoch, opt.Epochs, e.TrainReward, e.ValReward, e.ValRecall, e.ValTokens, e.ValK, e.MsPerStep)
	}
	opt.Meta = map[string]string{
		"scorer":  scorer.Name(),
		"data":    strings.Join(baseNames(cfg.Data), ","),
		"reward":  cfg.RewardDesc,
		"command": cfg.Command,
		"trained": time.Now().UTC().Format(time.DateOnly),
	}
	fmt.Fprintf(stderr, "training on %d curves (%d questions × %d pool seeds), validating on %d; reward %s; network %+v\n",
		len(trainQ), len(trainQ)/cfg.Aug, cfg.Aug, len(valQ), cfg.RewardDesc, netCfg)
	if opt.Epochs == 0 {
		return nil // curves only
	}
	if cfg.LLMReward != nil {
		EstimateLLMSpend(stderr, trainQ, valQ, opt, cfg.LLMReward.Answering.Judge, counter)
	}
	policy, history, err := ldar.Train(ctx, trainQ, valQ, opt)
	if cfg.LLMReward != nil {
		st := cfg.LLMReward.Stats()
		fmt.Fprintf(stderr, "LLM reward: %d calls made, %d from the cache, %d tokens spent, %d judge verdicts unreadable (scored 0)\n",
			st.Calls, st.Cached, st.Tokens, st.JudgeInvalid)
	}
	if err != nil {
		return err
	}
	if err := policy.Save(cfg.Out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "policy written to %s (best epoch %s of %d)\n", cfg.Out, policy.Meta["best_epoch"], opt.Epochs)

	var reports []namedReport
	evalSet := func(name, path string, ids map[string]bool) error {
		recs, given, _, err := load(path)
		if err != nil {
			return err
		}
		if given != nil {
			fmt.Fprintf(stdout, "\n%s: no gold passages, so no recall report; measure the policy's answers with\n  CTXSEL_BAND_POLICY=%s ctxsel eval --data %s --reader … --strategies band,topk:k=5,adaptivek\n",
				name, cfg.Out, path)
			return nil
		}
		pooled, err := dataset.Pool(recs, cfg.Pool, cfg.PoolSeed)
		if err != nil {
			return err
		}
		if ids != nil {
			pooled = dataset.Filter(pooled, ids)
		}
		rep, err := ldareval.Report(ctx, pooled, scorer, counter, policy, cfg.Baselines)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\n%s · pool %d · seed %d\n", name, cfg.Pool, cfg.PoolSeed)
		if err := eval.WriteTable(stdout, rep); err != nil {
			return err
		}
		reports = append(reports, namedReport{name, rep})
		return nil
	}
	for _, s := range sets {
		if err := evalSet(filepath.Base(s.path)+" test split", s.path, dataset.IDs(s.test)); err != nil {
			return err
		}
	}
	for _, path := range cfg.EvalFiles {
		recs, _, _, err := load(path)
		if err != nil {
			return err
		}
		_, te := dataset.SplitShare(recs, cfg.Split, cfg.SplitSeed)
		if err := evalSet(filepath.Base(path)+" test split (zero-shot)", path, dataset.IDs(te)); err != nil {
			return err
		}
		if err := evalSet(filepath.Base(path)+" all questions (zero-shot)", path, nil); err != nil {
			return err
		}
	}
	return cfg.writeOutputs(ctx, policy, history, reports, sets, load)
}

// writeOutputs writes the JSON report and the plots asked for.
func (cfg Config) writeOutputs(ctx context.Context, policy *ldar.Policy, history []ldar.EpochStats, reports []namedReport, sets []split3,
	load func(string) ([]dataset.Record, []dataset.Record, int, error)) error {
	if cfg.Report != "" {
		err := atomicfile.Write(cfg.Report, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(map[string]any{"policy": policy.Meta, "history": history, "reports": reports})
		})
		if err != nil {
			return err
		}
	}
	if cfg.PlotCurves != "" {
		title := fmt.Sprintf("LDAR band training: %s, %s scorer, %s", strings.Join(baseNames(cfg.Data), "+"), cfg.Scorer.Name(), cfg.RewardDesc)
		if err := atomicfile.Write(cfg.PlotCurves, func(w io.Writer) error { return ldareval.PlotLearning(w, history, title) }); err != nil {
			return err
		}
	}
	if cfg.PlotFrontier != "" && len(reports) > 0 {
		r := reports[0]
		title := fmt.Sprintf("%s, pool %d, %s scorer", r.Name, cfg.Pool, r.Report.Scorer)
		if err := atomicfile.Write(cfg.PlotFrontier, func(w io.Writer) error { return eval.WritePlot(w, r.Report, title) }); err != nil {
			return err
		}
	}
	if cfg.PlotBands != "" && len(sets) > 0 {
		s := sets[0]
		_, given, filePool, err := load(s.path)
		if err != nil {
			return err
		}
		spec := ldareval.CurveSpec{Path: s.path, Records: given, Pool: filePool, PoolSeed: cfg.PoolSeed, Scorer: cfg.Scorer.Name(), Encoding: cfg.Counter.Encoding()}
		qs, err := ldareval.Questions(ctx, spec, cfg.Scorer, cfg.Counter, cfg.CacheDir)
		if err != nil {
			return err
		}
		test := ldareval.SelectQuestions(qs, dataset.IDs(s.test))
		title := fmt.Sprintf("%s test questions, %s scores: chosen bands", filepath.Base(s.path), cfg.Scorer.Name())
		if err := atomicfile.Write(cfg.PlotBands, func(w io.Writer) error { return ldareval.PlotBands(w, policy, test, 6, title) }); err != nil {
			return err
		}
	}
	return nil
}

func baseNames(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return out
}
