// Command skipcheck reads `go test -json` on standard input, prints what
// plain `go test` would (one line a package, the output of failing tests,
// build errors), and fails when a test of the must-run list did not pass:
// skipped, absent, or failed. CI runs it so that it cannot pass by skipping
// a test whose prerequisite (../shared, chromium, …) is missing.
//
//	go test -race -json ./... | go run ./internal/cmd/skipcheck .ci/must-run.txt
//
// The list holds one "PACKAGE TEST" a line (PACKAGE an import path, or
// ./dir relative to the module; TEST a test or Test/Subtest); # starts a
// comment. The verdict comes just before the last package line, so the output
// still ends as go test's does.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go test -json ./... | skipcheck MUST_RUN_FILE")
		os.Exit(2)
	}
	list, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "skipcheck:", err)
		os.Exit(2)
	}
	module, err := modulePath("go.mod")
	if err != nil {
		fmt.Fprintln(os.Stderr, "skipcheck:", err)
		os.Exit(2)
	}
	must, err := parseList(string(list), module)
	if err != nil {
		fmt.Fprintf(os.Stderr, "skipcheck: %s: %v\n", os.Args[1], err)
		os.Exit(2)
	}
	ok, err := check(os.Stdin, os.Stdout, must)
	if err != nil {
		fmt.Fprintln(os.Stderr, "skipcheck:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

// test names one test of one package.
type test struct{ pkg, name string }

func (t test) String() string { return t.pkg + " " + t.name }

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string // build-output events
}

func modulePath(gomod string) (string, error) {
	b, err := os.ReadFile(gomod)
	if err != nil {
		return "", fmt.Errorf("module path: %w", err)
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	return "", fmt.Errorf("module path: no module line in %s", gomod)
}

func parseList(text, module string) ([]test, error) {
	var out []test
	for i, line := range strings.Split(text, "\n") {
		line, _, _ = strings.Cut(line, "#")
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 || !strings.HasPrefix(f[1], "Test") {
			return nil, fmt.Errorf("line %d: want PACKAGE TestName, got %q", i+1, strings.TrimSpace(line))
		}
		pkg := f[0]
		if pkg == "." || strings.HasPrefix(pkg, "./") {
			pkg = path.Join(module, pkg)
		}
		out = append(out, test{pkg, f[1]})
	}
	if len(out) == 0 {
		return nil, errors.New("no tests listed")
	}
	return out, nil
}

// check copies the stream to w as plain go test output and reports whether
// every must-run test passed.
func check(r io.Reader, w io.Writer, must []test) (bool, error) {
	status := map[test]string{}    // last of pass, fail, skip
	outputs := map[test][]string{} // a test's output, printed if it fails
	var held string                // the last package line, printed last
	emit := func(s string) {
		if held != "" {
			fmt.Fprint(w, held)
		}
		held = s
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			emit(string(line) + "\n") // not JSON: go vet or the go command talking
			continue
		}
		t := test{e.Package, e.Test}
		switch e.Action {
		case "build-output":
			emit(e.Output)
		case "output":
			if e.Test != "" {
				outputs[t] = append(outputs[t], e.Output)
				continue
			}
			// Package lines: "ok  \tpkg\t1.2s", "FAIL\tpkg", "?   \tpkg\t[no test files]";
			// the bare PASS of a package is left out, as plain go test does.
			if e.Output != "PASS\n" && !strings.HasPrefix(e.Output, "=== ") {
				emit(e.Output)
			}
		case "pass", "skip":
			if e.Test != "" {
				status[t] = e.Action
				if e.Action == "pass" {
					delete(outputs, t)
				}
			}
		case "fail":
			if e.Test != "" {
				status[t] = e.Action
				for _, o := range outputs[t] {
					if !strings.HasPrefix(strings.TrimSpace(o), "=== ") {
						emit(o)
					}
				}
				delete(outputs, t)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return false, fmt.Errorf("reading go test -json: %w", err)
	}
	// The verdict goes before the last package line, so the output ends as
	// go test's does.
	last := held
	ok := true
	ran := 0
	for _, m := range must {
		switch st := status[m]; st {
		case "pass":
			ran++
		case "skip":
			ok = false
			fmt.Fprintf(w, "skipcheck: %s was SKIPPED but must run:%s\n", m, skipReason(outputs[m]))
		case "fail":
			ok = false
			fmt.Fprintf(w, "skipcheck: %s FAILED (it must run and pass)\n", m)
		default:
			ok = false
			fmt.Fprintf(w, "skipcheck: %s did not run (not in the run, or its parent skipped it)\n", m)
		}
	}
	skipped := 0
	for _, st := range status {
		if st == "skip" {
			skipped++
		}
	}
	if ok {
		fmt.Fprintf(w, "skipcheck: all %d must-run tests ran and passed (%d other tests skipped)\n", ran, skipped)
	} else {
		fmt.Fprintf(w, "skipcheck: %d of %d must-run tests did not run and pass\n", len(must)-ran, len(must))
	}
	fmt.Fprint(w, last)
	return ok, nil
}

// skipReason picks the message a skipped test gave.
func skipReason(out []string) string {
	var b strings.Builder
	for _, o := range out {
		s := strings.TrimSpace(o)
		if s == "" || strings.HasPrefix(s, "=== ") || strings.HasPrefix(s, "--- SKIP") {
			continue
		}
		b.WriteString(" " + s)
	}
	return b.String()
}
