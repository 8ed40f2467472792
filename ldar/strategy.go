package ldar

import (
	"fmt"

	"github.com/ctxsel/ctxsel"
)

// DepPolicy names the dependency (a *Policy) that a band strategy runs:
// the caller of ctxsel.Resolve (Resolver.Deps) or ctxsel.NewWith supplies
// it, having read it from wherever it keeps policies (the command line:
// $CTXSEL_BAND_POLICY). Without it a band runs the embedded default.
const DepPolicy = "band_policy"

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
		Doc:  "LDAR learned band: a trained policy reads the shape of the similarity curve and picks a band of ranks (the embedded policy, or the caller's: $CTXSEL_BAND_POLICY on the command line and in serve)",
		NewFrom: func(_ map[string]float64, deps ctxsel.Deps) (ctxsel.Strategy, error) {
			p, ok, err := ctxsel.OptionalDep[*Policy](deps, DepPolicy)
			if err != nil {
				return nil, err
			}
			if !ok || p == nil {
				if p, err = Default(); err != nil {
					return nil, err
				}
			}
			return band{p}, nil
		},
	})
}
