package evidence

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/token"
)

// DepModel names the optional dependency a caller of ctxsel.Resolve may
// supply for evidence specs: the sentence model (*Model; the embedded one
// when not supplied). The embedder (ctxsel.DepEmbedder, required), the
// token counter (ctxsel.DepCounter, optional, token.Default otherwise)
// and the stored sentence vectors (ctxsel.DepSentences, optional) are the
// others.
const DepModel = "evidence.model"

// params documents the spec's parameters (ctxsel.SelectorDefs lists them).
var params = []ctxsel.ParamDoc{
	{Name: "budget", Default: "(required)", Doc: "tokens all pruned passages may take together, headers and gap markers included"},
	{Name: "passages", Default: "model (" + modelDefault(func(m *Model) string { return strconv.Itoa(m.Passages) }) + ")", Doc: "how many of the curve's best passages are candidates; after a strategy (topk:k=30+evidence:…) every passage it kept is"},
	{Name: "header", Default: "1", Doc: "1 sends each kept passage's header (its title line, or the title its source gives: ask, the document's) once; 0 none"},
	{Name: "neighbors", Default: "model (" + modelDefault(func(m *Model) string { return strconv.Itoa(m.Neighbors) }) + ")", Doc: "1 sends a kept sentence's predecessor with it"},
	{Name: "hop", Default: "model (" + modelDefault(func(m *Model) string { return strconv.Itoa(m.Hop) }) + ")", Doc: "the second hop: up to N passages outside the candidates whose title the best first-pass sentences name join them, then every sentence is scored again; 0 turns it off (composed after a strategy, only the passages it kept can join)"},
	{Name: "floor", Default: "model (" + modelDefault(func(m *Model) string { return strconv.FormatFloat(m.Floor, 'g', -1, 64) }) + ")", Doc: "the least probability a sentence needs to be sent (0: none); when none reaches it, the best are sent all the same"},
	{Name: "stop", Default: "model (" + modelDefault(func(m *Model) string { return strconv.FormatFloat(m.Stop, 'g', -1, 64) }) + ")", Doc: "ends packing once the kept sentences hold this share of the expected evidence (the sum of p over every sentence that could be sent), so a budget is not filled with sentences the model deems unlikely; 0: fill the budget"},
	{Name: "dedup", Default: "1", Doc: "1 does not send a sentence another passage of the same document (title) sends, nor a chunk's cut-off fragment of a sentence another chunk holds whole; 0 sends them"},
	{Name: "order", Default: "rank", Doc: "rank (by the passage's rank) or document (input order)"},
	{Name: "max_k", Default: "none", Doc: "cap: at most this many passages opened"},
	{Name: "max_tokens", Default: "none", Doc: "cap: lowers the budget"},
}

func init() {
	ctxsel.RegisterSelector(ctxsel.SelectorDef{
		Name:   "evidence",
		Doc:    "sentences instead of whole passages: the best passages' sentences scored against the question and packed within a token budget (needs an embedder)",
		Params: params,
		New: func(ps []ctxsel.Param, deps ctxsel.Deps) (ctxsel.TextSelector, error) {
			opt, err := parseParams(ps, Options{})
			if err != nil {
				return nil, err
			}
			if opt, err = withDeps(opt, deps); err != nil {
				return nil, err
			}
			return New(opt)
		},
	})
}

// withDeps fills the embedder, the counter, the sentence store and the
// model from deps.
func withDeps(opt Options, deps ctxsel.Deps) (Options, error) {
	e, err := ctxsel.Dep[embed.Embedder](deps, ctxsel.DepEmbedder)
	if err != nil {
		return Options{}, err
	}
	opt.Embedder = e
	if c, ok, err := ctxsel.OptionalDep[token.Counter](deps, ctxsel.DepCounter); err != nil {
		return Options{}, err
	} else if ok {
		opt.Counter = c
	}
	if ss, ok, err := ctxsel.OptionalDep[ctxsel.SentenceStore](deps, ctxsel.DepSentences); err != nil {
		return Options{}, err
	} else if ok {
		opt.Sentences = ss
	}
	if m, ok, err := ctxsel.OptionalDep[*Model](deps, DepModel); err != nil {
		return Options{}, err
	} else if ok {
		opt.Model = m
	}
	return opt, nil
}

