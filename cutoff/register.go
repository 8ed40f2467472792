package cutoff

import (
	"math"

	"github.com/ctxsel/ctxsel"
)

const maxInt = math.MaxInt32

// defs are the definitions this package registers with ctxsel (read them
// with ctxsel.Defs and ctxsel.Lookup).
var defs = []ctxsel.Def{
	{
		Name: "topk", Doc: "fixed top-k: the k best passages",
		Params: []ctxsel.ParamDef{{Name: "k", Default: 10, Min: 1, Max: maxInt, Integer: true, Doc: "how many passages"}},
		New:    func(p map[string]float64) (ctxsel.Strategy, error) { return topK{k: int(p["k"])}, nil },
	},
	{
		Name: "budget", Doc: "token budget: passages in rank order until the next would cross the budget",
		Params: []ctxsel.ParamDef{{Name: "tokens", Default: 2000, Min: 0, Max: math.MaxInt, Integer: true, Doc: "the budget in tokens"}},
		New:    func(p map[string]float64) (ctxsel.Strategy, error) { return budget{tokens: int(p["tokens"])}, nil },
		// The budget is a hard limit, as max_tokens is: a budget below the
		// best passage's tokens selects nothing rather than overrun it.
		AllowEmpty: true,
	},
	{
		Name: "full", Doc: "full context: every passage",
		New: func(map[string]float64) (ctxsel.Strategy, error) { return full{}, nil },
	},
	{
		Name: "adaptivek", Doc: "Adaptive-k: cut at the largest gap of the sorted scores within the searched window, plus a buffer",
		Params: gapParams(),
		New:    newGap("adaptivek"),
	},
	{
		Name: "moving_avg", Doc: "Adaptive-k's moving-average rule (official code): cut at the largest drop of the window-score moving average, plus a buffer",
		Params: append(gapParams(), ctxsel.ParamDef{Name: "window", Default: 3, Min: 1, Max: MaxMovingAvgWindow, Integer: true, Doc: "scores averaged per window (1 = the largest gap)"}),
		New:    newGap("moving_avg"),
	},
	{
		Name: "2diff_spike", Doc: "Adaptive-k's second-difference rule (official code): cut where the drop stops accelerating, else at the largest gap; plus a buffer",
		Params: gapParams(),
		New:    newGap("2diff_spike"),
	},
	{
		Name: "knee", Doc: "knee (autocut): cut before the cutoff-th bend of the normalised curve",
		Params: []ctxsel.ParamDef{
			{Name: "cutoff", Default: 1, Min: 1, Max: maxInt - 1, Integer: true, Doc: "which local maximum to cut at (1 = the first)"},
			{Name: "head_guard", Default: 1, Min: 0, Max: 1, Integer: true, Doc: "1 = a knee after rank 0 (only the best passage kept) moves to the next knee, flagged in the explanation; 0 = keep it"},
		},
		New: func(p map[string]float64) (ctxsel.Strategy, error) {
			return knee{cutoff: int(p["cutoff"]), guard: p["head_guard"] == 1}, nil
		},
	},
	{
		Name: "threshold", Doc: "absolute threshold: every passage scoring at least min",
		Params: []ctxsel.ParamDef{{Name: "min", Default: 0.5, Min: -math.MaxFloat64, Max: math.MaxFloat64, Doc: "the lowest score kept"}},
		New:    func(p map[string]float64) (ctxsel.Strategy, error) { return threshold{min: p["min"]}, nil },
	},
	{
		Name: "topp", Doc: "top-p: the smallest top set holding probability mass p of softmax(score/temperature)",
		Params: []ctxsel.ParamDef{
			{Name: "p", Default: 0.9, Min: 0, MinExclusive: true, Max: 1, Doc: "probability mass to reach"},
			// Named keep_min, not min_k: min_k is the cap every strategy takes
			// (topp:min_k=2 still works, as that cap).
			{Name: "keep_min", Default: 1, Min: 0, Max: maxInt, Integer: true, Doc: "keep at least this many, whatever their mass"},
			{Name: "temperature", Default: 0.05, Min: 0, MinExclusive: true, Max: math.MaxFloat64, Doc: "softmax temperature over the scores (cosine scores: 0.01–0.1)"},
		},
		New: func(p map[string]float64) (ctxsel.Strategy, error) {
			return topP{p: p["p"], minK: int(p["keep_min"]), temperature: p["temperature"]}, nil
		},
	},
}

// gapParams are the parameters shared by the Adaptive-k family, with the
// official code's options: counts for head and tail, ignore_below_median,
// retrieve_more as a factor, float32 arithmetic.
func gapParams() []ctxsel.ParamDef {
	return []ctxsel.ParamDef{
		{Name: "head", Default: DefaultAdaptiveK.Head, Min: 0, Max: 0.999999, Doc: "fraction of the top excluded from the gap search (HoloBench setting: 0.05)"},
		{Name: "tail", Default: DefaultAdaptiveK.Tail, Min: 0, Max: 0.999999, Doc: "fraction of the bottom excluded from the gap search (0.1 = search the top 90 %)"},
		{Name: "buffer", Default: float64(DefaultAdaptiveK.Buffer), Min: 0, Max: maxInt, Integer: true, Doc: "passages added after the gap (official retrieve_more as an integer)"},
		{Name: "head_n", Default: 0, Min: 0, Max: maxInt, Integer: true, Doc: "when > 0: this many top gaps excluded, replacing head (official ignore_extreme as an integer)"},
		{Name: "tail_n", Default: 0, Min: 0, Max: maxInt, Integer: true, Doc: "when > 0: this many bottom gaps excluded, replacing tail (official ignore_extreme_tail as an integer; for none write tail=0)"},
		{Name: "ignore_below_median", Default: 0, Min: 0, Max: 1, Integer: true, Doc: "1 = exclude the bottom half of the gaps, replacing tail and tail_n"},
		{Name: "factor", Default: 0, Min: 0, Max: maxFactor, Doc: "when > 0: k = int(gap index × factor) + 1 + buffer (official retrieve_more as a float; use with buffer=0)"},
		{Name: "float32", Default: 0, Min: 0, Max: 1, Integer: true, Doc: "1 = float32 scores and gaps, reproducing the official code's cut bit for bit"},
		// Off by default: Algorithm 1 cuts at the arg-max gap, rank 0
		// included; the guard is ctxsel's option (docs/methods.md).
		{Name: "head_guard", Default: 0, Min: 0, Max: 1, Integer: true, Doc: "1 = ctxsel's guard: a largest gap after rank 0 moves the cut to the largest gap below it, flagged in the explanation; 0 (default) = the paper's cut (Algorithm 1: arg-max over every searched gap, rank 0 included)"},
	}
}

func newGap(name string) func(map[string]float64) (ctxsel.Strategy, error) {
	return func(p map[string]float64) (ctxsel.Strategy, error) {
		ap := AdaptiveKParams{Head: p["head"], Tail: p["tail"], Buffer: int(p["buffer"]),
			HeadN: int(p["head_n"]), TailN: int(p["tail_n"]), BelowMedian: p["ignore_below_median"] == 1,
			Factor: p["factor"], Float32: p["float32"] == 1}
		if err := ap.validate(); err != nil {
			return nil, err
		}
		return gapStrategy{name: name, p: ap, window: int(p["window"]), guard: p["head_guard"] == 1}, nil
	}
}

func init() {
	for _, d := range defs {
		ctxsel.Register(d)
	}
}
