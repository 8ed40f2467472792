package evidence

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel/chunk"
)

// Units are a passage's evidence units: its header and its sentences (or,
// in text made of lines, its turns, rows, items and code blocks, with the
// context lines they need), as byte offsets [start, end) into the passage
// text.
type Units struct {
	// Header is the passage's context line, or nil: its first line when
	// that line is a Markdown heading or a title (short, no closing
	// punctuation, followed by more text).
	Header *[2]int
	// Sentences are the sentences after the header (chunk.SplitSentences):
	// in order, disjoint, none holding the header.
	Sentences [][2]int
	// Headings marks the sentences that open a section inside the passage
	// (a chunk of several documents or sections): a line of its own after
	// a blank line that reads as a title, or a Markdown heading, with more
	// text after it. nil when there is none.
	Headings []bool
	// Kinds are the units' kinds, nil when every unit is a prose
	// sentence (Split found no structure: today's sentences).
	Kinds []Kind
	// Needs lists, per unit, the units sent with it (indices of earlier
	// units): its context line (a turn's prefix, a table's header) and
	// its heading path (the Markdown headings above it in the passage).
	// nil when no unit needs another.
	Needs [][]int
	// Groups numbers the units that are one reader's unit cut into
	// sentences: the sentences of one turn (or cue) share a number > 0,
	// as do those of one list item; 0 for any other unit. nil when Kinds
	// is. A selector with whole=turn|item sends such a group whole.
	Groups []int
}

// Group is unit j's group (Units.Groups; 0: none).
func (u Units) Group(j int) int {
	if u.Groups == nil {
		return 0
	}
	return u.Groups[j]
}

// Kind is unit j's kind.
func (u Units) Kind(j int) Kind {
	if u.Kinds == nil {
		return Sentence
	}
	return u.Kinds[j]
}

// RouteOf is the kind of text of a passage split into u, for a model's
// models by kind (Model.Kinds): KindTable when the splitter found table
// rows in it (with rows read: Model.Units), else KindTurns when it found
// turns, else KindProse. Prose, split as before the units (no Kinds), is
// always KindProse: the top model's.
func RouteOf(u Units) string {
	turns := false
	for _, k := range u.Kinds {
		switch k {
		case Row:
			return KindTable
		case Turn:
			turns = true
		}
	}
	if turns {
		return KindTurns
	}
	return KindProse
}

// maxHeaderWords is the longest first line read as a title.
const maxHeaderWords = 16

// Split returns the evidence units of a passage. Pure: no header and no
// sentences for an empty or all-space text; any string is split (invalid
// UTF-8 gives spans inside it, but Selector rejects such texts). Prose is
// cut into sentences (chunk.SplitSentences); a text with line structure
// (structure.go: conversation turns, subtitle cues, log lines, tables,
// lists, fenced code, Markdown headings) into the units of Kinds. It
// reads the structures the embedded model reads (DefaultModel().Units();
// SplitUnits reads others), as the selector does by default and an index
// stores sentence vectors for.
func Split(text string) Units {
	return SplitUnits(text, DefaultModel().Units())
}

// DefaultUnits are the structures a model that does not read unit_row
// reads unless told (Model.Units), fitted on prose: rows are off (on
// TAT-QA's validation questions the model fitted on prose alone sends 6
// to 19 points more of the gold rows reading them as prose than as
// units: docs/evidence.md "Which structures"). A model that reads
// unit_row, or has a kind's model that does (the embedded one), reads
// rows too.
const DefaultUnits = AllUnits &^ RowUnits

// SplitUnits is Split reading only the structures in on (SentenceUnits
// implied): a text whose structures are all off is cut into sentences
// exactly as before the units.
func SplitUnits(text string, on Structures) Units {
	return splitUnits(text, on, notInTable)
}

// inTable is where a passage starts, as the lines its source gave above
// it tell (TextQuery.Above).
type inTable uint8

const (
	notInTable      inTable = iota
	inMarkdownTable         // its lines above end in a Markdown table's rule
	inTextTable             // … in the header of a space-aligned table
	inStatement             // … in (part of) the header of a statement
)

// splitUnits is SplitUnits for a passage that starts where in says. A
// text known to start inside a table (the source gave its header) starts
// with a row or a row's cut rest, or with the rest of its header, never a
// title; and a space-aligned table's first line in it (on its first two
// lines: the first may be a cut rest) is a row, its header the one above
// (under a statement's header, only where that line reads as a row: its
// columns' line, "Segment  2024  2023", may still be in the passage).
func splitUnits(text string, on Structures, in inTable) Units {
	ls := splitLines(text)
	titled := in == notInTable
	if blocks, ok := structure(text, ls, on|SentenceUnits); ok {
		if in == inTextTable || in == inStatement {
			for k, bl := range blocks {
				if bl.from > 1 {
					break
				}
				if bl.aligned {
					if in == inTextTable || chunk.NewTableReader(lineTexts(text, ls[bl.from:bl.from+1]), true).StatementRow(0) {
						blocks[k].headerRows = 0
					}
					break
				}
			}
		}
		return withHeader(text, splitStructured(text, ls, blocks, on|SentenceUnits), titled)
	}
	return splitProse(text, titled)
}

