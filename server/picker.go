package server

import (
	"context"
	"slices"
	"strings"

	"github.com/ctxsel/ctxsel"
)

// pickerStrategy is the strategy name that routes a /v1/select request to
// the LLM picker configured at start (Options.Picker). Its parameters and
// its endpoint are the server's: a request can neither tune nor redirect
// it.
const pickerStrategy = "picker"

func isPickerRequest(strategy string) bool {
	name, _, _ := strings.Cut(strings.TrimSpace(strategy), ":")
	return strings.EqualFold(strings.TrimSpace(name), pickerStrategy)
}

// checkPickerRequest validates what a picker request may carry and returns
// its order.
func (s *Server) checkPickerRequest(req *commonRequest) (ctxsel.Order, error) {
	if strings.TrimSpace(req.strategy) != pickerStrategy {
		return 0, badField("strategy", "the picker's parameters are set when the server starts: send \"strategy\": \"picker\"")
	}
	if len(req.params) > 0 {
		return 0, badField("params", "the picker takes no request parameters")
	}
	if strings.TrimSpace(req.query) == "" {
		return 0, badField("query", "missing: the picker reads the question")
	}
	order, err := ctxsel.ParseOrder(req.order)
	if err != nil {
		return 0, badField("order", "%s", strings.TrimPrefix(err.Error(), ctxsel.ErrInvalidInput.Error()+": "))
	}
	return order, nil
}

// pickCandidates has the picker read the scored candidates' texts. An
// invalid model answer is not an error (the picker falls back and says so
// in the explanation); a failed call is a 502.
func (s *Server) pickCandidates(ctx context.Context, req *selectRequest, cands []ctxsel.Candidate, order ctxsel.Order) (selected, error) {
	texts := make([]string, len(cands))
	for i := range cands {
		if req.has[i]&hasText == 0 {
			return selected{}, badField(fpath{name: "candidates", idx: i, sub: "text"}.String(), "missing: the picker reads every candidate's text")
		}
		texts[i] = strings.Clone(req.text(i))
	}
	curve, err := ctxsel.NewCurve(cands)
	if err != nil {
		return selected{}, locate(cands, err)
	}
	tq := ctxsel.TextQuery{Question: strings.Clone(req.query), Curve: curve, Texts: texts, Order: order}
	var sel ctxsel.Selection
	if m, ok := s.picker.(ctxsel.MeteredSelector); ok {
		var u ctxsel.SelectorUsage
		sel, u, err = m.SelectMetered(ctx, tq)
		if u.CallError != nil {
			// The fallback selected; the explanation names only the kind
			// of failure, the operator gets the rest.
			s.log.Warn("picker call failed; the fallback selected", "request_id", RequestID(ctx), "error", u.CallError.Error())
		}
	} else {
		sel, err = s.picker.SelectTexts(ctx, tq)
	}
	if err != nil {
		return selected{}, upstream("picker", err)
	}
	sorted := append(req.sorted[:0], curve.Scores()...)
	slices.Sort(sorted)
	slices.Reverse(sorted)
	req.sorted = sorted
	return selected{sel: sel, score: func(i int) float64 { return curve.Candidate(sel.Indices[i]).Score },
		totalTokens: curve.TotalTokens(), sorted: sorted}, nil
}
