package ldar

import (
	"fmt"
	"os"
	"sync"

	"github.com/ctxsel/ctxsel"
)

// EnvPolicy names the environment variable that, when set to a policy
// file, makes the band strategy use that policy instead of the embedded
// default (SetDefault wins over it).
const EnvPolicy = "CTXSEL_BAND_POLICY"

var active struct {
	sync.Mutex
	p       *Policy
	envPath string
	envP    *Policy
}

// SetDefault makes the band strategy built by ctxsel.New (and so by
// `--strategies band` and eval.Run) use p; nil restores the usual choice
// ($CTXSEL_BAND_POLICY, else the embedded policy). Strategies already built
// keep their policy.
func SetDefault(p *Policy) {
	active.Lock()
	defer active.Unlock()
	active.p = p
}

// Current returns the policy a new band strategy uses: the one given to
// SetDefault, else the file named by $CTXSEL_BAND_POLICY, else the embedded
// default.
func Current() (*Policy, error) {
	active.Lock()
	defer active.Unlock()
	if active.p != nil {
		return active.p, nil
	}
	if path := os.Getenv(EnvPolicy); path != "" {
		if active.envP == nil || active.envPath != path {
			p, err := Load(path)
			if err != nil {
				return nil, fmt.Errorf("%w: $%s: %v", ctxsel.ErrInvalidInput, EnvPolicy, err)
			}
			active.envP, active.envPath = p, path
		}
		return active.envP, nil
	}
	return Default()
}

// Strategy returns the policy as a ctxsel strategy named "band".
func (p *Policy) Strategy() ctxsel.Strategy { return band{p} }

type band struct{ p *Policy }

func (band) Name() string               { return "band" }
func (band) Params() map[string]float64 { return map[string]float64{} }

// Cut runs the policy (Beta means) on the curve: it reads the best
// min(N, window) scores, standardised by the mean and σ of all N, and
// selects the ranks of its quantile band (see BandRanks).
func (b band) Cut(c *ctxsel.Curve) (ctxsel.Cut, error) {
	n := c.Len()
	cfg := b.p.model.Cfg
	m := cfg.window(n)
	idx := c.Top(min(n, m+1))
	top := make([]float64, len(idx))
	tokens := make([]int, len(idx))
	scores := c.Scores()
	for r, i := range idx {
		top[r] = scores[i]
		tokens[r] = c.TokensOf(i)
	}
	mean, std := curveStats(scores)
	var pr Prediction
	if k := cfg.Channels; k > 0 {
		// a policy that reads both curves: the candidates must carry them
		if c.NumChannels() < k {
			return ctxsel.Cut{}, fmt.Errorf("%w: the band policy reads %d score channels (e.g. dense and lexical scores of a hybrid retriever); the candidates carry %d", ctxsel.ErrInvalidInput, k, c.NumChannels())
		}
		chans := make([][]float64, k)
		for j := range chans {
			chans[j] = c.Channel(j)
		}
		pr = b.p.predict(top, tokens, n, mean, std, c.Top(n), chans)
	} else {
		pr = b.p.PredictTop(top, tokens, n, mean, std)
	}
	d := ctxsel.Decision{Kind: "band", Rank: pr.End - 1, Value: pr.QU - pr.QL}
	if pr.End > 0 {
		above := top[pr.End-1]
		d.Above = &above
		if pr.End < len(top) {
			below := top[pr.End]
			d.Below = &below
		}
	}
	from, to := 0, m-1
	d.SearchFrom, d.SearchTo = &from, &to
	reason := fmt.Sprintf("LDAR band policy: quantiles qL=%.4f qU=%.4f (Beta means) over the top %d of %d ranks: kept ranks %d–%d (%d passages)",
		pr.QL, pr.QU, m, n, pr.Start, pr.End-1, pr.End-pr.Start)
	return ctxsel.Cut{Start: pr.Start, End: pr.End, Decision: d, Reason: reason}, nil
}

func init() {
	ctxsel.Register(ctxsel.Def{
		Name: "band",
		Doc:  "LDAR learned band: a trained policy reads the shape of the similarity curve and picks a band of ranks (embedded policy, or $" + EnvPolicy + ")",
		New: func(map[string]float64) (ctxsel.Strategy, error) {
			p, err := Current()
			if err != nil {
				return nil, err
			}
			return band{p}, nil
		},
	})
}
