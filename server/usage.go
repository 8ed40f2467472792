package server

import (
	"strconv"

	"github.com/ctxsel/ctxsel/internal/wire"
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

// appendUsage adds the "usage" member of an ask response.
func appendUsage(b []byte, u *AskUsage) []byte {
	if u == nil {
		return b
	}
	b = append(b, `,"usage":{"llm_calls":`...)
	b = wire.AppendInt(b, u.LLMCalls)
	b = append(b, `,"input_tokens":`...)
	b = wire.AppendInt(b, u.InputTokens)
	b = append(b, `,"output_tokens":`...)
	b = wire.AppendInt(b, u.OutputTokens)
	if u.Routed {
		b = append(b, `,"routed":true`...)
	}
	if u.PickerCalls > 0 {
		b = append(b, `,"picker_calls":`...)
		b = wire.AppendInt(b, u.PickerCalls)
		b = append(b, `,"picker_prompt_tokens":`...)
		b = wire.AppendInt(b, u.PickerPromptTokens)
		b = append(b, `,"picker_completion_tokens":`...)
		b = wire.AppendInt(b, u.PickerCompletionTokens)
		b = append(b, `,"picker_invalid":`...)
		b = strconv.AppendBool(b, u.PickerInvalid)
	}
	return append(b, '}')
}
