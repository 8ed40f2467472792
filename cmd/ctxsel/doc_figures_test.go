package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/embed/embedders"
	"github.com/ctxsel/ctxsel/server"
)

// TestServiceDocFigures runs each `curl … /v1/select` and `curl …
// /v1/rerank` example of docs/service.md against a server built as `ctxsel
// serve` builds it (use-lite, the evidence selector) and checks that every
// figure the JSON block after it shows — each "key": number, "key": [spans]
// and "key": "text" whole (not shortened with …) — is what the server
// answers now: the documented output cannot drift from the code.
func TestServiceDocFigures(t *testing.T) {
	if testing.Short() {
		t.Skip("embeds with use-lite")
	}
	t.Setenv(embedders.EnvCache, "off")
	doc, err := os.ReadFile("../../docs/service.md")
	if err != nil {
		t.Fatal(err)
	}
	b, err := serverBackends(context.Background(), "serve", "use-lite", "", askReader{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.done()
	src := serverSources(b.indexEmb, b.emb, nil)
	defer src.Close()
	srv, err := server.New(server.DefaultConfig(), server.Options{Embedder: b.emb, Logger: slog.New(slog.DiscardHandler), SelectorDeps: src.deps})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	examples := curlExamples(string(doc))
	if len(examples) < 2 {
		t.Fatalf("found %d curl examples with output in docs/service.md; the parser lost them", len(examples))
	}
	for _, ex := range examples {
		res, err := http.Post(ts.URL+ex.path, "application/json", strings.NewReader(ex.body))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Errorf("docs/service.md:%d: %s: %d %s", ex.line, ex.path, res.StatusCode, got)
			continue
		}
		figures := documentedFigures(ex.output)
		if len(figures) < 5 {
			t.Errorf("docs/service.md:%d: only %d figures read from the output block", ex.line, len(figures))
		}
		for _, f := range figures {
			if !strings.Contains(string(got), f) {
				t.Errorf("docs/service.md:%d: %s documents %s; the server now answers:\n%s", ex.line, ex.path, f, got)
			}
		}
	}
}

type curlExample struct {
	line               int
	path, body, output string
}

// curlExamples finds each fenced `curl -s localhost:8080/PATH … -d '…'`
// block and the ```json block that follows it.
func curlExamples(doc string) []curlExample {
	var out []curlExample
	// Between the two blocks: prose, with `code` but no fence.
	re := regexp.MustCompile("(?s)```sh\\n(curl -s localhost:8080(/v1/(?:select|rerank)) .*?)```\\n(?:[^`]|`[^`])*?```json\\n(.*?)```")
	for _, m := range re.FindAllStringSubmatchIndex(doc, -1) {
		cmd, path, output := doc[m[2]:m[3]], doc[m[4]:m[5]], doc[m[6]:m[7]]
		i := strings.Index(cmd, "-d ")
		if i < 0 {
			continue
		}
		out = append(out, curlExample{line: strings.Count(doc[:m[0]], "\n") + 1, path: path, body: shellWord(cmd[i+3:]), output: output})
	}
	return out
}

// shellWord reads one shell word of s: single- and double-quoted parts and
// bare characters up to unquoted white space ('"'"' is a quote).
func shellWord(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'', '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return b.String() + s[i+1:]
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case ' ', '\n', '\t':
			return b.String()
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// documentedFigures lists the output block's figures in the server's
// compact JSON: "key":number, "key":[[a,b],…] and "key":"text" (texts
// shortened with … are left out).
func documentedFigures(block string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`"(\w+)": (-?[0-9][0-9.e+-]*)`).FindAllStringSubmatch(block, -1) {
		out = append(out, `"`+m[1]+`":`+m[2])
	}
	for _, m := range regexp.MustCompile(`"(\w+)": (\[[\[\]0-9, ]*\])`).FindAllStringSubmatch(block, -1) {
		out = append(out, `"`+m[1]+`":`+strings.ReplaceAll(m[2], " ", ""))
	}
	for _, m := range regexp.MustCompile(`"(\w+)": ("(?:[^"\\]|\\.)*")`).FindAllStringSubmatch(block, -1) {
		if !strings.Contains(m[2], "…") {
			out = append(out, `"`+m[1]+`":`+m[2])
		}
	}
	return out
}

// TestAskDocFigures runs the `ctxsel ask` variant docs/ask.md quotes the Why
// line of ("With `FLAGS`, Why reads: `…`") on the question and book it is
// quoted for, and checks each quoted piece (split at "…") is in the output.
// Dense scores do not depend on the other documents, and the two best
// chunks are The Time Machine's, so indexing that book alone reproduces
// the quoted cut in seconds rather than the 15 novels' minute.
func TestAskDocFigures(t *testing.T) {
	if testing.Short() {
		t.Skip("embeds a novel with use-lite")
	}
	book := "../../../shared/data/lara/datasets/32k/book/The Time Machine.txt"
	raw, err := os.ReadFile(book)
	if err != nil {
		t.Fatalf("test data: %v", err)
	}
	doc, err := os.ReadFile("../../docs/ask.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)With `([^`]*)`, Why reads: `([^`]*)`").FindStringSubmatch(string(doc))
	q := regexp.MustCompile(`(?m)^\./ctxsel ask "([^"]*)"`).FindStringSubmatch(string(doc))
	if m == nil || q == nil {
		t.Fatal("docs/ask.md no longer quotes a Why line for its question: update this test with it")
	}
	for _, k := range []string{"CTXSEL_LLM_MODEL", "CTXSEL_LLM_BASE_URL", "CTXSEL_LLM_PROVIDER", "OLLAMA_HOST"} {
		t.Setenv(k, "")
	}
	t.Setenv(embedders.EnvCache, "off")
	t.Setenv(envIndex, "")
	dir := t.TempDir()
	docs := filepath.Join(dir, "book")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(docs, "The Time Machine.txt"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	idx := filepath.Join(dir, "idx")
	if code, _, errs := runCLI(t, "", "index", "add", "--index", idx, docs); code != 0 {
		t.Fatalf("index add: %s", errs)
	}
	args := append([]string{"ask", "--index", idx, "--llm=false", "--prompt=false"}, strings.Fields(m[1])...)
	code, out, errs := runCLI(t, "", append(args, q[1])...)
	if code != 0 {
		t.Fatalf("ask %v: exit %d: %s", m[1], code, errs)
	}
	quoted := strings.Join(strings.Fields(m[2]), " ") // the doc wraps lines
	for _, piece := range strings.Split(quoted, "…") {
		if piece = strings.Trim(piece, " ;"); piece != "" && !strings.Contains(out, piece) {
			t.Errorf("docs/ask.md quotes %q for `ctxsel ask %s`; the Why line now reads:\n%s", piece, m[1], whyLine(out))
		}
	}
}

func whyLine(out string) string {
	for line := range strings.Lines(out) {
		if strings.HasPrefix(line, "Why:") {
			return line
		}
	}
	return out
}
