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
	input   int     // index into TextQuery.Texts
	anchorP float64 // the best naming anchor's first-pass probability
	rank    int     // rank in the query's curve
}

// anchors returns the indices of the best n sentences by probability (ties
// in order).
func anchors(ss []sentence, n int) []int {
	idx := make([]int, len(ss))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(ss[b].p, ss[a].p) })
	return idx[:min(n, len(idx))]
}

// hopLinks finds the passages of the query whose title an anchor of
// another passage names: links[input] is the best anchor's probability.
// Candidates (inSet) are checked by their titles as split; the others by
// their first line when it is a title, else the query's header, and only
// when their text is valid UTF-8 (an invalid one is never joined).
func hopLinks(q ctxsel.TextQuery, ps []passage, ss []sentence, anchorIdx []int) []hopLink {
	type anchor struct {
		lower   string
		passage int // input index of its passage
		p       float64
	}
	as := make([]anchor, len(anchorIdx))
	for i, a := range anchorIdx {
		as[i] = anchor{strings.ToLower(ss[a].text), ps[ss[a].passage].input, ss[a].p}
	}
	titleOf := make(map[int]string, len(ps))
	for _, p := range ps {
		titleOf[p.input] = p.title
	}
	rank := make([]int, q.Curve.Len())
	for r, idx := range q.Curve.Top(q.Curve.Len()) {
		rank[idx] = r
	}
	var out []hopLink
	for i, text := range q.Texts {
		title, candidate := titleOf[i]
		if !candidate {
			if !utf8.ValidString(text) {
				continue
			}
			if h := headerLine(text); h != nil {
				title = text[h[0]:h[1]]
			} else if q.Headers != nil {
				title = headerText(q.Headers[i])
			}
		}
		key := titleKey(title)
		if utf8.RuneCountInString(key) < minTitleKey {
			continue
		}
		best := 0.0
		for _, a := range as {
			if a.passage != i && a.p > best && containsWord(a.lower, key) {
				best = a.p
			}
		}
		if best > 0 {
			out = append(out, hopLink{input: i, anchorP: best, rank: rank[i]})
		}
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
