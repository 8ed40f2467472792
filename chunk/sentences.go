package chunk

import (
	"context"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sentences packs whole sentences into chunks of at most MaxTokens tokens. A
// chunk never ends mid-sentence, except that a sentence which alone exceeds
// the limit is cut into token windows of MaxTokens (no overlap).
//
// Sentences are those of SplitSentences.
type Sentences struct {
	tok    Tokenizer
	maxTok int
}

// NewSentences returns a sentence chunker; maxTokens must be at least 8.
func NewSentences(tok Tokenizer, maxTokens int) (*Sentences, error) {
	if tok == nil {
		return nil, invalidf("sentence chunker: no tokenizer")
	}
	if maxTokens < 8 {
		return nil, invalidf("sentence chunker: max_tokens=%d, want at least 8", maxTokens)
	}
	return &Sentences{tok: tok, maxTok: maxTokens}, nil
}

// Spec implements Chunker.
func (s *Sentences) Spec() string { return fmt.Sprintf("sentences:max_tokens=%d", s.maxTok) }

// Chunk implements Chunker.
func (s *Sentences) Chunk(ctx context.Context, doc, text string) ([]Chunk, error) {
	if err := checkText(doc, text); err != nil {
		return nil, err
	}
	sents := SplitSentences(text)
	if len(sents) == 0 {
		return nil, nil
	}
	spans, counts, err := pack(ctx, s.tok, text, sents, s.maxTok)
	if err != nil {
		return nil, fmt.Errorf("document %q: %w", doc, err)
	}
	return finish(doc, text, spans, s.tok, counts), nil
}

// SplitSentences returns the byte spans [start, end) of the sentences of
// text, in order, each without surrounding white space. Every non-space
// character of text lies in exactly one span; spans never overlap. Pure and
// total: any string (invalid UTF-8 included) gives spans inside it.
//
// A sentence ends at . ! ? … ‼ ⁇ (and the Devanagari, Arabic and Ethiopic
// full stops । ॥ ؟ ።) followed by white space or the end of the text,
// after any closing quotes or brackets; at 。！？｡． even without a space
// (CJK); at a blank line (a paragraph break); and at a single line break
// that ends a title-like line, a Markdown heading or a list item, or that
// starts a heading or list item. A period does not end a sentence after a
// common abbreviation (Mr., Dr., e.g., vs.), an initial (J. R. R.) or any
// one-letter abbreviation ("(b. 1961)", "Roe v. Wade"), a run
// of single letters with periods (U.S., a.m.), a list number at the start
// of a line (1. 2.), or when the next word starts in lower case (as does
// any end inside quotes: "'Go!' she said."); decimals
// (3.14) never break because their period is not followed by a space.
func SplitSentences(text string) [][2]int {
	var out [][2]int
	start := -1
	lineStart := 0 // byte offset where the current line begins
	end := func(e int) {
		e = start + len(strings.TrimRightFunc(text[start:e], unicode.IsSpace))
		if e > start {
			out = append(out, [2]int{start, e})
		}
		start = -1
	}
	for i := 0; i < len(text); {
		r, w := utf8.DecodeRuneInString(text[i:])
		if start < 0 {
			if unicode.IsSpace(r) {
				if r == '\n' {
					lineStart = i + 1
				}
				i += w
				continue
			}
			start = i
		}
		if r == '\n' {
			j := i + 1
			for j < len(text) && (text[j] == ' ' || text[j] == '\t' || text[j] == '\r') {
				j++
			}
			if j < len(text) && text[j] == '\n' {
				end(i)
				lineStart = j + 1
				i = j + 1
				continue
			}
			if lineBreakEnds(text, start, lineStart, i, j) {
				end(i)
			}
			lineStart = i + 1
			i++
			continue
		}
		if !terminal(r) {
			i += w
			continue
		}
		j, quoted := i+w, false
		for j < len(text) {
			r2, w2 := utf8.DecodeRuneInString(text[j:])
			if !terminal(r2) && !closer(r2) {
				break
			}
			quoted = quoted || closer(r2)
			j += w2
		}
		next, _ := utf8.DecodeRuneInString(text[j:])
		switch {
		case wideTerminal(r):
			end(j)
		case j == len(text) || unicode.IsSpace(next):
			if r == '.' && (abbreviation(text[start:i]) || listNumber(text[lineStart:i])) {
				break
			}
			if (r == '.' || quoted) && lowerNext(text[j:]) { // "'Go!' she said."
				break
			}
			end(j)
		}
		i = j
	}
	if start >= 0 {
		end(len(text))
	}
	return out
}

// lineBreakEnds decides whether a single line break at nl ends the sentence
// that began at start: the line [lineStart, nl) is a Markdown heading, a
// list item or a title (the whole sentence so far, short, without closing
// punctuation, the next line starting with a capital or a digit), or the
// next line (from next) starts a heading or a list item. Wrapped prose (a
// next line in lower case, a long line) goes on.
func lineBreakEnds(text string, start, lineStart, nl, next int) bool {
	if next >= len(text) {
		return false
	}
	line := strings.TrimRightFunc(text[max(start, lineStart):nl], unicode.IsSpace)
	rest := text[next:]
	if heading(rest) || listItem(rest) {
		return true
	}
	if start < lineStart {
		return false // the sentence began on an earlier line: prose wrapped
	}
	if heading(line) || listItem(line) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(strings.TrimLeft(rest, "\"'“‘(["))
	if !unicode.IsUpper(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Han, r) {
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(line)
	if strings.ContainsRune(",;:-–—", last) {
		return false
	}
	words := strings.Fields(line)
	if len(words) > maxTitleWords {
		return false
	}
	// a line that stops on a function word ("signed by", "the") was wrapped
	return !joiners[strings.ToLower(words[len(words)-1])]
}

// maxTitleWords is the longest line (in words) read as a title when a single
// line break follows it.
const maxTitleWords = 10

// joiners are words a title does not end on but a wrapped line may.
var joiners = map[string]bool{
	"a": true, "an": true, "the": true, "and": true, "or": true, "but": true, "of": true, "in": true,
	"on": true, "at": true, "to": true, "by": true, "for": true, "with": true, "from": true, "as": true,
	"is": true, "was": true, "are": true, "were": true, "that": true, "which": true, "who": true,
}

// heading reports a Markdown ATX heading: one to six '#' then a space.
func heading(s string) bool {
	n := 0
	for n < len(s) && s[n] == '#' {
		n++
	}
	return n >= 1 && n <= 6 && n < len(s) && (s[n] == ' ' || s[n] == '\t')
}

// listItem reports a line starting with a bullet (- * + •) or a number with
// a period or parenthesis (1. 2) 10.), then a space.
func listItem(s string) bool {
	if strings.HasPrefix(s, "• ") {
		return true
	}
	if len(s) >= 2 && (s[0] == '-' || s[0] == '*' || s[0] == '+') && (s[1] == ' ' || s[1] == '\t') {
		return true
	}
	n := 0
	for n < len(s) && n < 4 && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n > 0 && n+1 < len(s) && (s[n] == '.' || s[n] == ')') && (s[n+1] == ' ' || s[n+1] == '\t')
}

// listNumber reports that the text of the line before a period is a list
// number ("12" in "12. Item"), optionally indented.
func listNumber(line string) bool {
	line = strings.TrimLeft(line, " \t")
	if line == "" || len(line) > 4 {
		return false
	}
	for i := 0; i < len(line); i++ {
		if line[i] < '0' || line[i] > '9' {
			return false
		}
	}
	return true
}

func terminal(r rune) bool {
	switch r {
	case '.', '!', '?', '…', '‼', '⁇', '。', '！', '？', '｡', '．', '।', '॥', '؟', '።':
		return true
	}
	return false
}

// wideTerminal ends a sentence even without a following space (CJK).
func wideTerminal(r rune) bool {
	return r == '。' || r == '！' || r == '？' || r == '｡' || r == '．'
}

func closer(r rune) bool {
	switch r {
	case '"', '\'', '”', '’', ')', ']', '}', '»', '」', '』', '）', '*', '_':
		return true
	}
	return false
}

var abbreviations = map[string]bool{
	"mr": true, "mrs": true, "ms": true, "dr": true, "prof": true, "sr": true, "jr": true,
	"st": true, "vs": true, "e.g": true, "i.e": true, "cf": true, "fig": true, "no": true,
	"vol": true, "mt": true, "gen": true, "col": true, "lt": true, "sgt": true, "capt": true,
	"rev": true, "hon": true, "approx": true, "dept": true, "est": true, "al": true, "ca": true,
	"inc": true, "ltd": true, "co": true, "corp": true, "jan": true, "feb": true,
	"aug": true, "sept": true, "oct": true, "nov": true, "dec": true, "op": true, "pp": true,
	"ed": true, "eds": true, "ft": true, "gov": true, "sen": true, "rep": true, "pres": true,
}

// abbreviation reports whether sentence text so far ends with an
// abbreviation, an initial, or a run of single letters joined by periods
// ("U.S", "a.m", "Ph.D"), the period itself excluded.
func abbreviation(before string) bool {
	k := strings.LastIndexFunc(before, func(r rune) bool { return unicode.IsSpace(r) || r == '(' || r == '"' || r == '“' })
	word := before[k+1:]
	if k >= 0 {
		_, w := utf8.DecodeRuneInString(before[k:])
		word = before[k+w:]
	}
	if word == "" {
		return false
	}
	if r, w := utf8.DecodeRuneInString(word); w == len(word) && unicode.IsLetter(r) {
		return true // an initial ("J. R. R. Tolkien") or a one-letter abbreviation ("(b. 1961)", "Roe v. Wade")
	}
	if abbreviations[strings.ToLower(word)] {
		return true
	}
	return dotted(word)
}

// dotted reports letters joined by periods, each part one or two letters
// long ("U.S", "e.g", "Ph.D", "a.m").
func dotted(word string) bool {
	parts := strings.Split(word, ".")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		n := utf8.RuneCountInString(p)
		if n == 0 || n > 2 {
			return false
		}
		for _, r := range p {
			if !unicode.IsLetter(r) {
				return false
			}
		}
	}
	return true
}

// lowerNext reports whether the next word after white space starts with a
// lower-case letter (so the period did not end a sentence).
func lowerNext(after string) bool {
	after = strings.TrimLeft(after, " \t")
	if strings.HasPrefix(after, "\n") {
		return false
	}
	r, _ := utf8.DecodeRuneInString(after)
	return unicode.IsLower(r)
}

// pack groups consecutive sentences into spans of at most maxTok tokens
// (maxTok 0: no limit, one span), cutting a sentence that alone exceeds the
// limit into token windows. It returns the spans and their exact counts.
func pack(ctx context.Context, tok Tokenizer, text string, sents [][2]int, maxTok int) ([][2]int, []int, error) {
	if maxTok <= 0 {
		s := [2]int{sents[0][0], sents[len(sents)-1][1]}
		return [][2]int{s}, []int{tok.Count(text[s[0]:s[1]])}, nil
	}
	var spans [][2]int
	var counts []int
	emit := func(a, b int) { // sentences [a, b), b > a
		s, e := sents[a][0], sents[b-1][1]
		n := tok.Count(text[s:e])
		for n > maxTok && b-1 > a { // the estimate was short: give back sentences
			b--
			e = sents[b-1][1]
			n = tok.Count(text[s:e])
		}
		spans = append(spans, [2]int{s, e})
		counts = append(counts, n)
	}
	a := 0
	for a < len(sents) {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		first := text[sents[a][0]:sents[a][1]]
		n := tok.Count(first)
		if n > maxTok { // a sentence longer than the limit: token windows
			offs, err := tokenOffsets(tok, first)
			if err != nil {
				return nil, nil, err
			}
			ws, wc, err := windows(ctx, tok, first, offs, 0, len(offs)-1, maxTok, 0)
			if err != nil {
				return nil, nil, err
			}
			for i, w := range ws {
				spans = append(spans, [2]int{sents[a][0] + w[0], sents[a][0] + w[1]})
				counts = append(counts, wc[i])
			}
			a++
			continue
		}
		b := a + 1
		for b < len(sents) {
			// count the sentence with the space before it, as it will
			// appear inside the chunk
			add := tok.Count(text[sents[b-1][1]:sents[b][1]])
			if n+add > maxTok {
				break
			}
			n += add
			b++
		}
		before := len(spans)
		emit(a, b)
		// emit may have given sentences back: continue after what it took
		last := spans[before][1]
		for a < len(sents) && sents[a][1] <= last {
			a++
		}
	}
	return spans, counts, nil
}
