package ctxsel

import "maps"

// DefaultStrategy is what ctxsel ships as its default: what `ask`
// (package, command, /v1/ask and the MCP ask tool) uses when nothing is
// named, and what the spec name "default" stands for (so `eval
// --strategies default` measures the pipeline users get).
//
// It is the evidence selector (package evidence, which registers it): the
// sentences of the best 20 passages of the curve, scored against the
// question and packed within 1,500 tokens — cut further to the reader's
// window by ask. Its budget was chosen on validation questions (HotpotQA
// regrouped into 600-token chunks, as ask's index chunks them): the
// smallest budget of the grid 500…2,500 that keeps at least 95 % of
// topk:k=20's evidence recall (0.963 against 1.000, at 15 % of its
// tokens); docs/evidence.md has the test-split check. It needs an
// embedder (ctxsel.DepEmbedder), so it resolves only where the caller
// supplies dependencies. The previous default, topk:k=20 (chosen
// leave-one-data-set-out among whole-passage strategies on hybrid
// scores), is one --strategy away.
const DefaultStrategy = "evidence:budget=1500"

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
	if _, ok := lookup(def.Name); !ok {
		return Spec{}, invalidf("the default, %s, is a text selector, not a strategy: resolve it with a ctxsel.Resolver that supplies its dependencies", DefaultStrategy)
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