// splitProse cuts text into sentences, as Split did before the units: the
// title line as the header (when titled), headings marked.
func splitProse(text string, titled bool) Units {
	sents := chunk.SplitSentences(text)
	var u Units
	if len(sents) > 1 && titled {
		if h := headerLine(text); h != nil && sents[0] == *h {
			u.Header, sents = h, sents[1:]
		}
	}
	u.Sentences = sents
	for j, sp := range sents {
		if j < len(sents)-1 && isHeading(text, sp) {
			if u.Headings == nil {
				u.Headings = make([]bool, len(sents))
			}
			u.Headings[j] = true
		}
	}
	return u
}

// withHeader takes a structured split's first unit as the header when the
// text may have one (titled) and it is the text's header line (a title or
// a Markdown heading before the rest), and marks the units that open a
// section.
func withHeader(text string, u Units, titled bool) Units {
	if len(u.Sentences) > 1 && u.Kinds[0] == Sentence && titled {
		if h := headerLine(text); h != nil && u.Sentences[0] == *h {
			u.Header = h
			u.Sentences, u.Kinds, u.Needs, u.Groups = u.Sentences[1:], u.Kinds[1:], u.Needs[1:], u.Groups[1:]
			for j, n := range u.Needs {
				// the header is sent with every unit: no unit needs it
				n = slices.DeleteFunc(slices.Clone(n), func(i int) bool { return i == 0 })
				for k := range n {
					n[k]--
				}
				u.Needs[j] = n
			}
		}
	}
	needed := false
	for j, n := range u.Needs {
		if len(n) == 0 {
			u.Needs[j] = nil
		}
		needed = needed || len(n) > 0
	}
	if !needed {
		u.Needs = nil
	}
	for j, sp := range u.Sentences {
		if j < len(u.Sentences)-1 && u.Kinds[j] == Sentence && isHeading(text, sp) {
			if u.Headings == nil {
				u.Headings = make([]bool, len(u.Sentences))
			}
			u.Headings[j] = true
		}
	}
	return u
}

// isHeading reports whether the sentence sp of text is a section heading:
// the whole of its line, a Markdown heading, or a title (titleLike) after
// a blank line.
func isHeading(text string, sp [2]int) bool {
	before, after := text[:sp[0]], text[sp[1]:]
	lineStart := strings.LastIndexByte(before, '\n') + 1
	if strings.TrimSpace(before[lineStart:]) != "" || lineStart == 0 {
		return false // not at a line's start, or the passage's own first line
	}
	if nl := strings.IndexByte(after, '\n'); strings.TrimSpace(after[:max(nl, 0)]) != "" || nl < 0 {
		return false // not a whole line, or nothing after it
	}
	line := text[sp[0]:sp[1]]
	if strings.HasPrefix(line, "#") {
		return true
	}
	prev := strings.TrimRightFunc(before[:lineStart-1], func(r rune) bool { return r == ' ' || r == '\t' || r == '\r' })
	return strings.HasSuffix(prev, "\n") && titleLike(line) && !runsOn(after)
}

// headerLine returns the span of the text's first line when it is a header:
// a Markdown heading, or a title — at most maxHeaderWords words, not
// starting in lower case, not ending in sentence punctuation or a comma
// (closing quotes aside) — with more text on later lines.
func headerLine(text string) *[2]int {
	start := len(text) - len(strings.TrimLeftFunc(text, unicode.IsSpace))
	nl := strings.IndexByte(text[start:], '\n')
	if nl < 0 {
		return nil
	}
	end := start + len(strings.TrimRightFunc(text[start:start+nl], unicode.IsSpace))
	if end <= start || strings.TrimSpace(text[start+nl:]) == "" {
		return nil
	}
	line := text[start:end]
	if strings.HasPrefix(line, "#") || (titleLike(line) && !runsOn(text[end:])) {
		return &[2]int{start, end}
	}
	return nil
}

// runsOn reports text after a line that carries its sentence on: the next
// line follows with no blank line between and starts in lower case, as a
// hard-wrapped paragraph's lines do ("I will not begin to describe my
// present\n  situation; …").
func runsOn(after string) bool {
	nl := strings.IndexByte(after, '\n')
	if nl < 0 {
		return false
	}
	next := strings.TrimLeft(after[nl+1:], " \t")
	first, _ := utf8.DecodeRuneInString(next)
	return unicode.IsLower(first)
}

