package server

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/internal/wire"
)

// Asker answers a question end to end: retrieve candidates for the query
// from an index, select context from them with the request's strategy, and
// (optionally) have an LLM answer from that context. Package
// server/askserve implements it over package ask (askserve.New); the
// server only translates HTTP.
//
// Implementations must be safe for concurrent use, honour ctx, and report
// bad input (an empty index, a query the embedder refuses) with errors that
// wrap ctxsel.ErrInvalidInput, which become 400s.
type Asker interface {
	Ask(ctx context.Context, req AskRequest) (AskResponse, error)
}

// DepsSupplier is implemented by Askers that supply dependencies of their
// own to the text selector a /v1/ask request names (askserve.Asker: its index's
// stored sentence vectors, ctxsel.DepSentences, and its sentence
// embedder). The server resolves /v1/ask's strategy with
// Options.SelectorDeps first, then these, under the same rules (no LLM,
// the embedder bounded by the server's limiter).
type DepsSupplier interface {
	SelectorDeps() ctxsel.Deps
}

// AskRequest is a validated /v1/ask request.
type AskRequest struct {
	Query string
	// Strategy is the request's strategy, resolved by ctxsel.Resolve and
	// checked: a pure strategy with its caps, a text selector (the picker
	// the server was started with, a registered kind such as the evidence
	// selector, or a composition such as "topk:k=30+picker"), or an
	// answering route (selfroute:k=N). Its zero value (Kind 0) asks for
	// the Asker's default, ctxsel.DefaultStrategy, which a server without
	// Options.SelectorDeps, whose Asker is no DepsSupplier, cannot build
	// and leaves to the Asker.
	Strategy ctxsel.Resolved
	Order    ctxsel.Order
	// TopN is how many candidates to retrieve before selecting; 0 leaves
	// it to the Asker.
	TopN int
	// Retriever is how to score the index's chunks: "dense", "bm25" or
	// "hybrid"; "" leaves it to the Asker (ctxsel's is hybrid). The Asker
	// validates it (an unknown one wraps ctxsel.ErrInvalidInput).
	Retriever string
}

// AskResponse is what an Asker found.
type AskResponse struct {
	// Answer is the LLM's answer; empty when no LLM is configured.
	Answer string
	// AnswerDefect flags a degenerate reply: llm.DefectEmpty or
	// llm.DefectTruncated (cut off at the token limit or over the size
	// bound); "" for a whole answer or none.
	AnswerDefect string
	// Passages are the retrieved passages the caller should see: every
	// candidate, or at least the selected ones, in any order.
	Passages []Passage
	// Selection is ctxsel.Select's result; its IDs name Passages.
	Selection ctxsel.Selection
	// Scores, when set, is the whole similarity curve the strategy cut
	// (every candidate's score); otherwise the curve is Passages' scores.
	Scores []float64
	// Usage, when set, is what the LLM calls cost (reported as "usage").
	Usage *AskUsage
}

// Passage is one retrieved candidate.
type Passage struct {
	ID     string
	Score  float64
	Tokens int
	Text   string
}

// askOp decodes a /v1/ask body, has the Asker answer and appends the
// response.
func (s *Server) askOp(ctx context.Context, body string, b []byte) ([]byte, error) {
	var req askRequest
	if err := decodeAsk(body, &req, s.limits()); err != nil {
		return nil, err
	}
	// /v1/ask answers as `ctxsel ask` does: DefaultStrategy when none is
	// named, and answering routes too.
	how, err := s.resolveWith(&req.commonRequest, ctxsel.DefaultStrategy, ctxsel.Resolver{Selectors: s.selectors, Deps: s.askDeps})
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(req.query) == "" {
		return nil, wire.Bad("query", "missing: ask needs a question")
	}
	if s.asker == nil {
		return nil, &wire.FieldError{Status: http.StatusNotImplemented, Path: wire.Field(""),
			Msg: "ask is not available: this server has no index configured; POST candidates to /v1/select instead"}
	}
	// A copy of the query: it is a slice of the request body, which an
	// Asker that caches queries would otherwise pin.
	areq := AskRequest{Query: strings.Clone(req.query), Strategy: how.res, Order: how.order, TopN: req.topN, Retriever: strings.Clone(req.retriever)}
	resp, err := within(ctx, func() (AskResponse, error) { return s.asker.Ask(ctx, areq) })
	if err != nil {
		// The index, the embedder or the LLM behind it failed: logged,
		// and named without its detail.
		return nil, upstream("ask", err)
	}
	if b, err = s.appendAsk(b, resp); err != nil {
		return nil, err
	}
	s.metrics.selection(resp.Selection.K, resp.Selection.Tokens)
	return b, nil
}

