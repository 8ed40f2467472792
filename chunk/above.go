package chunk

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Above returns the lines of text above byte offset start that a chunk
// starting there needs to be read, "\n"-joined ("" when it needs none):
// the Markdown heading path over start (the nearest ATX heading of each
// level above it, outermost first; a heading the start cuts counts as
// above) and, when start falls on the rule or among the rows of a Markdown
// table whose header lies above it, that table's header row and its rule
// (where start cuts the header row, that row whole);
// when it falls among the rows of a space-aligned table or a financial
// statement (TableReader) below its header, that header's lines. A chunker
// cuts by tokens, so a chunk in the middle of a section or of a long table
// otherwise reaches the reader without the section it is in or the names
// of its columns.
//
// Headings and tables inside fenced code blocks are not read; a line of
// over maxAboveLine bytes is not taken (no heading is that long, and such a
// table header costs more than it says). The rules are those of package
// evidence's units: an ATX heading ("#" to "######", a space, text), a
// table as a line holding "|" over a rule (IsTableRule) and the lines
// holding "|" below it, TableReader's tables among the lines that hold no
// "|". Pure: any text, any start (out of range gives "").
func Above(text string, start int) string {
	return AboveAll(text, []int{start})[0]
}

// AboveAll is Above at each of starts (in any order), in one pass over
// text (and, where it holds cell gaps, a reading of its lines near the
// starts for text tables): an index asks it for every chunk of a document
// it found.
func AboveAll(text string, starts []int) []string {
	out := make([]string, len(starts))
	order := make([]int, len(starts))
	for i := range order {
		order[i] = i
	}
	// compared, not subtracted: the difference of starts far out of range
	// overflows
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(starts[a], starts[b]) })
	var sc aboveScan
	tables := newTextTables(text)
	fed := 0 // text[:fed] is read, fed at a line's start
	// the last start answered, the start of its line and its answer: the
	// text is read once however long its lines (one line to the end of a
	// text whose lines end in "\r" alone)
	// (and its first text: a start in a line's indent cuts none of it)
	prev, prevLine, prevLead, prevOut := 0, 0, 0, ""
	for _, i := range order {
		start := starts[i]
		if start <= 0 || start > len(text) {
			continue
		}
		// the line start falls in, whole: a heading it cuts is above it,
		// and a table row it cuts or starts continues the table
		lineStart := prevLine
		if j := strings.LastIndexByte(text[prev:start], '\n'); j >= 0 {
			lineStart = prev + j + 1
		}
		if lineStart == prevLine && prev > 0 && (start == prev || start > lineStart && prev > lineStart && (start > prevLead) == (prev > prevLead)) {
			// what lies above a start inside a line is that of any start
			// inside it (inside its text, or inside its indent)
			out[i] = withTable(prevOut, tables.headerAt(start))
			prev = start
			continue
		}
		for fed < lineStart {
			end := fed + strings.IndexByte(text[fed:], '\n') // a line break before lineStart ends every line here
			sc.line(strings.TrimSuffix(text[fed:end], "\r"))
			fed = end + 1
		}
		line := text[lineStart:]
		if nl := strings.IndexByte(line, '\n'); nl >= 0 {
			line = line[:nl]
		}
		lead := lineStart + len(line) - len(strings.TrimLeftFunc(line, unicode.IsSpace))
		prevOut = sc.at(text, start, lineStart, start > lead)
		out[i] = withTable(prevOut, tables.headerAt(start))
		prev, prevLine, prevLead = start, lineStart, lead
	}
	return out
}

// aboveScan is what the lines read so far leave open at the next line:
// the heading path, a fenced code block, a table.
type aboveScan struct {
	path         []pathHeading
	fence        string // the open fence's marker, "" outside code
	header, rule string // the table the lines read so far are in
	inTable      bool
	prevPipe     string // the line before, when it holds "|": a table's header if a rule follows
}

// line reads the next line (its line break and a CR before it removed).
func (sc *aboveScan) line(line string) {
	if sc.fence != "" || IsFence(line) {
		// code: no table, no heading (a fence opening ends a table)
		sc.fence, sc.inTable, sc.prevPipe = fenceAfter(sc.fence, line), false, ""
		return
	}
	switch {
	case sc.inTable && strings.Contains(line, "|") && strings.TrimSpace(line) != "":
		return // a row
	case sc.prevPipe != "" && IsTableRule(strings.TrimSpace(line)):
		sc.header, sc.rule, sc.inTable, sc.prevPipe = sc.prevPipe, strings.TrimSpace(line), true, ""
		return
	}
	sc.inTable = false
	if titledHeading(line) {
		sc.path = pathUnder(sc.path, line)
		if h := strings.TrimSpace(line); len(h) <= maxAboveLine {
			sc.path = append(sc.path, pathHeading{headingLevel(line), h})
		}
	}
	sc.prevPipe = ""
	if strings.Contains(line, "|") && len(strings.TrimSpace(line)) <= maxAboveLine {
		sc.prevPipe = strings.TrimSpace(line)
	}
}

