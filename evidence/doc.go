// Package evidence selects sentences instead of whole passages: it splits
// the best passages of a curve into evidence units (a header, the
// passage's context line, and its sentences), scores every sentence
// against the question, and packs the best sentences per token into a
// token budget. What it sends of each passage is the header, then the kept
// sentences in document order, a gap marked by " … ".
//
// A sentence's score is a small logistic model (Model) of six kinds of
// evidence: its own BM25 over the sentences of the candidate set, its own
// dense similarity to the question (the embedded USE-lite model, which
// was trained on sentences), its passage's score in the curve (a prior),
// its position in the passage, its length, and how well its neighbours
// and its passage's header match. The weights were fitted on training
// questions and every setting (candidate passages, the price of a token)
// chosen on validation questions; docs/evidence.md tells how and what it
// measured.
//
// Selector is a ctxsel.TextSelector (it reads texts and calls an
// embedder, so it takes a context and may fail): evidence:budget=500. The
// package registers the "evidence" kind with ctxsel.RegisterSelector, so
// ctxsel.Resolver resolves its specs when the caller supplies an embedder
// (ctxsel.DepEmbedder), alone or composed behind any passage strategy by
// ctxsel.Compose: the passages that strategy keeps are the candidates
// (topk:k=30+evidence:budget=500), their features read from the whole
// curve as in training. Units, the splitter, is pure.
package evidence
