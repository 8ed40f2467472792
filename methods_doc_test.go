package ctxsel_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMethodsTable: every row of docs/methods.md's "paper vs ctxsel
// default" table names at least one test that pins it, and every test it
// names exists in the package it names.
func TestMethodsTable(t *testing.T) {
	b, err := os.ReadFile("docs/methods.md")
	if err != nil {
		t.Fatal(err)
	}
	cite := regexp.MustCompile("`(\\./[a-z0-9/]+) (Test[A-Za-z0-9_]+)`")
	rows, in := 0, false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "| method (ctxsel name) |"):
			in = true
			continue
		case in && !strings.HasPrefix(line, "|"):
			in = false // the table ended
		}
		if !in || strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(line, " | ")
		if len(cells) != 5 {
			t.Errorf("row with %d cells, want 5: %.80q", len(cells), line)
			continue
		}
		rows++
		tests := cite.FindAllStringSubmatch(cells[4], -1)
		if len(tests) == 0 {
			t.Errorf("row %q names no test", cells[0])
		}
		for _, m := range tests {
			dir, name := m[1], m[2]
			files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
			found := false
			for _, f := range files {
				src, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				found = found || strings.Contains(string(src), "func "+name+"(")
			}
			if !found {
				t.Errorf("row %q: %s has no %s", cells[0], dir, name)
			}
		}
	}
	if rows < 10 {
		t.Fatalf("%d rows in the methods table", rows)
	}
}
