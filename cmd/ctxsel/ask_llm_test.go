package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/llm/llmtest"
)

// TestAskFailingLLMShowsSelection: with a failing reader, ask still prints
// the passages, the why and the prompt, then the error, and exits non-zero;
// selfroute runs through --reader and reports both calls.
func TestAskFailingLLMShowsSelection(t *testing.T) {
	useHashEmbedder(t)
	t.Setenv("CTXSEL_LLM_CACHE", "off")
	root := t.TempDir()
	docs := filepath.Join(root, "docs")
	os.MkdirAll(docs, 0o755)
	os.WriteFile(filepath.Join(docs, "volcano.txt"), []byte("Mount Etna is an active volcano on Sicily. Its eruptions are frequent."), 0o644)
	os.WriteFile(filepath.Join(docs, "bread.txt"), []byte("Bread rises because yeast makes gas."), 0o644)
	idx := filepath.Join(root, "idx")
	if code, _, errs := runCLI(t, "", "index", "add", docs, "--index", idx); code != 0 {
		t.Fatalf("add: %s", errs)
	}
	srv := llmtest.New(llmtest.Echo)
	defer srv.Close()
	srv.Script(llmtest.Fault{Status: 401})
	code, out, errs := runCLI(t, "", "ask", "--index", idx, "--reader", srv.OpenAISpec("m"), "--llm-retries=0", "Is Etna active?")
	if code == 0 || !strings.Contains(out, "Selected") || !strings.Contains(out, "Why:") || !strings.Contains(out, "--- prompt") || !strings.Contains(errs, "401") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if strings.Contains(errs, "127.0.0.1") {
		t.Fatalf("error shows the endpoint address: %s", errs)
	}

	n := 0
	srv.SetReplier(func(c llmtest.Call) llmtest.Reply {
		if n++; n == 1 {
			return llmtest.Reply{Content: "unanswerable"}
		}
		return llmtest.Reply{Content: "Yes"}
	})
	code, out, errs = runCLI(t, "", "ask", "--index", idx, "--reader", srv.OpenAISpec("m"), "--strategy", "selfroute:k=1", "--prompt=false", "Is Etna active?")
	if code != 0 || !strings.Contains(out, "Self-Route: 1 passages") || !strings.Contains(out, "then 2 passages") || !strings.Contains(out, "Yes") {
		t.Fatalf("selfroute: exit %d\n%s\n%s", code, out, errs)
	}

	// A degenerate reply is shown, flagged, and the command fails: the job
	// of ask is an answer.
	for _, tc := range []struct {
		reply llmtest.Reply
		want  string
	}{
		{llmtest.Reply{Content: ""}, "the reply was empty"},
		{llmtest.Reply{Content: "Mount Et", FinishReason: "length"}, "cut off at the token limit"},
	} {
		srv.SetReplier(func(llmtest.Call) llmtest.Reply { return tc.reply })
		code, out, errs = runCLI(t, "", "ask", "--index", idx, "--reader", srv.OpenAISpec("m"), "--prompt=false", "Is Etna active?")
		if code != 1 || !strings.Contains(out, tc.want) || !strings.Contains(errs, "reply was") {
			t.Fatalf("%q: exit %d\n%s\n%s", tc.reply.Content, code, out, errs)
		}
		code, out, _ = runCLI(t, "", "ask", "--index", idx, "--reader", srv.OpenAISpec("m"), "--json", "Is Etna active?")
		if code != 1 || !strings.Contains(out, `"reply_defect"`) {
			t.Fatalf("--json %q: exit %d\n%s", tc.reply.Content, code, out)
		}
	}
}

// TestAskMarksCachedReply: an answer from the LLM call cache says so, next
// to the original call's time.
func TestAskMarksCachedReply(t *testing.T) {
	useHashEmbedder(t)
	t.Setenv("CTXSEL_LLM_CACHE", t.TempDir())
	root := t.TempDir()
	docs := filepath.Join(root, "docs")
	os.MkdirAll(docs, 0o755)
	os.WriteFile(filepath.Join(docs, "volcano.txt"), []byte("Mount Etna is an active volcano on Sicily."), 0o644)
	idx := filepath.Join(root, "idx")
	if code, _, errs := runCLI(t, "", "index", "add", docs, "--index", idx); code != 0 {
		t.Fatalf("add: %s", errs)
	}
	srv := llmtest.New(func(llmtest.Call) llmtest.Reply { return llmtest.Reply{Content: "Yes"} })
	defer srv.Close()
	args := []string{"ask", "--index", idx, "--reader", srv.OpenAISpec("m"), "--prompt=false", "Is Etna active?"}
	code, first, errs := runCLI(t, "", args...)
	if code != 0 || strings.Contains(first, "(cached)") {
		t.Fatalf("first: exit %d\n%s\n%s", code, first, errs)
	}
	code, second, errs := runCLI(t, "", args...)
	if code != 0 || !strings.Contains(second, "(cached) the call took") || srv.Requests() != 1 {
		t.Fatalf("second (%d requests): exit %d\n%s\n%s", srv.Requests(), code, second, errs)
	}
}