// at is Above at start, whose line starts at lineStart (every line before
// it read), leaving the scan as it is; cut: the line holds text before
// start.
func (sc *aboveScan) at(text string, start, lineStart int, cut bool) string {
	first := text[lineStart:]
	if i := strings.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	first = strings.TrimSuffix(first, "\r")
	table := sc.fence == "" && sc.inTable && strings.Contains(first, "|") && strings.TrimSpace(first) != ""
	header, rule := sc.header, sc.rule
	if r := strings.TrimSpace(first); sc.fence == "" && !table && sc.prevPipe != "" && len(r) <= maxAboveLine && IsTableRule(r) {
		// start on or in a table's rule: its header row is above, its rows
		// below
		table, header, rule = true, sc.prevPipe, r
	}
	// a table's header row the start cuts (its rule the next line): the
	// row whole above the chunk, which holds the rule and the rows
	cutHeader := ""
	if h := strings.TrimSpace(first); sc.fence == "" && !table && cut && strings.Contains(h, "|") && len(h) <= maxAboveLine {
		if nl := strings.IndexByte(text[lineStart:], '\n'); nl >= 0 {
			next := text[lineStart+nl+1:]
			if i := strings.IndexByte(next, '\n'); i >= 0 {
				next = next[:i]
			}
			if r := strings.TrimSpace(next); len(r) <= maxAboveLine && IsTableRule(r) {
				cutHeader = h
			}
		}
	}
	path := sc.path
	if sc.fence == "" && !table {
		if start == lineStart {
			// the chunk's own first heading (after blank lines, up to
			// maxAboveLine bytes of them) ends the headings above of its
			// level and deeper; indented, its line is code
			for rest := text[start:]; len(rest) >= len(text)-start-maxAboveLine; {
				line, after, found := strings.Cut(rest, "\n")
				if first = line; strings.TrimSpace(line) != "" || !found {
					break
				}
				rest = after
			}
		}
		if titledHeading(first) {
			path = pathUnder(path, first)
			if h := strings.TrimSpace(first); start > lineStart && len(h) <= maxAboveLine {
				// a heading the start cuts: above the chunk
				path = append(slices.Clip(path), pathHeading{headingLevel(first), h})
			}
		}
	}
	var lines []string
	for _, h := range path {
		lines = append(lines, h.text)
	}
	if table && len(header)+len(rule) <= maxAboveLine {
		lines = append(lines, header, rule)
	}
	if cutHeader != "" {
		lines = append(lines, cutHeader)
	}
	return strings.Join(lines, "\n")
}

// pathUnder is path without the headings a heading line of its level
// closes (those of its level and deeper).
func pathUnder(path []pathHeading, line string) []pathHeading {
	level := headingLevel(line)
	for len(path) > 0 && path[len(path)-1].level >= level {
		path = path[:len(path)-1]
	}
	return path
}

// headingLevel is the number of '#' opening a heading line.
func headingLevel(line string) int { return len(line) - len(strings.TrimLeft(line, "#")) }

// pathHeading is one heading of a path: its level (1 for "#") and its line.
type pathHeading struct {
	level int
	text  string
}

// maxAboveLine is the longest line Above takes, in bytes.
const maxAboveLine = 1000

// tableRule is a Markdown table's separator row: "|---|:--:|", "--- | ---".
var tableRule = regexp.MustCompile(`^\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)+\|?[ \t]*$|^\|[ \t]*:?-{3,}:?[ \t]*\|[ \t]*$`)

// titledHeading reports an ATX heading with text after its marks.
func titledHeading(s string) bool {
	return heading(s) && strings.TrimSpace(strings.TrimLeft(s, "#")) != ""
}

// IsTableRule reports a Markdown table's separator row ("|---|:--:|",
// "--- | ---"), s trimmed: the rule Above and package evidence's units
// read a table by. The bytes are looked at first, so that a table's rows
// cost no pattern match.
func IsTableRule(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '|', ':', '-', ' ', '\t':
		default:
			return false
		}
	}
	return strings.Contains(s, "---") && tableRule.MatchString(s)
}

// textTables are the space-aligned tables and statements of a text that
// have a header (TableReader), read as starts ask for them: a table a
// start falls in begins after the last barrier line above it (a line no
// table holds nor opens: prose), so the lines before that barrier need
// not be read, and ask, which wants a few chunks of each document, reads
// little of it.
type textTables struct {
	text       string
	lines      []string
	lineStarts []int // each line's first byte
	r          *TableReader
	tables     []textTable // in text order
	next       int         // the first table a later start may fall in
	read       int         // the lines before it are read
	fence      string      // the fence open at line read, "" outside code
}

// textTable is one table's lines: its header [from, body), its rows [body, to).
type textTable struct{ from, body, to int }

