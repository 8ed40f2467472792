// Package ldar is the learned band selector of ctxsel: LDAR (Learning
// Distraction-Aware Retrieval) reads the shape of a question's similarity
// curve and picks which band of the ranking to hand the reader.
//
// The policy (Model) follows the paper's §4.1 and Appendix C.1: each of the
// top Window ranks of the curve is a token whose features (the standardised
// score, the gap to the next rank, the position in the window, the
// passage's tokens, the tokens so far, the next passage's tokens and the
// mean standardised score so far) go through periodic embeddings with
// learned frequencies (sin/cos, linear, ReLU, layer norm), a bidirectional
// pre-LN Transformer encoder, pooling (the paper's attention pooling, or —
// the shipped policy — the token vectors concatenated in rank order) and an
// MLP to four heads: two Beta distributions, one for the lower quantile qL
// and one for the band width qΔ, with qU = min(qL + qΔ, 1). BandRanks maps
// the quantiles to ranks by the official code's rule. Inference uses the
// Beta means; training samples.
//
// Train learns the policy by policy gradient (REINFORCE with a per-question
// leave-one-out baseline over several sampled bands, or the paper's EMA
// baseline) from any Reward: RecallPrice and Picker compute it from gold
// evidence labels; an LLM reader plus judge (the paper's signal) plugs into
// the same interface.
//
// Importing the package registers the "band" strategy with ctxsel. It runs
// the policy its caller passes as the dependency DepPolicy (ctxsel.Resolver's
// Deps: the command line reads it from the file $CTXSEL_BAND_POLICY names),
// else the policy embedded in the binary (default.safetensors); building it
// reads no environment and no file. Policy files are safetensors with
// metadata (see FormatName).
package ldar
