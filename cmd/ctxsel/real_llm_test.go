package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRealLLMEval runs a 20-question eval end to end against a real
// endpoint, opt-in:
//
//	CTXSEL_TEST_LLM=1 CTXSEL_TEST_LLM_SPEC=ollama:llama3.2 go test ./cmd/ctxsel -run RealLLM -v
//	CTXSEL_TEST_LLM=1 CTXSEL_TEST_LLM_SPEC=openai:gpt-4o-mini CTXSEL_LLM_API_KEY=sk-… go test ./cmd/ctxsel -run RealLLM -v
//
// It checks plumbing against the real wire format (every question answered,
// no failed call, usage reported), not the model's accuracy.
func TestRealLLMEval(t *testing.T) {
	if os.Getenv("CTXSEL_TEST_LLM") != "1" {
		t.Skip("set CTXSEL_TEST_LLM=1 and CTXSEL_TEST_LLM_SPEC to call a real LLM")
	}
	spec := os.Getenv("CTXSEL_TEST_LLM_SPEC")
	if spec == "" {
		t.Fatal("CTXSEL_TEST_LLM=1 needs CTXSEL_TEST_LLM_SPEC (e.g. ollama:llama3.2)")
	}
	jsonOut := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := runCLI(t, "", "eval", "--limit=20", "--pool=100", "--scorer=bm25", "--strategies=topk:k=5,selfroute:k=5",
		"--window=8000", "--reader="+spec, "--json="+jsonOut)
	t.Log(stdout)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rep := readReport(t, jsonOut)
	for _, r := range rep.Results {
		if r.AnswerResult == nil || r.Answered != 20 || r.LLMFailures != 0 || r.InputTokens <= 0 {
			t.Fatalf("%s: %+v", r.Strategy, r.AnswerResult)
		}
	}
}
