package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/embed/embedders"
)

var updateAskExamples = flag.Bool("update-ask-examples", false, "rewrite the output blocks of docs/ask.md's \"Chat logs and tables\" from what ask prints now")

// askExample is one `index add` + `ask` block of docs/ask.md and the output
// block after it.
type askExample struct {
	line           int
	add, ask       []string // ctxsel's arguments, as documented
	output         string
	outFrom, outTo int // the output block's byte range in the page
}

// askExamples finds, in the page's "## Chat logs and tables" section, each
// ```sh block holding one `ctxsel index add` and one `ctxsel ask`, and
// the ````text block that follows it.
func askExamples(doc string) []askExample {
	sec := strings.Index(doc, "\n## Chat logs and tables\n")
	if sec < 0 {
		return nil
	}
	re := regexp.MustCompile("(?s)```sh\\n(.*?)```\\n(?:[^`]|`[^`])*?````text\\n(.*?)````\\n")
	var out []askExample
	for _, m := range re.FindAllStringSubmatchIndex(doc[sec:], -1) {
		ex := askExample{line: strings.Count(doc[:sec+m[0]], "\n") + 1, output: doc[sec+m[4] : sec+m[5]], outFrom: sec + m[4], outTo: sec + m[5]}
		for _, c := range shellCommands(doc[sec+m[2] : sec+m[3]]) {
			words, ok := ctxselArgs(c.words)
			switch {
			case !ok:
			case len(words) > 2 && words[0] == "index" && words[1] == "add":
				ex.add = words
			case len(words) > 1 && words[0] == "ask":
				ex.ask = words
			}
		}
		if ex.add != nil && ex.ask != nil {
			out = append(out, ex)
		}
	}
	return out
}

