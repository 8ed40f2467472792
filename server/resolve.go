package server

import (
	"strings"

	"github.com/ctxsel/ctxsel"
)

// resolved is what a request's "strategy" and "params" came to: a pure
// strategy with its caps, a text selector (the picker the server was
// started with, or a composition over it), or an answering route.
type resolved struct {
	st       ctxsel.Strategy
	caps     ctxsel.Caps
	order    ctxsel.Order
	spec     string // the spec they amount to, parameters merged
	selector ctxsel.TextSelector
	route    ctxsel.Route
}

// invalidMsg is an ErrInvalidInput error's message without the prefix,
// for a field error.
func invalidMsg(err error) string {
	return strings.TrimPrefix(err.Error(), ctxsel.ErrInvalidInput.Error()+": ")
}

// resolveRequest resolves a request's strategy (def when it names none)
// with ctxsel.Resolve, taking the kinds the endpoint serves. The text
// selectors a request may name are the server's own (Options.Picker),
// never built from a request. Errors name the field at fault: "strategy",
// "params" or "params.NAME", "order", "query".
func (s *Server) resolveRequest(r *commonRequest, def string, kinds ctxsel.Kind) (resolved, error) {
	text := strings.TrimSpace(r.strategy)
	if text == "" {
		text = def
	}
	res, err := ctxsel.Resolver{Kinds: kinds, Selectors: s.selectors, Deps: s.deps}.Resolve(text)
	order, oerr := ctxsel.ParseOrder(r.order)
	if err != nil && text == ctxsel.DefaultStrategy && kinds == 0 && s.deps == nil && len(r.params) == 0 && oerr == nil {
		// The default is a text selector (evidence) whose dependency, a
		// sentence embedder, this server was not given (SelectorDeps);
		// the Asker, package ask, supplies its own and resolves it.
		return resolved{order: order, spec: text}, nil
	}
	if err != nil {
		return resolved{}, badField("strategy", "%s", invalidMsg(err))
	}
	if oerr != nil {
		return resolved{}, badField("order", "%s", invalidMsg(oerr))
	}
	switch res.Kind {
	case ctxsel.SelectorKind:
		if len(r.params) > 0 {
			return resolved{}, badField("params", "%s takes no request parameters: its settings are the server's", res.Spec)
		}
		if strings.TrimSpace(r.query) == "" {
			return resolved{}, badField("query", "missing: %s reads the question", res.Spec)
		}
		return resolved{selector: res.Selector, order: order, spec: res.Spec}, nil
	case ctxsel.RouteKind:
		sp, _ := res.AsSpec()
		if len(r.params) > 0 {
			for _, p := range r.params {
				key := strings.ToLower(p.name)
				_, dupNum := sp.Params[key]
				_, dupWord := sp.Words[key]
				if dupNum || dupWord {
					return resolved{}, badField("params."+p.name, "also given in strategy %q", r.strategy)
				}
				sp.Params[key] = p.value
			}
			if res, err = (ctxsel.Resolver{Kinds: ctxsel.RouteKind}).Resolve(sp.String()); err != nil {
				return resolved{}, badField("strategy", "%s", invalidMsg(err))
			}
		}
		return resolved{route: res.Route, order: order, spec: res.Route.String()}, nil
	}
	if len(r.params) == 0 {
		return resolved{st: res.Strategy, caps: res.Caps, order: order, spec: res.Spec}, nil
	}
	st, caps, spec, err := resolveStrategy(text, r.params, s.deps)
	if err != nil {
		return resolved{}, err
	}
	return resolved{st: st, caps: caps, order: order, spec: spec}, nil
}
