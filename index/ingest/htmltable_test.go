package ingest_test

import (
	"fmt"
	"html"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel/evidence"
	"github.com/ctxsel/ctxsel/index/ingest"
)

func htmlText(t testing.TB, in string) string {
	t.Helper()
	got, err := ingest.HTMLText(strings.NewReader(in))
	if err != nil {
		t.Fatalf("HTMLText(%q): %v", in, err)
	}
	return got
}

func TestHTMLTables(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"thead and tbody",
			`<table><thead><tr><th>Code</th><th>Meaning</th></tr></thead><tbody><tr><td>E1</td><td>Low pressure</td></tr><tr><td>E4</td><td>No signal</td></tr></tbody></table>`,
			"| Code | Meaning |\n| --- | --- |\n| E1 | Low pressure |\n| E4 | No signal |"},
		{"th in the first row, no thead (as many wikis write it)",
			`<table class="wikitable"><tr><th>Year</th><th>Title</th></tr><tr><td>2001</td><td><i>First</i> film<sup><a href="#n1">[1]</a></sup></td></tr><tr><td>2004</td><td>Second</td></tr></table>`,
			"| Year | Title |\n| --- | --- |\n| 2001 | First film[1] |\n| 2004 | Second |"},
		{"no header: rows alone; an empty spacer row left out",
			`<table><tr><td>a</td><td>b</td></tr><tr><td> </td><td></td></tr><tr></tr><tr><td>c</td><td>d</td></tr></table>`,
			"| a | b |\n| c | d |"},
		{"a row header cell in each body row is a cell",
			`<table><tr><th></th><th>2023</th><th>2024</th></tr><tr><th scope="row">Revenue</th><td>10</td><td>12</td></tr><tr><th scope="row">Costs</th><td>7</td><td>8</td></tr></table>`,
			"|  | 2023 | 2024 |\n| --- | --- | --- |\n| Revenue | 10 | 12 |\n| Costs | 7 | 8 |"},
		{"two header rows, colspan repeated over the columns it spans",
			`<table><thead><tr><th rowspan="2">Segment</th><th colspan="2">Revenue</th></tr><tr><th>2023</th><th>2024</th></tr></thead><tbody><tr><td>Cloud</td><td>$1,204</td><td>$1,530</td></tr></tbody></table>`,
			"| Segment | Revenue 2023 | Revenue 2024 |\n| --- | --- | --- |\n| Cloud | $1,204 | $1,530 |"},
		{"colspan in the body leaves the spanned cells empty; rowspan carries down",
			`<table><tr><th>Day</th><th>Room</th><th>Talk</th></tr><tr><td rowspan="2">Mon</td><td>A</td><td>Keynote</td></tr><tr><td>B</td><td>Lunch talk</td></tr><tr><td colspan="3">Closing party</td></tr></table>`,
			"| Day | Room | Talk |\n| --- | --- | --- |\n| Mon | A | Keynote |\n| Mon | B | Lunch talk |\n| Closing party |  |  |"},
		{"pipes, backslashes and line breaks in cells",
			`<table><tr><th>Expr</th><th>Note</th></tr><tr><td>a | b</td><td>C:\temp<br>second line</td></tr><tr><td>x \| y</td><td><p>one</p><p>two</p></td></tr></table>`,
			"| Expr | Note |\n| --- | --- |\n| a \\| b | C:\\temp second line |\n| x \\\\\\| y | one two |"},
		{"a caption above, text around",
			`<p>Before.</p><table><caption>Opening hours</caption><tr><th>Day</th><th>Hours</th></tr><tr><td>Mon</td><td>9–17</td></tr></table><p>After.</p>`,
			"Before.\n\nOpening hours\n\n| Day | Hours |\n| --- | --- |\n| Mon | 9–17 |\n\nAfter."},
		{"a layout table holding a data table: the outer as blocks, the inner a table",
			`<table><tr><td><h2>Prices</h2><table><tr><th>Item</th><th>Price</th></tr><tr><td>Tea</td><td>2</td></tr></table></td><td>Side bar</td></tr><tr><td>Footer</td><td>x</td></tr></table>`,
			"## Prices\n\n| Item | Price |\n| --- | --- |\n| Tea | 2 |\n\nSide bar\nFooter\nx"},
		{"one column is a list, not a table",
			`<table><tr><td>only</td></tr><tr><td>one column</td></tr></table>`,
			"only\none column"},
		{"one row is a line of cells",
			`<table><tr><th>a</th><th>b</th></tr></table>`,
			"a\nb"},
		{"hostile spans are bounded",
			`<table><tr><th colspan="1000000">wide</th><th>b</th></tr><tr><td rowspan="-3">x</td><td colspan="zz">y</td></tr></table>`,
			"| wide" + strings.Repeat(" | wide", 63) + " | b |\n| ---" + strings.Repeat(" | ---", 64) + " |\n| x | y" + strings.Repeat(" | ", 63) + " |"},
	}
	for _, c := range cases {
		if got := htmlText(t, c.in); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

// A cell that spans many rows and columns is copied a bounded number of
// times: past it the table is read as blocks, each cell's text once.
func TestHTMLTableSpansBounded(t *testing.T) {
	long := strings.Repeat("word ", 1000)
	in := `<table><tr><th rowspan="64" colspan="64">` + long + `</th><th>b</th></tr>` + strings.Repeat(`<tr><td>c</td></tr>`, 70) + `</table>`
	if got := htmlText(t, in); len(got) > 2*len(in) {
		t.Errorf("%d bytes of text from %d of HTML", len(got), len(in))
	}
}

// TestHTMLTableRowsAreUnits: an HTML page's data table, ingested, is read
// by package evidence as a table: each row a unit whose context is the
// header row and rule, and prose around it stays prose.
func TestHTMLTableRowsAreUnits(t *testing.T) {
	page := `<html><head><title>Heat pump error codes</title></head><body>
<h1>Heat pump error codes</h1>
<p>The controller shows a code when something is wrong. Most codes clear themselves.</p>
<table class="codes">
  <thead><tr><th>Code</th><th>Meaning</th><th>What to do</th></tr></thead>
  <tbody>
    <tr><td>E1</td><td>Low water pressure</td><td>Top up the circuit to 1.5 bar</td></tr>
    <tr><td>E4</td><td>Outdoor unit not responding</td><td>Check its breaker, then restart</td></tr>
    <tr><td>E7</td><td>Flow sensor fault</td><td>Call a technician</td></tr>
  </tbody>
</table>
<p>Call us if a code comes back within a day.</p>
</body></html>`
	text := htmlText(t, page)
	u := evidence.SplitUnits(text, evidence.AllUnits)
	var rows []string
	for j, sp := range u.Sentences {
		if u.Kind(j) != evidence.Row {
			continue
		}
		rows = append(rows, text[sp[0]:sp[1]])
		var ctx []string
		for _, k := range u.Needs[j] {
			if u.Kind(k) == evidence.Context {
				ctx = append(ctx, text[u.Sentences[k][0]:u.Sentences[k][1]])
			}
		}
		if want := "| Code | Meaning | What to do |\n| --- | --- | --- |"; len(ctx) != 1 || ctx[0] != want {
			t.Errorf("row %q is sent with %q, want its header %q", text[sp[0]:sp[1]], ctx, want)
		}
	}
	want := []string{"| E1 | Low water pressure | Top up the circuit to 1.5 bar |", "| E4 | Outdoor unit not responding | Check its breaker, then restart |", "| E7 | Flow sensor fault | Call a technician |"}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows %q, want %q in\n%s", rows, want, text)
	}
	for _, s := range []string{"Most codes clear themselves.", "Call us if a code comes back within a day."} {
		found := false
		for j, sp := range u.Sentences {
			found = found || (text[sp[0]:sp[1]] == s && u.Kind(j) == evidence.Sentence)
		}
		if !found {
			t.Errorf("the sentence %q is not a prose unit of\n%s", s, text)
		}
	}
}

