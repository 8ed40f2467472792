package server

import (
	"context"
	"slices"
	"strings"

	"github.com/ctxsel/ctxsel"
)

// selectTexts has a text selector (the LLM picker the server was started
// with, or a composition over it) read the scored candidates' texts. An
// invalid model answer is not an error (the picker falls back and says so
// in the explanation); a failed call is a 502.
func (s *Server) selectTexts(ctx context.Context, req *selectRequest, cands []ctxsel.Candidate, how resolved) (selected, error) {
	texts := make([]string, len(cands))
	for i := range cands {
		if req.has[i]&hasText == 0 {
			return selected{}, badField(fpath{name: "candidates", idx: i, sub: "text"}.String(), "missing: %s reads every candidate's text", how.spec)
		}
		texts[i] = strings.Clone(req.text(i))
	}
	curve, err := ctxsel.NewCurve(cands)
	if err != nil {
		return selected{}, locate(cands, err)
	}
	tq := ctxsel.TextQuery{Question: strings.Clone(req.query), Curve: curve, Texts: texts, Order: how.order}
	var sel ctxsel.Selection
	if m, ok := how.selector.(ctxsel.MeteredSelector); ok {
		var u ctxsel.SelectorUsage
		sel, u, err = m.SelectMetered(ctx, tq)
		if u.CallError != nil {
			// The fallback selected; the explanation names only the kind
			// of failure, the operator gets the rest.
			s.log.Warn(how.selector.Name()+" call failed; the fallback selected", "request_id", RequestID(ctx), "error", u.CallError.Error())
		}
	} else {
		sel, err = how.selector.SelectTexts(ctx, tq)
	}
	if err != nil {
		return selected{}, upstream(how.selector.Name(), err)
	}
	sorted := append(req.sorted[:0], curve.Scores()...)
	slices.Sort(sorted)
	slices.Reverse(sorted)
	req.sorted = sorted
	return selected{sel: sel, score: func(i int) float64 { return curve.Candidate(sel.Indices[i]).Score },
		totalTokens: curve.TotalTokens(), sorted: sorted}, nil
}
