package server

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/internal/wire"
)

// resolved is what a request's "strategy" and "params" came to: a pure
// strategy with its caps, a text selector (the picker the server was
// started with, a registered kind such as evidence, or a composition), or
// an answering route. res is zero when the request left /v1/ask's default
// to the Asker (a server without Options.SelectorDeps, whose Asker is no
// DepsSupplier).
type resolved struct {
	res   ctxsel.Resolved
	order ctxsel.Order
}

// inputMsg is what an input error says beside the field at fault: a
// ctxsel input error's own description (without ErrInvalidInput's text),
// any other error's text.
func inputMsg(err error) string {
	switch e := err.(type) {
	case *ctxsel.InputError:
		return e.Msg
	case *ctxsel.ParamError:
		return e.Detail()
	case *ctxsel.CandidateError:
		return e.Detail()
	}
	return err.Error()
}

// paramMsg is what a parameter error says beside the request field that
// gave the parameter.
func paramMsg(e *ctxsel.ParamError) string {
	if e.Known != nil {
		return fmt.Sprintf("unknown parameter %q of strategy %s (known: %s)", e.Param, e.Strategy, strings.Join(e.Known, ", "))
	}
	return e.Msg
}

// resolveRequest resolves a request's strategy (def when it names none)
// with ctxsel.Resolve, taking the kinds the endpoint serves. The text
// selectors a request may name are the server's own (Options.Picker) and
// the registered kinds it has dependencies for (Options.SelectorDeps),
// never built from a request's LLM. Errors name the field at fault:
// "strategy", "params" or "params.NAME", "order", "query".
func (s *Server) resolveRequest(r *commonRequest, def string, kinds ctxsel.Kind) (resolved, error) {
	return s.resolveWith(r, def, ctxsel.Resolver{Kinds: kinds, Selectors: s.selectors, Deps: s.deps})
}

// resolveWith is resolveRequest with the resolver given: the kinds and
// the text selectors the endpoint offers.
func (s *Server) resolveWith(r *commonRequest, def string, rv ctxsel.Resolver) (resolved, error) {
	text := strings.TrimSpace(r.strategy)
	if text == "" {
		text = def
	}
	res, err := rv.Resolve(text)
	order, oerr := ctxsel.ParseOrder(r.order)
	if err != nil && text == def && rv.Kinds == 0 && rv.Deps == nil && len(r.params) == 0 && oerr == nil {
		// The endpoint's default (ctxsel.DefaultStrategy, a text
		// selector) needs dependencies, a sentence embedder, that neither
		// the operator (SelectorDeps) nor the Asker (DepsSupplier) gave
		// this server: the Asker, which has its own, resolves it.
		return resolved{order: order}, nil
	}
	if err != nil {
		return resolved{}, wire.Bad("strategy", "%s", inputMsg(err))
	}
	if oerr != nil {
		return resolved{}, wire.Bad("order", "%s", inputMsg(oerr))
	}
	switch run := res.Runnable(); {
	case run != nil && run.ReadsTexts():
		if len(r.params) > 0 {
			return resolved{}, wire.Bad("params", "%s takes no request parameters: its settings are the server's", res.Spec)
		}
		if strings.TrimSpace(r.query) == "" {
			return resolved{}, wire.Bad("query", "missing: %s reads the question", res.Spec)
		}
	case len(r.params) == 0:
	case res.Route != nil:
		if err := givenTwice(res, r.params, r.strategy, nil); err != nil {
			return resolved{}, err
		}
		if res, err = (ctxsel.Resolver{Kinds: ctxsel.RouteKind, Params: paramValues(r.params)}).Resolve(text); err != nil {
			return resolved{}, wire.Bad("strategy", "%s", inputMsg(err))
		}
	default:
		if res, err = withParams(res, text, r.params, rv.Deps); err != nil {
			return resolved{}, err
		}
	}
	return resolved{res: res, order: order}, nil
}

// givenTwice refuses a request parameter that the resolved spec (written
// as quoted) gives too, naming its field; check, when set, then checks
// each parameter on its own, in the request's order.
func givenTwice(res ctxsel.Resolved, params []paramIn, quoted string, check func(p paramIn) error) error {
	sp, _ := res.AsSpec()
	for _, p := range params {
		key := strings.ToLower(p.name)
		_, dupNum := sp.Params[key]
		_, dupWord := sp.Words[key]
		if dupNum || dupWord {
			return wire.Bad("params."+p.name, "also given in strategy %q", quoted)
		}
		if check != nil {
			if err := check(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// withParams resolves the strategy spec text, resolved as res, with the
// request's "params" object merged in as values (Resolver.Params). Each
// parameter is checked where it was given, so the error can name its
// field: "params.NAME" for one the spec also gives or the strategy does
// not take at that value; what is left, a combination (head+tail, min_k >
// max_k), is "params". deps are the operator's (SelectorDeps: the band's
// policy).
func withParams(res ctxsel.Resolved, text string, params []paramIn, deps ctxsel.Deps) (ctxsel.Resolved, error) {
	sp, _ := res.AsSpec()
	def, known := ctxsel.Lookup(sp.Name)
	err := givenTwice(res, params, text, func(p paramIn) error {
		if !known {
			return nil // Resolve names what is wrong
		}
		var pe *ctxsel.ParamError
		if err := def.CheckParam(strings.ToLower(p.name), p.value); errors.As(err, &pe) {
			return wire.Bad("params."+p.name, "%s", paramMsg(pe))
		} else if err != nil {
			return wire.Bad("params."+p.name, "%s", inputMsg(err))
		}
		return nil
	})
	if err != nil {
		return ctxsel.Resolved{}, err
	}
	if res, err = (ctxsel.Resolver{Deps: deps, Params: paramValues(params)}).Resolve(text); err != nil {
		return ctxsel.Resolved{}, wire.Bad("params", "%s", inputMsg(err))
	}
	return res, nil
}

// paramValues are a request's "params" as values for
// ctxsel.Resolver.Params.
func paramValues(params []paramIn) []ctxsel.Param {
	out := make([]ctxsel.Param, len(params))
	for i, p := range params {
		out[i] = ctxsel.ParamValue(p.name, p.value)
	}
	return out
}
