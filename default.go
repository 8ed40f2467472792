package ctxsel

import "maps"

// DefaultStrategy is the strategy ctxsel ships as its default: the one
// `ask` (package, command, /v1/ask and the MCP ask tool) uses when none is
// named, and what the spec name
// "default" stands for (so `eval --strategies default` measures the
// pipeline users get). It was chosen leave-one-data-set-out on hybrid
// scores (HotpotQA, MuSiQue, SummHay): among the strategies measured it
// gained most over the best fixed top-k/budget envelope of either single
// retriever at matched tokens, and Adaptive-k, the previous default, lost
// to it on all three (README, "Hybrid scoring and the default pipeline").
const DefaultStrategy = "topk:k=20"

// DefaultName is the spec name that resolves to DefaultStrategy.
const DefaultName = "default"

// resolveDefault turns the spec "default" (with any parameters of its own,
// which win) into DefaultStrategy's spec; other specs are returned as they are.
func resolveDefault(sp Spec) (Spec, error) {
	if sp.Name != DefaultName {
		return sp, nil
	}
	def, err := ParseSpec(DefaultStrategy)
	if err != nil {
		return Spec{}, err
	}
	if def.Params == nil {
		def.Params = map[string]float64{}
	}
	maps.Copy(def.Params, sp.Params)
	def.Words = sp.Words // New rejects them, naming the parameter
	return def, nil
}

// DefaultSelectStrategy is the strategy of a selection over scores the
// caller supplies when none is named: /v1/select, `ctxsel select` and
// /v1/rerank (and the MCP select_context tool). Those curves come from any
// retriever, so it stays the papers' Adaptive-k rather than DefaultStrategy,
// which was chosen on ctxsel's own hybrid scores.
const DefaultSelectStrategy = "adaptivek"