// titleLike reports a line that reads as a title: at most maxHeaderWords
// words, not starting in lower case or with punctuation that continues a
// sentence, not ending in sentence punctuation, a comma, a dash or an
// ellipsis (closing quotes aside).
func titleLike(line string) bool {
	// A sentence's end may hide behind closing quotes ("… “Humbug.”"), a
	// sentence broken off ends in a dash or an ellipsis ("I said—"), and
	// a chunk cut mid-sentence starts in lower case or with the cut
	// sentence's punctuation (", but no one could say", "’d collapsed"):
	// none is a title.
	last, _ := utf8.DecodeLastRuneInString(strings.TrimRight(line, "\"'”’»)] "))
	first, _ := utf8.DecodeRuneInString(line)
	words := strings.Fields(line)
	if strings.ContainsRune(".!?,;:。！？…—–", last) || strings.ContainsRune(",.;:!?…—–’”»)]", first) || len(words) > maxHeaderWords {
		return false
	}
	if r, _ := utf8.DecodeRuneInString(strings.TrimLeft(line, "\"'‘’“«([ ")); unicode.IsLower(r) || !strings.ContainsFunc(line, unicode.IsLetter) {
		return false // "'t you glad", or no word at all
	}
	for i, w := range words {
		// a sentence ends inside the line ("… dormitory. He pulled out the")
		if i < len(words)-1 && len(w) > 4 && strings.ContainsRune(".!?", rune(w[len(w)-1])) && strings.ToLower(w) == w && strings.ContainsFunc(w, unicode.IsLetter) {
			return false
		}
	}
	// a title does not end on a word that needs more after it
	return !runsOnWord[words[len(words)-1]]
}

// runsOnWord holds lower-case words a sentence goes on after: a line
// ending on one was cut from a sentence ("… broke down into what").
var runsOnWord = map[string]bool{"a": true, "an": true, "the": true, "of": true, "to": true, "and": true, "or": true, "but": true,
	"into": true, "on": true, "in": true, "at": true, "by": true, "for": true, "from": true, "with": true, "that": true, "which": true,
	"what": true, "his": true, "her": true, "their": true, "my": true, "was": true, "were": true, "is": true}

// headerText is a header the caller gives for a passage (an index's
// document title and section) as one line: its white space runs made
// single spaces.
func headerText(h string) string {
	return strings.Join(strings.Fields(h), " ")
}

// aboveText is the lines a source gave above a passage (TextQuery.Above)
// as they are sent, blank lines dropped: a line that may be a text table's
// header (textTableLine) keeps its layout, its trailing white space cut
// (cellSpaces), so that a
// space-aligned table's or a statement's header stands over the columns of
// the rows the passage sends as the document has them; any other line (a
// heading, a Markdown table's header row) has its white space runs made
// single spaces.
func aboveText(a string) string {
	var lines []string
	for _, l := range strings.Split(a, "\n") {
		if t := strings.TrimRightFunc(l, unicode.IsSpace); textTableLine(t) {
			l = cellSpaces(t)
		} else {
			l = headerText(l)
		}
		if l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

// textTableLine reports a line above (its trailing white space cut) that
// may be a text table's: one holding two spaces in a row, a tab or a
// no-break space (a cell gap, an indent), and neither a "|" (a Markdown
// table's) nor a Markdown heading's "#" opening it.
func textTableLine(l string) bool {
	return chunk.MayHoldCells(l) && !strings.Contains(l, "|") && !strings.HasPrefix(strings.TrimLeft(l, " \t\u00a0"), "#")
}

// cellSpaces is s laid out as sent (a text table's header line, a line's
// indent): its spaces, tabs and no-break spaces kept where they are (they
// place cells over their columns), any other white space (a lone "\r", a
// form feed) a space, so that no line break nor control character is sent.
func cellSpaces(s string) string {
	if !strings.ContainsFunc(s, otherSpace) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if otherSpace(r) {
			return ' '
		}
		return r
	}, s)
}

// otherSpace is white space other than what places a cell: a space, a tab,
// a no-break space.
func otherSpace(r rune) bool {
	return r != ' ' && r != '\t' && r != '\u00a0' && unicode.IsSpace(r)
}

