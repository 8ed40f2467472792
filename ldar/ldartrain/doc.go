// Package ldartrain is the training pipeline of the LDAR band policy, the
// work behind `ctxsel train band`: labelled data (JSONL files, or LaRA
// read by the caller) split by question, pooled and scored into curves
// (package ldareval, cached on disk), ldar.Train with a reward (recall
// less a token price, Context-Picker's Eq. 6, or LDAR's own LLM-judged
// answers), the policy written with a checkpoint per epoch, and every test
// split measured with eval.Run beside fixed top-k, budgets, Adaptive-k and
// the knee, as tables, JSON and SVG.
//
// It is training-only code: no package a selector user imports depends on
// it (TestTrainingApart). The policy it writes is run by package ldar.
package ldartrain
