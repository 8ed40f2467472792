package ctxsel

import (
	"context"
	"fmt"
)

// Route is the third kind of thing a spec can name, beside Strategy and
// TextSelector: an answering route, which asks the reader and lets its
// reply decide the context (Self-Route asks with a small first context and,
// when the reader declines, with the long context). It needs the reader, so
// it cannot select on its own; its package registers it (RegisterRoute, as
// selfroute does) and callers run any route the same way: Plan the
// contexts (pure), fit them as they fit any selection, then RunRoute with
// a function that renders the step's prompt (RouteStep.Prompt) and asks
// the reader.
type Route interface {
	// Name is the route's spec name ("selfroute").
	Name() string
	// String is its canonical spec ("selfroute:k=5").
	String() string
	// Plan returns the contexts the route may show the reader, in the
	// order it tries them. A step's selection is in the given order,
	// except a Long step's: every candidate in rank order, which the
	// caller cuts to the reader's window and shows in document order.
	Plan(c *Curve, order Order) ([]RouteStep, error)
	// Prompt is the reader prompt of the route's own steps, the ones that
	// let the reader decline, with {question} and {context} to fill;
	// datatype names the kind of source ("documents", "novels"; "" for the
	// route's default). A Long step is asked with the caller's normal
	// long-context prompt instead (RouteStep.Prompt).
	Prompt(datatype string) string
	// Declines reports whether a reply sends the route on to its next
	// step.
	Declines(reply string) bool
}

// RouteStep is one context a route may show the reader.
type RouteStep struct {
	// Name says which step it is ("top-k", "long-context"), for messages.
	Name      string
	Selection Selection
	// Long marks the long-context step (see Route.Plan), which is asked
	// with the caller's long-context prompt.
	Long bool
}

// Prompt is the reader prompt step is asked with: r's own prompt
// (r.Prompt(datatype)) for the route's steps, and long, the caller's
// normal long-context prompt, for a Long step, as both papers that
// measure Self-Route run its second step (the long-context baseline's
// prompt).
func (st RouteStep) Prompt(r Route, datatype, long string) string {
	if st.Long {
		return long
	}
	return r.Prompt(datatype)
}

// RunRoute asks with each step in turn until the route keeps a reply or
// the steps run out; ask renders the step's prompt (RouteStep.Prompt) over
// its selection and calls the reader. It returns how many steps were
// asked: the last one's reply is the answer. On an error it returns the
// steps asked so far, the failed one included.
func RunRoute(ctx context.Context, r Route, steps []RouteStep, ask func(ctx context.Context, step RouteStep) (reply string, err error)) (int, error) {
	if len(steps) == 0 {
		return 0, fmt.Errorf("route %s planned no step", r.Name())
	}
	for i, st := range steps {
		reply, err := ask(ctx, st)
		if err != nil {
			return i + 1, fmt.Errorf("%s, %s step: %w", r.Name(), st.Name, err)
		}
		if i == len(steps)-1 || !r.Declines(reply) {
			return i + 1, nil
		}
	}
	panic("unreachable")
}
