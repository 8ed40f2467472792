package mine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ctxsel/ctxsel/answer"
	"github.com/ctxsel/ctxsel/llm"
)

// rewritePrompt asks for paraphrases (the paper's data augmentation, §3.2).
const rewritePrompt = "Rewrite the question below in %d different ways. Every rewrite must keep the exact meaning and ask for the same answer, while varying the wording and phrasing. Do not answer the question.\n" +
	"Answer with one JSON object and nothing else: {\"rewrites\": [\"...\", ...]}\n\n" +
	"Question: %s"

// rewrite asks c for n paraphrases of question and keeps the valid ones:
// non-empty, not the original and pairwise distinct after answer.Normalize,
// not absurdly long; at most n. It returns the kept ones, how many were
// rejected, and the call's tokens.
func rewrite(ctx context.Context, c llm.Client, question string, n int, bud *budget) ([]string, int, int, error) {
	if err := bud.check(); err != nil {
		return nil, 0, 0, err
	}
	resp, err := c.Chat(ctx, llm.Request{Messages: []llm.Message{{Role: "user", Content: fmt.Sprintf(rewritePrompt, n, question)}}, JSON: true})
	if err != nil {
		return nil, 0, 0, fmt.Errorf("rewriter: %w", err)
	}
	tok := resp.PromptTokens + resp.CompletionTokens
	bud.spend(tok)
	kept, rejected := ValidRewrites(question, resp.Content, n)
	return kept, rejected, tok, nil
}

// ValidRewrites parses a rewriter's answer ({"rewrites": [...]}, fenced
// JSON tolerated) and returns the valid rewrites, at most n, and the number
// rejected. Unreadable output rejects n.
func ValidRewrites(question, output string, n int) ([]string, int) {
	s := strings.TrimSpace(output)
	if i := strings.Index(s, "```"); i >= 0 {
		s = s[i+3:]
		s = strings.TrimPrefix(strings.TrimPrefix(s, "json"), "JSON")
		if j := strings.Index(s, "```"); j >= 0 {
			s = s[:j]
		}
	}
	var v struct {
		Rewrites []json.RawMessage `json:"rewrites"`
	}
	if json.Unmarshal([]byte(strings.TrimSpace(s)), &v) != nil {
		return nil, n
	}
	seen := map[string]bool{answer.Normalize(question): true}
	var kept []string
	rejected := 0
	for _, raw := range v.Rewrites {
		var q string
		if json.Unmarshal(raw, &q) != nil {
			rejected++
			continue
		}
		q = strings.Join(strings.Fields(q), " ")
		norm := answer.Normalize(q)
		if norm == "" || seen[norm] || len(q) > 4*len(question)+200 || len(kept) == n {
			rejected++
			continue
		}
		seen[norm] = true
		kept = append(kept, q)
	}
	if len(v.Rewrites) < n {
		rejected += n - len(v.Rewrites)
	}
	return kept, rejected
}
