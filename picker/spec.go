package picker

import (
	"errors"
	"fmt"

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

// params declares the picker spec's parameters.
var params = []ctxsel.ParamDef{
	{Name: "budget", Kind: ctxsel.IntegerParam, Default: DefaultBudget, Min: 1, Max: 1 << 22, Doc: "tokens of the best-scoring candidates shown to the LLM"},
	{Name: "fallback", Kind: ctxsel.WordParam, DefaultWord: DefaultFallback, Doc: "score-only strategy used when the output is invalid (a strategy's name)"},
	{Name: "order", Kind: ctxsel.WordParam, Words: []string{"rank", "document", "doc"}, DefaultWord: "rank", Doc: "order the candidates are shown in: rank or document"},
}

// ParseSpec reads "picker" or "picker:budget=4000,fallback=adaptivek,order=rank|document".
// Errors wrap ctxsel.ErrInvalidInput; a bad parameter is a
// *ctxsel.ParamError.
func ParseSpec(text string) (Config, error) {
	name, _, err := ctxsel.ParsePart(text)
	if err != nil || name != Name {
		return Config{}, invalidf("picker spec %q: want picker[:budget=N,fallback=STRATEGY,order=rank|document]", text)
	}
	sp, err := ctxsel.ParseParams(text, "", params)
	if err != nil {
		return Config{}, err
	}
	return configFrom(sp)
}

// configFrom reads a picker spec whose parameters are checked against
// params.
func configFrom(sp ctxsel.Spec) (Config, error) {
	sp = ctxsel.WithDefaults(sp, params)
	cfg := Config{Budget: int(sp.Params["budget"]), Fallback: sp.Words["fallback"]}
	var err error
	if cfg.Order, err = ctxsel.ParseOrder(sp.Words["order"]); err != nil {
		return Config{}, fmt.Errorf("picker spec: %w", err)
	}
	if _, _, err := ctxsel.Parse(cfg.Fallback); err != nil {
		return Config{}, &ctxsel.ParamError{Strategy: Name, Param: "fallback", Msg: "fallback=" + cfg.Fallback + ": " + paramDetail(err)}
	}
	return cfg, nil
}

// paramDetail is err's text without ErrInvalidInput's.
func paramDetail(err error) string {
	var pe *ctxsel.ParamError
	var ie *ctxsel.InputError
	switch {
	case errors.As(err, &pe):
		return pe.Detail()
	case errors.As(err, &ie):
		return ie.Msg
	}
	return err.Error()
}

// Name is the picker's spec name.
const Name = "picker"

// The picker registers itself as a text selector kind: a spec naming it
// ("picker:budget=2000", or "topk:k=30+picker") builds a Picker calling
// the caller's LLM (ctxsel.DepLLM, an llm.Client).
func init() {
	ctxsel.RegisterSelector(ctxsel.SelectorDef{
		Name:   Name,
		Doc:    "Context-Picker: an LLM reads the best candidates within a token budget and picks a minimal sufficient evidence set; invalid output falls back to a score-only strategy",
		Params: params,
		New: func(sp ctxsel.Spec, deps ctxsel.Deps) (ctxsel.TextSelector, error) {
			cfg, err := configFrom(sp)
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

// invalidf is ctxsel.Invalidf: invalid input, described in words.
var invalidf = ctxsel.Invalidf
