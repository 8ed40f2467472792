package evidence

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/chunk"
)

// Kind is what an evidence unit is. Prose is cut into sentences; text
// made of lines (a chat export, a transcript, subtitles, a log, a table,
// a list, code) into the units a reader needs whole, each with the
// context line it needs to be read (Units.Needs).
type Kind uint8

const (
	// Sentence is a sentence of prose (a Markdown heading too).
	Sentence Kind = iota
	// Turn is a sentence of one speaker's turn in a conversation (after
	// its "[time] Name:" prefix), of a subtitle cue, or a log's line.
	Turn
	// Row is a table's row (Markdown, columns aligned by spaces, or a
	// filing's statement, rows apart by blank lines); its table's header
	// row, or every line of a statement's column header, is its context.
	Row
	// Item is a sentence of a list item.
	Item
	// Code is a fenced code block, whole: never cut inside.
	Code
	// Context is a context line: a turn's "[time] Name:" prefix, a cue's
	// number and timing, a table's header row, a line of a statement's
	// column header. It is never chosen for
	// itself, only sent with a unit that needs it, and not scored as
	// evidence (its probability is 0).
	Context
)

var kindNames = [...]string{"sentence", "turn", "row", "item", "code", "context"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind?"
}

// Structures is a set of the line structures Split reads into units
// (the spec's units parameter); prose sentences are always read. Text
// whose structures are all off is split as before the units: sentences
// only (chunk.SplitSentences), with its header and headings.
type Structures uint8

const (
	// SentenceUnits is prose: always on, the only word of units=sentence.
	SentenceUnits Structures = 1 << iota
	// TurnUnits are conversation turns, subtitle cues and log lines (Turn).
	TurnUnits
	// RowUnits are table rows with their header (Row).
	RowUnits
	// ItemUnits are list items (Item).
	ItemUnits
	// CodeUnits are fenced code blocks (Code).
	CodeUnits
	// HeadingUnits are Markdown headings as units of their own, whose
	// path every unit below them needs.
	HeadingUnits
	// AllUnits reads every structure.
	AllUnits = SentenceUnits | TurnUnits | RowUnits | ItemUnits | CodeUnits | HeadingUnits
)

// unitWords are the units parameter's words, in Structures' bit order.
var unitWords = []string{"sentence", "turn", "row", "item", "code", "heading"}

// ParseStructures reads "|"-joined words of unitWords (units=turn|item)
// into a set, SentenceUnits always in it.
func ParseStructures(s string) (Structures, error) {
	on := SentenceUnits
	for _, w := range strings.Split(s, "|") {
		i := slices.Index(unitWords, w)
		if i < 0 {
			return 0, fmt.Errorf("%w: unknown unit kind %q (known: %s)", ctxsel.ErrInvalidInput, w, strings.Join(unitWords, ", "))
		}
		on |= 1 << i
	}
	return on, nil
}

// String writes the set as the units parameter's words.
func (s Structures) String() string {
	var ws []string
	for i, w := range unitWords {
		if s&(1<<i) != 0 {
			ws = append(ws, w)
		}
	}
	return strings.Join(ws, "|")
}

// line is one line of the text: [start, end) without its line break.
type line struct{ start, end int }

