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
	// stopped says packing ended because the kept sentences held the
	// stop share of the expected evidence (keptP of expected).
	stopped         bool
	keptP, expected float64
	// repeat marks the sentences left out because their text is sent
	// from another passage of their document (dedup; nil without).
	repeat []bool
}

// packSettings are how pack chooses.
type packSettings struct {
	budget int
	// beta prices a sentence by p / cost^beta.
	beta float64
	// floor: only sentences with p ≥ floor are sent.
	floor float64
	// stop, when above 0: packing ends once the kept sentences' p sum to
	// stop × the expected evidence (the p of every sentence that could
	// be sent).
	stop float64
	// neighbors 1 sends a kept sentence's predecessor with it.
	neighbors int
	// maxOpen bounds the passages opened (0: no bound).
	maxOpen int
}

// priority is a sentence's worth per token^beta.
func priority(p float64, cost int, beta float64) float64 {
	if beta == 0 {
		return p
	}
	return p / math.Pow(float64(max(cost, 1)), beta)
}

// pack chooses sentences greedily by priority within the budget, among
// those with p ≥ floor: a sentence costs its tokens, its passage's header
// the first time the passage is opened, and, with neighbors, its
// predecessor when that is not kept yet. It stops early once the kept
// sentences hold the stop share of the expected evidence. Then it builds
// the texts, counts them exactly, and gives back the last chosen
// sentences until the exact total fits. With repeats (dedup; nil: none) it
// leaves out the sentences sent from another passage (repeats.go).
func pack(ps []passage, ss []sentence, set packSettings, repeats *repeatIndex, counter token.Counter) *packing {
	pk := &packing{kept: make([]bool, len(ss)), opened: make([]bool, len(ps)), lastKept: -1, firstDropped: -1}
	cost := func(i int) int {
		x := ss[i]
		c := x.tokens
		if !pk.opened[x.passage] {
			c += ps[x.passage].headerTokens
		}
		if set.neighbors > 0 && x.index > 0 && !pk.kept[i-1] && !slices.Contains(x.needs, i-1) {
			c += ss[i-1].tokens
		}
		for _, k := range x.needs {
			if !pk.kept[k] {
				c += ss[k].tokens
			}
		}
		return c
	}
	rp := repeats.packing()
	pk.expected = expectedEvidence(ss, set.floor, rp)
	left, open := set.budget, 0
	for {
		if set.stop > 0 && len(pk.order) > 0 && pk.keptP >= set.stop*pk.expected {
			pk.stopped = true
			break
		}
		best, bestPri := -1, math.Inf(-1)
		for i := range ss {
			if pk.kept[i] || ss[i].p < set.floor || rp.blocked(i) || ss[i].kind == Context {
				continue
			}
			if !pk.opened[ss[i].passage] && set.maxOpen > 0 && open >= set.maxOpen {
				continue
			}
			c := cost(i)
			if c > left {
				continue
			}
			if pri := priority(ss[i].p, c, set.beta); pri > bestPri {
				best, bestPri = i, pri
			}
		}
		if best < 0 {
			break
		}
		left -= cost(best)
		for _, k := range ss[best].needs { // its context line and heading path first
			if !pk.kept[k] {
				pk.keep(ss, k, set.floor, rp)
			}
		}
		if set.neighbors > 0 && ss[best].index > 0 && !pk.kept[best-1] {
			pk.keep(ss, best-1, set.floor, rp)
		}
		pk.keep(ss, best, set.floor, rp)
		if !pk.opened[ss[best].passage] {
			pk.opened[ss[best].passage] = true
			open++
		}
	}
	pk.build(ps, counter)
	for pk.total > set.budget && len(pk.order) > 0 {
		last := pk.order[len(pk.order)-1]
		pk.order = pk.order[:len(pk.order)-1]
		pk.kept[last] = false
		pk.fixups++
		p := ss[last].passage
		if !slices.ContainsFunc(pk.order, func(i int) bool { return ss[i].passage == p }) {
			pk.opened[p] = false
		}
		pk.buildPassage(ps, p, counter)
	}
	pk.dropOrphans(ps, ss, counter)
	if len(pk.order) > 0 {
		pk.lastKept = pk.order[len(pk.order)-1]
	}
	if rp != nil {
		pk.repeat = rp.sentElsewhere(pk.kept)
	}
	bestPri := math.Inf(-1)
	for i := range ss {
		if pk.kept[i] || (pk.repeat != nil && pk.repeat[i]) || ss[i].kind == Context {
			continue
		}
		if pri := priority(ss[i].p, cost(i), set.beta); pri > bestPri {
			pk.firstDropped, bestPri = i, pri
		}
	}
	return pk
}

