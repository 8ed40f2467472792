package ldartrain

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/answer"
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/eval"
	"github.com/ctxsel/ctxsel/ldar"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/llm/llmtest"
	"github.com/ctxsel/ctxsel/score"
	"github.com/ctxsel/ctxsel/token"
)

// tinyData writes n labelled questions: each has a gold passage sharing
// its question's words and a distractor.
func tinyData(t *testing.T, n int) string {
	t.Helper()
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, `{"id":"q%d","question":"where was person%d born","answers":["town%d"],"passages":[{"id":"g","text":"person%d was born in town%d","gold":true},{"id":"d","text":"filler text number %d about weather","gold":false}]}`+"\n", i, i, i, i, i, i)
	}
	path := filepath.Join(t.TempDir(), "tiny.jsonl")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func tinyConfig(t *testing.T, data string) Config {
	t.Helper()
	counter, err := token.New("")
	if err != nil {
		t.Fatal(err)
	}
	net := ldar.DefaultConfig
	net.Window, net.Dim, net.Hidden, net.FFN = 8, 8, 8, 16
	dir := t.TempDir()
	return Config{
		Data: []string{data}, Out: filepath.Join(dir, "p.safetensors"),
		Pool: 12, PoolSeed: 1, Aug: 1, Split: 0.8, SplitSeed: 1, Val: 0.2,
		Train:  ldar.TrainOptions{Config: net, Seed: 1, Epochs: 2, Batch: 8, Samples: 4, Baseline: "rloo", LR: 1e-3, LRFinal: 0.1, Workers: 1},
		Reward: ldar.RecallPrice{Lambda: 0.5}, RewardDesc: "recall − 0.5·tokens/1000",
		Scorer: score.NewBM25(), Counter: counter,
		Report: filepath.Join(dir, "report.json"), PlotCurves: filepath.Join(dir, "curves.svg"),
		Command: "test",
	}
}

