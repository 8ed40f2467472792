package chunk_test

import (
	"math"
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

// offsetIn is a function giving the offset of a string in doc (the test
// fails where it is not there).
func offsetIn(t *testing.T, doc string) func(string) int {
	return func(s string) int {
		t.Helper()
		i := strings.Index(doc, s)
		if i < 0 {
			t.Fatalf("%q not in the document", s)
		}
		return i
	}
}

func TestAbove(t *testing.T) {
	at := offsetIn(t, aboveDoc)
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
		{"inside the header row: the row whole, the rule in the chunk", at("Meaning |\n| ---"), "# Router Guide\n## 2. Configuration\n### 2.3 Error codes\n| Code | Meaning |"},
		{"the header row's start: in the chunk", at("| Code |"), "# Router Guide\n## 2. Configuration\n### 2.3 Error codes"},
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

// A space-aligned table (a PDF export's) and a filing's statement: their
// header lines are above every chunk that starts among their rows.
const textTablesDoc = `## Results

Region          Units      Revenue     Margin
North           1,200      $ 45,000    12.1%
South             950      $ 31,500     9.8%
East            1,430      $ 52,250    13.4%
West              610      $ 20,100     7.2%   

Prose after the table, with  two spaces.

                                     December 31,
                                  2024           2023
Cash and cash equivalents     $  1,234       $  1,100

Accounts receivable               567            498
Inventories                       890            812
Total current assets          $  2,691       $  2,410

The end.
`

func TestAboveTextTables(t *testing.T) {
	at := offsetIn(t, textTablesDoc)
	aligned := "## Results\nRegion          Units      Revenue     Margin"
	stmt := "## Results\n                                     December 31,\n                                  2024           2023"
	tests := []struct {
		name  string
		start int
		want  string
	}{
		{"the aligned table's header line", at("Region"), "## Results"},
		{"the blank line above it", at("\nRegion"), "## Results"},
		{"inside its header line: the line whole", at("Units"), aligned},
		{"its first row", at("North"), aligned},
		{"inside a row", at("31,500"), aligned},
		{"its last row", at("West"), aligned},
		{"prose after it", at("Prose after"), "## Results"},
		{"the line break after its last row: prose next", at("\n\nProse after"), "## Results"},
		{"inside its last row's trailing spaces", at("7.2%") + 4, "## Results"},
		{"the statement's first header line", at("                                     December"), "## Results"},
		{"inside its first header line: the line whole", at("31,\n"), "## Results\n                                     December 31,"},
		{"its second header line: the first above", at("2024"), "## Results\n                                     December 31,"},
		{"its first row", at("Cash and"), stmt},
		{"a blank line between rows", at("\nAccounts") + 1, stmt},
		{"a row after a blank line", at("Inventories"), stmt},
		{"inside its last row", at("2,691"), stmt},
		{"after the statement", at("The end"), "## Results"},
		{"the line break after its last row", at("\n\nThe end"), "## Results"},
	}
	for _, tc := range tests {
		if got := chunk.Above(textTablesDoc, tc.start); got != tc.want {
			t.Errorf("%s (at %d): got\n%s\nwant\n%s", tc.name, tc.start, got, tc.want)
		}
	}
	// a statement whose equity line wraps its label onto a line too long
	// for a label: the rows after it still stand under the header
	equity := "                                  March 31,   December 31,\n                                      2024           2023\n\n" +
		"Cash and cash equivalents           $ 4,416        $ 1,282\n\nTotal liabilities                    16,249          4,314\n\n" +
		"Common stock, $0.0001 par value;      3,360          2,327\n\n" +
		" 750,000,000 shares authorized; 33,592,055 and 23,270,404 shares of the common stock issued and outstanding as of\n\n" +
		" March 31, 2024 and December 31, 2023, respectively\n\nAdditional paid-in capital           40,785         30,993\n\n" +
		"Accumulated deficit                 (20,186)       (13,301)\n\nIt was a good quarter for the company, and its staff thanked the many people who made it so.\n"
	if got, want := chunk.Above(equity, strings.Index(equity, "Additional")), "                                  March 31,   December 31,\n                                      2024           2023"; got != want {
		t.Errorf("after a wrapped label: got %q, want %q", got, want)
	}
	if got := chunk.Above(equity, strings.Index(equity, "It was a good")); got != "" {
		t.Errorf("prose after the statement: got %q", got)
	}
	// the same in fenced code: no table
	fenced := "```\n" + textTablesDoc + "```\n"
	if got := chunk.Above(fenced, strings.Index(fenced, "South")); got != "" {
		t.Errorf("in code: %q", got)
	}
	// a Markdown table padded with spaces is aboveScan's, not an aligned table
	md := "| Region  | Units  | Revenue  |\n| ---  | ---  | ---  |\n| North  | 1,200  | 45,000  |\n| South  | 950  | 31,500  |\n| East  | 1,430  | 52,250  |\n"
	if got, want := chunk.Above(md, strings.Index(md, "| East")), "| Region  | Units  | Revenue  |\n| ---  | ---  | ---  |"; got != want {
		t.Errorf("padded Markdown table: got %q, want %q", got, want)
	}
	// AboveAll answers every start as Above does, in any order
	starts := []int{at("West"), at("Cash and"), at("North"), at("The end"), at("Inventories")}
	for k, got := range chunk.AboveAll(textTablesDoc, starts) {
		if want := chunk.Above(textTablesDoc, starts[k]); got != want {
			t.Errorf("AboveAll at %d: %q, Above %q", starts[k], got, want)
		}
	}
}

// A heading with two spaces before a table reads, by the readers' rules,
// as a statement's column line, so the table's header holds it: it is
// given once, in the heading path.
func TestAboveTextTableHeadingOnce(t *testing.T) {
	doc := "# Report\n\n## Sales  2024\n\nRegion    Units     Revenue\nNorth     1,200     45,000\nSouth       950     31,500\nEast      1,430     52,250\n"
	at := offsetIn(t, doc)
	for _, tc := range []struct {
		start int
		want  string
	}{
		{at("Region"), "# Report\n## Sales  2024"},
		{at("South"), "# Report\n## Sales  2024\nRegion    Units     Revenue"},
	} {
		if got := chunk.Above(doc, tc.start); got != tc.want {
			t.Errorf("at %d: got %q, want %q", tc.start, got, tc.want)
		}
	}
}

// A start in the indent of a Markdown table's header row cuts none of its
// text: the chunk holds the row, which is not given again above it.
func TestAboveIndentedHeaderRow(t *testing.T) {
	doc := "## Codes\n\n  | Code | Meaning |\n  | --- | --- |\n  | E1 | fan |\n  | E2 | heat |\n"
	row := strings.Index(doc, "  | Code")
	for _, tc := range []struct {
		start int
		want  string
	}{
		{row, "## Codes"},
		{row + 1, "## Codes"},
		{row + 2, "## Codes"},
		{row + 3, "## Codes\n| Code | Meaning |"},
	} {
		if got := chunk.Above(doc, tc.start); got != tc.want {
			t.Errorf("at %d: got %q, want %q", tc.start, got, tc.want)
		}
	}
	starts := []int{row + 3, row + 1, row + 2, row + 5, row}
	for k, got := range chunk.AboveAll(doc, starts) {
		if want := chunk.Above(doc, starts[k]); got != want {
			t.Errorf("AboveAll at %d: %q, Above %q", starts[k], got, want)
		}
	}
}

// AboveAll takes any starts, as Above does: far out of range ones too,
// whose differences overflow an int (they were sorted by subtracting
// them, which ordered the starts in range wrongly, and the scan panicked).
func TestAboveAllExtremeStarts(t *testing.T) {
	text := "# A\n\n## B\n\ntext one\n\n### C\n\nmore text here\n| a | b |\n| --- | --- |\n| 1 | 2 |\n"
	starts := []int{math.MaxInt - 1, 17, 10, math.MinInt / 2, 55, math.MaxInt - 1, math.MaxInt, 35, 37, 2, 50, math.MaxInt - 1, 2, math.MaxInt - 1, 67, math.MinInt + 1, 23}
	for k, got := range chunk.AboveAll(text, starts) {
		if want := chunk.Above(text, starts[k]); got != want {
			t.Errorf("at %d: AboveAll %q, Above %q", starts[k], got, want)
		}
	}
}

// FuzzAbove checks that Above never panics, that every line it returns is
// a line of the text above the start's line end, trimmed, and that AboveAll
// gives each start what Above does.
func FuzzAbove(f *testing.F) {
	f.Add(aboveDoc, 120, 40)
	f.Add("| a |\n| --- |\n| b |", 15, 3)
	f.Add("# a\n```\n## b", 12, 5)
	f.Add(textTablesDoc, 200, 520)
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
			// a text table's header keeps its indent (its columns' edges)
			if !lines[strings.TrimSpace(l)] {
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
