// Package relevance is a learned selector that reads every curve a hybrid
// retriever gives (the fused score and its dense and lexical channels): a
// logistic regression estimates, for each of the top ranks, the probability
// that the passage is gold from its scores, ranks and gaps in each curve,
// the curves' agreement and its length; the strategy keeps the prefix of the
// ranking with the best expected recall less a price per token.
//
// It is a pure strategy over a ctxsel.Curve (no I/O); the model is trained
// with Fit (`ctxsel train relevance`), handed over with SetDefault and
// named in specs (relevance:lambda=0.2) after Register.
package relevance