// TestRun trains a tiny policy, writes it with its checkpoint, report and
// plot, and measures the test split beside the baselines.
func TestRun(t *testing.T) {
	cfg := tinyConfig(t, tinyData(t, 30))
	var stdout, stderr bytes.Buffer
	if err := Run(context.Background(), cfg, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	p, err := ldar.Load(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	if p.Meta["scorer"] != "bm25" || p.Meta["command"] != "test" || p.Config().Window != 8 {
		t.Errorf("policy meta %v config %+v", p.Meta, p.Config())
	}
	if _, err := os.Stat(cfg.Out + ".ckpt"); err != nil {
		t.Errorf("no checkpoint: %v", err)
	}
	if !strings.Contains(stdout.String(), "tiny.jsonl test split") || !strings.Contains(stdout.String(), " band ") {
		t.Errorf("no test report:\n%s", stdout.String())
	}
	var rep struct {
		History []ldar.EpochStats
		Reports []struct {
			Name   string
			Report eval.Report
		}
	}
	b, err := os.ReadFile(cfg.Report)
	if err != nil || json.Unmarshal(b, &rep) != nil || len(rep.History) != 2 || len(rep.Reports) != 1 || len(rep.Reports[0].Report.Results) == 0 {
		t.Errorf("report (%v): %.300s", err, b)
	}
	if b, err := os.ReadFile(cfg.PlotCurves); err != nil || !bytes.Contains(b, []byte("<svg")) {
		t.Errorf("learning curve: %v", err)
	}
}

func TestRunRefusesBadConfig(t *testing.T) {
	data := tinyData(t, 10)
	noReward := tinyConfig(t, data)
	noReward.Reward = nil
	laraRecall := tinyConfig(t, data)
	laraRecall.Data = []string{"lara:32k/book"}
	for name, cfg := range map[string]Config{"no reward": noReward, "LaRA with the recall reward": laraRecall} {
		var out bytes.Buffer
		if err := Run(context.Background(), cfg, &out, &out); !errors.Is(err, ctxsel.ErrInvalidInput) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

// TestNewLLMReward: LDAR's defaults on LaRA data (its prompt, its judge
// asked of the reader's endpoint, with a note), SubEM elsewhere, and the
// prompt lara refused off LaRA.
func TestNewLLMReward(t *testing.T) {
	srv := llmtest.New(func(llmtest.Call) llmtest.Reply { return llmtest.Reply{Content: "town1"} })
	defer srv.Close()
	open := func(spec string) (llm.Client, error) {
		c, _, err := llm.OpenSpec(spec, llm.Options{MaxRetries: -1})
		return c, err
	}
	counter, _ := token.New("")
	tmpl := func(string) (llm.Template, error) { return llm.FactoidQA, nil }
	var notes bytes.Buffer
	r, desc, err := NewLLMReward(LLMRewardOptions{Reader: srv.OpenAISpec("m"), Judge: "auto", Prompt: "auto", Template: tmpl, OnLaRA: true}, open, counter, &notes)
	if err != nil {
		t.Fatal(err)
	}
	if r.Answering.PromptFor == nil || r.Answering.Judge == nil || !strings.Contains(r.Answering.Judge.Name(), "ldar") ||
		!strings.Contains(desc, "LaRA's prompt") || !strings.Contains(notes.String(), "LDAR's True/False judge") {
		t.Errorf("on LaRA: judge %v, desc %q, notes %q", r.Answering.Judge, desc, notes.String())
	}
	r, desc, err = NewLLMReward(LLMRewardOptions{Reader: srv.OpenAISpec("m"), Judge: "auto", Prompt: "auto", Template: tmpl}, open, counter, &notes)
	if err != nil || r.Answering.Judge != nil || r.Answering.PromptFor != nil || !strings.Contains(desc, "judge subem") {
		t.Errorf("elsewhere: %v, judge %v, desc %q", err, r.Answering.Judge, desc)
	}
	if _, _, err := NewLLMReward(LLMRewardOptions{Reader: srv.OpenAISpec("m"), Judge: "auto", Prompt: "lara", Template: tmpl}, open, counter, &notes); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Errorf("prompt lara off LaRA: err = %v", err)
	}
	if _, _, err := NewLLMReward(LLMRewardOptions{Reader: srv.OpenAISpec("m"), Judge: "nosuch", Prompt: "factoid", Template: tmpl}, open, counter, &notes); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Errorf("a bad judge: err = %v", err)
	}
}

func TestEstimateAndWarnings(t *testing.T) {
	counter, _ := token.New("")
	qs := []ldar.Question{{ID: "a", Scores: []float64{0.1, 0.9, 0.5}, Tokens: []int{300, 600, 900}}}
	opt := ldar.TrainOptions{Config: ldar.Config{Window: 2}, Epochs: 2, Samples: 3}
	var w bytes.Buffer
	EstimateLLMSpend(&w, qs, qs, opt, nil, counter)
	// 2 epochs × (1 question × 3 samples + 1) answers; bands of a third of
	// the top 2 ranks' 1,500 tokens.
	if got := w.String(); !strings.Contains(got, "at most 8 calls") || !strings.Contains(got, "bands of ~500 tokens") {
		t.Errorf("estimate: %s", got)
	}
	w.Reset()
	EstimateLLMSpend(&w, qs, qs, opt, answer.SubEMJudge, counter)
	if !strings.Contains(w.String(), "at most 16 calls") {
		t.Errorf("estimate with a judge: %s", w.String())
	}
	w.Reset()
	warnSubEMOnSentences(&w, []dataset.Record{{Answers: []string{"a b c d e f"}}, {Answers: []string{"one two three four five"}}})
	if !strings.Contains(w.String(), "answers are sentences") {
		t.Errorf("no warning on sentence answers: %q", w.String())
	}
	w.Reset()
	warnSubEMOnSentences(&w, []dataset.Record{{Answers: []string{"Paris"}}})
	if w.Len() != 0 {
		t.Errorf("a warning on factoid answers: %q", w.String())
	}
}
