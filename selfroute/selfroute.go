// Package selfroute is Self-Route (Li et al., 2024), the LLM-routed baseline
// of both Adaptive-k and LDAR (ldar.txt, App. C.4): the reader first sees the
// top-k passages with a prompt that lets it decline ("unanswerable"); when it
// declines, it is asked again with the full context cut to its window.
//
// Self-Route is not a pure strategy: which context it ends with depends on
// the reader's answer, so it cannot cut a similarity curve without an LLM. It
// is an answering route: callers precompute the two candidate selections
// (pure) and hand Route a function that asks the reader.
package selfroute

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/answer"
	"github.com/ctxsel/ctxsel/cutoff"
	"github.com/ctxsel/ctxsel/llm"
)

// Name is the route's name in strategy lists ("selfroute:k=5").
const Name = "selfroute"

// DefaultK is the number of passages of the first, retrieval step.
const DefaultK = 5

// Template is the prompt of ldar.txt Table 5 ("Prompt we used for Self-Route
// baseline"), verbatim; {datatype} names the kind of source ("documents",
// "novels", …) and is filled in by Prompt.
const Template llm.Template = "Here are some chunks retrieved from some {datatype}. Read these chunks to answer a question. " +
	"Be concise. If the question cannot be answered based on the information in the article, write " +
	"“unanswerable”. {context} Question: {question} Only give me the answer and do not output any " +
	"other words. If the question cannot be answered based on the information in the article, write " +
	"“unanswerable”. Answer:"

// DefaultDatatype fills {datatype} when the caller names none.
const DefaultDatatype = "documents"

// Prompt is Template with {datatype} filled in ("" means DefaultDatatype).
func Prompt(datatype string) llm.Template {
	datatype = strings.TrimSpace(datatype)
	if datatype == "" {
		datatype = DefaultDatatype
	}
	return llm.Template(strings.ReplaceAll(string(Template), "{datatype}", datatype))
}

// Spec is a parsed "selfroute:k=N".
type Spec struct {
	K int
}

// String is the canonical spec.
func (s Spec) String() string { return fmt.Sprintf("%s:k=%d", Name, s.K) }

func init() {
	ctxsel.RegisterRoute(ctxsel.RouteDef{
		Name: Name,
		Doc:  "Self-Route (ldar.txt App. C.4): the reader sees the top k passages with a prompt that lets it answer \"unanswerable\", and then the long context cut to its window",
		Params: []ctxsel.ParamDef{{Name: "k", Default: DefaultK, Min: 1, Max: 10000, Integer: true,
			Doc: "passages of the first, retrieval step"}},
		New: func(sp ctxsel.Spec) (ctxsel.Route, error) { return ParseSpec(sp) },
	})
}

// Spec is a ctxsel.Route: Resolve returns it for "selfroute:k=N".
var _ ctxsel.Route = Spec{}

// Name implements ctxsel.Route.
func (Spec) Name() string { return Name }

// Plan implements ctxsel.Route: the top K in the given order, then every
// candidate (the long context, cut to the window by the caller).
func (s Spec) Plan(c *ctxsel.Curve, order ctxsel.Order) ([]ctxsel.RouteStep, error) {
	top, err := ctxsel.Select(c, cutoff.TopK(s.K), ctxsel.Caps{}, order)
	if err != nil {
		return nil, err
	}
	full, err := ctxsel.Select(c, cutoff.TopK(c.Len()), ctxsel.Caps{}, ctxsel.RankOrder)
	if err != nil {
		return nil, err
	}
	return []ctxsel.RouteStep{
		{Name: fmt.Sprintf("top-%d", top.K), Selection: top},
		{Name: "long-context", Selection: full, Long: true},
	}, nil
}

// Prompt implements ctxsel.Route: Table 5's prompt.
func (Spec) Prompt(datatype string) string { return string(Prompt(datatype)) }

// Declines implements ctxsel.Route: the reader declined when it answered
// "unanswerable".
func (Spec) Declines(reply string) bool { return Unanswerable(reply) }

// ParseSpec reads the route's parameters from a strategy spec: k (default 5,
// 1 … 10000) and nothing else. Errors wrap ctxsel.ErrInvalidInput.
func ParseSpec(sp ctxsel.Spec) (Spec, error) {
	if sp.Name != Name {
		return Spec{}, fmt.Errorf("%w: %q is not %s", ctxsel.ErrInvalidInput, sp.Name, Name)
	}
	s := Spec{K: DefaultK}
	for key, v := range sp.Params {
		if key != "k" {
			return Spec{}, fmt.Errorf("%w: %s has no parameter %q (known: k)", ctxsel.ErrInvalidInput, Name, key)
		}
		if v != float64(int(v)) || v < 1 || v > 10000 {
			return Spec{}, fmt.Errorf("%w: %s:k=%v must be an integer in 1..10000", ctxsel.ErrInvalidInput, Name, v)
		}
		s.K = int(v)
	}
	return s, nil
}

// Unanswerable reports whether a reply declines to answer: after SQuAD
// normalisation (curly quotes dropped too) it is, or starts with,
// "unanswerable".
func Unanswerable(reply string) bool {
	n := answer.Normalize(strings.Map(func(r rune) rune {
		if unicode.IsPunct(r) {
			return ' '
		}
		return r
	}, reply))
	return n == "unanswerable" || strings.HasPrefix(n, "unanswerable ")
}

// Reader asks the reader LLM with the passages of one selection.
type Reader func(ctx context.Context, sel ctxsel.Selection) (llm.Response, error)

// Step is one call of the route: the context it showed and the reply.
type Step struct {
	Selection ctxsel.Selection
	Reply     llm.Response
}

// Result is what the route did: one step, or two when the reader declined
// the top-k.
type Result struct {
	Steps []Step
}

// Routed reports whether the long-context step ran.
func (r Result) Routed() bool { return len(r.Steps) > 1 }

// Final is the step whose reply is the answer.
func (r Result) Final() Step { return r.Steps[len(r.Steps)-1] }

// Route asks with top; when the reply is unanswerable it asks again with
// full. On an error the steps completed so far are returned with it.
func Route(ctx context.Context, top, full ctxsel.Selection, read Reader) (Result, error) {
	var res Result
	r, err := read(ctx, top)
	if err != nil {
		return res, fmt.Errorf("self-route, top-%d step: %w", top.K, err)
	}
	res.Steps = append(res.Steps, Step{top, r})
	if !Unanswerable(r.Content) {
		return res, nil
	}
	r, err = read(ctx, full)
	if err != nil {
		return res, fmt.Errorf("self-route, long-context step: %w", err)
	}
	res.Steps = append(res.Steps, Step{full, r})
	return res, nil
}
