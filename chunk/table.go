package chunk

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A TableReader reads a text's lines as the tables PDF and filing exports
// write in plain text: space-aligned tables (AlignedEnd) and financial
// statements (StatementEnd). Package evidence reads them as units (a row
// a unit, sent with its header) and Above gives a chunk cut inside one the
// header its rows need, by the same rules.
type TableReader struct {
	lines []string
	code  bool // fences are read: a fence ends a table and is no line of one
	of    []stmtLine
	read  []bool
	// each line's cells (cells), read once: a count (0 unread, -1 none)
	// and its cells' edges
	cellCount []int
	cellEdges [][]int
}

// NewTableReader reads lines (a text's lines without their line breaks);
// code: a fenced code block's fence ends a table.
func NewTableReader(lines []string, code bool) *TableReader {
	return &TableReader{lines: lines, code: code}
}

// StatementRow reports line i a statement's row (a label and values, or
// values alone) rather than a label, a header or a blank line.
func (r *TableReader) StatementRow(i int) bool {
	k := r.kind(i)
	return k == stmtRow || k == stmtRow1
}

// StatementBlank reports line i white space only (no-break spaces too).
func (r *TableReader) StatementBlank(i int) bool { return r.kind(i) == stmtBlank }

// StatementPageNumber reports line i a page number alone ("15"): inside a
// statement, a page break between its rows, no text of a row.
func (r *TableReader) StatementPageNumber(i int) bool { return r.kind(i) == stmtPage }

// OpensWithValue reports a statement's line t (trimmed) whose first cell
// is a value: a row of values alone, whose label is on the lines above.
func OpensWithValue(t string) bool {
	cells := stmtCells(t)
	return len(cells) > 0 && isValue(cells[0])
}

// MayHoldCells reports text that may hold a cell gap (two spaces, a tab,
// a no-break space): without one, no line of it is a text table's (nor a
// statement's header, indented by spaces). The bytes are searched fast,
// so that prose costs no further reading.
func MayHoldCells(text string) bool {
	return strings.Contains(text, "  ") || strings.IndexByte(text, '\t') >= 0 || strings.Contains(text, "\u00a0")
}

// fenceAfter is the fenced code block open after line, given the one open
// before it (its marker, "" outside code): a fence line opens one, a line
// opening with the open one's marker closes it.
func fenceAfter(open, line string) string {
	lead := strings.TrimLeft(line, " \t")
	switch {
	case open != "":
		if strings.HasPrefix(lead, open) {
			return ""
		}
		return open
	case IsFence(line):
		return lead[:3]
	}
	return ""
}

// IsFence reports a line that opens (or closes) a fenced code block
// ("```" or "~~~", maybe indented): package evidence's code units and the
// tables here read fences by it.
func IsFence(s string) bool {
	t := strings.TrimLeft(s, " \t")
	return strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")
}

var (
	// a statement's value cell: an amount ("1,234", "$(65,664,000)",
	// "(100.0)%", "2.81"), a date ("10/1/2029"), or a dash or mark for
	// none ("-", "—", "n/a", "NM", "*")
	valueCell = regexp.MustCompile(`^(?:\(?[$€£¥]?[ \x{00a0}]?\(?[-–—+]?\d[\d,]*(?:\.\d+)?\)?[ \x{00a0}]?%?\)?|\d{1,2}/\d{1,2}/\d{2,4}|[$€£¥]?[ \x{00a0}]?[-–—]+|n/a|N/A|NA|NM|nil|\*)$`)
	// a column header's year: "2024"
	yearCell = regexp.MustCompile(`^(?:19|20)\d\d$`)
	// a page number alone: "15", "- 15 -"
	pageNumber = regexp.MustCompile(`^(?:\d{1,3}|[-–—] ?\d{1,3} ?[-–—])$`)
)

// Least lines and cells that make a table, and a statement's bounds.
const (
	alignedMin  = 3
	alignedCell = 3
	// a statement (StatementEnd): at most this many column-header lines,
	// label lines in a row between two rows, and blank lines in a row
	stmtHeaders = 4
	stmtLabels  = 6
	stmtBlanks  = 8
	// the longest header or label line (trimmed), and the most words in it
	stmtLabelLen   = 100
	stmtLabelWords = 12
	// the longest wrapped label's rest (stmtWrapped), and its most words
	stmtWrappedLen   = 200
	stmtWrappedWords = 24
	stmtShortLabel   = 3 // a label ending in "." ("Inc.", "Co., Ltd.") has no more words
	// the longest line read as a statement row
	stmtRowLen = 1000
	// the most lines a statement spans (a longer one goes on as another,
	// headerless): bounds the lines read from each line it may open on
	stmtMaxLines = 2000
)