// appendAsk appends an AskResponse: the answer, the selection as
// /v1/select reports it, and the passages best first, marked selected.
func (s *Server) appendAsk(b []byte, resp AskResponse) ([]byte, error) {
	byID := make(map[string]int, len(resp.Passages))
	tokens := 0
	for i, p := range resp.Passages {
		byID[p.ID] = i
		tokens += p.Tokens
	}
	chosen := make(map[string]bool, len(resp.Selection.IDs))
	for _, id := range resp.Selection.IDs {
		if _, ok := byID[id]; !ok {
			// An Asker bug, not bad input: a 500 with the details logged.
			return nil, fmt.Errorf("ask: selected id %q is not among the %d passages", id, len(resp.Passages))
		}
		chosen[id] = true
	}
	curve := resp.Scores
	if len(curve) == 0 {
		curve = make([]float64, len(resp.Passages))
		for i, p := range resp.Passages {
			curve[i] = p.Score
		}
	}
	sorted := slices.Clone(curve)
	slices.Sort(sorted)
	slices.Reverse(sorted)
	sel := resp.Selection
	if sel.Explanation.N == 0 { // a Selection built by hand
		sel.Explanation.N = len(sorted)
	}
	total := sel.Explanation.TotalTokens
	if total == 0 {
		total = tokens
	}
	res := wire.Selected{Sel: sel, TotalTokens: total, Sorted: sorted,
		Score: func(i int) float64 { return resp.Passages[byID[sel.IDs[i]]].Score }}

	b = append(b, `{"answer":`...)
	b = wire.AppendString(b, resp.Answer)
	if resp.AnswerDefect != "" {
		b = append(b, `,"answer_defect":`...)
		b = wire.AppendString(b, resp.AnswerDefect)
	}
	b = appendUsage(b, resp.Usage)
	b = append(b, ',')
	b = wire.AppendSelected(b, res, s.cfg.MaxCurvePoints)
	b = append(b, `,"passages":`...)
	b = appendPassages(b, resp.Passages, chosen)
	return append(b, "}\n"...), nil
}

// appendPassages appends passages as a JSON array, best first (ties in
// their order), each with its rank and, when chosen is not nil, whether
// it was selected: /v1/ask's and the search tool's passages.
func appendPassages(b []byte, ps []Passage, chosen map[string]bool) []byte {
	order := make([]int, len(ps))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, c int) int { return cmp.Compare(ps[c].Score, ps[a].Score) })
	return wire.AppendArray(b, len(order), func(b []byte, rank int) []byte {
		p := ps[order[rank]]
		b = append(b, `{"id":`...)
		b = wire.AppendString(b, p.ID)
		b = append(b, `,"rank":`...)
		b = wire.AppendInt(b, rank)
		b = append(b, `,"score":`...)
		b = wire.AppendFloat(b, p.Score)
		b = append(b, `,"tokens":`...)
		b = wire.AppendInt(b, p.Tokens)
		if chosen != nil {
			b = append(b, `,"selected":`...)
			b = strconv.AppendBool(b, chosen[p.ID])
		}
		b = append(b, `,"text":`...)
		b = wire.AppendString(b, p.Text)
		return append(b, '}')
	})
}