// ParseSpec reads evidence:budget=N[,passages=M][,header=0|1]
// [,neighbors=0|1][,hop=N][,floor=P][,stop=S][,dedup=0|1]
// [,order=rank|document] into Options
// (the rest of base kept: embedder, counter, model).
func ParseSpec(spec string, base Options) (Options, error) {
	name, ps, err := ctxsel.ParsePart(spec)
	if err != nil {
		return Options{}, err
	}
	if name != "evidence" {
		return Options{}, fmt.Errorf("%w: %q is not an evidence spec", ctxsel.ErrInvalidInput, spec)
	}
	return parseParams(ps, base)
}

func parseParams(ps []ctxsel.Param, base Options) (Options, error) {
	opt := base
	opt.Budget, opt.Passages, opt.NoHeader, opt.Neighbors, opt.Order, opt.Caps = 0, 0, false, -1, ctxsel.RankOrder, ctxsel.Caps{}
	opt.Hop, opt.Floor, opt.Stop, opt.KeepRepeats = 0, 0, 0, false
	seen := map[string]bool{}
	for _, p := range ps {
		k, v := strings.ToLower(p.Key), p.Value
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
		case "max_k", "max_tokens":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return Options{}, fmt.Errorf("%w: evidence: %s=%q: want a whole number of at least 1", ctxsel.ErrInvalidInput, k, v)
			}
			if k == "max_k" {
				opt.Caps.MaxK = n
			} else {
				opt.Caps.MaxTokens = n
			}
		case "floor":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || !finite(f) || f < 0 || f >= 1 {
				return Options{}, fmt.Errorf("%w: evidence: floor=%q: want a probability, 0 ≤ floor < 1", ctxsel.ErrInvalidInput, v)
			}
			opt.Floor = f
			if f == 0 {
				opt.Floor = FloorOff
			}
		case "stop":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || !finite(f) || f < 0 || f >= 1 {
				return Options{}, fmt.Errorf("%w: evidence: stop=%q: want a share, 0 ≤ stop < 1", ctxsel.ErrInvalidInput, v)
			}
			opt.Stop = f
			if f == 0 {
				opt.Stop = StopOff
			}
		case "min_k":
			return Options{}, fmt.Errorf("%w: evidence: min_k: a token budget cannot promise passages (max_k and max_tokens are its caps)", ctxsel.ErrInvalidInput)
		case "budget", "passages", "header", "neighbors", "hop", "dedup":
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
			case "dedup":
				if n != 0 && n != 1 {
					return Options{}, fmt.Errorf("%w: evidence: dedup=%d: want 0 or 1", ctxsel.ErrInvalidInput, n)
				}
				opt.KeepRepeats = n == 0
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
			case "hop":
				if n < 0 || n > MaxHop {
					return Options{}, fmt.Errorf("%w: evidence: hop=%d: want 0…%d", ctxsel.ErrInvalidInput, n, MaxHop)
				}
				opt.Hop = n
				if n == 0 {
					opt.Hop = HopOff
				}
			}
		default:
			return Options{}, fmt.Errorf("%w: evidence: unknown parameter %q (known: budget, passages, header, neighbors, hop, floor, stop, dedup, order, max_k, max_tokens)", ctxsel.ErrInvalidInput, k)
		}
	}
	if opt.Budget < 1 {
		return Options{}, fmt.Errorf("%w: evidence: want budget=N tokens (at least 1), e.g. evidence:budget=500", ctxsel.ErrInvalidInput)
	}
	return opt, nil
}

// Parse builds a selector from a spec through ctxsel.Resolve, alone
// (evidence:budget=500) or after a passage strategy
// (topk:k=30+evidence:budget=500, composed by ctxsel.Compose), with
// base's embedder, counter and model as its dependencies. Strategies must
// be registered (import cutoff).
func Parse(spec string, base Options) (ctxsel.TextSelector, error) {
	deps := map[string]any{ctxsel.DepEmbedder: base.Embedder}
	if base.Counter != nil {
		deps[ctxsel.DepCounter] = base.Counter
	}
	if base.Model != nil {
		deps[DepModel] = base.Model
	}
	if base.Sentences != nil {
		deps[ctxsel.DepSentences] = base.Sentences
	}
	if base.Embedder == nil {
		delete(deps, ctxsel.DepEmbedder)
	}
	res, err := ctxsel.Resolver{Kinds: ctxsel.SelectorKind, Deps: ctxsel.DepsOf(deps)}.Resolve(spec)
	if err != nil {
		return nil, err
	}
	return res.Selector, nil
}

// modelDefault describes a setting of the embedded model for the
// parameter docs.
func modelDefault(get func(*Model) string) string {
	m, err := defaultModel()
	if err != nil {
		return "?"
	}
	return get(m)
}
