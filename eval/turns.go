package eval

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel"
)

// turnStart matches a turn's prefix at the start of a line, the formats of
// the dialogue sets and of chat exports: "Name:", "Ross Geller:",
// "Professor E:", "Dr. Franzblau:", "Frank Buffay Jr.:", "[2024-05-01
// 10:02] Name:" (a name of one to four words, each maybe abbreviated), and
// IRC nicks, which may open with "_" or "[" and hold brackets ("_jason:",
// "Sa[i]nT:", "[admin]:"), or name them in angle brackets as IRC clients
// log them ("[10:02] <alice>"). It is read here on its own,
// not by package evidence's rules, so that a turn those rules miss counts
// against them.
var turnStart = regexp.MustCompile(`^(?:\[[^\]\n]{1,40}\][ \t]*)?(?:<[@+%~&]?[^\s<>]{1,32}>|[\p{L}_\[][\p{L}\p{N}'_\[\]-]{0,20}\.?(?: [\p{L}\p{N}'_-]{1,20}\.?){0,3}:)(?:[ \t]|$)`)

// Least turn lines, and speakers, that make a text a conversation.
const (
	turnLinesMin   = 3
	turnSpeakerMin = 2
)

// turnSpan is one turn of a conversation: its prefix [start, body) and
// its text [body, end), continuation lines included.
type turnSpan struct{ start, body, end int }

// turnsOf cuts a text made of turns into them; nil when it is not one
// (fewer than turnLinesMin prefix lines or turnSpeakerMin speakers). A
// line without a prefix continues the turn above it; a blank line ends it;
// the lines that open the text and run into its first turn are a turn
// without a prefix (cut by the passage's start).
func turnsOf(text string) []turnSpan {
	var turns []turnSpan
	speakers := map[string]bool{}
	open := false
	for start := 0; start < len(text); {
		end := strings.IndexByte(text[start:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += start
		}
		line := text[start:end]
		switch loc := turnStart.FindStringIndex(line); {
		case loc != nil:
			prefix := strings.TrimRight(line[:loc[1]], " \t")
			turns = append(turns, turnSpan{start, start + len(prefix), end})
			speakers[prefix[strings.IndexByte(prefix, ']')+1:]] = true
			open = true
		case strings.TrimSpace(line) == "":
			open = false
		case open:
			turns[len(turns)-1].end = end
		}
		start = end + 1
	}
	if len(turns) < turnLinesMin || len(speakers) < turnSpeakerMin {
		return nil
	}
	// Lines before the first prefix (up to a blank line) that start cut
	// (in a word, a sentence or a prefix: a lower-case letter, a digit,
	// punctuation that continues a sentence) are the rest of a turn the
	// passage's start cut, as an index's chunker cuts: a turn whose prefix
	// the passage does not hold (start == body), so nothing sent of it
	// counts as prefixed. A line that opens whole (a script's "#NOTE#:
	// [ Scene … ]") is not counted: this rule cannot tell it from a turn.
	if lead := text[:turns[0].start]; strings.TrimSpace(lead) != "" && startsCut(lead) {
		if b := strings.Index(lead, "\n\n"); b >= 0 {
			lead = lead[:b] // a session's last lines, above a blank line
		}
		turns = append([]turnSpan{{0, 0, len(strings.TrimRight(lead, "\n"))}}, turns...)
	}
	return turns
}

// turnPrefixes counts, in what a pruning selector sends of one passage
// (ev, its spans into text), the kept spans that hold text of a turn
// (its body; a span of the prefix alone is the prefix itself) and how
// many of them are sent with that turn's whole prefix: who said it and
// when.
func turnPrefixes(text string, ev ctxsel.Evidence) (inTurn, prefixed int) {
	turns := turnsOf(text)
	if turns == nil {
		return 0, 0
	}
	sent := ev.Spans
	if ev.Header != nil {
		sent = append([][2]int{*ev.Header}, sent...)
	}
	for _, s := range ev.Spans {
		for _, t := range turns {
			if s[0] >= t.end || s[1] <= t.body {
				continue // not in this turn's text
			}
			inTurn++
			if t.body > t.start && covered([2]int{t.start, t.body}, sent) == float64(t.body-t.start) {
				prefixed++
			}
			break // the turn it starts in (spans do not cross turns but for prose)
		}
	}
	return inTurn, prefixed
}

// startsCut reports text whose first character no line would start with:
// a lower-case letter, a digit, or punctuation that continues a sentence.
func startsCut(text string) bool {
	r, _ := utf8.DecodeRuneInString(strings.TrimLeft(text, " \t\r\n"))
	return unicode.IsLower(r) || unicode.IsDigit(r) || strings.ContainsRune(",.;:!?)]}’”…-–—", r)
}