// Line-structure rules. Each is cheap (a few anchored patterns read on a
// line's first bytes) and needs the structure to repeat before the text is
// read as conversation, a table or a log, so prose keeps its sentences.
var (
	// "[10:02] Alice: …", "[2024-05-01 10:02] Bob Smith: …": a time or date
	// in the brackets, a name without sentence punctuation (not "[7] J. D.
	// Hunter. 2007. Matplotlib: …", a reference list); IRC clients' logs
	// name the nick in angle brackets, maybe with its channel mode
	// ("[10:02] <alice> …", "[10:02] <@op> …"), and a nick may be
	// bracketed itself ("[10:02] [admin]: …")
	bracketTurn = regexp.MustCompile(`^\[[^\]\n]{0,30}\d[:./-]\d[^\]\n]{0,30}\][ \t]*(?:` + ircNick + `|\[[^\s\[\]:]{1,30}\][^\s:]{0,30}:|[^\s:\[\]][^:\n.,;"“]{0,40}:)(?:[ \t]|$)`)
	// WhatsApp and similar: "12/03/2024, 14:05 - Alice: …", "[12.03.24, 14:05:09] Alice: …"
	datedTurn = regexp.MustCompile(`^\[?\d{1,4}[./-]\d{1,2}[./-]\d{1,4},? \d{1,2}:\d{2}(?::\d{2})?(?:[ \x{202f}]?[AaPp]\.?[Mm]\.?)?\]?[ \t]+(?:-[ \t]+)?[^\s:][^:\n]{0,40}:(?:[ \t]|$)`)
	// transcripts: "ALICE (00:01:02): …", "Dr. Bob (1:02): …", "00:01:02
	// Alice: …"; an IRC client's log without brackets: "10:02 <alice> …"
	timedTurn = regexp.MustCompile(`^(?:[^\s:()\[\]][^:()\n]{0,40}[ \t]\(\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?\):|\d{1,2}:\d{2}(?::\d{2})?[ \t]+(?:[^\s:<][^:\n]{0,40}:|` + ircNick + `))(?:[ \t]|$)`)
	// plain "Alice: …", "Dr Bob Smith: …", "Right Hon. Justin Trudeau: …"
	// (a parliament's record): up to four capitalised words (not "Girl 1:":
	// "Step 1:", "Section 2:" are no speakers); and a numbered role, as
	// diarised transcripts name speakers ("Speaker 1:", "SPEAKER_00:",
	// "Participant 3:", "Interviewer 2:")
	namedTurn = regexp.MustCompile(`^(?:\p{Lu}[\p{L}\p{N}'.-]{0,20}(?: \p{Lu}[\p{L}\p{N}'.-]{0,20}){0,3}|(?i:speaker|participant|interviewer|interviewee|respondent|person|caller|agent|customer|user|guest|host|moderator|panelist|student|teacher|patient|doctor)[ _]?\d{1,3}):(?:[ \t]|$)`)
	// Discord's copy format: a header line "Alice — Today at 9:41 PM",
	// "Bob Smith — Yesterday at 21:41", "Alice — 03/14/2024 9:41 PM",
	// "Alice — 3/14/24, 9:41 PM", the whole line, its message on the lines
	// below: a name, an em dash, a day or date and a time ending the line,
	// so prose with an em dash ("The band — formed in 1990 — …") is none
	discordTurn = regexp.MustCompile(`^([^\s—][^—\n]{0,40}?)[ \t]+—[ \t]+(?:(?i:today|yesterday) at|\d{1,4}[./-]\d{1,2}[./-]\d{1,4},?)[ \t]\d{1,2}:\d{2}(?:[ \x{202f}]?[AaPp]\.?[Mm]\.?)?[ \t]*$`)
	// a log event: "2024-05-01 10:02:03 …", "2024-05-01T10:02:03Z …", "[10:02:03] …", "May  1 10:02:03 host …"
	logLine = regexp.MustCompile(`^(?:\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|\[?\d{2}:\d{2}:\d{2}[.,\]\s]|[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} )`)
	// a subtitle cue's timing: "00:00:01,000 --> 00:00:04,000" (SRT), "00:01.000 --> 00:04.000" (VTT)
	cueTiming = regexp.MustCompile(`^(?:\d{1,2}:)?\d{2}:\d{2}[.,]\d{3}[ \t]+-->[ \t]+(?:\d{1,2}:)?\d{2}:\d{2}[.,]\d{3}`)
	// a list item: "- x", "* x", "+ x", "1. x", "2) x"
	// (a number's item starts with no digit or bracket: "438)  (134,605)" is a cut-off table cell)
	listItem = regexp.MustCompile(`^[ \t]*(?:[-*+•][ \t]+\S|\d{1,3}[.)][ \t]+[^\s\d(\[\x{00a0}])`)
	// a Markdown heading: "# Title" … "###### Title"
	atxHeading = regexp.MustCompile(`^#{1,6}[ \t]+\S`)
)

// ircNick is an IRC client's speaker: the nick in angle brackets, maybe
// behind its channel mode ("<alice>", "<@op>", "<+voiced>").
const ircNick = `<[@+%~&]?[^\s<>]{1,32}>`

// lookAt bounds what the line rules read of a line.
const lookAt = 160

// turnRules are tried in order; the first that matches a line gives its
// prefix (discordTurn's: the whole header line, its message the lines
// below). namedTurn and discordTurn need more evidence than the others
// (turnMin): namedMin lines, two speakers (turnSpeaker).
var turnRules = []*regexp.Regexp{discordTurn, bracketTurn, datedTurn, timedTurn, namedTurn}

