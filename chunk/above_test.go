package chunk_test

import (
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/chunk"
)

const aboveDoc = `# Router Guide

## 1. Installation

Unpack it.

## 2. Configuration

### 2.3 Error codes

| Code | Meaning |
| --- | --- |
| E100 | power fault |
| E101 | fan fault |
| E102 | link fault |

After the table.

` + "```" + `
# not a heading
| a | b |
| --- | --- |
| in | code |
` + "```" + `

## 3. Maintenance

Clean the vents.
`

func TestAbove(t *testing.T) {
	at := func(s string) int {
		i := strings.Index(aboveDoc, s)
		if i < 0 {
			t.Fatalf("%q not in the document", s)
		}
		return i
	}
	tests := []struct {
		name  string
		start int
		want  string
	}{
		{"the document's start", 0, ""},
		{"out of range", len(aboveDoc) + 1, ""},
		{"negative", -3, ""},
		{"under a section", at("Unpack"), "# Router Guide\n## 1. Installation"},
		{"a table row's start", at("| E101"), "# Router Guide\n## 2. Configuration\n### 2.3 Error codes\n| Code | Meaning |\n| --- | --- |"},
		{"inside a row", at("fan fault"), "# Router Guide\n## 2. Configuration\n### 2.3 Error codes\n| Code | Meaning |\n| --- | --- |"},
		{"the first row", at("| E100"), "# Router Guide\n## 2. Configuration\n### 2.3 Error codes\n| Code | Meaning |\n| --- | --- |"},
		// a chunk that opens on the rule or cuts it holds rows, its header row above
		{"the rule's start: the header is above", at("| --- | --- |\n| E100"), "# Router Guide\n## 2. Configuration\n### 2.3 Error codes\n| Code | Meaning |\n| --- | --- |"},
		{"inside the rule", at("| --- | --- |\n| E100") + 3, "# Router Guide\n## 2. Configuration\n### 2.3 Error codes\n| Code | Meaning |\n| --- | --- |"},
		{"the rule's line break", at("\n| E100"), "# Router Guide\n## 2. Configuration\n### 2.3 Error codes\n| Code | Meaning |\n| --- | --- |"},
		{"after the table", at("After the table"), "# Router Guide\n## 2. Configuration\n### 2.3 Error codes"},
		{"in code: no table, no heading from it", at("| in | code |"), "# Router Guide\n## 2. Configuration\n### 2.3 Error codes"},
		{"its own heading ends the path of its level", at("## 3. Maintenance"), "# Router Guide"},
		{"blank lines, then its own heading", at("## 3. Maintenance") - 1, "# Router Guide"},
		{"a heading the start cuts is above", at("3. Maintenance"), "# Router Guide\n## 3. Maintenance"},
		{"the next section", at("Clean"), "# Router Guide\n## 3. Maintenance"},
	}
	for _, tc := range tests {
		if got := chunk.Above(aboveDoc, tc.start); got != tc.want {
			t.Errorf("%s (at %d): got\n%s\nwant\n%s", tc.name, tc.start, got, tc.want)
		}
	}
}

func TestAboveCRLFAndLimits(t *testing.T) {
	crlf := strings.ReplaceAll(aboveDoc, "\n", "\r\n")
	got := chunk.Above(crlf, strings.Index(crlf, "| E102"))
	if want := "# Router Guide\n## 2. Configuration\n### 2.3 Error codes\n| Code | Meaning |\n| --- | --- |"; got != want {
		t.Errorf("CRLF: got %q, want %q", got, want)
	}
	// a header line too long to repeat is left out, and so is its rule
	wide := "| " + strings.Repeat("column | ", 200) + "\n| --- | --- |\n| a | b |\n| c | d |\n"
	if got := chunk.Above(wide, strings.Index(wide, "| c")); got != "" {
		t.Errorf("a %d-byte header was repeated: %q", len(wide), got)
	}
	// a blank line ends a table: the rows after it are no longer its
	split := "| h | k |\n| --- | --- |\n| a | b |\n\n| c | d |\n| e | f |\n"
	if got := chunk.Above(split, strings.Index(split, "| e")); got != "" {
		t.Errorf("a table after a blank line took the one before's header: %q", got)
	}
	// an indented code line is no heading, where a chunk opens on it too
	code := "# Guide\n## Setup\n\n    # install the tools\n    make tools\n"
	for _, at := range []int{strings.Index(code, "    # install"), strings.Index(code, "\n    # install"), strings.Index(code, "# install")} {
		if got := chunk.Above(code, at); got != "# Guide\n## Setup" {
			t.Errorf("a chunk at %d, in indented code: %q", at, got)
		}
	}
	// "#hashtag" and an empty "#" are no headings
	tags := "#hashtag here\n#\n## Real\ntext\n"
	if got := chunk.Above(tags, strings.Index(tags, "text")); got != "## Real" {
		t.Errorf("got %q", got)
	}
}

// FuzzAbove checks that Above never panics, that every line it returns is
// a line of the text above the start's line end, trimmed, and that AboveAll
// gives each start what Above does.
func FuzzAbove(f *testing.F) {
	f.Add(aboveDoc, 120, 40)
	f.Add("| a |\n| --- |\n| b |", 15, 3)
	f.Add("# a\n```\n## b", 12, 5)
	f.Fuzz(func(t *testing.T, text string, start, other int) {
		got := chunk.Above(text, start)
		if all := chunk.AboveAll(text, []int{other, start, other}); all[1] != got || all[0] != all[2] || all[0] != chunk.Above(text, other) {
			t.Fatalf("AboveAll %q, Above %q and %q", all, got, chunk.Above(text, other))
		}
		if len(text) <= 512 {
			// every start at once: starts sharing a line share its answer
			starts := make([]int, len(text)+2)
			for k := range starts {
				starts[k] = k - 1
			}
			for k, a := range chunk.AboveAll(text, starts) {
				if want := chunk.Above(text, k-1); a != want {
					t.Fatalf("AboveAll at %d: %q, Above %q", k-1, a, want)
				}
			}
		}
		if got == "" {
			return
		}
		end := len(text)
		if i := strings.IndexByte(text[start:], '\n'); i >= 0 {
			end = start + i
		}
		lines := map[string]bool{}
		for _, l := range strings.Split(text[:end], "\n") {
			lines[strings.TrimSpace(l)] = true
		}
		for _, l := range strings.Split(got, "\n") {
			if !lines[l] {
				t.Fatalf("line %q is not a line above %d", l, start)
			}
		}
	})
}

// BenchmarkAboveAllLines is AboveAll over every chunk start of a 2 MiB
// document whose lines end in "\n" against the same document with "\r"
// line ends (old Mac text: one line to AboveAll): a pass over the text,
// not over it once per start, makes the two alike.
func BenchmarkAboveAllLines(b *testing.B) {
	line := "| E100 | a fault of some part, with what to do about it |\n"
	lf := strings.Repeat(line, (2<<20)/len(line))
	var starts []int
	for s := 1; s < len(lf); s += 2000 { // 600-token chunks sharing 100
		starts = append(starts, s)
	}
	for _, tc := range []struct{ name, text string }{{"lf", lf}, {"cr", strings.ReplaceAll(lf, "\n", "\r")}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				chunk.AboveAll(tc.text, starts)
			}
		})
	}
}