// TestAskExampleDocs runs each chat-log and table example of docs/ask.md
// as documented (from the repository root, the index in a temporary
// directory, no LLM) and checks the page shows exactly what ask prints,
// and that what it shows is what the page says of it: every kept line of
// the chat carries its turn's "[time] Name:", and the kept table row
// arrives under its table's header row and rule, also from a chunk the
// index cut inside the table. -update-ask-examples
// rewrites the output blocks (after a model or packing change), the
// claims are checked all the same.
func TestAskExampleDocs(t *testing.T) {
	if testing.Short() {
		t.Skip("embeds with use-lite")
	}
	for _, k := range []string{"CTXSEL_LLM_MODEL", "CTXSEL_LLM_BASE_URL", "CTXSEL_LLM_PROVIDER", "OLLAMA_HOST"} {
		t.Setenv(k, "")
	}
	t.Setenv(embedders.EnvCache, "off")
	t.Setenv(envIndex, "")
	page := "../../docs/ask.md"
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	examples := askExamples(doc)
	if len(examples) != 4 {
		t.Fatalf("found %d index add + ask examples with output in docs/ask.md's \"Chat logs and tables\"; want the chat log, the table, the table an index cut and the report's statement it cut", len(examples))
	}
	tmp := t.TempDir()
	t.Chdir("../..") // paths as a reader runs them, and as ask prints them
	got := make([]string, len(examples))
	for i, ex := range examples {
		idx := filepath.Join(tmp, "idx"+string(rune('0'+i)))
		add, ask := withIndex(ex.add, idx), withIndex(ex.ask, idx)
		if code, _, errs := runCLI(t, "", add...); code != 0 {
			t.Fatalf("docs/ask.md:%d: index add: %s", ex.line, errs)
		}
		code, out, errs := runCLI(t, "", ask...)
		if code != 0 {
			t.Fatalf("docs/ask.md:%d: ask: exit %d: %s", ex.line, code, errs)
		}
		got[i] = strings.TrimRight(out, "\n")
		if !*updateAskExamples && got[i] != strings.TrimRight(ex.output, "\n") {
			t.Errorf("docs/ask.md:%d: the page shows another output than `ctxsel %s` prints now (go test -run TestAskExampleDocs -update-ask-examples ./cmd/ctxsel rewrites it; then read the prose around it):\n%s", ex.line, strings.Join(ex.ask, " "), got[i])
		}
	}
	checkChatExample(t, got[0])
	checkTableExample(t, got[1])
	checkCutTableExample(t, got[2])
	checkCutStatementExample(t, got[3])
	if *updateAskExamples {
		for i := len(examples) - 1; i >= 0; i-- {
			doc = doc[:examples[i].outFrom] + got[i] + "\n" + doc[examples[i].outTo:]
		}
		if err := os.WriteFile("docs/ask.md", []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// withIndex is a documented command with its --index value replaced.
func withIndex(words []string, idx string) []string {
	out := append([]string(nil), words...)
	for i := range out {
		if out[i] == "--index" && i+1 < len(out) {
			out[i+1] = idx
		}
	}
	return out
}

// sentLines are the passage lines ask prints ("    | …"), each
// passage's first (its title) left out.
func sentLines(out string) []string {
	var lines []string
	first := false
	for l := range strings.Lines(out) {
		l = strings.TrimRight(l, "\n")
		if strings.HasPrefix(l, "[") {
			first = true // a passage's line: its title comes next
			continue
		}
		if s, ok := strings.CutPrefix(l, "    | "); ok {
			if !first {
				lines = append(lines, s)
			}
			first = false
		}
	}
	return lines
}

var chatPrefix = regexp.MustCompile(`^(?:… )?\[\d{4}-\d\d-\d\d \d\d:\d\d\] \p{Lu}\p{L}+: \S`)

func checkChatExample(t *testing.T, out string) {
	t.Helper()
	lines := sentLines(out)
	if len(lines) < 3 {
		t.Fatalf("the chat example sends %d lines:\n%s", len(lines), out)
	}
	src, err := os.ReadFile("docs/examples/support/helpdesk-chat-2024-05.txt")
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range lines {
		// a turn's continuation line comes right after its turn's line,
		// as in the document
		cont := i > 0 && chatPrefix.MatchString(lines[i-1]) &&
			strings.Contains(string(src), strings.TrimPrefix(lines[i-1], "… ")+"\n"+l+"\n")
		if !chatPrefix.MatchString(l) && !cont {
			t.Errorf("the chat example sends a line without its turn's [time] Name: %q", l)
		}
	}
}

func checkTableExample(t *testing.T, out string) {
	t.Helper()
	lines := sentLines(out)
	header := false // the lines since the last header row and rule
	for i, l := range lines {
		switch {
		case !strings.HasPrefix(l, "|"):
			header = false
		case strings.HasPrefix(l, "|-"):
		case i+1 < len(lines) && strings.HasPrefix(lines[i+1], "|-"):
			header = true
		case !header:
			t.Errorf("the table example sends the row %q without its table's header row and rule:\n%s", l, out)
		}
	}
	hdr := slices.Index(lines, "| Plot | Size | Yearly fee | Water included | Typical wait |")
	row := slices.Index(lines, "| Half plot | 125 m² | €120 | yes | 1 year |")
	if hdr < 0 || row < hdr+2 || !strings.HasPrefix(lines[hdr+1], "|---") {
		t.Errorf("the table example does not send the half plot's row under its table's header and rule:\n%s", out)
	}
}

// checkCutStatementExample: in the report whose balance sheet the index
// cut into chunks, the asked row is sent, and from a chunk after the
// document's first, under its statement's column header.
func checkCutStatementExample(t *testing.T, out string) {
	t.Helper()
	for _, block := range regexp.MustCompile(`(?m)^\[\d+\] `).Split(out, -1)[1:] {
		lines := sentLines(block)
		row := slices.IndexFunc(lines, func(l string) bool {
			return strings.HasPrefix(strings.TrimSpace(l), "Revolving credit facility") && strings.Contains(l, "3,500")
		})
		if row < 0 {
			continue
		}
		if strings.Contains(block, "bytes 0–") {
			continue // the document's first chunk holds its own header
		}
		h := slices.IndexFunc(lines, func(l string) bool {
			return strings.HasPrefix(strings.TrimSpace(l), "March 31,") && strings.HasSuffix(l, "December 31,")
		})
		y := slices.IndexFunc(lines, func(l string) bool { return strings.Join(strings.Fields(l), " ") == "2024 2023" })
		if h < 0 || y != h+1 || y > row {
			t.Errorf("the cut statement example sends the revolving credit facility's row without its column header:\n%s", block)
		} else if year, figure := strings.Index(lines[y], "2024")+4, strings.Index(lines[row], "3,500")+5; year != figure {
			// the document right-aligns both at one column: sent with its
			// layout, the figure stands under its year
			t.Errorf("the cut statement example sends 3,500 ending at column %d under 2024 ending at %d:\n%s", figure, year, block)
		}
		return
	}
	t.Errorf("the cut statement example does not send the revolving credit facility's row from a chunk after the first:\n%s", out)
}

// checkCutTableExample: in the manual whose error table the index cut
// into chunks, every row sent from any chunk arrives under the table's
// header row and rule and its section's heading, and the row asked about
// is sent.
func checkCutTableExample(t *testing.T, out string) {
	t.Helper()
	const hdr, rule, section = "| Code | Meaning | What to do |", "| --- | --- | --- |", "### 2.1 Error codes"
	passages, asked := 0, false
	for _, block := range regexp.MustCompile(`(?m)^\[\d+\] `).Split(out, -1)[1:] {
		lines := sentLines(block)
		at := slices.Index(lines, hdr)
		rows := false
		for i, l := range lines {
			if !strings.HasPrefix(l, "| E") {
				continue
			}
			rows = true
			if at < 0 || i < at+2 || lines[at+1] != rule || !slices.Contains(lines[:at], section) {
				t.Errorf("the cut table example sends the row %q without its section, header row and rule:\n%s", l, block)
			}
			asked = asked || strings.HasPrefix(l, "| E52 |")
		}
		if rows && !strings.Contains(block, "bytes 0–") {
			passages++ // a chunk after the document's first
		}
	}
	if passages == 0 || !asked {
		t.Errorf("the cut table example sends rows from %d chunks cut inside the table, the asked row: %v; want both:\n%s", passages, asked, out)
	}
}