// turnSpeaker is who a turn's prefix under rule r names, for the rules
// that need two speakers: a Discord header's name, or a plain prefix
// itself ("Alice:").
func turnSpeaker(r *regexp.Regexp, prefix string) string {
	if r == discordTurn {
		if name := discordName(prefix); name != "" {
			return name
		}
	}
	return prefix
}

// discordName is the name of a Discord header line ("Alice" of "Alice —
// Today at 9:41 PM"); "" when s is none.
func discordName(s string) string {
	if !strings.Contains(s, "—") {
		return ""
	}
	if m := discordTurn.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return ""
}

// Least lines that make a structure: turns of one rule (two distinct
// speakers for namedTurn and discordTurn), log events (tables:
// chunk.TableReader).
const (
	turnMin  = 2
	namedMin = 3
	logMin   = 2
)

// splitLines cuts text into lines (without "\n" or a "\r" before it).
func splitLines(text string) []line {
	var ls []line
	for start := 0; start <= len(text); {
		nl := strings.IndexByte(text[start:], '\n')
		end := len(text)
		if nl >= 0 {
			end = start + nl
		}
		e := end
		if e > start && text[e-1] == '\r' {
			e--
		}
		ls = append(ls, line{start, e})
		if nl < 0 {
			break
		}
		start = end + 1
	}
	return ls
}

// lineTexts is each line of text in ls, its line break left out.
func lineTexts(text string, ls []line) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = text[l.start:l.end]
	}
	return out
}

func head(s string) string {
	if len(s) > lookAt {
		return s[:lookAt]
	}
	return s
}

// turnPrefix is the length of a line's turn prefix under rule r (0: none).
func turnPrefix(r *regexp.Regexp, s string) int {
	if r == discordTurn && !strings.Contains(head(s), "—") {
		return 0 // no em dash: no Discord header (the cheap test first)
	}
	loc := r.FindStringIndex(head(s))
	if loc == nil {
		return 0
	}
	return len(strings.TrimRightFunc(s[:loc[1]], unicode.IsSpace))
}

// block is a run of lines read as one structure.
type block struct {
	kind       Kind // Turn (conversation, cues, log), Row (table), Item, Code; Sentence: prose
	from, to   int  // lines [from, to)
	rule       *regexp.Regexp
	log        bool // one event a line, no prefix
	cue        bool
	headerRows int  // a table's header lines (header row and separator)
	aligned    bool // a space-aligned table (its first line the header)
	// stmt reads a statement's lines (chunk.TableReader.StatementEnd; nil
	// for any other block): its headerRows lines are its column header,
	// each a context line of its own, the lines after them its rows
	// (stmtRows)
	stmt *chunk.TableReader
}

