package lengthest

import (
	"strconv"
	"strings"

	"github.com/ctxsel/ctxsel/llm"
)

// SummaryPrompt is the summarisation prompt of App. A.2.1 of the paper,
// verbatim: {document} is the documents, {question} the query and
// {num_words} the summary's word limit.
const SummaryPrompt = "{document}\n" +
	"Question: {question}\n" +
	"Answer the question based on the provided document.\n" +
	"Be concise and directly address only the specific question asked.\n" +
	"Limit your response to a maximum of {num_words} words."

// DefaultWords is the default word limit: SummHay's references average 185
// words (§3.1); the paper sets the limit from the 80th percentile of the
// references' lengths, which an estimator without gold summaries cannot see.
const DefaultWords = 250

// docSeparator joins documents into {document}.
const docSeparator = "\n\n"

// RenderPrompt fills in the template in one pass, so braces inside the
// documents or the question are kept as they are. The documents are put in
// a code fence longer than any run of backticks in them (llm.Fence): the
// template leaves {document} bare, and a document must not be able to end
// it and write a question or instructions of its own.
func RenderPrompt(docs []string, question string, words int) string {
	return strings.NewReplacer("{document}", llm.Fence(strings.Join(docs, docSeparator)), "{question}", question,
		"{num_words}", strconv.Itoa(words)).Replace(SummaryPrompt)
}
