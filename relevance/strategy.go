package relevance

import (
	"errors"
	"fmt"
	"sync"

	"github.com/ctxsel/ctxsel"
)

var active struct {
	sync.Mutex
	m *Model
}

// SetDefault makes the relevance strategy built by ctxsel.New (and so by
// `--strategies relevance:lambda=…` and eval.Run) use m; nil removes it.
// No model is built in: a measured one did not beat the fixed top-k/budget
// envelope (README, "Hybrid scoring and the default pipeline").
func SetDefault(m *Model) {
	active.Lock()
	defer active.Unlock()
	active.m = m
}

func current() *Model {
	active.Lock()
	defer active.Unlock()
	return active.m
}

// DefaultLambda is the price of 1,000 tokens in expected recall.
const DefaultLambda = 0.5

var registerOnce sync.Once

// Register adds the strategy "relevance" to the ctxsel registry (once; later
// calls do nothing), so that specs such as relevance:lambda=0.2 build it
// with the model given to SetDefault. It is not registered on import: no
// model is built in, so the strategy is not offered where nobody trained one
// (`ctxsel strategies`, /v1/strategies).
func Register() { registerOnce.Do(register) }

func register() {
	ctxsel.Register(ctxsel.Def{
		Name: "relevance",
		Doc:  "learned per-rank relevance (logistic regression over the fused, dense and lexical curves): keep the prefix of the ranking that maximises expected recall minus lambda per 1,000 tokens; needs a model (relevance.SetDefault, `ctxsel train relevance`)",
		Params: []ctxsel.ParamDef{
			{Name: "lambda", Default: DefaultLambda, Min: 0, Max: 1000, Doc: "price of 1,000 selected tokens in expected recall"},
		},
		New: func(p map[string]float64) (ctxsel.Strategy, error) {
			m := current()
			if m == nil {
				return nil, fmt.Errorf("%w: relevance has no model: train one with `ctxsel train relevance`", ctxsel.ErrInvalidInput)
			}
			return m.Strategy(p["lambda"]), nil
		},
	})
}

// Strategy returns the model as a ctxsel strategy named "relevance" with
// token price lambda.
func (m *Model) Strategy(lambda float64) ctxsel.Strategy { return strategy{m, lambda} }

type strategy struct {
	m      *Model
	lambda float64
}

func (strategy) Name() string                 { return "relevance" }
func (s strategy) Params() map[string]float64 { return map[string]float64{"lambda": s.lambda} }

// Cut estimates p(gold) for each of the top Window ranks and keeps the
// prefix k ≥ 1 that maximises Σ_{r<k} p_r / Σ_r p_r − λ·tokens(k)/1000: the
// expected share of the gold passages handed over, less the price of the
// tokens. Taking the best prefix rather than stopping at the first rank
// worth less than its tokens lets a likely passage behind a doubtful one
// still be reached.
func (s strategy) Cut(c *ctxsel.Curve) (ctxsel.Cut, error) {
	if c.NumChannels() < s.m.Channels {
		return ctxsel.Cut{}, fmt.Errorf("%w: the relevance model reads %d score channels (the dense and lexical scores of a hybrid retriever); the candidates carry %d", ctxsel.ErrInvalidInput, s.m.Channels, c.NumChannels())
	}
	n := c.Len()
	order := c.Top(min(n, s.m.Window))
	tokens := make([]int, n)
	for i := range n {
		tokens[i] = c.TokensOf(i)
	}
	chans := make([][]float64, s.m.Channels)
	for j := range chans {
		chans[j] = c.Channel(j)
	}
	p := s.m.predict(c.Scores(), tokens, chans, order)
	total := 0.0
	for _, v := range p {
		total += v
	}
	if total <= 0 {
		return ctxsel.Cut{}, errors.New("relevance: every probability is zero")
	}
	best, bestK, gain, toks := 0.0, 1, 0.0, 0
	for r, v := range p {
		gain += v / total
		toks += tokens[order[r]]
		if u := gain - s.lambda*float64(toks)/1000; r == 0 || u > best {
			best, bestK = u, r+1
		}
	}
	return ctxsel.Cut{End: bestK, Decision: ctxsel.Decision{Kind: "relevance", Rank: bestK - 1, Value: best}, Reason: fmt.Sprintf(
		"kept the %d best-ranked passages: expected %.0f%% of the gold evidence (%.2f expected gold passages in the top %d) at %g recall per 1,000 tokens",
		bestK, 100*sum(p[:bestK])/total, total, len(p), s.lambda)}, nil
}

func (m *Model) predict(scores []float64, tokens []int, chans [][]float64, order []int) []float64 {
	xs := features(scores, tokens, chans, order, m.Channels)
	p := make([]float64, len(xs))
	for r, x := range xs {
		s := m.Bias
		for j, v := range x {
			s += m.Weights[j] * (v - m.Mean[j]) / m.SD[j]
		}
		p[r] = sigmoid(s)
	}
	return p
}

func sum(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}