// structure reads text's lines into blocks; ok is false when nothing in
// it is structured beyond prose (and Markdown headings alone), so that
// Split keeps today's sentences for it. Only the structures in on are
// read; the lines of the others are prose.
func structure(text string, ls []line, on Structures) (blocks []block, ok bool) {
	at := func(i int) string { return text[ls[i].start:ls[i].end] }
	blank := func(i int) bool { return strings.TrimSpace(at(i)) == "" }
	// which turn rule the text follows: the first with enough lines
	var rule *regexp.Regexp
	turns, rows, items, code := on&TurnUnits != 0, on&RowUnits != 0, on&ItemUnits != 0, on&CodeUnits != 0
	for _, r := range turnRules {
		if !turns {
			break
		}
		n, names := 0, map[string]bool{}
		for i := range ls {
			if p := turnPrefix(r, at(i)); p > 0 {
				n++
				names[turnSpeaker(r, at(i)[:p])] = true
			}
		}
		if speakers := r == namedTurn || r == discordTurn; (!speakers && n >= turnMin) || (speakers && n >= namedMin && len(names) >= 2) {
			rule = r
			break
		}
	}
	logs := 0
	for i := range ls {
		if turns && logLine.MatchString(head(at(i))) {
			logs++
		}
	}
	structured := false
	var tables *chunk.TableReader // reads the lines' tables, each line's statement kind once
	prose := func(i int) {
		if n := len(blocks); n > 0 && blocks[n-1].kind == Sentence && blocks[n-1].to == i {
			blocks[n-1].to = i + 1
			return
		}
		blocks = append(blocks, block{kind: Sentence, from: i, to: i + 1})
	}
	for i := 0; i < len(ls); {
		s := at(i)
		t := strings.TrimLeft(s, " \t")
		switch {
		case code && chunk.IsFence(s):
			fence := t[:3]
			j := i + 1
			for j < len(ls) && !strings.HasPrefix(strings.TrimLeft(at(j), " \t"), fence) {
				j++
			}
			if j == len(ls) {
				// never closed in the passage: the closing fence of a block
				// the chunk's start cut, or an opening one its end cut; the
				// fence line alone is the unit, and what follows is read as
				// text, never swallowed
				j = i
			}
			blocks = append(blocks, block{kind: Code, from: i, to: j + 1})
			structured, i = true, j+1
			continue
		case rows && i+1 < len(ls) && strings.Contains(s, "|") && chunk.IsTableRule(strings.TrimSpace(at(i+1))):
			j := i + 2
			for j < len(ls) && strings.Contains(at(j), "|") && !blank(j) && !(code && chunk.IsFence(at(j))) {
				j++
			}
			blocks = append(blocks, block{kind: Row, from: i, to: j, headerRows: 2})
			structured, i = true, j
			continue
		case rows && strings.HasPrefix(t, "|") && i+1 < len(ls) && strings.HasPrefix(strings.TrimLeft(at(i+1), " \t"), "|"):
			j := i + 1
			for j < len(ls) && strings.HasPrefix(strings.TrimLeft(at(j), " \t"), "|") {
				j++
			}
			// no rule under a first row: a table cut by the chunk's start,
			// its header in the chunk before: every line is a row
			blocks = append(blocks, block{kind: Row, from: i, to: j})
			structured, i = true, j
			continue
		case turns && cueTiming.MatchString(head(t)):
			// the cue's number (a line before its timing) belongs to it
			from := i
			if n := len(blocks); n > 0 && blocks[n-1].kind == Sentence && blocks[n-1].to == i && i > 0 && isCueID(at(i-1)) {
				if blocks[n-1].to--; blocks[n-1].to == blocks[n-1].from {
					blocks = blocks[:n-1]
				}
				from = i - 1
			}
			j := i + 1
			for j < len(ls) && !blank(j) && !cueTiming.MatchString(head(strings.TrimLeft(at(j), " \t"))) && !(code && chunk.IsFence(at(j))) {
				j++
			}
			blocks = append(blocks, block{kind: Turn, from: from, to: j, cue: true, headerRows: i + 1 - from})
			structured, i = true, j
			continue
		case rule != nil && turnPrefix(rule, s) > 0:
			j := i + 1
			for j < len(ls) && !blank(j) && turnPrefix(rule, at(j)) == 0 && !startsBlock(at(j), on) {
				j++
			}
			blocks = append(blocks, block{kind: Turn, from: i, to: j, rule: rule})
			structured, i = true, j
			continue
		case logs >= logMin && logLine.MatchString(head(s)):
			blocks = append(blocks, block{kind: Turn, from: i, to: i + 1, log: true})
			structured, i = true, i+1
			continue
		case items && listItem.MatchString(head(s)):
			indent := len(s) - len(t)
			j := i + 1
			for j < len(ls) && !blank(j) && !listItem.MatchString(head(at(j))) && !startsBlock(at(j), on) &&
				len(at(j))-len(strings.TrimLeft(at(j), " \t")) > indent {
				j++
			}
			blocks = append(blocks, block{kind: Item, from: i, to: j})
			structured, i = true, j
			continue
		}
		if j := i; rows {
			if tables == nil {
				tables = chunk.NewTableReader(lineTexts(text, ls), code)
			}
			if j = tables.AlignedEnd(i); j > i {
				blocks = append(blocks, block{kind: Row, from: i, to: j, headerRows: 1, aligned: true})
				structured, i = true, j
				continue
			}
			if j, hdr := tables.StatementEnd(i); j > i {
				blocks = append(blocks, block{kind: Row, from: i, to: j, headerRows: hdr, stmt: tables})
				structured, i = true, j
				continue
			}
		}
		if on&HeadingUnits != 0 && atxHeading.MatchString(t) && len(t) == len(s) {
			structured = true
		}
		prose(i)
		i++
	}
	return blocks, structured
}