// tableAbove is where a passage starts among a table's rows, as the lines
// above it (TextQuery.Above) tell: they end in a Markdown table's rule, or
// in the header of a space-aligned table or a statement (chunk.Above's
// text tables) that reads on into the passage's first lines (after its
// first line, which may be a row's cut rest); an aligned table's header
// first, its last line the header and the passage's lines its rows.
func tableAbove(above, text string) inTable {
	if above == "" {
		return notInTable
	}
	last := strings.TrimSpace(above[strings.LastIndexByte(above, '\n')+1:])
	if strings.Contains(last, "|") && chunk.IsTableRule(last) {
		return inMarkdownTable
	}
	if !chunk.MayHoldCells(above) {
		return notInTable // no cells: no text table's header (the cheap test first)
	}
	al := strings.Split(above, "\n")
	n := len(al)
	var first []string // the passage's first lines: enough for a table's least rows, blank and label lines between
	for _, l := range splitLines(text) {
		if first = append(first, text[l.start:l.end]); len(first) == textTableLook {
			break
		}
	}
	readers := make([]*chunk.TableReader, 0, 2)
	for skip := 0; skip <= 1 && skip < len(first); skip++ {
		r := chunk.NewTableReader(append(slices.Clip(al), first[skip:]...), true)
		if r.AlignedEnd(n-1) > n {
			return inTextTable
		}
		readers = append(readers, r)
	}
	for _, r := range readers {
		for k := max(0, n-stmtHeaderLook); k < n; k++ {
			if end, hdr := r.StatementEnd(k); end > n && k+hdr >= n {
				return inStatement
			}
		}
	}
	return notInTable
}

// How much tableAbove reads: a statement's header lines above, the
// passage's lines.
const (
	stmtHeaderLook = 4
	textTableLook  = 32
)

// turnRest is the units [from, to) of u that are the rest of a turn the
// passage's start cut, as an index's chunker cuts a chat: in a passage of
// turns that starts cut (cutStart), its opening lines up to a blank line
// or its first turn; else the prose lines that run into the first turn's
// speaker/time line with no blank line between, when they start cut. That line
// is in the chunk before, so sent from this passage they would reach the
// reader without who said them (dedup, the default, does not send them).
func turnRest(text string, u Units) (from, to int) {
	first := -1 // the first context line
	for j := range u.Sentences {
		if k := u.Kind(j); k == Context {
			first = j
			break
		} else if k != Sentence {
			return 0, 0
		}
	}
	if first <= 0 || first+1 >= len(u.Sentences) || u.Kind(first+1) != Turn {
		return 0, 0
	}
	// a passage that starts cut (no title line of its own): its opening
	// lines up to a blank line (a session's end) or its first turn
	if u.Header == nil && cutStart(text[u.Sentences[0][0]:]) {
		to = 1
		for to < first && blankLineIn(text[u.Sentences[to-1][1]:u.Sentences[to][0]]) < 0 {
			to++
		}
		return 0, to
	}
	// else the lines after the last blank line above the turn
	start := 0
	if u.Header != nil {
		start = u.Header[1]
	}
	lead := text[start:u.Sentences[first][0]]
	for b := blankLineIn(lead); b >= 0; b = blankLineIn(lead) {
		start += b
		lead = lead[b:]
	}
	from = first
	for from > 0 && u.Sentences[from-1][0] >= start && !(u.Headings != nil && u.Headings[from-1]) {
		from--
	}
	// only text that starts cut: in a word, after a sentence's start, or
	// inside the prefix's time; a line that opens whole ("#NOTE#: [ Scene
	// … ]", "(They sit.)", "Yes.") may be a turn the splitter does not read
	if from == first || !cutStart(text[u.Sentences[from][0]:]) {
		return 0, 0
	}
	return from, first
}

// blankLineIn is the end of the first blank line in s (a line of white
// space alone between two line breaks, "\r\n" as "\n"), -1 when none.
func blankLineIn(s string) int {
	for i := strings.IndexByte(s, '\n'); i >= 0; {
		j := strings.IndexByte(s[i+1:], '\n')
		if j < 0 {
			return -1
		}
		if strings.TrimSpace(s[i+1:i+1+j]) == "" {
			return i + 1 + j + 1
		}
		i += 1 + j
	}
	return -1
}

// cutPrefix matches the tail of a turn's prefix that a chunk's start cut
// ("-05-15 15:28] Ines: ", "19:02] babo: "): a time's end, its bracket, a
// name and a colon.
var cutPrefix = regexp.MustCompile(`^[^\n\[\]]{0,30}\d\][ \t]*[^\s:\[\]][^:\n]{0,40}:(?:[ \t]|$)`)

// cutStart reports text that starts where no line would: a lower-case
// letter, a digit, or punctuation that continues a sentence.
func cutStart(text string) bool {
	r, _ := utf8.DecodeRuneInString(text)
	return unicode.IsLower(r) || unicode.IsDigit(r) || strings.ContainsRune(",.;:!?)]}’”…-–—", r)
}
