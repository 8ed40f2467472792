package eval

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/llm"
)

// LaRA's reader prompts, as LDAR answers with them (dataset.LoadLaRA reads
// the benchmark).

// LaRADatatype names a kind's documents for Self-Route's {datatype}.
func LaRADatatype(kind string) string {
	switch kind {
	case "book":
		return "novels"
	case "financial":
		return "financial reports"
	case "paper":
		return "academic papers"
	}
	return ""
}

// laraTemplates are LaRA's RAG reader prompts per document kind, verbatim
// as LDAR's code carries them (evaluation/prompt.py, rag_templates; the
// spaces before "Be concise." and after "question." included). LDAR's
// reward answers every sampled band with them.
var laraTemplates = map[string]llm.Template{
	"paper":     "Here are some chunks retrieved from some papers. Read these chunks to answer a question.\n\n{context}\n\nQuestion: {question}\n\n Be concise.",
	"financial": "Here are some chunks retrieved from a financial statement. Read these chunks to answer a question. \n\n{context}\n\nQuestion: {question}\n\n Be concise.",
	"book":      "Here are some chunks retrieved from a book. Read these chunks to answer a question.\n\n{context}\n\nQuestion: {question}\n\nBe concise.",
}

// LaRASystem is the system message of LaRA's and LDAR's reader calls.
const LaRASystem = "You are a helpful assistant"

// LaRATemplate is LaRA's RAG reader prompt for a document kind (book,
// financial, paper).
func LaRATemplate(kind string) (llm.Template, bool) {
	t, ok := laraTemplates[kind]
	return t, ok
}

// LaRAContext joins passages as LDAR's reward does (calc_reward): "chunk
// i: TEXT." and a blank line after each, i from 0, in the band's order.
func LaRAContext(ps []llm.Passage) string {
	var b strings.Builder
	for i, p := range ps {
		fmt.Fprintf(&b, "chunk %d: %s.\n\n", i, p.Text)
	}
	return b.String()
}

// LaRAPrompt is a LaRA record's reader prompt as LDAR sends it: the RAG
// template of the record's document kind (from its LoadLaRA id,
// LENGTH/KIND/LEVEL/N), LaRASystem and LaRAContext, rendered verbatim (the
// benchmark's own documents, no fence added). For another record it
// returns the zero ReaderPrompt, which Answering.PromptFor reads as "use
// Template".
func LaRAPrompt(rec dataset.Record) ReaderPrompt {
	parts := strings.Split(rec.ID, "/")
	if len(parts) != 4 || !slices.Contains(dataset.LaRALengths, parts[0]) {
		return ReaderPrompt{}
	}
	t, ok := LaRATemplate(parts[1])
	if !ok {
		return ReaderPrompt{}
	}
	return ReaderPrompt{Template: t, System: LaRASystem, Context: LaRAContext, Verbatim: true}
}
