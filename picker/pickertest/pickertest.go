// Package pickertest holds scripted picker models for tests and plumbing
// runs: they read the real picker prompt from an llmtest server and answer
// in the real format. Their figures check plumbing only; they say nothing
// about any model's picking.
package pickertest

import (
	"encoding/json"
	"strings"

	"github.com/ctxsel/ctxsel/llm/llmtest"
)

// Offered parses the ids and texts a picker prompt shows, in prompt order,
// and its question.
func Offered(prompt string) (question string, ids, texts []string) {
	if i := strings.Index(prompt, "\nQuestion: "); i >= 0 {
		rest := prompt[i+len("\nQuestion: "):]
		question, _, _ = strings.Cut(rest, "\n\nPassages:\n")
	}
	const head = "\n### id: "
	for {
		i := strings.Index(prompt, head)
		if i < 0 {
			break
		}
		prompt = prompt[i+len(head):]
		dec := json.NewDecoder(strings.NewReader(prompt))
		var id string
		if dec.Decode(&id) != nil {
			continue
		}
		prompt = prompt[dec.InputOffset():]
		text := strings.TrimPrefix(prompt, "\n")
		if j := strings.Index(text, head); j >= 0 {
			text = text[:j]
		} else if j := strings.Index(text, "\nAnswer with one JSON object"); j >= 0 {
			text = text[:j]
		}
		ids, texts = append(ids, id), append(texts, strings.TrimSpace(text))
	}
	return question, ids, texts
}

// Gold is a simulated picker that knows each question's gold passage ids
// (keyed by question text) and answers with those among the offered ones,
// in prompt order, with a fixed rationale. When none is offered it picks
// the first offered id. It checks plumbing: a perfect oracle, not a model.
func Gold(table map[string][]string) llmtest.Replier {
	trimmed := make(map[string][]string, len(table))
	for q, ids := range table {
		trimmed[strings.TrimSpace(q)] = ids
	}
	return func(c llmtest.Call) llmtest.Reply {
		q, ids, _ := Offered(c.Prompt())
		gold := map[string]bool{}
		for _, g := range trimmed[strings.TrimSpace(q)] {
			gold[g] = true
		}
		var pick []string
		for _, id := range ids {
			if gold[id] {
				pick = append(pick, id)
			}
		}
		if len(pick) == 0 && len(ids) > 0 {
			pick = ids[:1]
		}
		return Answer("these passages hold the evidence", pick)
	}
}

// Answer is a well-formed picker reply.
func Answer(rationale string, ids []string) llmtest.Reply {
	b, _ := json.Marshal(map[string]any{"rationale": rationale, "ids": ids})
	return llmtest.Reply{Content: string(b)}
}

// Garbage answers every call with text that is no picker output.
func Garbage(llmtest.Call) llmtest.Reply {
	return llmtest.Reply{Content: "I think passages 1 and 3, maybe. {not json"}
}
