package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const pkg = "example.com/m/llm"

func events(t *testing.T, evs ...event) string {
	t.Helper()
	var b strings.Builder
	for _, e := range evs {
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// run is go test -json for one package: TestA passes, TestB as given.
func run(t *testing.T, bAction, bOutput string) string {
	return events(t,
		event{Action: "start", Package: pkg},
		event{Action: "run", Package: pkg, Test: "TestA"},
		event{Action: "output", Package: pkg, Test: "TestA", Output: "=== RUN   TestA\n"},
		event{Action: "pass", Package: pkg, Test: "TestA"},
		event{Action: "run", Package: pkg, Test: "TestB"},
		event{Action: "output", Package: pkg, Test: "TestB", Output: "=== RUN   TestB\n"},
		event{Action: "output", Package: pkg, Test: "TestB", Output: "    x_test.go:9: " + bOutput + "\n"},
		event{Action: bAction, Package: pkg, Test: "TestB"},
		event{Action: "output", Package: pkg, Output: "PASS\n"},
		event{Action: "output", Package: pkg, Output: "ok  \t" + pkg + "\t0.01s\n"},
		event{Action: "pass", Package: pkg},
	)
}

func TestCheck(t *testing.T) {
	must, err := parseList("# comment\n./llm TestB  # the paper check\n\n", "example.com/m")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		action, output string
		ok             bool
		want           string
	}{
		{"pass", "fine", true, "all 1 must-run tests ran and passed"},
		{"skip", "paper text not available", false, "example.com/m/llm TestB was SKIPPED but must run: x_test.go:9: paper text not available"},
		{"fail", "wrong", false, "TestB FAILED"},
	} {
		var out strings.Builder
		ok, err := check(strings.NewReader(run(t, tc.action, tc.output)), &out, must)
		if err != nil {
			t.Fatal(err)
		}
		if ok != tc.ok || !strings.Contains(out.String(), tc.want) {
			t.Errorf("TestB %s: ok = %v, output:\n%s\nwant ok = %v and %q", tc.action, ok, out.String(), tc.ok, tc.want)
		}
		// The output ends as go test's does, with the package line.
		if !strings.HasSuffix(out.String(), "ok  \t"+pkg+"\t0.01s\n") {
			t.Errorf("output does not end with the package line:\n%s", out.String())
		}
		if strings.Contains(out.String(), "=== RUN") || strings.Contains(out.String(), "PASS\n") {
			t.Errorf("verbose lines in the output:\n%s", out.String())
		}
		if tc.action == "fail" && !strings.Contains(out.String(), "x_test.go:9: wrong") {
			t.Errorf("a failing test's output is not shown:\n%s", out.String())
		}
	}
}

// A listed test that is not in the run at all (a subtest whose parent
// skipped, a renamed test) fails the check too.
func TestCheckAbsent(t *testing.T) {
	must := []test{{pkg, "TestB"}, {pkg, "TestServe/Browser"}}
	var out strings.Builder
	ok, err := check(strings.NewReader(run(t, "pass", "")), &out, must)
	if err != nil {
		t.Fatal(err)
	}
	if ok || !strings.Contains(out.String(), "TestServe/Browser did not run") {
		t.Fatalf("ok = %v:\n%s", ok, out.String())
	}
}

func TestParseList(t *testing.T) {
	for _, bad := range []string{"", "# only a comment\n", "./llm\n", "./llm NotATest\n", "./llm TestA extra\n"} {
		if _, err := parseList(bad, "m"); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// Every test of the project's list exists, so a rename cannot quietly turn
// into "did not run" (which fails CI) or a typo go unnoticed.
func TestProjectListNamesRealTests(t *testing.T) {
	text, err := os.ReadFile("../../../.ci/must-run.txt")
	if err != nil {
		t.Fatal(err)
	}
	must, err := parseList(string(text), "m")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range must {
		dir := filepath.Join("../../..", strings.TrimPrefix(m.pkg, "m"))
		files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
		top, _, _ := strings.Cut(m.name, "/")
		found := false
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			found = found || strings.Contains(string(b), "func "+top+"(t *testing.T)")
		}
		if !found {
			t.Errorf("%s: no func %s in %s", m, top, dir)
		}
	}
}
