// Package cutoff holds the score-only selection strategies: fixed top-k, token
// budget, full context, Adaptive-k (largest gap), knee (autocut), absolute
// threshold and softmax top-p. Each is a pure function of the similarity
// scores (and token counts), exposed twice: as a plain function over a score
// slice, which benchmarks and embedders can call directly, and as a
// ctxsel.Strategy registered under its name, so that
//
//	ctxsel.Parse("adaptivek:head=0.05,buffer=3")
//
// works once this package is imported.
package cutoff
