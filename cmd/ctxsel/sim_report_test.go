package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/llm/llmtest"
	"github.com/ctxsel/ctxsel/selfroute"
	"github.com/ctxsel/ctxsel/token"
)

// questionReader is the simulated reader for large tables: it finds the
// question where the reader prompts put it (the factoid template's question
// block, or Self-Route's "Question: … Only give me") and consults that
// question's entry alone, instead of searching the prompt for every
// question of the table.
//
// It reports the prompt's exact cl100k_base token count as the server's
// usage, as an OpenAI-compatible server with that vocabulary would.
func questionReader(t *testing.T, table []llmtest.Question) llmtest.Replier {
	counter, err := token.New("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	one := make(map[string]llmtest.Replier, len(table))
	for _, q := range table {
		one[q.Question] = llmtest.Reader([]llmtest.Question{q}, llmtest.ReaderOptions{})
	}
	return func(c llmtest.Call) llmtest.Reply {
		p := c.Prompt()
		var q string
		if _, rest, ok := strings.Cut(p, "- **Question:**\n```\n"); ok {
			q, _, _ = strings.Cut(rest, "\n```")
		} else if i := strings.LastIndex(p, " Question: "); i >= 0 {
			q, _, _ = strings.Cut(p[i+len(" Question: "):], " Only give me")
		}
		reply := llmtest.Reply{Content: "unanswerable"}
		if r, ok := one[q]; ok {
			reply = r(c)
		}
		reply.PromptTokens, reply.CompletionTokens = counter.Count(p), counter.Count(reply.Content)
		return reply
	}
}

// TestSimulatedReport is the issue-9 plumbing report, opt-in:
//
//	CTXSEL_SIM_REPORT=/tmp/simrep go test ./cmd/ctxsel -run SimulatedReport -timeout 60m -v
//
// It runs eval with the simulated reader on HotpotQA dev 500 (pool 1000)
// for BM25 and use-lite (CTXSEL_SIM_SCORERS), cold then warm, and writes
// the tables and JSON under the directory; CTXSEL_SIM_ARGS replaces the
// pool, strategies and window (to price another command). The figures
// check plumbing; they are no model's.
func TestSimulatedReport(t *testing.T) {
	dir := os.Getenv("CTXSEL_SIM_REPORT")
	if dir == "" {
		t.Skip("set CTXSEL_SIM_REPORT=DIR to run the simulated-reader report")
	}
	data := "../../../shared/data/hotpotqa_dev500.jsonl"
	recs, err := dataset.LoadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(selfroute.Template), "Question: {question} Only give me") {
		t.Fatal("Self-Route template changed: update questionReader")
	}
	srv := llmtest.New(questionReader(t, simTable(recs)))
	defer srv.Close()
	t.Setenv("CTXSEL_LLM_CACHE", filepath.Join(dir, "llmcache"))
	for _, scorer := range strings.Split(envOr("CTXSEL_SIM_SCORERS", "bm25,use-lite"), ",") {
		for _, pass := range []string{"cold", "warm"} {
			before := srv.Requests()
			out := filepath.Join(dir, scorer+"-"+pass)
			args := []string{"eval", "--data=" + data, "--scorer=" + scorer,
				"--reader=" + srv.OpenAISpec("simulated-reader"), "--json=" + out + ".json", "--questions-out=" + out + ".jsonl"}
			if extra := os.Getenv("CTXSEL_SIM_ARGS"); extra != "" { // e.g. the README's command
				args = append(args, strings.Fields(extra)...)
			} else {
				args = append(args, "--pool=1000", "--strategies=topk:k=5,adaptivek,band,full,selfroute:k=5", "--window=32000")
			}
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), args, nil, &stdout, &stderr)
			if err := os.WriteFile(out+".txt", stdout.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s %s: exit %d, %d calls reached the server\n%s", scorer, pass, code, srv.Requests()-before, stdout.String())
			if code != 0 {
				t.Fatalf("stderr: %s", stderr.String())
			}
		}
	}
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
