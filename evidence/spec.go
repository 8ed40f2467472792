package evidence

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ctxsel/ctxsel"
)

// IsSpec reports whether a strategy spec names the evidence selector, alone
// (evidence:budget=500) or after a passage strategy
// (topk:k=30+evidence:budget=500).
func IsSpec(spec string) bool {
	if i := strings.LastIndexByte(spec, '+'); i >= 0 {
		spec = spec[i+1:]
	}
	name, _, _ := strings.Cut(strings.TrimSpace(spec), ":")
	return strings.EqualFold(strings.TrimSpace(name), "evidence")
}

// ParseSpec reads evidence:budget=N[,passages=M][,header=0|1]
// [,neighbors=0|1][,order=rank|document] into Options (the rest of base
// kept: embedder, counter, model).
func ParseSpec(spec string, base Options) (Options, error) {
	name, params, _ := strings.Cut(strings.TrimSpace(spec), ":")
	if !strings.EqualFold(strings.TrimSpace(name), "evidence") {
		return Options{}, fmt.Errorf("%w: %q is not an evidence spec", ctxsel.ErrInvalidInput, spec)
	}
	opt := base
	opt.Budget, opt.Passages, opt.NoHeader, opt.Neighbors, opt.Order = 0, 0, false, -1, ctxsel.RankOrder
	seen := map[string]bool{}
	for _, kv := range strings.Split(params, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		if !ok || v == "" {
			return Options{}, fmt.Errorf("%w: evidence: %q is not key=value", ctxsel.ErrInvalidInput, kv)
		}
		if seen[k] {
			return Options{}, fmt.Errorf("%w: evidence: %s given twice", ctxsel.ErrInvalidInput, k)
		}
		seen[k] = true
		switch k {
		case "order":
			o, err := ctxsel.ParseOrder(v)
			if err != nil || o == ctxsel.EdgesOrder {
				return Options{}, fmt.Errorf("%w: evidence: order=%s: want rank or document", ctxsel.ErrInvalidInput, v)
			}
			opt.Order = o
		case "budget", "passages", "header", "neighbors":
			n, err := strconv.Atoi(v)
			if err != nil {
				return Options{}, fmt.Errorf("%w: evidence: %s=%q is not a whole number", ctxsel.ErrInvalidInput, k, v)
			}
			switch k {
			case "budget":
				opt.Budget = n
			case "passages":
				if n < 1 {
					return Options{}, fmt.Errorf("%w: evidence: passages=%d: want at least 1", ctxsel.ErrInvalidInput, n)
				}
				opt.Passages = n
			case "header":
				if n != 0 && n != 1 {
					return Options{}, fmt.Errorf("%w: evidence: header=%d: want 0 or 1", ctxsel.ErrInvalidInput, n)
				}
				opt.NoHeader = n == 0
			case "neighbors":
				if n != 0 && n != 1 {
					return Options{}, fmt.Errorf("%w: evidence: neighbors=%d: want 0 or 1", ctxsel.ErrInvalidInput, n)
				}
				opt.Neighbors = n
			}
		default:
			return Options{}, fmt.Errorf("%w: evidence: unknown parameter %q (known: budget, passages, header, neighbors, order)", ctxsel.ErrInvalidInput, k)
		}
	}
	if opt.Budget < 1 {
		return Options{}, fmt.Errorf("%w: evidence: want budget=N tokens (at least 1), e.g. evidence:budget=500", ctxsel.ErrInvalidInput)
	}
	return opt, nil
}

// Parse builds a selector from a spec, alone (evidence:budget=500) or after
// a passage strategy (topk:k=30+evidence:budget=500), with base's embedder,
// counter and model.
func Parse(spec string, base Options) (ctxsel.TextSelector, error) {
	first, rest, composed := "", spec, false
	if i := strings.LastIndexByte(spec, '+'); i >= 0 {
		first, rest, composed = spec[:i], spec[i+1:], true
	}
	opt, err := ParseSpec(rest, base)
	if err != nil {
		return nil, err
	}
	s, err := New(opt)
	if err != nil {
		return nil, err
	}
	if !composed {
		return s, nil
	}
	if strings.Contains(first, "+") {
		return nil, fmt.Errorf("%w: evidence: %q: only one strategy may come before +evidence", ctxsel.ErrInvalidInput, spec)
	}
	strat, caps, err := ctxsel.Parse(first)
	if err != nil {
		return nil, fmt.Errorf("evidence: the strategy before +: %w", err)
	}
	return After(strat, caps, s)
}
