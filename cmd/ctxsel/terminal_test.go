package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel/llm/llmtest"
)

// hostile is text a document or a model may hold that a terminal acts on:
// an OSC 52 clipboard write, a screen clear and home, BEL, a C1 CSI that
// turns text red, a bidi override and isolate, DEL, a lone CR.
const hostile = "\x1b]52;c;cHduZWQ=\x07\x1b[2J\x1b[H\x07\u009b31m\u202eevil\u2066x\u2069\x7f\rspoof"

// rawControl names the first byte or rune in out that a terminal could act
// on: a C0 control other than \n and \t (a CR only before a LF), DEL, a
// C1 control, a bidi embedding, override or isolate, or a byte that is not
// UTF-8. "" when there is none.
func rawControl(out string) string {
	for i := 0; i < len(out); {
		r, size := utf8.DecodeRuneInString(out[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return "a byte that is not UTF-8 in " + snippetAround(out, i)
		case r == '\n' || r == '\t' || r == '\r' && strings.HasPrefix(out[i+1:], "\n"):
		case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069:
			return fmt.Sprintf("raw %U in %s", r, snippetAround(out, i))
		}
		i += size
	}
	return ""
}

func snippetAround(s string, i int) string {
	return strings.ToValidUTF8(strings.NewReplacer("\x1b", "ESC").Replace(s[max(0, i-40):min(len(s), i+40)]), "?")
}

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
		{"etna" + hostile, "Mount Etna is an active volcano on Sicily. " + hostile + " Its eruptions are frequent."},
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

	answer := "Etna. " + hostile
	pickerReply := `{"rationale":"ok","ids":["0"]} trailing ` + hostile
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
			if c := rawControl(out); c != "" {
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
	if !ids[filepath.Join(docs, oddName)] || !ids["etna"+hostile] {
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
	os.WriteFile(data, []byte(`{"id":"q`+hostileJSON()+`","question":"Where is Etna?`+hostileJSON()+`","answers":["Sicily"],"passages":[{"id":"a`+hostileJSON()+`","text":"Etna is on Sicily.","gold":true},{"id":"b","text":"Bread `+hostileJSON()+`"}]}`+"\n"), 0o644)
	run("eval", 0, "eval", "--data", data, "--scorer", "bm25", "--strategies", "topk:k=1,adaptivek")

	// an LLM error quoting escape sequences, and damage listing the ids
	srv.Script(llmtest.Fault{Status: 500, Message: "upstream " + hostile})
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

// hostileJSON is hostile as the inside of a JSON string.
func hostileJSON() string {
	b, _ := json.Marshal(hostile)
	return string(b[1 : len(b)-1])
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
