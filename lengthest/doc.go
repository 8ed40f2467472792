// Package lengthest estimates, for one configuration (dataset, retriever,
// summarizer), the retrieval length that gives the best summaries, without
// gold summaries: the method of Pratapa & Mitamura, "Estimating Optimal
// Context Length for Hybrid Retrieval-augmented Multi-document
// Summarization" (../shared/papers/hybrid-rag-context-length.txt).
//
//  1. Sample a fraction of the examples (seeded, without replacement).
//  2. Every panel LM writes Samples summaries of each sampled example in
//     full-context mode; an input longer than the model's window is cut,
//     longest documents first (App. A.2.1).
//  3. Minimum Bayes Risk: a candidate's utility is its mean similarity to
//     all other candidates of the example; the Keep best are the silver
//     references, each with the panel model that wrote it.
//  4. Each document is truncated to its first 1,024 tokens at a sentence
//     boundary (App. A.2.2); for each budget (the official grid, 8 × 1,024
//     … 80 × 1,024 tokens), the retriever ranks the truncated documents, as
//     the official code does; they are taken by descending score until the
//     first that does not fit, and shown in their original order. The
//     summarizer writes Samples summaries; each scores the maximum
//     similarity to the silver references.
//  5. The estimate is the smallest budget whose mean lies within one
//     standard deviation of the best mean (OneStd), budgets compared as
//     numbers.
//
// # Deviation: the utility
//
// The paper's utility, for MBR and for scoring, is the A3CU F1 score, a
// trained model we cannot ship. Utility is pluggable; RougeL (ROUGE-L F1,
// the lexical default) and Embedding (cosine similarity of sentence
// embeddings, e.g. the embedded USE-Lite model) are built in. Estimates made
// with them are the paper's procedure with a different similarity, and may
// differ from A3CU-based estimates.
//
// Other choices the paper leaves open: tokens are counted with one tiktoken
// encoding for every model (the paper calibrates per model class); the
// standard deviation is the population std over the Samples runs, a run's
// score being the mean over examples (the paper's "std across three runs");
// documents are joined with blank lines into the prompt's {document}; a
// budget is counted in document tokens (the prompt's own words come on top);
// budgets admitting the same documents share one set of summaries; and a
// budget beyond the summarizer's window is cut to it as in full context. A
// document whose first sentence alone is longer than 1,024 tokens is cut at
// the token limit (the official code leaves it empty; see
// TruncateSentences).
//
// Pure parts (ParseBudgets, Sample, OneStd, MBR, the document packing)
// do no I/O; Run calls the LLMs through package llm, so a warm call cache
// makes a re-run free and an interrupted run resumable.
package lengthest
