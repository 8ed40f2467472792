// Package cutoff holds the score-only selection strategies: fixed top-k, token
// budget, full context, Adaptive-k (largest gap) with the official code's
// moving-average and second-difference rules, knee (autocut), absolute
// threshold and softmax top-p. Each is a pure function of the similarity
// scores (and token counts), exposed twice: as a plain function over a score
// slice, which benchmarks and embedders can call directly, and as a
// ctxsel.Strategy registered under its name, so that
//
//	ctxsel.Parse("adaptivek:head=0.05,buffer=3")
//
// works once this package is imported.
//
// The plain functions (AdaptiveK, MovingAvg, SecondDiffSpike, Knee) follow
// their reference definitions exactly, and so do the registered adaptivek,
// moving_avg and 2diff_spike with their default parameters (the official
// code's cut). The strategies may add guards on top, each reported in the
// selection's Explanation.Guards and reason: head_guard (a largest gap or
// first knee right after rank 0, which would keep only the best passage,
// moves to the next one below; ctxsel's option, on by default only for knee,
// which is not a paper's method: with head_guard=0 the cut stays and is
// flagged head_gap instead) and window_clamped (head/tail counts that leave no
// gap on a short curve).
//
// The gap, spike and knee rules read only the curve's shape: an affine
// rescaling of the scores (cosines bunched in 0.65–0.71, reranker logits,
// negative log-probabilities) leaves their cut unchanged. threshold and topp
// are bound to the score scale and must be set for the scorer in use. How
// many passages a strategy keeps depends on the scores alone, never on how
// ties are broken; which of several equal scores fill that count follows the
// Curve's rank order (input order), and Select flags such a cut tie_split.
package cutoff
