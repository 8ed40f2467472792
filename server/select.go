package server

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/internal/wire"
)

// /v1/select and the MCP tool select_context: candidates (scored, or
// scored here from vectors or texts) → a strategy's or a text selector's
// selection → the selection, its scores and the explanation.

// selectOp decodes a /v1/select body, selects and appends the response.
func (s *Server) selectOp(ctx context.Context, body string, b []byte) ([]byte, error) {
	req := getSelectRequest()
	defer putSelectRequest(req)
	if err := decodeSelect(body, req, s.limits()); err != nil {
		return nil, err
	}
	res, err := s.selectCandidates(ctx, req)
	if err != nil {
		return nil, err
	}
	s.metrics.selection(res.Sel.K, res.Sel.Tokens)
	b = append(b, '{')
	b = wire.AppendSelected(b, res, s.cfg.MaxCurvePoints)
	return append(b, "}\n"...), nil
}

// selectCandidates scores the candidates (given scores, cosine of given
// vectors, or cosine of embedded texts), counts tokens and selects.
func (s *Server) selectCandidates(ctx context.Context, req *selectRequest) (wire.Selected, error) {
	how, err := s.resolveRequest(&req.commonRequest, ctxsel.DefaultSelectStrategy, ctxsel.StrategyKind|ctxsel.SelectorKind)
	if err != nil {
		return wire.Selected{}, err
	}
	if len(req.Cands) == 0 {
		return wire.Selected{}, wire.Bad("candidates", "no candidates: give at least one {\"id\", \"score\"}")
	}
	// How candidates are scored is decided by the first one; all must agree,
	// because a given score and a cosine are not on one scale.
	var mode uint8
	switch h0 := req.Has[0]; {
	case h0&wire.HasScore != 0:
		mode = wire.HasScore
	case h0&wire.HasVector != 0:
		mode = wire.HasVector
	case h0&wire.HasText != 0:
		mode = wire.HasText
	default:
		return wire.Selected{}, wire.Bad("candidates[0]", `needs a "score", a "vector" (with "query_vector") or a "text" to embed`)
	}
	for i, h := range req.Has {
		if h&mode == 0 {
			return wire.Selected{}, wire.Bad(candidateField(i, modeField(mode)), "missing: candidates[0] has a %s, so every candidate needs one", modeField(mode))
		}
		if h&wire.HasScore != 0 && h&wire.HasVector != 0 {
			return wire.Selected{}, wire.Bad(candidateField(i, "vector"), `give a "score" or a "vector", not both`)
		}
	}
	switch mode {
	case wire.HasVector:
		err = vectorScores(req)
	case wire.HasText:
		err = s.textScores(ctx, req)
	}
	if err != nil {
		return wire.Selected{}, err
	}
	if err := s.countTokens(req); err != nil {
		return wire.Selected{}, err
	}
	return s.selectRun(ctx, req, how)
}

// countTokens counts the tokens of the candidates that give a text and no
// token count.
func (s *Server) countTokens(req *selectRequest) error {
	var counter interface{ Count(string) int }
	for i, h := range req.Has {
		if h&wire.HasTokens != 0 || h&wire.HasText == 0 {
			continue
		}
		if counter == nil {
			c, err := s.tokenCounter()
			if err != nil {
				return err
			}
			counter = c
		}
		// A copy: the counter caches texts, and a slice of the body would
		// pin the whole request in that cache.
		req.Cands[i].Tokens = counter.Count(strings.Clone(req.Text(i)))
	}
	return nil
}

// selectedOf is a selection of curve's candidates ready to encode.
func selectedOf(curve *ctxsel.Curve, sel ctxsel.Selection, sorted []float64) wire.Selected {
	sorted = append(sorted, curve.Scores()...)
	wire.SortDescending(sorted)
	return wire.Selected{Sel: sel, Score: func(i int) float64 { return curve.Candidate(sel.Indices[i]).Score },
		TotalTokens: curve.TotalTokens(), Sorted: sorted}
}

