package evidence

import (
	"math"
	"slices"
	"strings"

	"github.com/ctxsel/ctxsel/token"
)

// Gap marks sentences left out between two sent parts of a passage.
const Gap = " … "

// packing is the outcome of pack: which sentences are kept, in the order
// they were chosen, and the exact tokens of each opened passage's text.
type packing struct {
	kept   []bool
	order  []int // kept sentences in the order chosen (a bundle's lead last)
	opened []bool
	texts  []string
	spans  [][][2]int // kept sentence spans per passage, document order
	tokens []int      // exact tokens of texts
	total  int
	// why: the last sentence kept and the best one left out (-1: none)
	lastKept, firstDropped int
	// fixups counts sentences given back because the exact count of the
	// texts crossed the budget the estimates fitted in.
	fixups int
	// floorWaived says no sentence reached the floor, so it was packed
	// without one.
	floorWaived bool
}

// priority is a sentence's worth per token^beta.
func priority(p float64, cost int, beta float64) float64 {
	if beta == 0 {
		return p
	}
	return p / math.Pow(float64(max(cost, 1)), beta)
}

// pack chooses sentences greedily by priority within budget tokens, among
// those with p ≥ floor: a sentence costs its tokens, its passage's header
// the first time the passage is opened, and, with neighbors, its
// predecessor when that is not kept yet. No more than maxOpen passages are
// opened (0: no bound). Then it builds the texts, counts them exactly, and
// gives back the last chosen sentences until the exact total fits.
func pack(ps []passage, ss []sentence, budget int, beta, floor float64, neighbors, maxOpen int, counter token.Counter) *packing {
	pk := &packing{kept: make([]bool, len(ss)), opened: make([]bool, len(ps)), lastKept: -1, firstDropped: -1}
	cost := func(i int) int {
		x := ss[i]
		c := x.tokens
		if !pk.opened[x.passage] {
			c += ps[x.passage].headerTokens
		}
		if neighbors > 0 && x.index > 0 && !pk.kept[i-1] {
			c += ss[i-1].tokens
		}
		return c
	}
	left, open := budget, 0
	for {
		best, bestPri := -1, math.Inf(-1)
		for i := range ss {
			if pk.kept[i] || ss[i].p < floor {
				continue
			}
			if !pk.opened[ss[i].passage] && maxOpen > 0 && open >= maxOpen {
				continue
			}
			c := cost(i)
			if c > left {
				continue
			}
			if pri := priority(ss[i].p, c, beta); pri > bestPri {
				best, bestPri = i, pri
			}
		}
		if best < 0 {
			break
		}
		left -= cost(best)
		if neighbors > 0 && ss[best].index > 0 && !pk.kept[best-1] {
			pk.kept[best-1] = true
			pk.order = append(pk.order, best-1)
		}
		pk.kept[best] = true
		pk.order = append(pk.order, best)
		if !pk.opened[ss[best].passage] {
			pk.opened[ss[best].passage] = true
			open++
		}
	}
	pk.build(ps, ss, counter)
	for pk.total > budget && len(pk.order) > 0 {
		last := pk.order[len(pk.order)-1]
		pk.order = pk.order[:len(pk.order)-1]
		pk.kept[last] = false
		pk.fixups++
		p := ss[last].passage
		if !slices.ContainsFunc(pk.order, func(i int) bool { return ss[i].passage == p }) {
			pk.opened[p] = false
		}
		pk.build(ps, ss, counter)
	}
	if len(pk.order) > 0 {
		pk.lastKept = pk.order[len(pk.order)-1]
	}
	bestPri := math.Inf(-1)
	for i := range ss {
		if pk.kept[i] {
			continue
		}
		if pri := priority(ss[i].p, cost(i), beta); pri > bestPri {
			pk.firstDropped, bestPri = i, pri
		}
	}
	return pk
}

// build writes every opened passage's text and counts it exactly.
func (pk *packing) build(ps []passage, ss []sentence, counter token.Counter) {
	pk.texts = make([]string, len(ps))
	pk.spans = make([][][2]int, len(ps))
	pk.tokens = make([]int, len(ps))
	pk.total = 0
	for pi, p := range ps {
		if !pk.opened[pi] {
			continue
		}
		var kept []int // sentence indices within the passage
		for j := range p.n {
			if pk.kept[p.first+j] {
				kept = append(kept, j)
				pk.spans[pi] = append(pk.spans[pi], p.units.Sentences[j])
			}
		}
		pk.texts[pi] = passageText(p, kept)
		pk.tokens[pi] = counter.Count(pk.texts[pi])
		pk.total += pk.tokens[pi]
	}
}

// passageText is what is sent of a passage: its header (when sent) and the
// kept sentences (indices among its sentences, ascending), joined by the
// passage's own white space where they are adjacent and by Gap where
// sentences were left out between them. Every other byte is the passage's,
// but for a header the source gave (a line of its own, "… " opening the
// next when the passage's first sentences were left out).
func passageText(p passage, kept []int) string {
	var b strings.Builder
	prevEnd, prevIndex := -1, -2 // the last piece written: its end and its sentence index (-1: the header)
	if p.header != "" && p.units.Header != nil {
		b.WriteString(p.header)
		prevEnd, prevIndex = p.units.Header[1], -1
	} else if p.header != "" { // a title the source gave: a line of its own
		b.WriteString(p.header)
		b.WriteByte('\n')
		if len(kept) > 0 && kept[0] > 0 {
			b.WriteString(strings.TrimLeft(Gap, " "))
		}
	}
	for _, j := range kept {
		sp := p.units.Sentences[j]
		switch {
		case prevEnd < 0:
		case j == prevIndex+1:
			b.WriteString(p.text[prevEnd:sp[0]])
		default:
			b.WriteString(Gap)
		}
		b.WriteString(p.text[sp[0]:sp[1]])
		prevEnd, prevIndex = sp[1], j
	}
	return b.String()
}