// keep marks sentence i kept, and counts its p toward the expected
// evidence when it is part of it.
func (pk *packing) keep(ss []sentence, i int, floor float64, rp *repeatSet) {
	pk.kept[i] = true
	pk.order = append(pk.order, i)
	if ss[i].p >= floor && !rp.fragment(i) {
		pk.keptP += ss[i].p
	}
	rp.sent(i)
}

// expectedEvidence is the model's expected count of gold sentences among
// those that could be sent: the sum of p over the sentences with
// p ≥ floor (with dedup, a text repeated in one document once, at its
// best p, and no fragment).
func expectedEvidence(ss []sentence, floor float64, rp *repeatSet) float64 {
	best := map[string]float64{}
	e := 0.0
	for i, x := range ss {
		if x.p < floor || rp.fragment(i) || x.kind == Context {
			continue
		}
		if k, ok := rp.key(i); ok {
			if x.p > best[k] {
				e += x.p - best[k]
				best[k] = x.p
			}
			continue
		}
		e += x.p
	}
	return e
}

// dropOrphans gives back the context lines no kept unit needs any more
// (their unit was given back to fit the exact count): a "[time] Name:"
// or a table header is never sent alone.
func (pk *packing) dropOrphans(ps []passage, ss []sentence, counter token.Counter) {
	needed := map[int]bool{}
	for _, i := range pk.order {
		for _, k := range ss[i].needs {
			needed[k] = true
		}
	}
	changed := map[int]bool{}
	pk.order = slices.DeleteFunc(pk.order, func(i int) bool {
		if ss[i].kind != Context || needed[i] {
			return false
		}
		pk.kept[i] = false
		changed[ss[i].passage] = true
		return true
	})
	for p := range changed {
		if !slices.ContainsFunc(pk.order, func(i int) bool { return ss[i].passage == p }) {
			pk.opened[p] = false
		}
		pk.buildPassage(ps, p, counter)
	}
}

// build writes every opened passage's text and counts it exactly.
func (pk *packing) build(ps []passage, counter token.Counter) {
	pk.texts = make([]string, len(ps))
	pk.spans = make([][][2]int, len(ps))
	pk.tokens = make([]int, len(ps))
	pk.total = 0
	for pi := range ps {
		pk.buildPassage(ps, pi, counter)
	}
}

// buildPassage writes passage pi's text from the kept sentences and counts
// it exactly, keeping total in step; a passage not opened sends nothing.
// Giving a sentence back changes only its own passage, so only that one
// is written and counted again.
func (pk *packing) buildPassage(ps []passage, pi int, counter token.Counter) {
	pk.total -= pk.tokens[pi]
	pk.texts[pi], pk.spans[pi], pk.tokens[pi] = "", nil, 0
	if !pk.opened[pi] {
		return
	}
	p := ps[pi]
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

// Joiner is what marks units left out before unit j of u (a passage of
// text): Gap, or, in text with line structure (u.Kinds set), before a
// unit that starts its line (a turn, a row, a cue, code, a heading), a
// line break, so that a table stays a table and a turn keeps its line.
func Joiner(text string, u Units, j int) string {
	if u.Kinds == nil {
		return Gap
	}
	start := u.Sentences[j][0]
	if strings.TrimSpace(text[strings.LastIndexByte(text[:start], '\n')+1:start]) == "" {
		return "\n"
	}
	return Gap
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
			b.WriteString(Joiner(p.text, p.units, j))
		}
		b.WriteString(p.text[sp[0]:sp[1]])
		prevEnd, prevIndex = sp[1], j
	}
	return b.String()
}