// startsBlock reports a line that opens a structure of its own (a fence,
// a table row, a heading) and so ends a turn or an item; a structure
// that is off opens none.
func startsBlock(s string, on Structures) bool {
	return (on&CodeUnits != 0 && chunk.IsFence(s)) ||
		(on&RowUnits != 0 && strings.HasPrefix(strings.TrimLeft(s, " \t"), "|")) ||
		(on&HeadingUnits != 0 && atxHeading.MatchString(s))
}

// isCueID reports a subtitle cue's number or a VTT cue's identifier line.
func isCueID(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 40 {
		return false
	}
	return strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }) < 0
}

// stmtRows are the rows of a statement's body (its lines after the
// header, trimmed spans): a line each, but a label wrapped onto more lines
// stays with its row: a line that opens in lower case ("common", "shares")
// continues the one before, and label lines before a row without a label
// of its own (only values) are that row's label. pages are the page
// numbers of page breaks between its rows ("15"), which no row spans.
func stmtRows(text string, ls []line, tables *chunk.TableReader, from, to int) (rows, pages [][2]int) {
	var labels [][2]int // labels: label lines waiting for the row they may open
	broken := false     // a page break since the last row: no label continues it
	for i := from; i < to; i++ {
		l := ls[i]
		s := text[l.start:l.end]
		t := strings.TrimFunc(s, unicode.IsSpace)
		if tables.StatementBlank(i) {
			continue
		}
		sp := [2]int{l.end - len(strings.TrimLeftFunc(s, unicode.IsSpace)), l.start + len(strings.TrimRightFunc(s, unicode.IsSpace))}
		if tables.StatementPageNumber(i) {
			rows, labels, broken = append(rows, labels...), labels[:0], true
			pages = append(pages, sp)
			continue
		}
		first, _ := utf8.DecodeRuneInString(t)
		label := !tables.StatementRow(i)
		switch {
		case label && len(labels) > 0 && (unicode.IsLower(first) || runsOnLabel(text[labels[len(labels)-1][0]:labels[len(labels)-1][1]])):
			labels[len(labels)-1][1] = sp[1]
		case label && len(labels) == 0 && len(rows) > 0 && !broken && unicode.IsLower(first):
			rows[len(rows)-1][1] = sp[1]
		case label:
			labels = append(labels, sp)
		case len(labels) > 0 && chunk.OpensWithValue(t):
			rows = append(rows, [2]int{labels[0][0], sp[1]}) // only values: the labels above are its label
			labels = labels[:0]
		default:
			rows = append(append(rows, labels...), sp)
			labels = labels[:0]
		}
		if !label {
			broken = false
		}
	}
	return append(rows, labels...), pages
}

// runsOnLabel reports a label line cut short: it ends in a comma or a
// dash, or on a word the label goes on after ("Balance at December 31,",
// "Loss from operations of").
func runsOnLabel(s string) bool {
	last, _ := utf8.DecodeLastRuneInString(s)
	words := strings.Fields(s)
	return strings.ContainsRune(",-–—(", last) || runsOnWord[words[len(words)-1]]
}

