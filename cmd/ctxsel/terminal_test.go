package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/internal/termtext/termcheck"
	"github.com/ctxsel/ctxsel/llm/llmtest"
)

// TestNoRawControlsReachTheTerminal runs the commands that print text from
// documents, indexes and LLMs over a .jsonl whose text holds escape
// sequences, a file whose name holds a newline and ESC, and a reader and a
// picker that answer with escape sequences: nothing a terminal acts on is
// printed raw, text output shows the escapes, and JSON output decodes to
// the exact values.
func TestNoRawControlsReachTheTerminal(t *testing.T) {
	useHashEmbedder(t)
	t.Setenv("CTXSEL_LLM_CACHE", "off")
	root := t.TempDir()
	docs := filepath.Join(root, "docs")
	os.MkdirAll(docs, 0o755)
	var jl bytes.Buffer
	for _, d := range []struct{ id, text string }{
		{"etna" + termcheck.Hostile, "Mount Etna is an active volcano on Sicily. " + termcheck.Hostile + " Its eruptions are frequent."},
		{"bread", "Bread rises because yeast makes gas. \x1b[31mred\x1b[0m"},
	} {
		b, _ := json.Marshal(map[string]string{"id": d.id, "text": d.text})
		jl.Write(append(b, '\n'))
	}
	if !bytes.Contains(jl.Bytes(), []byte(`\u001b]52;c;`)) {
		t.Fatalf("the .jsonl does not hold a JSON-escaped ESC: %s", jl.Bytes())
	}
	os.WriteFile(filepath.Join(docs, "hostile.jsonl"), jl.Bytes(), 0o644)
	oddName := "odd\nname\x1b[31m\u202e.txt"
	os.WriteFile(filepath.Join(docs, oddName), []byte("The Moon has no atmosphere; Etna is a volcano."), 0o644)
	idx := filepath.Join(root, "idx")

	answer := "Etna. " + termcheck.Hostile
	pickerReply := `{"rationale":"ok","ids":["0"]} trailing ` + termcheck.Hostile
	srv := llmtest.New(func(c llmtest.Call) llmtest.Reply {
		if c.JSON { // the picker asks for a JSON object
			return llmtest.Reply{Content: pickerReply}
		}
		return llmtest.Reply{Content: answer}
	})
	defer srv.Close()

	check := func(what string, code, want int, stdout, stderr string) {
		t.Helper()
		if code != want {
			t.Fatalf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", what, code, want, stdout, stderr)
		}
		for name, out := range map[string]string{"stdout": stdout, "stderr": stderr} {
			if c := termcheck.RawControl(out); c != "" {
				t.Errorf("%s: %s: %s", what, name, c)
			}
		}
	}
	run := func(what string, want int, args ...string) (string, string) {
		t.Helper()
		code, stdout, stderr := runCLI(t, "", args...)
		check(what, code, want, stdout, stderr)
		return stdout, stderr
	}

	run("index add", 0, "index", "add", "--index", idx, docs)
	out, _ := run("index ls", 0, "index", "ls", "--index", idx)
	// each document on its own line, its id escaped on it
	if !strings.Contains(out, `odd\nname\u001b[31m\u202e.txt`) || !strings.Contains(out, `etna\u001b]52;c;`) || strings.Count(out, "\n") != 5 {
		t.Errorf("index ls:\n%s", out)
	}
	out, _ = run("index ls --json", 0, "index", "ls", "--index", idx, "--json")
	var listed []struct{ ID string }
	if err := json.Unmarshal([]byte(out), &listed); err != nil {
		t.Fatalf("index ls --json: %v\n%s", err, out)
	}
	ids := map[string]bool{}
	for _, d := range listed {
		ids[d.ID] = true
	}
	if !ids[filepath.Join(docs, oddName)] || !ids["etna"+termcheck.Hostile] {
		t.Errorf("index ls --json does not give the exact ids: %v", listed)
	}
	run("index stats", 0, "index", "stats", "--index", idx)
	run("index verify", 0, "index", "verify", "--index", idx)

	q := "Is Etna a volcano?"
	out, _ = run("ask", 0, "ask", "--index", idx, "--reader", srv.OpenAISpec("m"), "--strategy", "topk:k=3", q)
	if !strings.Contains(out, `\u001b]52;c;cHduZWQ=\u0007`) || !strings.Contains(out, `\u202eevil`) {
		t.Errorf("ask does not show the escapes:\n%s", out)
	}
	out, _ = run("ask --json", 0, "ask", "--index", idx, "--reader", srv.OpenAISpec("m"), "--strategy", "topk:k=3", "--json", q)
	var a struct {
		Reply struct{ Content string } `json:"reply"`
	}
	if err := json.Unmarshal([]byte(out), &a); err != nil || a.Reply.Content != answer {
		t.Errorf("ask --json: %v; reply %q, want %q", err, a.Reply.Content, answer)
	}
	out, _ = run("ask with a picker", 0, "ask", "--index", idx, "--reader", srv.OpenAISpec("m"), "--picker", srv.OpenAISpec("p"),
		"--strategy", "picker:fallback=topk", "--prompt=false", q)
	if !strings.Contains(out, "picker output invalid") || !strings.Contains(out, `\u001b]52`) {
		t.Errorf("the picker's fallback reason is not shown escaped:\n%s", out)
	}

	// select: the explanation carries the picker's reason; ids are exact
	cands := `{"id":"a\u001b[2J","score":0.9,"text":"Etna is a volcano.\u001b]52;c;eA==\u0007"}` + "\n" +
		`{"id":"b\u202e","score":0.5,"text":"Bread rises."}` + "\n"
	code, out, errs := runCLI(t, cands, "select", "--strategy", "picker:fallback=topk", "--picker", srv.OpenAISpec("p"), "--question", q)
	check("select", code, 0, out, errs)
	var sel struct {
		IDs         []string
		Explanation struct{ Reason string }
	}
	if err := json.Unmarshal([]byte(out), &sel); err != nil || !strings.Contains(sel.Explanation.Reason, "\x1b]52") || len(sel.IDs) == 0 || sel.IDs[0] != "a\x1b[2J" {
		t.Errorf("select: %v: %+v\n%s", err, sel, out)
	}

	data := filepath.Join(root, "data.jsonl")
	os.WriteFile(data, []byte(`{"id":"q`+termcheck.HostileJSON()+`","question":"Where is Etna?`+termcheck.HostileJSON()+`","answers":["Sicily"],"passages":[{"id":"a`+termcheck.HostileJSON()+`","text":"Etna is on Sicily.","gold":true},{"id":"b","text":"Bread `+termcheck.HostileJSON()+`"}]}`+"\n"), 0o644)
	run("eval", 0, "eval", "--data", data, "--scorer", "bm25", "--strategies", "topk:k=1,adaptivek")

	// an LLM error quoting escape sequences, and damage listing the ids
	srv.Script(llmtest.Fault{Status: 500, Message: "upstream " + termcheck.Hostile})
	run("ask, LLM failing", 1, "ask", "--index", idx, "--reader", srv.OpenAISpec("m"), "--llm-retries=0", "--prompt=false", q)
	segs, _ := filepath.Glob(filepath.Join(idx, "seg-*"))
	for _, f := range segs {
		b, _ := os.ReadFile(f)
		b[len(b)/2] ^= 0x10
		os.WriteFile(f, b, 0o644)
	}
	run("index verify, damaged", 1, "index", "verify", "--index", idx)
	out, _ = run("index repair", 0, "index", "repair", "--index", idx)
	if !strings.Contains(out, `$'`) {
		t.Errorf("index repair does not quote the odd file name for the shell:\n%s", out)
	}
}

func TestQuoteArgsEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"plain":           "plain",
		"with space":      "'with space'",
		"it's":            `'it'\''s'`,
		"new\nline":       `$'new\nline'`,
		"esc\x1b[2J it's": `$'esc\u001b[2J it\'s'`,
		"back\\slash\x07": `$'back\\slash\u0007'`,
	} {
		if got := quoteArgs([]string{in})[0]; got != want {
			t.Errorf("quoteArgs(%q) = %s, want %s", in, got, want)
		}
	}
}
