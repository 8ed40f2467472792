package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/eval"
	"github.com/ctxsel/ctxsel/eval/sample"
	"github.com/ctxsel/ctxsel/llm/llmtest"
	"github.com/ctxsel/ctxsel/token"
)

// simTable is the simulated reader's table for records: a question is
// answered iff the prompt holds all its gold passages.
func simTable(recs []dataset.Record) []llmtest.Question {
	var table []llmtest.Question
	for _, r := range recs {
		q := llmtest.Question{Question: r.Question, Answer: r.Answers[0]}
		for _, p := range r.Passages {
			if p.Gold {
				q.Gold = append(q.Gold, strings.TrimSpace(p.Text))
			}
		}
		table = append(table, q)
	}
	return table
}

func readReport(t *testing.T, path string) eval.Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep eval.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestEvalSimulatedReader runs eval with the simulated reader (a plumbing
// check, not a model): for pure strategies SubEM must equal the all-gold
// rate, Self-Route's tokens lie between its top-k's and full's, and a warm
// re-run makes no calls.
func TestEvalSimulatedReader(t *testing.T) {
	t.Setenv("CTXSEL_LLM_CACHE", t.TempDir())
	recs, err := sample.HotpotQA()
	if err != nil {
		t.Fatal(err)
	}
	recs = recs[:30]
	srv := llmtest.New(llmtest.Reader(simTable(recs), llmtest.ReaderOptions{}))
	defer srv.Close()
	dir := t.TempDir()
	jsonOut, qOut := filepath.Join(dir, "r.json"), filepath.Join(dir, "q.jsonl")
	args := []string{"eval", "--limit=30", "--pool=60", "--scorer=bm25", "--strategies=topk:k=5,adaptivek,full,selfroute:k=5",
		"--reader=" + srv.OpenAISpec("sim"), "--window=3000", "--json=" + jsonOut, "--questions-out=" + qOut}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), args, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr.String(), stdout.String())
	}
	calls := srv.Requests()
	rep := readReport(t, jsonOut)
	if rep.Answers == nil || rep.Answers.Calls != calls || rep.Answers.Failures != 0 {
		t.Fatalf("totals %+v, server saw %d", rep.Answers, calls)
	}
	byName := map[string]eval.Result{}
	for _, r := range rep.Results {
		if r.AnswerResult == nil || r.Answered != 30 {
			t.Fatalf("%s: answers %+v", r.Strategy, r.AnswerResult)
		}
		byName[r.Strategy] = r
		if want := math.Sqrt(r.SubEM * (1 - r.SubEM) / 29); math.Abs(r.SubEMErr-want) > 1e-9 {
			t.Errorf("%s: subem se %v, want %v", r.Strategy, r.SubEMErr, want)
		}
		if r.Strategy != "selfroute:k=5" && math.Abs(r.SubEM-r.AllGold) > 1e-9 {
			t.Errorf("%s: subem %.3f != all-gold %.3f", r.Strategy, r.SubEM, r.AllGold)
		}
	}
	top, full, sr := byName["topk:k=5"], byName["full"], byName["selfroute:k=5"]
	if !(sr.InputTokens >= top.InputTokens && sr.InputTokens <= full.InputTokens+top.InputTokens) || sr.LLMCalls < 1 || sr.LLMCalls > 2 {
		t.Errorf("self-route tokens %.0f (calls %.2f), top-k %.0f, full %.0f", sr.InputTokens, sr.LLMCalls, top.InputTokens, full.InputTokens)
	}
	if sr.SubEM < top.SubEM {
		t.Errorf("self-route subem %.3f below its top-k's %.3f", sr.SubEM, top.SubEM)
	}
	if full.MeanTokens > 3000 {
		t.Errorf("full ignores the window: %.0f tokens", full.MeanTokens)
	}
	f, err := os.Open(qOut)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); n++ {
		var qa eval.QuestionAnswer
		if err := json.Unmarshal(sc.Bytes(), &qa); err != nil || qa.Prediction == "" || len(qa.Selected) == 0 {
			t.Fatalf("record %d: %v %+v", n, err, qa)
		}
		if qa.Strategy == "full" && qa.Why != "" && !strings.Contains(qa.Why, "window") {
			t.Fatalf("full's explanation does not mention the window: %q", qa.Why)
		}
	}
	if n != 4*30 {
		t.Fatalf("%d question records", n)
	}

	// Warm: the same run again makes no calls.
	stdout.Reset()
	if code := run(context.Background(), args, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("warm exit %d: %s", code, stderr.String())
	}
	if srv.Requests() != calls {
		t.Fatalf("warm re-run made %d calls", srv.Requests()-calls)
	}
	// (Self-Route's long step and full ask the same prompt, so the cold run
	// already answered some calls from the cache.)
	if warm := readReport(t, jsonOut); warm.Answers.Calls != 0 || warm.Answers.Cached != calls+rep.Answers.Cached {
		t.Fatalf("warm totals %+v, cold %+v", warm.Answers, rep.Answers)
	}
}

