package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// eval resolves evidence specs like any other (no special case): alone,
// composed after a strategy, with --evidence-model, and names a bad one.
func TestEvalEvidenceSpecs(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(envEmbedCache, filepath.Join(dir, "cache"))
	js := filepath.Join(dir, "r.json")
	code, _, errs := runCLI(t, "", "eval", "--data", "../../../shared/data/hotpotqa_sf_dev53.jsonl", "--limit", "6", "--pool", "60", "--scorer", "bm25",
		"--baselines", "none", "--strategies", "topk:k=3,evidence:budget=200,topk:k=10+evidence:budget=200", "--json", js)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Results []struct {
			Strategy       string  `json:"strategy"`
			EvidenceRecall float64 `json:"evidence_recall"`
			EvidenceTokens float64 `json:"evidence_tokens"`
		} `json:"results"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, r := range rep.Results {
		got[r.Strategy] = r.EvidenceTokens
		if r.EvidenceRecall <= 0 {
			t.Errorf("%s: evidence recall %v", r.Strategy, r.EvidenceRecall)
		}
	}
	for _, name := range []string{"topk:k=3", "evidence:budget=200", "topk:k=10+evidence:budget=200"} {
		tok, ok := got[name]
		if !ok {
			t.Fatalf("no row %q in %v", name, got)
		}
		if strings.Contains(name, "evidence") && (tok <= 0 || tok > 200) {
			t.Errorf("%s: %v tokens sent for a budget of 200", name, tok)
		}
	}
	for _, bad := range []string{"evidence:budget=0", "evidence:budget=10,colour=red", "topk:k=3+evidence"} {
		code, _, errs := runCLI(t, "", "eval", "--limit", "1", "--strategies", bad)
		if code != 2 || !strings.Contains(errs, "evidence") {
			t.Errorf("%s: exit %d: %s", bad, code, errs)
		}
	}
	code, _, errs = runCLI(t, "", "eval", "--limit", "1", "--strategies", "evidence:budget=100", "--evidence-model", filepath.Join(dir, "none.json"))
	if code != 2 || !strings.Contains(errs, "--evidence-model") {
		t.Errorf("missing model file: exit %d: %s", code, errs)
	}
}