// newTextTables splits text into lines for its tables (nil when no line of
// text can hold a cell gap: the cheap test first).
func newTextTables(text string) *textTables {
	if !MayHoldCells(text) {
		return nil
	}
	n := strings.Count(text, "\n") + 1
	t := &textTables{text: text, lines: make([]string, 0, n), lineStarts: make([]int, 0, n)}
	for at := 0; ; {
		t.lineStarts = append(t.lineStarts, at)
		nl := strings.IndexByte(text[at:], '\n')
		if nl < 0 {
			t.lines = append(t.lines, strings.TrimSuffix(text[at:], "\r"))
			break
		}
		t.lines = append(t.lines, strings.TrimSuffix(text[at:at+nl], "\r"))
		at += nl + 1
	}
	t.r = NewTableReader(t.lines, true)
	return t
}

// barrier reports line k one no table holds or opens: no cell gap (so no
// aligned table's line, and no statement opens on it) and a statement's
// end (prose, stmtOther).
func (t *textTables) barrier(k int) bool {
	s := t.lines[k]
	return !MayHoldCells(s) && t.r.kind(k) == stmtOther
}

// fenceLine reads line k for the fences of code blocks, as readTo does.
func (t *textTables) fenceLine(k int) { t.fence = fenceAfter(t.fence, t.lines[k]) }

// readTo reads the tables that begin at or before line l, in text order,
// from the last barrier line before l on (the fences of the lines it
// skips still read).
func (t *textTables) readTo(l int) {
	for b := l - 1; b >= t.read; b-- {
		if t.barrier(b) {
			// the fences of the lines skipped (none where their text holds
			// no fence's marker: the cheap test first)
			if skipped := t.text[t.lineStarts[t.read] : t.lineStarts[b]+len(t.lines[b])]; strings.Contains(skipped, "```") || strings.Contains(skipped, "~~~") {
				for k := t.read; k <= b; k++ {
					t.fenceLine(k)
				}
			}
			t.read = b + 1
			break
		}
	}
	i := t.read
	for i <= l && i < len(t.lines) {
		s := t.lines[i]
		if t.fence == "" && !IsFence(s) && !strings.Contains(s, "|") { // a Markdown table's line is aboveScan's
			if j := t.r.AlignedEnd(i); j > i {
				t.tables = append(t.tables, textTable{i, i + 1, j})
				i = j
				continue
			}
			if j, hdr := t.r.StatementEnd(i); j > i {
				if hdr > 0 {
					t.tables = append(t.tables, textTable{i, i + hdr, j})
				}
				i = j
				continue
			}
		}
		t.fenceLine(i)
		i++
	}
	t.read = max(t.read, i)
}

// withTable is what lies above a chunk: the lines aboveScan gives, then
// a text table's header, less the header's lines aboveScan gives already
// (a heading with two spaces, "## Sales  2024", reads as a statement's
// column line).
func withTable(above, header string) string {
	if header == "" || above == "" {
		return above + header
	}
	given := strings.Split(above, "\n")
	var lines []string
	for _, l := range strings.Split(header, "\n") {
		if !slices.Contains(given, strings.TrimSpace(l)) {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return above
	}
	return above + "\n" + strings.Join(lines, "\n")
}

// headerAt is the header of the table whose rows hold the chunk starting
// at start of text, its lines "\n"-joined, white space at their ends
// removed ("" when none); where the start cuts the header itself, the
// header's lines above the chunk's first whole line (the chunk holds the
// rest). The chunk's first text decides: a start in the line break after
// a table's last row is after the table (up to maxAboveLine bytes of white
// space are looked past). Starts come in text order.
func (t *textTables) headerAt(start int) string {
	if t == nil {
		return ""
	}
	text := t.text
	first := start
	for first < len(text) && first-start <= maxAboveLine {
		r, n := utf8.DecodeRuneInString(text[first:])
		if !unicode.IsSpace(r) {
			break
		}
		first += n
	}
	if first == len(text) || first-start > maxAboveLine {
		return ""
	}
	line, found := slices.BinarySearch(t.lineStarts, first)
	if !found {
		line-- // first is inside the line before
	}
	t.readTo(line)
	for t.next < len(t.tables) && t.tables[t.next].to <= line {
		t.next++
	}
	if t.next == len(t.tables) || line < t.tables[t.next].from {
		return ""
	}
	tb := t.tables[t.next]
	upto := tb.body
	if line < tb.body {
		// in the header: the lines above the chunk's, and the line the
		// start cuts whole
		if upto = line; start > t.lineStarts[line] && strings.TrimSpace(text[t.lineStarts[line]:start]) != "" {
			upto++
		}
	}
	var hdr []string
	for _, s := range t.lines[tb.from:upto] {
		if s = strings.TrimRight(s, " \t\u00a0"); strings.TrimSpace(s) != "" {
			hdr = append(hdr, s)
		}
	}
	return strings.Join(hdr, "\n")
}