// TestEvalReaderFailures: a reader that fails writes everything it can and
// exits non-zero; --max-failures stops the run early.
func TestEvalReaderFailures(t *testing.T) {
	t.Setenv("CTXSEL_LLM_CACHE", "off")
	srv := llmtest.New(llmtest.Echo)
	defer srv.Close()
	faults := make([]llmtest.Fault, 200)
	for i := range faults {
		faults[i] = llmtest.Fault{Status: 401}
	}
	srv.Script(faults...)
	dir := t.TempDir()
	jsonOut := filepath.Join(dir, "r.json")
	// One call at a time: with more, calls already in flight when the run
	// stops fail too and are counted (5 or 6 instead of 4, now and then).
	args := []string{"eval", "--limit=10", "--pool=20", "--scorer=bm25", "--strategies=topk:k=5,full", "--llm-retries=0", "--llm-concurrency=1",
		"--reader=" + srv.OpenAISpec("m"), "--max-failures=3", "--json=" + jsonOut}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), args, nil, &stdout, &stderr); code == 0 {
		t.Fatal("failing reader exited 0")
	}
	rep := readReport(t, jsonOut)
	if rep.Answers == nil || rep.Answers.Failures != 4 || rep.Answers.Stopped == "" {
		t.Fatalf("totals %+v", rep.Answers)
	}
	if !strings.Contains(stdout.String(), "stopped early") || strings.Contains(stderr.String(), "127.0.0.1") {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	// Bad flags fail before any work.
	for _, bad := range [][]string{
		{"eval", "--strategies=selfroute:k=5"},
		{"eval", "--reader=nonsense"},
		{"eval", "--reader=" + srv.OpenAISpec("m"), "--judge=maybe"},
		{"eval", "--reader=" + srv.OpenAISpec("m"), "--prompt=/no/such/file"},
		{"eval", "--questions-out=x.jsonl"},
		{"eval", "--reader=" + srv.OpenAISpec("m"), "--window=100"},
	} {
		if code := run(context.Background(), bad, nil, &stdout, &stderr); code != 2 {
			t.Errorf("%v: exit %d", bad, code)
		}
	}
}

// TestEvalLaRA reads LaRA directly: answers only, recall left out.
func TestEvalLaRA(t *testing.T) {
	const lara = "../../../shared/data/lara"
	if _, err := os.Stat(lara); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("LaRA missing in CI: %v", err)
		}
		t.Skip("LaRA not available")
	}
	t.Setenv("CTXSEL_LLM_CACHE", "off")
	srv := llmtest.New(func(c llmtest.Call) llmtest.Reply { return llmtest.Reply{Content: "unanswerable"} })
	defer srv.Close()
	jsonOut := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := runCLI(t, "", "eval", "--data", "lara:32k/financial/location", "--lara-dir", lara, "--scorer", "bm25",
		"--strategies", "topk:k=5,full,selfroute:k=5", "--window", "8000", "--reader", srv.OpenAISpec("m"), "--json", jsonOut)
	if code != 0 || !strings.Contains(stdout, "without gold passages") || strings.Contains(stdout, "recall  precision") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	b, _ := os.ReadFile(jsonOut)
	if strings.Contains(string(b), `"recall"`) || !strings.Contains(string(b), `"no_gold_labels": true`) {
		t.Fatalf("json: %.400s", b)
	}
	// Self-Route's prompt names the kind of document
	found := false
	for _, c := range srv.Calls() {
		found = found || strings.Contains(c.Prompt(), "retrieved from some financial reports.")
	}
	if !found {
		t.Fatal("no Self-Route prompt for financial reports")
	}
	// The readers answer with LaRA's prompt for financial statements, as
	// LDAR's code sends it; Self-Route's long step too.
	withLaRA := 0
	for _, c := range srv.Calls() {
		if len(c.Messages) == 2 && c.Messages[0].Content == eval.LaRASystem &&
			strings.HasPrefix(c.Messages[1].Content, "Here are some chunks retrieved from a financial statement. Read these chunks to answer a question. \n\nchunk 0: ") {
			withLaRA++
		}
	}
	if calls := len(srv.Calls()); withLaRA == 0 || withLaRA >= calls {
		t.Fatalf("%d of %d calls with LaRA's prompt, want all but Self-Route's first steps", withLaRA, calls)
	}
}

