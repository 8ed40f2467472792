package evidence

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Repeats. An index cuts a document into overlapping chunks (ask: 600
// tokens, 100 of them shared with the next chunk), so one sentence can be
// a candidate twice, and a chunk's first or last sentence is often the
// cut-off tail or head of a sentence the neighbouring chunk holds whole.
// Sending both spends the budget twice on one text. With dedup (the
// default), among the passages of one document (the same title: ask gives
// every chunk its document's), a sentence is not sent when a sentence of
// another passage with the same text (a turn's: under the same context
// line) is, a line of a turn that a chunk holds without the turn's prefix
// is never sent when another candidate passage holds the turn (nor, in any
// passage, the lines a chunk opens with that run into its first turn: the
// rest of a turn whose speaker line the chunk before holds), and a
// passage's first or last sentence is never sent when it is a fragment (a
// strict suffix or prefix) of a sentence of another candidate passage: the
// whole sentence is the one to send. Passages without a title are never
// compared.

// minFragmentBytes is the shortest fragment matched inside a word: a
// shorter one must meet the whole sentence at a word boundary.
const minFragmentBytes = 20

// repeatIndex finds the candidate sentences that repeat one another: it
// depends on the candidates alone, so every packing of one scoring shares
// it (Prepared keeps it).
type repeatIndex struct {
	// keys are the sentences' texts for comparison, per document: title,
	// NUL, repeatKey ("" for a passage without a title).
	keys []string
	// fragmentOf lists, for a fragment, the sentences it is cut from.
	fragmentOf [][]int
	passage    []int // each sentence's passage
}

// repeatSet is one packing's dedup: the index and what was sent. Its
// methods take a nil set as "no dedup".
type repeatSet struct {
	*repeatIndex
	// sentFrom maps a key sent to 1 + the passage it is sent from.
	sentFrom map[string]int
}

// packing starts a packing's dedup (nil without an index: no dedup).
func (x *repeatIndex) packing() *repeatSet {
	if x == nil {
		return nil
	}
	return &repeatSet{repeatIndex: x, sentFrom: map[string]int{}}
}

// repeatKey is a sentence's text for comparison: its white space runs
// made single spaces, without the punctuation and spaces a chunk's cut
// leaves at its start (". Nevertheless, …" is "Nevertheless, …"; an
// opening quote stays).
func repeatKey(text string) string {
	t := strings.Join(strings.Fields(text), " ")
	return strings.TrimLeftFunc(t, func(r rune) bool {
		return unicode.IsSpace(r) || (unicode.IsPunct(r) && !strings.ContainsRune("\"'“‘«(", r))
	})
}

func newRepeatIndex(ps []passage, ss []sentence) *repeatIndex {
	r := &repeatIndex{keys: make([]string, len(ss)), fragmentOf: make([][]int, len(ss)), passage: make([]int, len(ss))}
	texts := make([]string, len(ss))
	// a turn's sentences by document and text, for their copies a chunk
	// holds without the turn's prefix
	turnSentences := map[string][]int{}
	bare := make([]string, len(ss)) // title and text of a sentence under no context line
	for i, x := range ss {
		r.passage[i] = x.passage
		if title := ps[x.passage].title; title != "" {
			texts[i] = repeatKey(x.text)
			if texts[i] != "" {
				doc := title + "\x00" + texts[i]
				turn := turnOf(ss, x)
				r.keys[i] = title + "\x00" + turn + texts[i]
				if turn != "" {
					turnSentences[doc] = append(turnSentences[doc], i)
				} else if x.kind != Context {
					bare[i] = doc
				}
			}
		}
	}
	// A chunk that starts inside a turn holds its lines without the
	// prefix, which the turn's copy in the chunk before sends with them:
	// that copy is the one to send.
	for i, x := range ss {
		if bare[i] == "" {
			continue
		}
		for _, j := range turnSentences[bare[i]] {
			if ss[j].passage != x.passage {
				r.fragmentOf[i] = append(r.fragmentOf[i], j)
			}
		}
	}
	// the rest of a turn a passage's start cut: never sent from it (no
	// passage lists it: it is no copy of one), where the passage is a
	// chunk of a longer text — another candidate has its title, or holds
	// the rest too (the chunks' overlap), or it opens with the tail of a
	// turn's prefix ("-05-15 15:28] Ines: …") —
	// so that a passage of its own that opens with "3 people joined." or
	// "iPhone users asked …" above its turns keeps that line
	chunks := map[string]int{} // candidates by title
	for _, p := range ps {
		if p.title != "" {
			chunks[p.title]++
		}
	}
	for pi, p := range ps {
		from, to := turnRest(p.text, p.units)
		if to <= from {
			continue
		}
		if chunks[p.title] < 2 && !cutPrefix.MatchString(head(p.text)) && !heldElsewhere(ps, pi, p.text[p.units.Sentences[from][0]:p.units.Sentences[to-1][1]]) {
			continue
		}
		for j := from; j < to; j++ {
			if r.fragmentOf[p.first+j] == nil {
				r.fragmentOf[p.first+j] = []int{}
			}
		}
	}
	prefixed := prefixedTexts(ps, ss)
	for _, p := range ps {
		if p.title == "" || p.n == 0 {
			continue
		}
		for _, i := range []int{p.first, p.first + p.n - 1} {
			frag := texts[i]
			if frag == "" || r.fragmentOf[i] != nil {
				continue
			}
			first, last := i == p.first, i == p.first+p.n-1
			for j, whole := range texts {
				if ss[j].passage == ss[i].passage || ps[ss[j].passage].title != p.title {
					continue
				}
				if len(whole) > len(frag) && ((first && suffixFragment(whole, frag)) || (last && prefixFragment(whole, frag))) ||
					first && len(prefixed[j]) > len(frag) && suffixFragment(prefixed[j], frag) {
					r.fragmentOf[i] = append(r.fragmentOf[i], j)
				}
			}
		}
	}
	return r
}

// minHeldElsewhere is the shortest rest looked for in other passages: a
// shorter one ("ok") is in many by chance.
const minHeldElsewhere = 8

// heldElsewhere reports a passage other than ps[pi] whose text holds
// rest, as the chunk before holds the start of a chunk an index cut with
// overlap.
func heldElsewhere(ps []passage, pi int, rest string) bool {
	if len(rest) < minHeldElsewhere {
		return false
	}
	for j, p := range ps {
		if j != pi && strings.Contains(p.text, rest) {
			return true
		}
	}
	return false
}

// turnOf is what tells a turn's sentence from the same words said in
// another turn: its context lines ("[10:02] Alice:"), each ended by NUL;
// "" for any other unit. A chat says "yes" or "thanks" many times, and a
// log recurs with other times: each is its own evidence, and only the
// same turn read twice (in the overlap of two chunks) is a repeat.
func turnOf(ss []sentence, x sentence) string {
	if x.kind != Turn {
		return ""
	}
	var b strings.Builder
	for _, c := range x.needs {
		if c >= 0 && c < len(ss) && ss[c].kind == Context {
			b.WriteString(repeatKey(ss[c].text))
			b.WriteByte(0)
		}
	}
	return b.String()
}

// prefixedTexts are, for the first sentence of a turn (or of a row's,
// cue's line), its line as the document has it: context line and
// sentence ("[time] Name: Yes, …"), as repeatKey reads it; "" for the
// others. A chunk cut inside such a line opens with its tail ("4-05-15
// 15:28] Name: Yes, …"), which the line splitter cannot read as a turn:
// that tail is a fragment of the whole line another chunk holds.
func prefixedTexts(ps []passage, ss []sentence) []string {
	out := make([]string, len(ss))
	for j, x := range ss {
		if ps[x.passage].title == "" {
			continue
		}
		for _, c := range x.needs {
			ctx := ss[c]
			if ctx.kind != Context || ctx.passage != x.passage || ctx.span[1] > x.span[0] {
				continue
			}
			text := ps[x.passage].text
			if ctx.span[0] < 0 || ctx.span[0] > ctx.span[1] || x.span[1] > len(text) || x.span[0] > x.span[1] {
				continue
			}
			if strings.TrimSpace(text[ctx.span[1]:x.span[0]]) == "" && !strings.Contains(text[ctx.span[1]:x.span[0]], "\n") {
				out[j] = repeatKey(text[ctx.span[0]:x.span[1]])
			}
		}
	}
	return out
}

// blocked reports a sentence not to send: a fragment, or a text another
// passage of its document sends.
func (r *repeatSet) blocked(i int) bool {
	if r == nil {
		return false
	}
	return r.fragmentOf[i] != nil || r.sentByAnother(r.sentFrom, i)
}

// sent records that sentence i is sent.
func (r *repeatSet) sent(i int) {
	if r != nil {
		r.record(r.sentFrom, i)
	}
}

// record notes in from (a key → 1 + the passage it is sent from) that
// sentence i is sent, unless its text is already sent.
func (r *repeatSet) record(from map[string]int, i int) {
	if r.keys[i] != "" && from[r.keys[i]] == 0 {
		from[r.keys[i]] = r.passage[i] + 1
	}
}

// sentByAnother reports whether from has sentence i's text sent from
// another passage of its document.
func (r *repeatSet) sentByAnother(from map[string]int, i int) bool {
	p := from[r.keys[i]]
	return r.keys[i] != "" && p > 0 && p-1 != r.passage[i]
}

func (r *repeatSet) fragment(i int) bool { return r != nil && r.fragmentOf[i] != nil }

// key is sentence i's text key within its document, when it has one.
func (r *repeatSet) key(i int) (string, bool) {
	if r == nil || r.keys[i] == "" {
		return "", false
	}
	return r.keys[i], true
}

// sentElsewhere marks the sentences not kept whose text is sent from
// another passage: an equal sentence, or a whole one they are a fragment
// of.
func (r *repeatSet) sentElsewhere(kept []bool) []bool {
	// Not sentFrom: it still names the sentences given back to fit the
	// exact count.
	from := map[string]int{}
	for i, k := range kept {
		if k {
			r.record(from, i)
		}
	}
	out := make([]bool, len(kept))
	for i := range kept {
		if kept[i] {
			continue
		}
		out[i] = r.sentByAnother(from, i)
		for _, j := range r.fragmentOf[i] {
			out[i] = out[i] || kept[j]
		}
	}
	return out
}

// suffixFragment reports whether frag ends whole: a strict suffix, at a
// word boundary or long enough to be no accident.
func suffixFragment(whole, frag string) bool {
	if !strings.HasSuffix(whole, frag) {
		return false
	}
	if len(frag) >= minFragmentBytes {
		return true
	}
	before, _ := utf8.DecodeLastRuneInString(whole[:len(whole)-len(frag)])
	first, _ := utf8.DecodeRuneInString(frag)
	return !isWordRune(before) || !isWordRune(first)
}

// prefixFragment reports whether frag opens whole likewise.
func prefixFragment(whole, frag string) bool {
	if !strings.HasPrefix(whole, frag) {
		return false
	}
	if len(frag) >= minFragmentBytes {
		return true
	}
	after, _ := utf8.DecodeRuneInString(whole[len(frag):])
	last, _ := utf8.DecodeLastRuneInString(frag)
	return !isWordRune(after) || !isWordRune(last)
}
