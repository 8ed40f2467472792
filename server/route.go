package server

import (
	"strconv"
	"strings"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/selfroute"
)

// AskUsage is what the LLM calls of one /v1/ask cost: both calls for
// Self-Route.
type AskUsage struct {
	// LLMCalls, InputTokens and OutputTokens are the answering reader's
	// calls (Self-Route: both of its calls).
	LLMCalls     int
	InputTokens  int
	OutputTokens int
	// Routed marks a Self-Route answer from the long context.
	Routed bool
	// PickerCalls, PickerPromptTokens and PickerCompletionTokens are the
	// LLM picker's own call ("strategy": "picker"), apart from the
	// reader's; PickerInvalid marks a pick whose output was unusable (the
	// fallback selected). Reported when PickerCalls > 0.
	PickerCalls            int
	PickerPromptTokens     int
	PickerCompletionTokens int
	PickerInvalid          bool
}

// resolveAskStrategy is resolveStrategy for /v1/ask, which also takes the
// answering route selfroute:k=N. A route is not a pure strategy (it needs
// the Asker's LLM), so its AskRequest has no Strategy, only the Spec.
func resolveAskStrategy(r *commonRequest) (ctxsel.Strategy, ctxsel.Caps, ctxsel.Order, string, error) {
	if strings.TrimSpace(r.strategy) == "" {
		r.strategy = ctxsel.DefaultStrategy // /v1/ask answers as `ctxsel ask` does
	}
	sp, err := ctxsel.ParseSpec(strings.TrimSpace(r.strategy))
	if err != nil || !selfroute.Is(sp) {
		return resolveStrategy(r)
	}
	for _, p := range r.params {
		key := strings.ToLower(p.name)
		if _, dup := sp.Params[key]; dup {
			return nil, ctxsel.Caps{}, 0, "", badField("params."+p.name, "also given in strategy %q", r.strategy)
		}
		sp.Params[key] = p.value
	}
	route, err := selfroute.ParseSpec(sp)
	if err != nil {
		return nil, ctxsel.Caps{}, 0, "", badField("strategy", "%s", strings.TrimPrefix(err.Error(), ctxsel.ErrInvalidInput.Error()+": "))
	}
	order, err := ctxsel.ParseOrder(r.order)
	if err != nil {
		return nil, ctxsel.Caps{}, 0, "", badField("order", "%s", strings.TrimPrefix(err.Error(), ctxsel.ErrInvalidInput.Error()+": "))
	}
	return nil, ctxsel.Caps{}, order, route.String(), nil
}

// appendUsage adds the "usage" member of an ask response.
func appendUsage(b []byte, u *AskUsage) []byte {
	if u == nil {
		return b
	}
	b = append(b, `,"usage":{"llm_calls":`...)
	b = appendInt(b, u.LLMCalls)
	b = append(b, `,"input_tokens":`...)
	b = appendInt(b, u.InputTokens)
	b = append(b, `,"output_tokens":`...)
	b = appendInt(b, u.OutputTokens)
	if u.Routed {
		b = append(b, `,"routed":true`...)
	}
	if u.PickerCalls > 0 {
		b = append(b, `,"picker_calls":`...)
		b = appendInt(b, u.PickerCalls)
		b = append(b, `,"picker_prompt_tokens":`...)
		b = appendInt(b, u.PickerPromptTokens)
		b = append(b, `,"picker_completion_tokens":`...)
		b = appendInt(b, u.PickerCompletionTokens)
		b = append(b, `,"picker_invalid":`...)
		b = strconv.AppendBool(b, u.PickerInvalid)
	}
	return append(b, '}')
}
