package evidence

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel"
)

// The second hop. A multi-hop question's second passage is often one the
// first does not resemble but names ("… directed by Scott Derrickson" →
// the passage titled "Scott Derrickson"). After the first pass, the
// anchors (the best-scored sentences) are read for passages' titles:
// candidates so named are marked (linked, anchor_p), and up to hop
// passages of the query outside the candidates whose titles an anchor
// names join them (hop_joined), best anchor first, then by rank. Every
// sentence is then scored again.

// hopLink is a passage an anchor names.
type hopLink struct {
	input   int                // index into TextQuery.Texts
	anchorP float64            // the best naming anchor's first-pass probability
	rank    int                // rank in the query's curve
	titles  map[string]float64 // each title named (titleKey) and its best anchor's probability
}

// anchors returns the indices of the best n sentences by probability (ties
// in order), of prose passages only: a routed passage's units (Model.Kinds)
// were scored by a model that the hop's anchor feature was not learnt on.
func anchors(ps []passage, ss []sentence, n int) []int {
	idx := make([]int, 0, len(ss))
	for i, x := range ss {
		if ps[x.passage].route == "" {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(ss[b].raw, ss[a].raw) })
	return idx[:min(n, len(idx))]
}

// hopLinks finds the passages of the query with a title that an anchor
// names, as whole words: the passage's own title or a section heading
// inside it, never the anchor's own section's. Candidates are read as
// split; the others by a scan of their lines (poolTitles), and only when
// their text is valid UTF-8 (an invalid one is never joined).
func hopLinks(q ctxsel.TextQuery, ps []passage, ss []sentence, anchorIdx []int) []hopLink {
	secs, secOf := sections(ps, ss)
	type anchor struct {
		lower   string
		passage int    // input index of its passage
		own     string // its section's title key
		p       float64
	}
	as := make([]anchor, len(anchorIdx))
	for i, a := range anchorIdx {
		as[i] = anchor{strings.ToLower(ss[a].text), ps[ss[a].passage].input, secs[secOf[a]].key, ss[a].raw}
	}
	titlesOf := make(map[int][]string, len(ps))
	for _, sc := range secs {
		in := ps[sc.passage].input
		titlesOf[in] = append(titlesOf[in], sc.key)
	}
	rank := make([]int, q.Curve.Len())
	for r, idx := range q.Curve.Top(q.Curve.Len()) {
		rank[idx] = r
	}
	var out []hopLink
	for i, text := range q.Texts {
		keys, candidate := titlesOf[i]
		if !candidate {
			if !utf8.ValidString(text) {
				continue
			}
			for _, t := range poolTitles(text) {
				keys = append(keys, titleKey(t))
			}
			if headerLine(text) == nil && q.Headers != nil { // the title its source gives
				keys = append(keys, titleKey(headerText(q.Headers[i])))
			}
		}
		var l *hopLink
		for _, key := range keys {
			if utf8.RuneCountInString(key) < minTitleKey {
				continue
			}
			for _, a := range as {
				if a.p <= 0 || (a.passage == i && a.own == key) || !containsWord(a.lower, key) {
					continue
				}
				if l == nil {
					l = &hopLink{input: i, rank: rank[i], titles: map[string]float64{}}
				}
				l.titles[key] = max(l.titles[key], a.p)
				l.anchorP = max(l.anchorP, a.p)
			}
		}
		if l != nil {
			out = append(out, *l)
		}
	}
	return out
}

// poolTitles are the titles a passage outside the candidates shows without
// being split into sentences: its first line when it is a header, and every
// line that opens a section (isHeading's rule: a Markdown heading, or a
// title after a blank line, with more text after it).
func poolTitles(text string) []string {
	var out []string
	if h := headerLine(text); h != nil {
		out = append(out, text[h[0]:h[1]])
	}
	blank := false
	for off := 0; off < len(text); {
		nl := strings.IndexByte(text[off:], '\n')
		if nl < 0 {
			break
		}
		line := strings.TrimSpace(text[off : off+nl])
		next := off + nl + 1
		if off > 0 && line != "" && strings.TrimSpace(text[next:]) != "" && (strings.HasPrefix(line, "#") || (blank && titleLike(line))) {
			out = append(out, line)
		}
		blank = line == ""
		off = next
	}
	return out
}

// joinable orders the links to passages outside the candidates (best
// anchor first, then by rank) and keeps the first n.
func joinable(links []hopLink, inSet map[int]bool, n int) []hopLink {
	var out []hopLink
	for _, l := range links {
		if !inSet[l.input] {
			out = append(out, l)
		}
	}
	slices.SortStableFunc(out, func(a, b hopLink) int {
		if c := cmp.Compare(b.anchorP, a.anchorP); c != 0 {
			return c
		}
		return cmp.Compare(a.rank, b.rank)
	})
	return out[:min(n, len(out))]
}
