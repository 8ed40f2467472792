package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctxsel/ctxsel/internal/termtext/termcheck"
	"github.com/ctxsel/ctxsel/llm/llmtest"
)

// terminal runs every command that prints text from documents, indexes or
// LLMs over a .jsonl whose text holds escape sequences, a file named with
// a newline and ESC, and a reader and picker that answer with them: no
// output may hold a raw control (issue 27). The serve log, written while
// an ask carried them in its query and in an LLM error, is checked too.
func (p *probe) terminal(ctx context.Context) {
	docs := filepath.Join(p.dir, "terminal-docs")
	os.MkdirAll(docs, 0o755)
	var jl strings.Builder
	for _, d := range [][2]string{
		{"etna" + termcheck.Hostile, "Mount Etna is an active volcano on Sicily. " + termcheck.Hostile + " Its eruptions are frequent."},
		{"bread", "Bread rises because yeast makes gas. \x1b[31mred\x1b[0m"},
	} {
		b, _ := json.Marshal(map[string]string{"id": d[0], "text": d[1]})
		jl.Write(append(b, '\n'))
	}
	os.WriteFile(filepath.Join(docs, "hostile.jsonl"), []byte(jl.String()), 0o644)
	os.WriteFile(filepath.Join(docs, "odd\nname\x1b[31m\u202e.txt"), []byte("The Moon has no atmosphere; Etna is a volcano."), 0o644)
	idx := filepath.Join(p.dir, "terminal-idx")
	answer := "Etna. " + termcheck.Hostile
	p.llm.SetReplier(func(c llmtest.Call) llmtest.Reply {
		if c.JSON { // the picker: a pick, then text after it (invalid, quoted in the fallback reason)
			return llmtest.Reply{Content: `{"rationale":"ok","ids":["0"]} trailing ` + termcheck.Hostile}
		}
		return llmtest.Reply{Content: answer}
	})
	defer p.llm.SetReplier(func(llmtest.Call) llmtest.Reply { return llmtest.Reply{Content: "Etna"} })

	q := "Is Etna a volcano?"
	reader := p.llm.OpenAISpec("m")
	data := filepath.Join(p.dir, "terminal-data.jsonl")
	h := termcheck.HostileJSON()
	os.WriteFile(data, []byte(`{"id":"q`+h+`","question":"Where is Etna?`+h+`","answers":["Sicily"],"passages":[{"id":"a`+h+`","text":"Etna is on Sicily.","gold":true},{"id":"b","text":"Bread `+h+`"}]}`+"\n"), 0o644)
	cands := `{"id":"a\u001b[2J","score":0.9,"text":"Etna is a volcano.\u001b]52;c;eA==\u0007"}` + "\n" + `{"id":"b\u202e","score":0.5,"text":"Bread rises."}` + "\n"
	type run struct {
		name, stdin string
		args        []string
	}
	runs := []run{
		{"index add", "", []string{"index", "add", "--index", idx, docs}},
		{"index ls", "", []string{"index", "ls", "--index", idx}},
		{"index ls --json", "", []string{"index", "ls", "--index", idx, "--json"}},
		{"index stats", "", []string{"index", "stats", "--index", idx}},
		{"index verify", "", []string{"index", "verify", "--index", idx}},
		{"ask", "", []string{"ask", "--index", idx, "--reader", reader, "--strategy", "topk:k=3", q}},
		{"ask --json", "", []string{"ask", "--index", idx, "--reader", reader, "--strategy", "topk:k=3", "--json", q}},
		{"ask with a picker", "", []string{"ask", "--index", idx, "--reader", reader, "--picker", reader, "--strategy", "picker:fallback=topk", "--prompt=false", q}},
		{"ask --llm=false", "", []string{"ask", "--index", idx, "--llm=false", q}},
		{"select with a picker", cands, []string{"select", "--strategy", "picker:fallback=topk", "--picker", reader, "--question", q}},
		{"eval", "", []string{"eval", "--data", data, "--scorer", "bm25", "--strategies", "topk:k=1,adaptivek"}},
		{"index rm", "", []string{"index", "rm", "--index", idx, "nope" + termcheck.Hostile}},
	}
	for _, r := range runs {
		p.count("terminal")
		out, err := p.cli(ctx, r.stdin, r.args...)
		if code := exitCode(err); code != 0 && !(r.name == "index rm" && code == 2) {
			p.fail("terminal %s: exit %d: %s", r.name, code, short(strings.ToValidUTF8(out, "?")))
		}
		if c := termcheck.RawControl(out); c != "" {
			p.fail("terminal %s: %s in its output", r.name, c)
		}
	}
	// An LLM error quoting escape sequences, through the CLI and serve.
	p.count("terminal")
	p.llm.Script(llmtest.Fault{Status: 500, Message: "upstream " + termcheck.Hostile})
	out, err := p.cli(ctx, "", "ask", "--index", idx, "--reader", reader, "--llm-retries=0", "--prompt=false", q)
	if exitCode(err) != 1 {
		p.fail("terminal ask, LLM failing: exit %d", exitCode(err))
	}
	if c := termcheck.RawControl(out); c != "" {
		p.fail("terminal ask, LLM failing: %s in its output", c)
	}
	p.llm.Script(llmtest.Fault{Status: 500, Message: "upstream " + termcheck.Hostile})
	p.post(ctx, "terminal", "/v1/ask", "application/json", `{"query":"`+q+h+`","strategy":"topk:k=2"}`, true)
	if c := termcheck.RawControl(p.serveLog.String()); c != "" {
		p.fail("terminal: the serve log holds %s", c)
	}
}