// AlignedEnd is the end (exclusive line) of a space-aligned table
// starting at line i (a PDF or filing export): at least alignedMin lines,
// each of alignedCell or more cells split by two spaces or a tab, all
// with the same count, and a column edge (where cells start or end)
// shared by every line; i when
// there is none. code: a fence ends it (fences are read).
func (r *TableReader) AlignedEnd(i int) int {
	ls, code := r.lines, r.code
	cells := r.cells
	n, first := cells(i)
	fence := func(k int) bool { return code && IsFence(ls[k]) }
	if n < alignedCell || fence(i) {
		return i
	}
	shared := first
	j := i + 1
	for ; j < len(ls) && !fence(j); j++ {
		m, starts := cells(j)
		if m != n {
			break
		}
		next := slices.DeleteFunc(slices.Clone(shared), func(c int) bool { return !slices.Contains(starts, c) })
		if len(next) == 0 {
			break
		}
		shared = next
	}
	if j-i < alignedMin {
		return i
	}
	return j
}

// stmtLine is what a line of a filing's statement is (stmtTable).
type stmtLine uint8

const (
	stmtOther   stmtLine = iota // ends a statement: prose, a sentence
	stmtBlank                   // white space only (no-break spaces too)
	stmtRow                     // a label and two or more values
	stmtRow1                    // a row with one value, or more labels than values: not counted
	stmtHeader                  // a column header of one cell, indented: "December 31,"
	stmtColumns                 // a column header in cells or with a year: "2024  2023"
	stmtLabel                   // a label alone: a section ("Liabilities"), a wrapped label's rest
	stmtWrapped                 // a long label's rest, wrapped onto its own line: a label between rows, prose elsewhere
	stmtPage                    // a page number alone ("15", "- 15 -"): a page break between rows, prose elsewhere
)

// stmtKind reads one line of a statement as a financial filing exported to
// text writes it: cells split by two spaces or a tab, "$" a cell of its
// own, values right-aligned.
func stmtKind(s string) stmtLine {
	t := strings.TrimFunc(s, unicode.IsSpace)
	if t == "" {
		return stmtBlank
	}
	if len(t) > stmtRowLen {
		return stmtOther
	}
	cells := stmtCells(t)
	if len(cells) == 1 && len(cells[0]) > stmtLabelLen {
		// one cell, too long for a label: a line of prose (as below, with
		// no count of values or words: most lines of prose end here), or
		// a long label's wrapped rest
		return wrappedOrOther(s, t)
	}
	values, years := 0, 0
	for _, c := range cells {
		if isValue(c) {
			values++
			if yearCell.MatchString(c) {
				years++
			}
		}
	}
	if len(cells) == 0 {
		return stmtBlank // zero-width spaces and "$" alone
	}
	// a row: two values or more, not all of them years (a header's
	// "2024  2023"), and no more labels than values (a prose line split
	// by double spaces has none)
	if values >= 2 && values > years && 2*values >= len(cells) {
		return stmtRow
	}
	last, _ := utf8.DecodeLastRuneInString(t)
	words := countFields(t)
	if strings.ContainsRune(".!?", last) && words > stmtShortLabel {
		return stmtOther // a sentence ("Inc." is a wrapped label's rest)
	}
	if words > stmtLabelWords || len(strings.Join(cells, " ")) > stmtLabelLen {
		return wrappedOrOther(s, t)
	}
	worded := strings.ContainsFunc(t, unicode.IsLetter) || years > 0
	switch {
	case values > years && len(cells) >= 2:
		return stmtRow1 // "Total  $ 1,234", the other columns empty; "Rate:  —  4.67% – 4.71%"
	case !worded:
		if pageNumber.MatchString(t) {
			return stmtPage
		}
		return stmtOther // a number alone
	case len(cells) >= 2 && !strings.ContainsRune(":;", last):
		return stmtColumns
	case len(s)-len(strings.TrimLeftFunc(s, unicode.IsSpace)) >= 2 && !strings.ContainsRune(":;", last):
		return stmtHeader // indented
	}
	return stmtLabel
}