// splitStructured cuts a text of lines into units by its blocks: a turn
// into its prefix (Context) and its sentences (Turn), a cue likewise, a
// log line whole, a table into its header (Context) and rows, a list item
// into its sentences, a fence whole, prose into sentences. A Markdown
// heading is a unit of its own, and every unit after it needs the
// headings above it (the heading path), when HeadingUnits is on.
func splitStructured(text string, ls []line, blocks []block, on Structures) Units {
	var u Units
	// path holds the heading units above the current line, by level
	var path []struct{ level, unit int }
	needs := func(extra ...int) []int {
		var n []int
		for _, h := range path {
			n = append(n, h.unit)
		}
		return append(n, extra...)
	}
	group, groups := 0, 0 // the group of the units added now (0: none), and the last one numbered
	add := func(sp [2]int, k Kind, need []int) {
		u.Sentences = append(u.Sentences, sp)
		u.Kinds = append(u.Kinds, k)
		u.Needs = append(u.Needs, need)
		u.Groups = append(u.Groups, group)
	}
	trimmed := func(a, b int) ([2]int, bool) {
		s := text[a:b]
		lo := len(s) - len(strings.TrimLeftFunc(s, unicode.IsSpace))
		hi := len(strings.TrimRightFunc(s, unicode.IsSpace))
		return [2]int{a + lo, a + hi}, hi > lo
	}
	sentences := func(a, b int, k Kind, need []int) {
		for _, sp := range chunk.SplitSentences(text[a:b]) {
			add([2]int{a + sp[0], a + sp[1]}, k, need)
		}
	}
	// grouped adds the sentences of one turn's body or one list item as
	// a group (Units.Groups)
	grouped := func(a, b int, k Kind, need []int) {
		groups++
		group = groups
		sentences(a, b, k, need)
		group = 0
	}
	for _, bl := range blocks {
		start, end := ls[bl.from].start, ls[bl.to-1].end
		switch {
		case bl.kind == Sentence:
			// prose lines, a Markdown heading among them opening a path
			a := start
			for i := bl.from; i < bl.to; i++ {
				s := text[ls[i].start:ls[i].end]
				if on&HeadingUnits == 0 || !atxHeading.MatchString(s) {
					continue
				}
				sentences(a, ls[i].start, Sentence, needs())
				level := len(s) - len(strings.TrimLeft(s, "#"))
				for len(path) > 0 && path[len(path)-1].level >= level {
					path = path[:len(path)-1]
				}
				if sp, ok := trimmed(ls[i].start, ls[i].end); ok {
					add(sp, Sentence, needs())
					path = append(path, struct{ level, unit int }{level, len(u.Sentences) - 1})
				}
				a = ls[i].end
			}
			sentences(a, end, Sentence, needs())
		case bl.kind == Code || (bl.kind == Turn && bl.log):
			if sp, ok := trimmed(start, end); ok {
				add(sp, bl.kind, needs())
			}
		case bl.kind == Row && bl.stmt != nil:
			// a statement: each header line a context line, each row after
			// it a unit needing them all, a row's label wrapped onto
			// several lines kept with it (stmtRows)
			var ctx []int
			for i := bl.from; i < bl.from+bl.headerRows; i++ {
				if sp, ok := trimmed(ls[i].start, ls[i].end); ok {
					add(sp, Context, needs())
					ctx = append(ctx, len(u.Sentences)-1)
				}
			}
			rows, pages := stmtRows(text, ls, bl.stmt, bl.from+bl.headerRows, bl.to)
			for len(rows)+len(pages) > 0 {
				if len(pages) > 0 && (len(rows) == 0 || pages[0][0] < rows[0][0]) {
					// a page break's number: a context line no row needs,
					// so it is never sent
					add(pages[0], Context, needs())
					pages = pages[1:]
					continue
				}
				add(rows[0], Row, needs(ctx...))
				rows = rows[1:]
			}
		case bl.kind == Row:
			hdrEnd := start
			if bl.headerRows > 0 {
				hdrEnd = ls[min(bl.from+bl.headerRows, bl.to)-1].end
			}
			ctx := -1
			if bl.headerRows > 0 && bl.to-bl.from > bl.headerRows {
				if sp, ok := trimmed(start, hdrEnd); ok {
					add(sp, Context, needs())
					ctx = len(u.Sentences) - 1
				}
			} else {
				hdrEnd = start // a header alone: its lines are rows
			}
			for i := bl.from; i < bl.to; i++ {
				if ls[i].end <= hdrEnd {
					continue
				}
				if sp, ok := trimmed(ls[i].start, ls[i].end); ok {
					add(sp, Row, needs(ctxOf(ctx)...))
				}
			}
		case bl.kind == Turn:
			// the prefix: a turn's "[time] Name:", a cue's number and timing
			pre := ls[bl.from].start
			if bl.cue {
				pre = ls[bl.from+bl.headerRows-1].end
			} else {
				pre += turnPrefix(bl.rule, text[ls[bl.from].start:ls[bl.from].end])
			}
			body, hasBody := trimmed(pre, end)
			if !hasBody {
				if sp, ok := trimmed(start, end); ok {
					add(sp, Turn, needs())
				}
				continue
			}
			ctx := -1
			if sp, ok := trimmed(start, pre); ok {
				add(sp, Context, needs())
				ctx = len(u.Sentences) - 1
			}
			grouped(body[0], body[1], Turn, needs(ctxOf(ctx)...))
		case bl.kind == Item:
			grouped(start, end, Item, needs())
		}
	}
	return u
}

func ctxOf(i int) []int {
	if i < 0 {
		return nil
	}
	return []int{i}
}
