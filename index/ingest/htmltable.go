package ingest

import (
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// A data table (cells of text, at least two rows and two columns) is
// written as a Markdown table, so that package evidence reads each row
// as a unit sent under the table's header: the header row (the rows of
// <thead>, or a first row of <th> cells), a "| --- |" rule, then one line
// a row, cells joined by " | ". A table without a header row is written
// as rows alone (no rule). A cell's text is one line: its line breaks
// become spaces and its pipes are escaped ("\|"). colspan repeats a
// header cell over the columns it spans (a two-level header reads
// "Revenue 2023 | Revenue 2024") and leaves a body row's spanned cells
// empty; rowspan carries a cell down into the rows it spans, so every row
// has its columns. A layout table (a cell holding a table, a heading, a
// <pre> or a form; or a single column) is not data: its cells are
// written as blocks, as before, and a data table inside it is a table of
// its own.

// maxSpan bounds colspan and rowspan (HTML's own limits: 1000, 65534):
// a hostile span cannot blow up the text.
const maxSpan = 64

// maxGrowth bounds how many times over spans may copy a table's cell
// text (a header cell across its columns, a cell down its rows): spans
// that copy more are no data table's.
const maxGrowth = 16

// maxColumns bounds a data table's width; a wider one is a layout table.
const maxColumns = 256

// tableCell is a cell of the grid: its text, and whether it is a header
// cell (<th>).
type tableCell struct {
	text   string
	header bool
}

// markdownTable returns the Markdown of a data table, ok false for a
// layout table (or one with fewer than two rows or columns).
func markdownTable(table *html.Node) (string, bool) {
	var rows []*html.Node
	headRows := 0 // the first rows that came from <thead>
	for c := table.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		switch c.DataAtom {
		case atom.Tr:
			rows = append(rows, c)
		case atom.Thead, atom.Tbody, atom.Tfoot:
			for r := c.FirstChild; r != nil; r = r.NextSibling {
				if r.Type == html.ElementNode && r.DataAtom == atom.Tr {
					rows = append(rows, r)
					if c.DataAtom == atom.Thead && headRows == len(rows)-1 {
						headRows++
					}
				}
			}
		}
	}
	if len(rows) < 2 {
		return "", false
	}
	grid, ok := tableGrid(rows)
	if !ok {
		return "", false
	}
	width := 0
	for _, r := range grid {
		width = max(width, len(r))
	}
	if width < 2 || width > maxColumns {
		return "", false
	}
	// without <thead>, leading rows of header cells alone are the header
	if headRows == 0 {
		for headRows < len(grid)-1 && allHeader(grid[headRows]) {
			headRows++
		}
	}
	var b strings.Builder
	line := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + c + " |")
		}
		b.WriteString("\n")
	}
	if headRows > 0 {
		header := make([]string, width)
		for _, r := range grid[:headRows] {
			for j := range width {
				if j < len(r) && r[j].text != "" && !strings.HasSuffix(header[j], r[j].text) {
					header[j] = strings.TrimSpace(header[j] + " " + r[j].text)
				}
			}
		}
		line(header)
		rule := make([]string, width)
		for j := range rule {
			rule[j] = "---"
		}
		line(rule)
	}
	for _, r := range grid[headRows:] {
		cells := make([]string, width)
		empty := true
		for j := range r {
			cells[j] = r[j].text
			empty = empty && r[j].text == ""
		}
		if !empty { // a spacer row says nothing
			line(cells)
		}
	}
	return strings.TrimRight(b.String(), "\n"), true
}

func allHeader(r []tableCell) bool {
	if len(r) == 0 {
		return false
	}
	for _, c := range r {
		if !c.header {
			return false
		}
	}
	return true
}

// tableGrid lays the rows' cells out in columns, colspan and rowspan
// applied (a spanned header cell repeated, a spanned body cell empty
// across and carried down); ok false when a cell holds layout.
func tableGrid(rows []*html.Node) ([][]tableCell, bool) {
	grid := make([][]tableCell, len(rows))
	// carry[j] is the cell rowspan carries into column j, for left more rows
	type carried struct {
		cell tableCell
		left int
	}
	var carry []carried
	in, out := 0, 0 // bytes of the cells' texts, and of the grid's
	for i, tr := range rows {
		var r []tableCell
		col := 0
		fill := func() { // carried cells before the next cell of the row
			for col < len(carry) && carry[col].left > 0 {
				r = append(r, carry[col].cell)
				carry[col].left--
				col++
			}
		}
		for td := tr.FirstChild; td != nil; td = td.NextSibling {
			if td.Type != html.ElementNode || (td.DataAtom != atom.Td && td.DataAtom != atom.Th) {
				continue
			}
			if holdsLayout(td) {
				return nil, false
			}
			fill()
			c := tableCell{text: cellText(td), header: td.DataAtom == atom.Th}
			cs, rs := span(td, "colspan"), span(td, "rowspan")
			in += len(c.text)
			if c.header || rs > 1 {
				out += len(c.text) * cs * rs
			}
			if out > maxGrowth*in+4096 {
				return nil, false // spans that copy a cell too often: not data
			}
			for k := range cs {
				cell := c
				if k > 0 && !c.header {
					cell.text = ""
				}
				r = append(r, cell)
				for len(carry) <= col {
					carry = append(carry, carried{})
				}
				if rs > 1 {
					carry[col] = carried{cell, rs - 1}
				}
				col++
			}
			if len(r) > maxColumns {
				return nil, false
			}
		}
		fill()
		grid[i] = r
	}
	return grid, true
}

// span reads a cell's colspan or rowspan: 1 when absent or invalid, at
// most maxSpan.
func span(td *html.Node, key string) int {
	for _, a := range td.Attr {
		if a.Key == key {
			if n, err := strconv.Atoi(strings.TrimSpace(a.Val)); err == nil && n > 1 {
				return min(n, maxSpan)
			}
		}
	}
	return 1
}

// holdsLayout reports a cell holding what a data table's cell does not: a
// table, a heading, preformatted text or a form.
func holdsLayout(n *html.Node) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			switch c.DataAtom {
			case atom.Table, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Pre, atom.Form:
				return true
			}
		}
		if holdsLayout(c) {
			return true
		}
	}
	return false
}

// cellText is a cell's readable text on one line: white space collapsed,
// a line break or a block boundary a space, pipes escaped, what HTMLText
// drops (scripts, styles, …) dropped.
func cellText(td *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			b.WriteString(n.Data)
			return
		case html.ElementNode:
			if unreadable(n.DataAtom) {
				return
			}
			if n.DataAtom == atom.Br {
				b.WriteByte(' ')
				return
			}
		}
		block := n.Type == html.ElementNode && blockElements[n.DataAtom]
		if block {
			b.WriteByte(' ')
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		if block {
			b.WriteByte(' ')
		}
	}
	for c := td.FirstChild; c != nil; c = c.NextSibling {
		walk(c)
	}
	return escapeCell(strings.Join(strings.Fields(b.String()), " "))
}

// escapeCell escapes a cell's pipes ("\|"), and the backslashes just
// before a pipe, so that no pipe of the text reads as a cell's edge and
// every other backslash (a path, a formula) stays as it is.
func escapeCell(t string) string {
	if !strings.Contains(t, "|") {
		return t
	}
	var b strings.Builder
	slashes := 0
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '\\':
			slashes++
		case '|':
			b.WriteString(strings.Repeat(`\`, slashes) + `\`)
			slashes = 0
		default:
			slashes = 0
		}
		b.WriteByte(t[i])
	}
	return b.String()
}