// wrappedOrOther is the kind of a line s (t trimmed) too long for a label:
// the rest of a long label a filing wraps onto more lines (an equity
// line's "shares issued and outstanding as of March 31, 2024 and December
// 31," under its row), which these exports indent or open in lower case
// or with a figure, and which ends no sentence nor introduces what
// follows ("… is composed of the following:"); else prose.
func wrappedOrOther(s, t string) stmtLine {
	if len(t) > stmtWrappedLen {
		return stmtOther
	}
	first, _ := utf8.DecodeRuneInString(s)
	last, _ := utf8.DecodeLastRuneInString(t)
	if !unicode.IsSpace(first) && !unicode.IsLower(first) && !unicode.IsDigit(first) || strings.ContainsRune(".!?:", last) {
		return stmtOther
	}
	if countFields(t) > stmtWrappedWords {
		return stmtOther
	}
	return stmtWrapped
}

// stmtCells are the cells of a statement's line t (trimmed), empty ones
// left out.
func stmtCells(t string) []string {
	var cells []string
	for _, c := range splitCells(t) {
		// zero-width spaces pad cells; "$" is the next amount's (one
		// no-break space after "(5,070,686)" is no column gap)
		c = strings.TrimFunc(c, func(r rune) bool { return unicode.IsSpace(r) || r == '\u200b' || r == '\ufeff' })
		c = strings.TrimRightFunc(c, func(r rune) bool { return unicode.IsSpace(r) || r == '$' })
		if c != "" && c != "%" { // an empty cell, the currency of the amount after it, the unit of the one before
			cells = append(cells, c)
		}
	}
	return cells
}

// cells is line k's count of cells (split by cellGaps) and the byte
// offsets where its cells start and end (a column is seen by where its
// cells start, left-aligned, or end, right-aligned numbers); 0 and nil for
// a blank line or one of over 400 bytes. Read once, when first asked: a
// line is read again from every line a table may open on.
func (r *TableReader) cells(k int) (int, []int) {
	if r.cellCount == nil {
		r.cellCount, r.cellEdges = make([]int, len(r.lines)), make([][]int, len(r.lines))
	}
	if r.cellCount[k] == 0 {
		s := r.lines[k]
		lead := len(s) - len(strings.TrimLeft(s, " \t\u00a0"))
		s = strings.TrimRight(s, " \t\u00a0")
		if lead >= len(s) || len(s) > 400 {
			r.cellCount[k] = -1
			return 0, nil
		}
		gaps := cellGaps(s[lead:])
		edges := make([]int, 0, 2*len(gaps)+1)
		for _, g := range gaps {
			edges = append(edges, lead+g[0], lead+g[1])
		}
		r.cellCount[k], r.cellEdges[k] = len(gaps)+1, append(edges, len(s))
	}
	if r.cellCount[k] < 0 {
		return 0, nil
	}
	return r.cellCount[k], r.cellEdges[k]
}

// kind is line i's stmtKind, read once, when first asked: a text's lines
// are read again from every line a statement may open on.
func (r *TableReader) kind(i int) stmtLine {
	if r.of == nil {
		r.of, r.read = make([]stmtLine, len(r.lines)), make([]bool, len(r.lines))
	}
	if !r.read[i] {
		s := r.lines[i]
		r.of[i], r.read[i] = stmtKind(s), true
		if r.code && IsFence(s) {
			r.of[i] = stmtOther
		}
	}
	return r.of[i]
}