// TestEvalFaultsGoOn: 429 storms, 5xx, garbage, truncated and empty bodies
// and a hung call each fail one answer; the run goes on over both wire
// formats, counts them per strategy, writes its report, exits non-zero.
func TestEvalFaultsGoOn(t *testing.T) {
	t.Setenv("CTXSEL_LLM_CACHE", "off")
	for _, wire := range []string{"openai", "ollama"} {
		srv := llmtest.New(func(c llmtest.Call) llmtest.Reply { return llmtest.Reply{Content: "an answer"} })
		srv.Script(llmtest.Fault{Status: 429, RetryAfter: "0"}, llmtest.Fault{Status: 503}, llmtest.Fault{NonJSON: true},
			llmtest.Fault{Truncate: true}, llmtest.Fault{EmptyChoices: true}, llmtest.Fault{Hang: true})
		spec := srv.OpenAISpec("m")
		if wire == "ollama" {
			spec = srv.OllamaSpec("m")
		}
		jsonOut := filepath.Join(t.TempDir(), "r.json")
		code, stdout, stderr := runCLI(t, "", "eval", "--limit=12", "--pool=20", "--scorer=bm25", "--strategies=topk:k=3",
			"--reader="+spec, "--llm-retries=0", "--llm-timeout=2s", "--llm-concurrency=1", "--max-failures=-1", "--json="+jsonOut)
		srv.Close()
		if code != 1 {
			t.Fatalf("%s: exit %d\n%s\n%s", wire, code, stdout, stderr)
		}
		rep := readReport(t, jsonOut)
		r := rep.Results[0]
		if r.LLMFailures != 6 || r.Answered != 6 || rep.Answers.Failures != r.LLMFailures {
			t.Fatalf("%s: answered %d, failures %d (totals %+v)", wire, r.Answered, r.LLMFailures, rep.Answers)
		}
	}
	// an endpoint that is down
	srv := llmtest.New(llmtest.Echo)
	spec := srv.OpenAISpec("m")
	srv.Close()
	code, _, stderr := runCLI(t, "", "eval", "--limit=3", "--pool=10", "--scorer=bm25", "--strategies=topk:k=1", "--reader="+spec,
		"--llm-retries=0", "--max-failures=1")
	if code != 1 || !strings.Contains(stderr, "failed") {
		t.Fatalf("down: exit %d %s", code, stderr)
	}
}

// eval --reader learns the window from an Ollama server that reports its
// model's (here 2,000 tokens): every selection, full included, is cut to
// it, and every request asks the model to run with it (num_ctx).
func TestEvalLearnsTheReadersWindow(t *testing.T) {
	t.Setenv("CTXSEL_LLM_CACHE", t.TempDir())
	recs, err := sample.HotpotQA()
	if err != nil {
		t.Fatal(err)
	}
	recs = recs[:8]
	srv := llmtest.New(llmtest.Reader(simTable(recs), llmtest.ReaderOptions{}))
	defer srv.Close()
	srv.SetContextLength(2000)
	jsonOut := filepath.Join(t.TempDir(), "r.json")
	args := []string{"eval", "--limit=8", "--pool=60", "--scorer=bm25", "--strategies=topk:k=3,full",
		"--reader=" + srv.OllamaSpec("small"), "--json=" + jsonOut}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), args, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr.String(), stdout.String())
	}
	if !strings.Contains(stderr.String(), "window is 2000 tokens (from its server)") {
		t.Fatalf("stderr: %s", stderr.String())
	}
	if rep := readReport(t, jsonOut); rep.Answers == nil || rep.Answers.Window != 2000 {
		t.Fatalf("answers %+v", rep.Answers)
	}
	tk, _ := token.New("")
	calls := srv.Calls()
	if len(calls) != 16 {
		t.Fatalf("%d calls", len(calls))
	}
	for _, c := range calls {
		if n := tk.Count(c.Prompt()); n+512 > 2000 || c.NumCtx != 2000 {
			t.Fatalf("a prompt of %d tokens (num_ctx %d) for a 2000-token window", n, c.NumCtx)
		}
	}
}
