package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Every `ctxsel …` command in a fenced code block of README.md and docs/*.md
// names a real subcommand and only flags that subcommand defines, with
// values its flags accept: the line a reader pastes runs. A block that is
// deliberately not runnable (a removed command kept for the record) says so
// in its info string: ```sh not-runnable. Blocks in another language (json,
// python, js, go, text for output, …) hold no shell commands.
func TestDocumentedCommandsExist(t *testing.T) {
	files := []string{"../../README.md"}
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, docs...)
	total := 0
	for _, path := range files {
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		cmds := documentedCommands(string(text))
		if filepath.Base(path) == "README.md" && len(cmds) < 4 {
			t.Errorf("README.md shows %d ctxsel commands; the parser lost them (want the eval, select, ask and serve examples)", len(cmds))
		}
		for _, c := range cmds {
			total++
			if err := checkCommand(c.words); err != nil {
				t.Errorf("%s:%d: %s: %v", filepath.ToSlash(strings.TrimPrefix(path, "../../")), c.line, strings.Join(c.words, " "), err)
			}
		}
	}
	t.Logf("%d documented ctxsel commands checked in %d files", total, len(files))
}

// The checker itself: it refuses what it must refuse, and reads shell as a
// reader pastes it (continuations, quotes, comments, pipes, env prefixes).
func TestDocumentedCommandChecker(t *testing.T) {
	doc := "text\n\n```sh\n" +
		"CTXSEL_EMBED_CACHE=/tmp/c go run ./cmd/ctxsel eval --data x.jsonl \\\n    --pool 1000 --strategies 'topk:k=5,adaptivek'   # a comment --nope\n" +
		"printf '%s\\n' '{\"id\":\"a\"}' | ./ctxsel select --strategy band\n" +
		"ctxsel index add ../shared/data/lara --chunker tokens:size=600 &\n" +
		"ctxsel eval --no-such-flag\n" +
		"ctxsel frobnicate --data x\n" +
		"ctxsel index frob\n" +
		"ctxsel eval --pool many\n" +
		"ctxsel eval … --reader openai:m [--json out.json]\n" +
		"```\n\n```sh not-runnable\nctxsel eval --removed-flag\n```\n\n```json\n{\"command\": \"ctxsel\", \"args\": [\"--bogus\"]}\n```\n" +
		"```text\nctxsel serve: stopped after 2s\n```\n" +
		"    ctxsel eval --indented-blocks-are-not-read\n"
	cmds := documentedCommands(doc)
	var got []string
	for _, c := range cmds {
		got = append(got, fmt.Sprintf("%d %s", c.line, strings.Join(c.words, " ")))
	}
	want := []string{
		"4 eval --data x.jsonl --pool 1000 --strategies topk:k=5,adaptivek",
		"6 select --strategy band",
		"7 index add ../shared/data/lara --chunker tokens:size=600",
		"8 eval --no-such-flag",
		"9 frobnicate --data x",
		"10 index frob",
		"11 eval --pool many",
		"12 eval … --reader openai:m [--json out.json]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("commands read:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i, wantErr := range []string{"", "", "", "not defined: -no-such-flag", "unknown command", "unknown subcommand", "invalid value", ""} {
		err := checkCommand(cmds[i].words)
		switch {
		case wantErr == "" && err != nil:
			t.Errorf("%s: %v", want[i], err)
		case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
			t.Errorf("%s: got %v, want an error with %q", want[i], err, wantErr)
		}
	}
}

// .ci/run runs the README's test command, adding only -json (for the skip
// checker): what a newcomer runs is what CI runs.
func TestCIRunsTheReadmeTestCommand(t *testing.T) {
	goTest := func(path string, script string) []string {
		var found [][]string
		for _, c := range shellCommands(script) {
			if len(c.words) >= 2 && c.words[0] == "go" && c.words[1] == "test" && slices.Contains(c.words, "./...") {
				found = append(found, c.words) // the whole module's tests
			}
		}
		if len(found) != 1 {
			t.Fatalf("%s: want one go test command of ./..., found %d: %q", path, len(found), found)
		}
		return found[0]
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	lines := strings.Split(string(readme), "\n")
	for i := 0; i < len(lines); i++ {
		if m := fenceRE.FindStringSubmatch(lines[i]); m != nil {
			j := i + 1
			for j < len(lines) && strings.TrimSpace(lines[j]) != m[1] {
				j++
			}
			blocks = append(blocks, strings.Join(lines[i+1:min(j, len(lines))], "\n"))
			i = j
		}
	}
	want := goTest("README.md", strings.Join(blocks, "\n"))
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range goTest(".ci/run", string(ci)) {
		if w != "-json" {
			got = append(got, w)
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf(".ci/run runs %q; the README's test command is %q (CI may add only -json)", strings.Join(got, " "), strings.Join(want, " "))
	}
}

// docCommand is one ctxsel invocation found in a document: its words after
// the program (subcommand, flags, arguments) and the line it starts on.
type docCommand struct {
	line  int
	words []string
}

// notShell are fence languages whose blocks hold no shell commands.
var notShell = map[string]bool{"json": true, "jsonl": true, "python": true, "py": true, "js": true, "javascript": true,
	"ts": true, "typescript": true, "go": true, "yaml": true, "toml": true, "text": true, "txt": true, "csv": true,
	"svg": true, "html": true, "xml": true, "diff": true, "http": true, "mermaid": true}

var fenceRE = regexp.MustCompile("^\\s*(```+|~~~+)\\s*(.*)$")

// documentedCommands returns the ctxsel commands of a Markdown document's
// fenced shell blocks.
func documentedCommands(doc string) []docCommand {
	var cmds []docCommand
	lines := strings.Split(doc, "\n")
	for i := 0; i < len(lines); i++ {
		m := fenceRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		fence, info := m[1], strings.Fields(m[2])
		start := i + 1
		end := start
		for end < len(lines) && strings.TrimSpace(lines[end]) != fence {
			end++
		}
		i = end
		if len(info) > 0 && notShell[strings.ToLower(info[0])] {
			continue
		}
		skip := false
		for _, w := range info {
			skip = skip || w == "not-runnable"
		}
		if skip {
			continue
		}
		for _, c := range shellCommands(strings.Join(lines[start:min(end, len(lines))], "\n")) {
			if words, ok := ctxselArgs(c.words); ok {
				cmds = append(cmds, docCommand{line: start + c.line, words: words})
			}
		}
	}
	return cmds
}

// shellCommands splits a script into simple commands as a POSIX shell reads
// them: quotes, backslash escapes and line continuations, comments, and
// |, &, ;, ( ) between commands; redirections are dropped with their
// targets. line is the 1-based line of the script the command starts on.
func shellCommands(script string) []docCommand {
	var (
		cmds                          []docCommand
		words                         []string
		word                          strings.Builder
		inWord, single, double, redir bool
		line, cmdLine                 = 1, 1
		endWord                       func()
	)
	endWord = func() {
		if inWord {
			if redir {
				redir = false
			} else {
				if len(words) == 0 {
					cmdLine = line
				}
				words = append(words, word.String())
			}
		}
		word.Reset()
		inWord = false
	}
	endCmd := func() {
		endWord()
		if len(words) > 0 {
			cmds = append(cmds, docCommand{line: cmdLine, words: words})
		}
		words = nil
	}
	rs := []rune(script)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case single:
			if r == '\'' {
				single = false
			} else {
				word.WriteRune(r)
			}
			if r == '\n' {
				line++
			}
		case double:
			switch {
			case r == '"':
				double = false
			case r == '\\' && i+1 < len(rs) && strings.ContainsRune("\"\\$`\n", rs[i+1]):
				i++
				if rs[i] == '\n' {
					line++
				} else {
					word.WriteRune(rs[i])
				}
			default:
				word.WriteRune(r)
				if r == '\n' {
					line++
				}
			}
		case r == '\\' && i+1 < len(rs):
			i++
			if rs[i] == '\n' { // continuation
				line++
			} else {
				word.WriteRune(rs[i])
				inWord = true
			}
		case r == '\'':
			single, inWord = true, true
		case r == '"':
			double, inWord = true, true
		case r == '#' && !inWord:
			for i+1 < len(rs) && rs[i+1] != '\n' {
				i++
			}
		case r == '\n':
			endCmd()
			line++
		case r == ' ' || r == '\t':
			endWord()
		case r == '|' || r == '&' || r == ';' || r == '(' || r == ')':
			endCmd()
		case r == '<' || r == '>':
			if inWord && strings.Trim(word.String(), "0123456789") == "" { // 2> : the descriptor goes too
				word.Reset()
				inWord = false
			}
			endWord()
			for i+1 < len(rs) && (rs[i+1] == '>' || rs[i+1] == '&') { // >>, >&
				i++
			}
			redir = true
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	endCmd()
	return cmds
}

var envAssign = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// ctxselArgs returns the arguments of a simple command that runs ctxsel:
// `ctxsel …`, `./ctxsel …` (any path ending in /ctxsel) or
// `go run ./cmd/ctxsel …`, after any VAR=value prefixes.
func ctxselArgs(words []string) ([]string, bool) {
	for len(words) > 0 && (envAssign.MatchString(words[0]) || words[0] == "$") {
		words = words[1:]
	}
	if len(words) == 0 {
		return nil, false
	}
	if words[0] == "ctxsel" || strings.HasSuffix(words[0], "/ctxsel") {
		return words[1:], true
	}
	if len(words) >= 3 && words[0] == "go" && words[1] == "run" {
		for i := 2; i < len(words); i++ {
			if strings.HasPrefix(words[i], "-") {
				continue // go run's own flags
			}
			pkg := strings.SplitN(words[i], "@", 2)[0]
			if pkg == "./cmd/ctxsel" || pkg == "github.com/ctxsel/ctxsel/cmd/ctxsel" {
				return words[i+1:], true
			}
			return nil, false
		}
	}
	return nil, false
}

// flagCapture is a flagSetRecorder: the first flag set a command makes.
type flagCapture struct{ fs *flag.FlagSet }

func (c *flagCapture) Write(p []byte) (int, error) { return len(p), nil }
func (c *flagCapture) recordFlagSet(fs *flag.FlagSet) {
	if c.fs == nil {
		c.fs = fs
	}
}

// flagSetOf returns the flag set of the (sub)command that args name — got
// by running it with -h, which parses nothing else and runs nothing — and
// the words after the command's name.
func flagSetOf(args []string) (*flag.FlagSet, []string, error) {
	if len(args) == 0 {
		return nil, nil, errors.New("no command")
	}
	try := func(path ...string) *flag.FlagSet {
		c := &flagCapture{}
		run(context.Background(), append(path, "-h"), strings.NewReader(""), io.Discard, c)
		return c.fs
	}
	// A command with its own flags (eval, ask, …), or a group's default
	// subcommand reached by a flag (train --data … is train band).
	fs := try(args[0])
	if fs != nil && (len(args) == 1 || strings.HasPrefix(args[1], "-") || fs.Name() == args[0]) {
		return fs, args[1:], nil
	}
	// A group's subcommand (index add, train band, export grpo, help eval).
	if len(args) >= 2 && !strings.HasPrefix(args[1], "-") {
		if sub := try(args[0], args[1]); sub != nil {
			return sub, args[2:], nil
		}
	}
	var errb strings.Builder
	run(context.Background(), args[:1], strings.NewReader(""), io.Discard, &errb)
	if fs == nil && strings.Contains(errb.String(), "unknown command") {
		return nil, nil, fmt.Errorf("unknown command %q", args[0])
	}
	sub := ""
	if len(args) >= 2 {
		sub = args[1]
	}
	return nil, nil, fmt.Errorf("unknown subcommand %q of %q", sub, args[0])
}

// checkCommand parses a documented command's words with the real flag set
// of the subcommand they name, values included. Flags may come before,
// between or after the arguments (as ask and index take them); "…" and
// "..." stand for elided arguments and "[--flag value]" for optional ones.
func checkCommand(words []string) error {
	if len(words) == 0 {
		return nil // bare ctxsel prints its usage
	}
	fs, rest, err := flagSetOf(words)
	if err != nil {
		return err
	}
	var args []string
	optional := false
	for _, w := range rest {
		if w == "…" || w == "..." {
			continue
		}
		if strings.HasPrefix(w, "[-") {
			w, optional = w[1:], true
		}
		if optional && strings.HasSuffix(w, "]") {
			w, optional = strings.TrimSuffix(w, "]"), false
		}
		args = append(args, w)
	}
	fs.SetOutput(io.Discard)
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil
			}
			return err
		}
		args = fs.Args()
		if len(args) > 0 {
			args = args[1:] // a positional argument; flags may follow it
		}
	}
	return nil
}
