package chunk

import (
	"regexp"
	"slices"
	"strings"
)

// Above returns the lines of text above byte offset start that a chunk
// starting there needs to be read, "\n"-joined ("" when it needs none):
// the Markdown heading path over start (the nearest ATX heading of each
// level above it, outermost first; a heading the start cuts counts as
// above) and, when start falls on the rule or among the rows of a Markdown
// table whose header lies above it, that table's header row and its rule. A chunker
// cuts by tokens, so a chunk in the middle of a section or of a long table
// otherwise reaches the reader without the section it is in or the names
// of its columns.
//
// Headings and tables inside fenced code blocks are not read; a line of
// over maxAboveLine bytes is not taken (no heading is that long, and such a
// table header costs more than it says). The rules are those of package
// evidence's units: an ATX heading ("#" to "######", a space, text), a
// table as a line holding "|" over a rule (IsTableRule) and the lines
// holding "|" below it. Pure: any text, any start (out of range gives "").
func Above(text string, start int) string {
	return AboveAll(text, []int{start})[0]
}

// AboveAll is Above at each of starts (in any order), in one pass over
// text: an index asks it for every chunk of a document it found.
func AboveAll(text string, starts []int) []string {
	out := make([]string, len(starts))
	order := make([]int, len(starts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return starts[a] - starts[b] })
	var sc aboveScan
	fed := 0 // text[:fed] is read, fed at a line's start
	// the last start answered, the start of its line and its answer: the
	// text is read once however long its lines (one line to the end of a
	// text whose lines end in "\r" alone)
	prev, prevLine, prevOut := 0, 0, ""
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
		if lineStart == prevLine && prev > 0 && (start == prev || start > lineStart && prev > lineStart) {
			// what lies above a start inside a line is that of any start
			// inside it
			out[i] = prevOut
			prev = start
			continue
		}
		for fed < lineStart {
			end := fed + strings.IndexByte(text[fed:], '\n') // a line break before lineStart ends every line here
			sc.line(strings.TrimSuffix(text[fed:end], "\r"))
			fed = end + 1
		}
		out[i] = sc.at(text, start, lineStart)
		prev, prevLine, prevOut = start, lineStart, out[i]
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
	t := strings.TrimLeft(line, " \t")
	if sc.fence != "" {
		if strings.HasPrefix(t, sc.fence) {
			sc.fence = ""
		}
		return
	}
	if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
		sc.fence, sc.inTable, sc.prevPipe = t[:3], false, ""
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
// it read), leaving the scan as it is.
func (sc *aboveScan) at(text string, start, lineStart int) string {
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
