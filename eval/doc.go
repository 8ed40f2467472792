// Package eval measures context selection on labelled data (package
// dataset): it scores pooled passages, runs strategies and text
// selectors, and reports recall per token against the fixed top-k
// frontier and the top-k/budget envelopes as a table, JSON and an SVG
// plot; with a reader it answers from every selection and scores the
// answers.
package eval
