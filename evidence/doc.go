// Package evidence selects sentences instead of whole passages: it splits
// the best passages of a curve into evidence units (a header, the
// passage's context line, and its sentences, grouped in sections when a
// passage holds several titled parts; in text made of lines, the turns,
// rows, items and code blocks its structure gives, each sent with the
// context lines it needs: structure.go), scores every sentence against the
// question, follows the links its best sentences make to other passages
// (the second hop), and packs the best sentences per token into a token
// budget. What it sends of each passage is the header, then the kept
// sentences in document order, a gap marked by " … ".
//
// A sentence's score is a Model: boosted trees (or, as in version 1 model
// files, a logistic regression) over 37 features (FeatureNames): its own
// BM25 over the sentences of the candidate set, its own dense similarity
// to the question (the embedded USE-lite model, which was trained on
// sentences), its passage's score in the curve (a prior), its position,
// length and coverage of the question's terms, its section's title
// against the question, dates, the links between passages, and, in a
// conversation, the match of the turns next to its turn. The
// second hop (hop=N) reads the first pass's best sentences for other
// passages' titles, adds up to N of the passages they name, and scores
// every sentence again; a probability floor (floor=P) keeps worthless
// sentences out of a large budget. The model was fitted on training
// questions and every setting chosen on validation questions (package
// evidence/evidencetrain); docs/evidence.md tells how and what it
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