// newCurve is ctxsel.NewCurve with its error naming the candidate's field
// ("candidates[2].id" for a duplicate id).
func newCurve(cands []ctxsel.Candidate) (*ctxsel.Curve, error) {
	curve, err := ctxsel.NewCurve(cands)
	if err == nil {
		return curve, nil
	}
	var ce *ctxsel.CandidateError
	if errors.As(err, &ce) && ce.First >= 0 {
		return nil, wire.Bad(candidateField(ce.Index, "id"), "duplicate id %q (also candidates[%d])", ce.ID, ce.First)
	}
	return nil, wire.Bad("candidates", "%s", inputMsg(err))
}

// candidateField names field sub of candidate i of a request.
func candidateField(i int, sub string) string {
	return wire.Path{Name: "candidates", Idx: i, Sub: sub}.String()
}

func modeField(mode uint8) string {
	switch mode {
	case wire.HasVector:
		return "vector"
	case wire.HasText:
		return "text"
	}
	return "score"
}

// selectRun runs what the request resolved to (a strategy, the LLM
// picker the server was started with, a registered kind such as
// evidence, or a composition) on the scored candidates; one that reads
// texts gets the question, every candidate's text and the lines above
// those that give them.
func (s *Server) selectRun(ctx context.Context, req *selectRequest, how resolved) (wire.Selected, error) {
	run := how.res.Runnable()
	if run == nil {
		return wire.Selected{}, fmt.Errorf("select: %s does not select on its own", how.res.Spec)
	}
	tq := ctxsel.TextQuery{Order: how.order}
	if run.ReadsTexts() {
		tq.Texts = make([]string, len(req.Cands))
		for i := range req.Cands {
			if req.Has[i]&wire.HasText == 0 {
				return wire.Selected{}, wire.Bad(candidateField(i, "text"), "missing: %s reads every candidate's text", how.res.Spec)
			}
			tq.Texts[i] = strings.Clone(req.Text(i))
		}
		if req.AnyAbove() {
			// the lines of each candidate's document above it (its
			// heading path, a table's header) that the selector sends
			// with what it keeps of it
			tq.Above = make([]string, len(req.Cands))
			for i := range req.Cands {
				tq.Above[i] = strings.Clone(req.Above(i))
			}
		}
		tq.Question = strings.Clone(req.query)
	}
	curve, err := newCurve(req.Cands)
	if err != nil {
		return wire.Selected{}, err
	}
	tq.Curve = curve
	sel, err := s.runSelector(ctx, run, tq)
	if err != nil {
		return wire.Selected{}, err
	}
	res := selectedOf(curve, sel, req.sorted[:0])
	req.sorted = res.Sorted
	return res, nil
}

// runSelector runs a resolved selector on a query. A strategy's input
// error is the request's strategy or candidates at fault (400, field
// "strategy"). A text selector's invalid model answer is not an error
// (the picker falls back and says so in the explanation, and the
// operator's log gets the call's failure); its failed call is the
// selector's upstream failure (502).
func (s *Server) runSelector(ctx context.Context, run ctxsel.Selector, tq ctxsel.TextQuery) (ctxsel.Selection, error) {
	sel, u, err := run.Select(ctx, tq)
	if u.CallError != nil {
		// The fallback selected; the explanation names only the kind
		// of failure, the operator gets the rest.
		s.log.Warn(run.Name()+" call failed; the fallback selected", "request_id", RequestID(ctx), "error", u.CallError.Error())
	}
	switch {
	case err == nil:
		return sel, nil
	case !run.ReadsTexts() && errors.Is(err, ctxsel.ErrInvalidInput):
		return ctxsel.Selection{}, wire.Bad("strategy", "%v", err)
	case !run.ReadsTexts():
		return ctxsel.Selection{}, fmt.Errorf("select: %w", err)
	}
	return ctxsel.Selection{}, upstream(run.Name(), err)
}
