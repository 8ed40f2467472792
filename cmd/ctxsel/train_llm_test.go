package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/answer"
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/eval"
	"github.com/ctxsel/ctxsel/ldar"
	"github.com/ctxsel/ctxsel/llm/llmtest"
)

// TestTrainBandLLMReward trains with LDAR's own reward against the
// simulated reader end to end, then again warm (no calls), and stops at
// --max-llm-tokens.
func TestTrainBandLLMReward(t *testing.T) {
	t.Setenv("CTXSEL_LLM_CACHE", t.TempDir())
	data := tinyData(t, 20)
	recs, err := dataset.LoadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(llmtest.Reader(simTable(recs), llmtest.ReaderOptions{}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "p.safetensors")
	args := []string{"train", "band", "--scorer", "bm25", "--data", data, "--out", out, "--pool", "8", "--aug", "1",
		"--epochs", "1", "--batch", "8", "--samples", "2", "--cache", "", "--dim", "8", "--window", "8",
		"--reward", "llm", "--reader", srv.OpenAISpec("sim")}
	code, _, stderr := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("train: exit %d\n%s", code, stderr)
	}
	cold := srv.Requests()
	if cold == 0 || !strings.Contains(stderr, "LLM reward: at most") || !strings.Contains(stderr, "calls made") {
		t.Fatalf("%d calls\n%s", cold, stderr)
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatal(err)
	}
	os.Remove(out + ".ckpt")
	if code, _, stderr := runCLI(t, "", args...); code != 0 || srv.Requests() != cold {
		t.Fatalf("warm: exit %d, %d more calls\n%s", code, srv.Requests()-cold, stderr)
	}
	os.Remove(out + ".ckpt")
	t.Setenv("CTXSEL_LLM_CACHE", "off")
	code, _, stderr = runCLI(t, "", append(args, "--max-llm-tokens", "1")...)
	if code == 0 || !strings.Contains(stderr, "token cap") {
		t.Fatalf("cap: exit %d\n%s", code, stderr)
	}
	if code, _, _ := runCLI(t, "", "train", "band", "--data", data, "--out", out, "--reward", "llm"); code != 2 {
		t.Fatalf("--reward llm without --reader: exit %d", code)
	}
}

// TestTrainBandOnLaRA trains with the LLM reward on LaRA, read directly
// (no gold passages: the recall reward is refused, the test split points
// to eval --reader).
func TestTrainBandOnLaRA(t *testing.T) {
	const lara = "../../../shared/data/lara"
	if _, err := os.Stat(lara); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("LaRA missing in CI: %v", err)
		}
		t.Skip("LaRA not available")
	}
	t.Setenv("CTXSEL_LLM_CACHE", "off")
	srv := llmtest.New(func(c llmtest.Call) llmtest.Reply {
		if strings.Contains(c.Prompt(), "Hartman") {
			return llmtest.Reply{Content: "Hartman"}
		}
		return llmtest.Reply{Content: "unanswerable"}
	})
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "p.safetensors")
	args := []string{"train", "band", "--scorer", "bm25", "--data", "lara:32k/book/location", "--lara-dir", lara, "--out", out,
		"--aug", "1", "--epochs", "1", "--batch", "16", "--samples", "2", "--dim", "8", "--window", "8", "--cache", ""}
	if code, _, stderr := runCLI(t, "", args...); code != 2 || !strings.Contains(stderr, "--reward llm") {
		t.Fatalf("recall reward on LaRA: exit %d %s", code, stderr)
	}
	code, stdout, stderr := runCLI(t, "", append(args, "--reward", "llm", "--reader", srv.OpenAISpec("m"))...)
	if code != 0 || srv.Requests() == 0 || !strings.Contains(stdout, "no gold passages") {
		t.Fatalf("exit %d, %d calls\n%s\n%s", code, srv.Requests(), stdout, stderr)
	}
	// LDAR's defaults on LaRA: LaRA's reader prompt (system message, its
	// book template, chunks numbered as LDAR's reward numbers them) and
	// LDAR's True/False judge, asked of the reader's endpoint.
	var reader, judge *llmtest.Call
	for _, c := range srv.Calls() {
		switch {
		case len(c.Messages) == 2 && c.Messages[0].Content == eval.LaRASystem && reader == nil:
			reader = &c
		case len(c.Messages) == 2 && c.Messages[0].Content == answer.JudgeSystemLDAR && judge == nil:
			judge = &c
		}
	}
	if reader == nil || judge == nil {
		t.Fatalf("no LaRA reader call (%v) or LDAR judge call (%v) among %d", reader != nil, judge != nil, len(srv.Calls()))
	}
	if p := reader.Messages[1].Content; !strings.HasPrefix(p, "Here are some chunks retrieved from a book. Read these chunks to answer a question.\n\nchunk 0: ") ||
		!strings.HasSuffix(p, "\n\nBe concise.") {
		t.Fatalf("reader prompt %.200q … %.100q", p, p[max(0, len(p)-100):])
	}
	if p := judge.Messages[1].Content; !strings.HasPrefix(p, "I will provide you with a question and its groundtruth answer") {
		t.Fatalf("judge prompt %.200q", p)
	}
	if !strings.Contains(stderr, "LDAR's True/False judge") || strings.Contains(stderr, "warning: the judge is SubEM") {
		t.Fatalf("notes:\n%s", stderr)
	}
	// Without --window the policy bands the whole curve (about 64 chunks at
	// 32k); SubEM on LaRA's sentence answers is warned about.
	noWindow := slices.Clone(args)
	i := slices.Index(noWindow, "--window")
	noWindow = slices.Delete(noWindow, i, i+2)
	code, _, stderr = runCLI(t, "", append(noWindow, "--reward", "llm", "--reader", srv.OpenAISpec("m"), "--judge", "subem")...)
	if code != 0 || !strings.Contains(stderr, "the policy reads and bands the whole curve") || !strings.Contains(stderr, "warning: the judge is SubEM, but the answers are sentences") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	p, err := ldar.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if w := p.Config().Window; w < 50 || w > 80 {
		t.Fatalf("window %d, want the longest 32k curve (~64 chunks)", w)
	}
}
