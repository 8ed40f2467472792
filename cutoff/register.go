package cutoff

import (
	"math"

	"github.com/ctxsel/ctxsel"
)

const maxInt = math.MaxInt32

// Defs are the definitions this package registers with ctxsel.
var Defs = []ctxsel.Def{
	{
		Name: "topk", Doc: "fixed top-k: the k best passages",
		Params: []ctxsel.ParamDef{{Name: "k", Default: 10, Min: 1, Max: maxInt, Integer: true, Doc: "how many passages"}},
		New:    func(p map[string]float64) (ctxsel.Strategy, error) { return topK{k: int(p["k"])}, nil },
	},
	{
		Name: "budget", Doc: "token budget: passages in rank order until the next would cross the budget",
		Params: []ctxsel.ParamDef{{Name: "tokens", Default: 2000, Min: 0, Max: math.MaxInt, Integer: true, Doc: "the budget in tokens"}},
		New:    func(p map[string]float64) (ctxsel.Strategy, error) { return budget{tokens: int(p["tokens"])}, nil },
	},
	{
		Name: "full", Doc: "full context: every passage",
		New: func(map[string]float64) (ctxsel.Strategy, error) { return full{}, nil },
	},
	{
		Name: "adaptivek", Doc: "Adaptive-k: cut at the largest gap of the sorted scores within the searched window, plus a buffer",
		Params: []ctxsel.ParamDef{
			{Name: "head", Default: DefaultAdaptiveK.Head, Min: 0, Max: 0.999999, Doc: "fraction of the top excluded from the gap search (HoloBench setting: 0.05)"},
			{Name: "tail", Default: DefaultAdaptiveK.Tail, Min: 0, Max: 0.999999, Doc: "fraction of the bottom excluded from the gap search (0.1 = search the top 90 %)"},
			{Name: "buffer", Default: float64(DefaultAdaptiveK.Buffer), Min: 0, Max: maxInt, Integer: true, Doc: "passages added after the gap"},
		},
		New: func(p map[string]float64) (ctxsel.Strategy, error) {
			ap := AdaptiveKParams{Head: p["head"], Tail: p["tail"], Buffer: int(p["buffer"])}
			if err := ap.validate(); err != nil {
				return nil, err
			}
			return adaptiveK{p: ap}, nil
		},
	},
	{
		Name: "knee", Doc: "knee (autocut): cut before the cutoff-th bend of the normalised curve",
		Params: []ctxsel.ParamDef{{Name: "cutoff", Default: 1, Min: 1, Max: maxInt, Integer: true, Doc: "which local maximum to cut at (1 = the first)"}},
		New:    func(p map[string]float64) (ctxsel.Strategy, error) { return knee{cutoff: int(p["cutoff"])}, nil },
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

func init() {
	for _, d := range Defs {
		ctxsel.Register(d)
	}
}
