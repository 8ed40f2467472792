package picker

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/llm"
)

// DefaultBudget is the token budget B of the candidates shown to the picker
// when a spec sets none.
const DefaultBudget = 4000

// DefaultFallback is the score-only strategy used when the picker's output
// is invalid: Adaptive-k with its defaults, the paper's cut (Algorithm 1,
// no head guard). The paper has no fallback; this one is ctxsel's, so that a
// request always completes.
const DefaultFallback = "adaptivek"

// maxOffered caps the candidates shown however small their token counts:
// a prompt of more passages than this is no longer a picking task.
const maxOffered = 500

// Config is a parsed picker spec.
type Config struct {
	// Budget is B: the best candidates by score are offered while their
	// tokens fit in it (the paper's TopSim within budget).
	Budget int
	// Fallback names the strategy used on invalid output (a spec without
	// parameters, e.g. "adaptivek" or "topk").
	Fallback string
	// Order is the order candidates are shown in: rank or document.
	Order ctxsel.Order
}

// String is the spec that parses back to c.
func (c Config) String() string {
	return fmt.Sprintf("picker:budget=%d,fallback=%s,order=%s", c.Budget, c.Fallback, c.Order)
}

// ParseSpec reads "picker" or "picker:budget=4000,fallback=adaptivek,order=rank|document".
// Errors wrap ctxsel.ErrInvalidInput.
func ParseSpec(text string) (Config, error) {
	name, params, err := ctxsel.ParsePart(text)
	if err != nil || name != Name {
		return Config{}, invalidf("picker spec %q: want picker[:budget=N,fallback=STRATEGY,order=rank|document]", text)
	}
	return configFrom(params)
}

// configFrom reads a picker spec's parameters.
func configFrom(params []ctxsel.Param) (Config, error) {
	cfg := Config{Budget: DefaultBudget, Fallback: DefaultFallback, Order: ctxsel.RankOrder}
	for _, p := range params {
		k, v := p.Key, p.Value
		switch k {
		case "budget":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 1<<22 {
				return Config{}, invalidf("picker spec: budget=%q must be a whole number in 1..%d", v, 1<<22)
			}
			cfg.Budget = n
		case "fallback":
			cfg.Fallback = strings.ToLower(v)
		case "order":
			o, err := ctxsel.ParseOrder(v)
			if err != nil || o == ctxsel.EdgesOrder {
				return Config{}, invalidf("picker spec: order=%q: want rank or document", v)
			}
			cfg.Order = o
		default:
			return Config{}, invalidf("picker spec: unknown parameter %q (known: budget, fallback, order)", k)
		}
	}
	if _, _, err := ctxsel.Parse(cfg.Fallback); err != nil {
		return Config{}, fmt.Errorf("picker spec: fallback: %w", err)
	}
	return cfg, nil
}

// Name is the picker's spec name.
const Name = "picker"

// The picker registers itself as a text selector kind: a spec naming it
// ("picker:budget=2000", or "topk:k=30+picker") builds a Picker calling
// the caller's LLM (ctxsel.DepLLM, an llm.Client).
func init() {
	ctxsel.RegisterSelector(ctxsel.SelectorDef{
		Name: Name,
		Doc:  "Context-Picker: an LLM reads the best candidates within a token budget and picks a minimal sufficient evidence set; invalid output falls back to a score-only strategy",
		Params: []ctxsel.ParamDoc{
			{Name: "budget", Default: strconv.Itoa(DefaultBudget), Doc: "tokens of the best-scoring candidates shown to the LLM"},
			{Name: "fallback", Default: DefaultFallback, Doc: "score-only strategy used when the output is invalid"},
			{Name: "order", Default: "rank", Doc: "order the candidates are shown in: rank or document"},
		},
		New: func(params []ctxsel.Param, deps ctxsel.Deps) (ctxsel.TextSelector, error) {
			cfg, err := configFrom(params)
			if err != nil {
				return nil, err
			}
			c, err := ctxsel.Dep[llm.Client](deps, ctxsel.DepLLM)
			if err != nil {
				return nil, err
			}
			return NewWith(c, cfg, deps)
		},
	})
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ctxsel.ErrInvalidInput, fmt.Sprintf(format, args...))
}