// StatementEnd is the end (exclusive line) of a statement starting at line i,
// as filings exported to text write them: its column-header lines (up to
// stmtHeaders: "Three Months Ended", "March 31,", "2024  2023"), then
// alignedMin or more rows (a label and values, "$" a cell of its own,
// cells empty or missing), blank lines between any two, label lines
// between rows (a section, a label wrapped onto the next line); it ends
// at its last row, before the columns of the next table ("2024  2023")
// or prose. hdr counts the lines from i to its first row; i and 0
// when there is none.
func (r *TableReader) StatementEnd(i int) (end, hdr int) {
	kind := r.kind
	if !MayHoldCells(r.lines[i]) {
		return i, 0 // neither cells nor indented: no header, no row (prose's lines, read fast)
	}
	if k := kind(i); k != stmtHeader && k != stmtColumns && k != stmtRow {
		// a table opens on its header or its first full row
		return i, 0
	}
	// body: a row or a label seen (the header is above it)
	headers, rows, labels, blanks, body := 0, 0, 0, 0, false
lines:
	for k := i; k < min(len(r.lines), i+stmtMaxLines); k++ {
		switch kind(k) {
		case stmtBlank:
			if blanks++; blanks > stmtBlanks {
				break lines
			}
			continue
		case stmtRow, stmtRow1:
			if kind(k) == stmtRow {
				rows++
			}
			// before the first full row, rows of one value count as
			// labels: a run of them opens no statement (and a failed
			// look ends soon, so the lines are read about once)
			if labels++; rows > 0 {
				labels = 0
			} else if labels > stmtLabels {
				break lines
			}
			end, body = k+1, true
		case stmtHeader, stmtColumns:
			switch {
			case !body:
				if headers++; headers > stmtHeaders {
					return i, 0
				}
				hdr = k + 1 - i
			case rows > 0 && kind(k) == stmtColumns:
				break lines // the next table's columns
			default:
				if labels++; labels > stmtLabels {
					break lines
				}
			}
		case stmtLabel:
			if labels, body = labels+1, true; labels > stmtLabels {
				break lines
			}
		case stmtWrapped, stmtPage:
			// a long label's rest, a page break's number: between rows
			// only (before the first, or not followed by one, it is prose)
			if labels++; rows == 0 || labels > stmtLabels {
				break lines
			}
		default:
			break lines
		}
		blanks = 0
	}
	if rows < alignedMin {
		return i, 0
	}
	return end, hdr
}

// cellGaps are the gaps between the cells of a line of a space-aligned
// table, as [start, end) byte offsets: runs of two or more spaces (no-break
// spaces too, as filings exported to text have them), or of tabs. They are
// the matches of the pattern `[ \x{00a0}]{2,}|\t+`, read by hand: a
// pattern cost most of the time of reading a filing's lines.
func cellGaps(s string) [][2]int {
	if !MayHoldCells(s) {
		return nil // most lines of prose
	}
	var gaps [][2]int
	for i := 0; i < len(s); {
		j, n := i, 0 // a run of spaces and no-break spaces
		for j < len(s) {
			if s[j] == ' ' {
				j, n = j+1, n+1
			} else if s[j] == 0xc2 && j+1 < len(s) && s[j+1] == 0xa0 {
				j, n = j+2, n+1
			} else {
				break
			}
		}
		switch {
		case n >= 2:
			gaps = append(gaps, [2]int{i, j})
			i = j
		case s[i] == '\t':
			j = i + 1
			for j < len(s) && s[j] == '\t' {
				j++
			}
			gaps = append(gaps, [2]int{i, j})
			i = j
		default:
			// one byte on: a gap opens on ' ', '\t' or 0xc2, none of them
			// inside a rune (the pattern reads a bad byte as a rune too)
			i++
		}
	}
	return gaps
}

// isValue reports a statement's value cell (valueCell); the bytes are
// looked at first, so that a label's words cost no pattern match: every
// value holds a digit or a dash, or is a mark for none.
func isValue(c string) bool {
	if !strings.ContainsAny(c, "0123456789-–—") {
		switch c {
		case "n/a", "N/A", "NA", "NM", "nil", "*":
		default:
			return false
		}
	}
	return valueCell.MatchString(c)
}

// countFields is len(strings.Fields(s)), without making the words.
func countFields(s string) int {
	n, in := 0, false
	for _, r := range s {
		if unicode.IsSpace(r) {
			in = false
		} else if !in {
			n, in = n+1, true
		}
	}
	return n
}

// splitCells is s cut at its cellGaps: the text between them, empty
// between two gaps next to each other.
func splitCells(s string) []string {
	gaps := cellGaps(s)
	cells := make([]string, 0, len(gaps)+1)
	at := 0
	for _, g := range gaps {
		cells = append(cells, s[at:g[0]])
		at = g[1]
	}
	return append(cells, s[at:])
}
