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
// Sentences end at . ! ? … (and 。！？ ！ ？) followed by white space or the end
// of the text, after any closing quotes or brackets, and at blank lines
// (paragraph breaks). A period after a common abbreviation (Mr., Dr., e.g.)
// or a single capital letter (an initial), or one followed by a lower-case
// word, does not end a sentence.
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
// character of text lies in exactly one span.
func SplitSentences(text string) [][2]int {
	var out [][2]int
	start := -1
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
				i = j
				continue
			}
		}
		if !terminal(r) {
			i += w
			continue
		}
		j := i + w
		for j < len(text) {
			r2, w2 := utf8.DecodeRuneInString(text[j:])
			if !terminal(r2) && !closer(r2) {
				break
			}
			j += w2
		}
		next, _ := utf8.DecodeRuneInString(text[j:])
		switch {
		case wideTerminal(r):
			end(j)
		case j == len(text) || unicode.IsSpace(next):
			if r == '.' && (abbreviation(text[start:i]) || lowerNext(text[j:])) {
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

func terminal(r rune) bool {
	switch r {
	case '.', '!', '?', '…', '。', '！', '？', '｡':
		return true
	}
	return false
}

// wideTerminal ends a sentence even without a following space (CJK).
func wideTerminal(r rune) bool { return r == '。' || r == '！' || r == '？' || r == '｡' }

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
}

// abbreviation reports whether sentence text so far ends with an
// abbreviation or an initial (the period itself excluded).
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
	if r, w := utf8.DecodeRuneInString(word); w == len(word) && unicode.IsUpper(r) {
		return true // an initial: "J. R. R. Tolkien"
	}
	return abbreviations[strings.ToLower(word)]
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
