package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/evidence"
	"github.com/ctxsel/ctxsel/token"
)

// splitEvidence takes the evidence specs (evidence:budget=500,
// topk:k=30+evidence:budget=500, …) out of a --strategies list, a bare
// key=value continuing the spec before it, and returns the rest.
func splitEvidence(text string) (rest string, specs []string) {
	var others []string
	inEvidence := false
	for _, tok := range strings.Split(text, ",") {
		tok = strings.TrimSpace(tok)
		if tok == "" {
			continue
		}
		if !strings.Contains(tok, ":") && strings.Contains(tok, "=") {
			if inEvidence {
				specs[len(specs)-1] += "," + tok
			} else {
				others = append(others, tok)
			}
			continue
		}
		inEvidence = evidence.IsSpec(tok)
		if inEvidence {
			specs = append(specs, tok)
		} else {
			others = append(others, tok)
		}
	}
	return strings.Join(others, ","), specs
}

// newEvidenceSelectors builds evidence selectors from specs, their
// sentences embedded by the scorer set's use-lite embedder (cached) and
// scored by modelPath's model ("" = the embedded one).
func newEvidenceSelectors(specs []string, scorers *scorerSet, counter token.Counter, modelPath string) ([]ctxsel.TextSelector, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	base, err := evidenceBase(scorers, counter)
	if err != nil {
		return nil, err
	}
	if modelPath != "" {
		b, err := os.ReadFile(modelPath)
		if err != nil {
			return nil, fmt.Errorf("--evidence-model: %w", err)
		}
		if base.Model, err = evidence.ParseModel(b); err != nil {
			return nil, fmt.Errorf("--evidence-model %s: %w", modelPath, err)
		}
	}
	var out []ctxsel.TextSelector
	for _, sp := range specs {
		s, err := evidence.Parse(sp, base)
		if err != nil {
			return nil, fmt.Errorf("--strategies %s: %w", sp, err)
		}
		out = append(out, s)
	}
	return out, nil
}