// cells splits a Markdown table line at its unescaped pipes.
func cells(line string) []string {
	var out []string
	start, slashes := 1, 0
	for i := 1; i < len(line); i++ {
		switch line[i] {
		case '\\':
			slashes++
			continue
		case '|':
			if slashes%2 == 0 {
				out = append(out, line[start:i])
				start = i + 1
			}
		}
		slashes = 0
	}
	return out
}

// FuzzHTMLTable builds a table of fuzzed cell texts and spans and checks
// the Markdown: a header row, a rule and one line a body row, every line
// with the same number of cells, each cell's text (white space
// collapsed) in its place, pipes escaped.
func FuzzHTMLTable(f *testing.F) {
	f.Add("Code", "Meaning", "E1", "a | b", "C:\\x\\|y", uint8(1), uint8(1))
	f.Add("", "", "", "", "", uint8(0), uint8(3))
	f.Add("a\nb", "<b>x</b>", "&amp;|", "\\", "é", uint8(2), uint8(0))
	f.Fuzz(func(t *testing.T, h1, h2, c1, c2, c3 string, colspan, rowspan uint8) {
		for _, s := range []string{h1, h2, c1, c2, c3} {
			if !utf8.ValidString(s) {
				return
			}
		}
		esc := html.EscapeString
		in := fmt.Sprintf(`<table><thead><tr><th>%s</th><th>%s</th></tr></thead><tbody><tr><td colspan="%d">%s</td><td>%s</td></tr><tr><td rowspan="%d">%s</td><td>x</td></tr></tbody></table>`,
			esc(h1), esc(h2), colspan, esc(c1), esc(c2), rowspan, esc(c3))
		got := htmlText(t, in)
		lines := strings.Split(got, "\n")
		norm := func(s string) string {
			s = strings.ReplaceAll(s, "\x00", "") // a cell drops a NUL, as the HTML parser reads it
			s = strings.ReplaceAll(s, "\r\n", "\n")
			return strings.Join(strings.Fields(s), " ")
		}
		want := 4 // header, rule, two rows
		if norm(c1) == "" && norm(c2) == "" {
			want = 3 // an empty row is left out
			lines = slices.Insert(lines, 2, "| "+strings.Repeat(" |", len(cells(lines[0]))))
		}
		if len(lines) != 4 {
			t.Fatalf("%d lines, want %d:\n%s", len(lines), want, got)
		}
		n := len(cells(lines[0]))
		for _, l := range lines {
			if !strings.HasPrefix(l, "| ") || !strings.HasSuffix(l, " |") || len(cells(l)) != n {
				t.Fatalf("line %q: want %d cells between \"| \" and \" |\" in\n%s", l, n, got)
			}
		}
		unescape := func(c string) string {
			c = strings.TrimSpace(c)
			var b strings.Builder
			for i := 0; i < len(c); i++ {
				if c[i] == '\\' && i+1 < len(c) && (c[i+1] == '|' || (c[i+1] == '\\' && strings.HasPrefix(strings.TrimLeft(c[i+1:], "\\"), "|"))) {
					i++
				}
				b.WriteByte(c[i])
			}
			return b.String()
		}
		if cell, want := unescape(cells(lines[2])[0]), norm(c1); cell != want {
			t.Errorf("first body cell %q, want %q:\n%s", cell, want, got)
		}
		if cell, want := unescape(cells(lines[3])[0]), norm(c3); cell != want {
			t.Errorf("second row's first cell %q, want %q:\n%s", cell, want, got)
		}
	})
}

// FuzzHTMLText: any input gives text or an error, never a panic, and a
// data table's lines keep their cell count.
func FuzzHTMLText(f *testing.F) {
	for _, s := range []string{
		`<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td colspan=2>2</td></tr></table>`,
		`<table><tr><td><table><tr><td>x</td><td>y</td></tr><tr><td>z</td></tr></table></td></tr></table>`,
		`<table><thead><tr><th rowspan=3>a</th></tr></thead><tr><td>|</td><td>\</td></tr></table>`,
		`<p>plain <b>text</b></p>`, `<table><tr><td rowspan="65534">a</td><td>b</td></tr><tr></tr><tr><td>c</td></tr></table>`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := ingest.HTMLText(strings.NewReader(in))
		if err != nil {
			return
		}
		if len(got) > 200*len(in)+1000 {
			t.Fatalf("%d bytes of text from %d of HTML", len(got), len(in))
		}
	})
}
