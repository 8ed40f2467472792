package evidence

import (
	"math"
	"slices"
	"strings"

	"github.com/ctxsel/ctxsel/chunk"
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
	// unsendable marks the sentences never sent from their passage (a
	// chunk's cut-off fragment, a cut turn's rest): no "best left out"
	unsendable []bool
	// lent counts the kept sentences valued above their own p: lent by a
	// kept turn next to theirs (run), by their neighbours (prior) or by
	// their passage (passage).
	lent int
	// stretched counts the sentences of the stretch packed first
	// (set.stretch; 0: none).
	stretched int
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
	// whole holds the structures whose groups are sent whole (TurnUnits:
	// a turn's or a cue's sentences; ItemUnits: a list item's); 0: none.
	whole Structures
	// run, when above 0, is the share of its value a kept turn lends its
	// neighbouring turns (runs.go).
	run float64
	// prior, when above 0, is the neighbourhood prior w: before packing,
	// each turn is worth its value plus w × its neighbouring turns'
	// (neighbourPrior, runs.go).
	prior float64
	// reach is how many turns on each side the prior reads (0 or 1: the
	// two next to a turn).
	reach int
	// decay, when above 0, lets the prior's weights fall with distance
	// (priorWeight, runs.go); 0: uniform.
	decay float64
	// passage, when above 0, is the passage prior γ: before packing, each
	// turn's value is multiplied by 1 + γ × its passage's normalised
	// score (passagePrior, runs.go).
	passage float64
	// chunk, when above 0, is the chunk prior γ2: before packing, each
	// turn's value is multiplied by 1 + γ2 × its passage's normalised
	// chunk value, the mean of its best turns' p (chunkPrior, runs.go).
	chunk float64
	// stretch, when above 0, packs first the contiguous window of turns
	// costing at most stretch × budget whose values sum highest
	// (stretch, runs.go), before choosing unit by unit.
	stretch float64
}

// groupSpan is the span [from, to) of the candidate sentences of candidate
// i's group (Units.Groups: a turn's, a cue's or a list item's sentences,
// all of one kind), the candidates next to it in its passage that share
// its group; {i, i+1} when it has none. wholeGroups and turnAt read it.
func groupSpan(ps []passage, ss []sentence, i int) [2]int {
	from, to := i, i+1
	g := ps[ss[i].passage].units.Group(ss[i].index)
	if g == 0 {
		return [2]int{from, to}
	}
	same := func(j int) bool {
		return j >= 0 && j < len(ss) && ss[j].passage == ss[i].passage && ps[ss[j].passage].units.Group(ss[j].index) == g
	}
	for same(from - 1) {
		from--
	}
	for same(to) {
		to++
	}
	return [2]int{from, to}
}

// wholeGroups is, per sentence, the span [from, to) of candidate
// sentences that its group (groupSpan) covers, when its kind is one
// whole sends whole ({i, i+1} otherwise); nil when no group of two or
// more sentences is sent whole (whole 0, prose), so such candidates are
// packed sentence by sentence as before.
func wholeGroups(ps []passage, ss []sentence, whole Structures) [][2]int {
	if whole == 0 {
		return nil
	}
	var out [][2]int
	for i := 0; i < len(ss); {
		x := ss[i]
		sp := [2]int{i, i + 1}
		if x.kind == Turn && whole&TurnUnits != 0 || x.kind == Item && whole&ItemUnits != 0 {
			sp = groupSpan(ps, ss, i)
		}
		if sp[1]-sp[0] > 1 && out == nil {
			out = make([][2]int, len(ss))
			for k := range out {
				out[k] = [2]int{k, k + 1}
			}
		}
		if out != nil {
			for k := sp[0]; k < sp[1]; k++ {
				out[k] = sp
			}
		}
		i = sp[1]
	}
	return out
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
// leaves out the sentences sent from another passage (repeats.go). With
// set.whole, a group (a turn's or a list item's sentences, Units.Groups)
// is chosen as one: its sentences not sent yet, at the sum of their p,
// for all their tokens; only when it no longer fits in what is left may
// its sentences be chosen one by one, and the exact count gives a group
// back whole. With set.run, a kept turn lends the turns next to it a share
// of its value, and with set.prior each turn is first worth a share of its
// neighbours' too (up to set.reach turns away, weighted by set.decay),
// after set.passage scaled it by its passage's score and set.chunk by its
// passage's best turns' p (runs.go).
func pack(ps []passage, ss []sentence, set packSettings, repeats *repeatIndex, counter token.Counter) *packing {
	pk := &packing{kept: make([]bool, len(ss)), opened: make([]bool, len(ps)), lastKept: -1, firstDropped: -1}
	rp := repeats.packing()
	groups := wholeGroups(ps, ss, set.whole)
	// val is what a sentence is worth to packing: its p, or, with run,
	// what a kept neighbouring turn lent it, with prior, what its turn's
	// neighbours add, and with passage, its passage's standing (runs.go)
	var val []float64
	var first []int // the stretch packed first (set.stretch)
	if set.run > 0 || set.prior > 0 || set.passage > 0 || set.chunk > 0 || set.stretch > 0 {
		val = make([]float64, len(ss))
		for i := range ss {
			val[i] = ss[i].p
		}
		passagePrior(ps, ss, val, set.passage)
		chunkPrior(ps, ss, val, set.chunk)
		if set.stretch > 0 {
			first = stretch(ps, ss, val, int(set.stretch*float64(set.budget)), rp.blocked)
		}
		neighbourPrior(ps, ss, val, set.prior, set.reach, set.decay)
	}
	valueOf := func(i int) float64 {
		if val != nil {
			return val[i]
		}
		return ss[i].p
	}
	// members appends to buf the sentences of the group [from, to) a pick
	// of it keeps (those not kept yet and not sent from another passage)
	// and returns them with the sum of their p: the gold sentences the
	// group is expected to hold, what the stop counts, so the group is
	// priced by its sentences' mean p per token. (Chosen on validation
	// dialogue over the best p, which undervalues a turn every sentence
	// of which is likely, and over a noisy-or, about equal: docs/evidence.md
	// "Whole turns".)
	members := func(buf []int, from, to int) ([]int, float64) {
		p := 0.0
		for i := from; i < to; i++ {
			if !pk.kept[i] && !rp.blocked(i) && ss[i].kind != Context {
				buf = append(buf, i)
				p += valueOf(i)
			}
		}
		return buf, p
	}
	// costOf is what keeping the sentences m (ascending, of one passage)
	// adds: their tokens, the header of a passage not opened yet, the
	// units they need not kept yet (once each), and, with neighbors, the
	// predecessor of the first.
	costOf := func(m []int) int {
		c := 0
		first := ss[m[0]]
		if !pk.opened[first.passage] {
			c += ps[first.passage].headerTokens
		}
		if prev := m[0] - 1; set.neighbors > 0 && first.index > 0 && !pk.kept[prev] && !slices.Contains(first.needs, prev) {
			c += ss[prev].tokens
			for _, k := range ss[prev].needs { // its context line, unless m's sentences need it too
				if !pk.kept[k] && !slices.ContainsFunc(m, func(e int) bool { return slices.Contains(ss[e].needs, k) }) {
					c += ss[k].tokens
				}
			}
		}
		for n, i := range m {
			c += ss[i].tokens
			for _, k := range ss[i].needs {
				if !pk.kept[k] && !slices.ContainsFunc(m[:n], func(e int) bool { return slices.Contains(ss[e].needs, k) }) {
					c += ss[k].tokens
				}
			}
		}
		return c
	}
	// above is what a pick m needs of what is left besides its cost: when
	// it opens its passage, the lines above it, which are not charged (a
	// chunk's lines above would make its units dearer than the first
	// chunk's) but must fit, or the exact count gives back every pick
	// after it, then it
	above := func(m []int) int {
		if p := ss[m[0]].passage; !pk.opened[p] {
			return ps[p].aboveTokens
		}
		return 0
	}
	one := make([]int, 1)
	cost := func(i int) int { one[0] = i; return costOf(one) }
	pk.expected = expectedEvidence(ss, set.floor, rp)
	left, open := set.budget, 0
	var buf, best []int
	var bestPri float64
	// keepPick keeps the pick m (ascending, of one passage, costOf(m) ≤
	// left), its context lines, with neighbors its predecessor, and lends
	// its turns' neighbours (run)
	keepPick := func(m []int) {
		left -= costOf(m)
		for _, i := range m {
			for _, k := range ss[i].needs { // its context line and heading path first
				if !pk.kept[k] {
					pk.keep(ss, k, set.floor, rp)
				}
			}
		}
		if first := m[0]; set.neighbors > 0 && ss[first].index > 0 && !pk.kept[first-1] {
			for _, k := range ss[first-1].needs { // the predecessor's context line too (a turn's prefix)
				if !pk.kept[k] {
					pk.keep(ss, k, set.floor, rp)
				}
			}
			pk.keep(ss, first-1, set.floor, rp)
		}
		for _, i := range m {
			pk.keep(ss, i, set.floor, rp)
		}
		if p := ss[m[0]].passage; !pk.opened[p] {
			pk.opened[p] = true
			open++
		}
	}
	if len(first) > 0 && costOf(first)+above(first) <= left {
		keepPick(first)
		pk.stretched = len(first)
		// its edge turns lend their neighbours as kept turns do
		for _, edge := range []int{first[0], first[len(first)-1]} {
			t, _ := turnAt(ps, ss, edge) // a stretch holds turns only
			lendRun(ps, ss, slices.DeleteFunc(slices.Clone(first), func(i int) bool { return i < t[0] || i >= t[1] }), val, pk.kept, set.run)
		}
	}
	// consider keeps the pick m (at probability p) as the best when it is,
	// and reports whether it may be chosen at all
	consider := func(m []int, p float64) bool {
		if len(m) == 0 || p < set.floor || (!pk.opened[ss[m[0]].passage] && set.maxOpen > 0 && open >= set.maxOpen) {
			return false
		}
		c := costOf(m)
		if c+above(m) > left {
			return false
		}
		if pri := priority(p, c, set.beta); pri > bestPri {
			best, bestPri = append(best[:0], m...), pri
		}
		return true
	}
	for {
		if set.stop > 0 && len(pk.order) > 0 && pk.keptP >= set.stop*pk.expected {
			pk.stopped = true
			break
		}
		best, bestPri = best[:0], math.Inf(-1)
		groupFits := false // the group of the sentences looked at may be chosen whole
		for i := range ss {
			if groups != nil && groups[i][1]-groups[i][0] > 1 {
				if g := groups[i]; i == g[0] {
					var p float64
					buf, p = members(buf[:0], g[0], g[1])
					groupFits = consider(buf, p)
				}
				if groupFits {
					continue // the group is chosen whole, not a sentence of it
				}
			}
			if pk.kept[i] || rp.blocked(i) || ss[i].kind == Context {
				continue
			}
			buf = append(buf[:0], i)
			consider(buf, valueOf(i))
		}
		if len(best) == 0 {
			break
		}
		keepPick(best)
		if val != nil {
			lendRun(ps, ss, best, val, pk.kept, set.run)
		}
	}
	pk.build(ps, counter)
	for pk.total > set.budget && len(pk.order) > 0 {
		last := pk.order[len(pk.order)-1]
		back := func(i int) bool { return i == last }
		if groups != nil && groups[last][1]-groups[last][0] > 1 {
			// a group goes back whole
			g := groups[last]
			back = func(i int) bool { return i >= g[0] && i < g[1] }
		}
		pk.order = slices.DeleteFunc(pk.order, func(i int) bool {
			if back(i) {
				pk.kept[i] = false
				pk.fixups++
				return true
			}
			return false
		})
		p := ss[last].passage
		if !slices.ContainsFunc(pk.order, func(i int) bool { return ss[i].passage == p }) {
			pk.opened[p] = false
		}
		pk.buildPassage(ps, p, counter)
	}
	pk.dropOrphans(ps, ss, counter)
	for _, i := range pk.order {
		if val != nil && val[i] > ss[i].p {
			pk.lent++
		}
	}
	if len(pk.order) > 0 {
		pk.lastKept = pk.order[len(pk.order)-1]
	}
	if rp != nil {
		pk.repeat = rp.sentElsewhere(pk.kept)
		pk.unsendable = make([]bool, len(ss))
		for i := range ss {
			pk.unsendable[i] = rp.fragment(i)
		}
	}
	bestPri = math.Inf(-1)
	for i := range ss {
		if pk.kept[i] || (pk.repeat != nil && pk.repeat[i]) || (pk.unsendable != nil && pk.unsendable[i]) || ss[i].kind == Context {
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
// line break and the line's indent, so that a table stays a table (an
// aligned table's cells over its columns), a nested item nested, and a
// turn keeps its line.
func Joiner(text string, u Units, j int) string {
	if u.Kinds == nil {
		return Gap
	}
	start := u.Sentences[j][0]
	nl := strings.LastIndexByte(text[:start], '\n')
	indent := text[nl+1 : start]
	if strings.TrimSpace(indent) != "" {
		return Gap
	}
	if indent == "" || (nl < 0 && !chunk.MayHoldCells(indent)) {
		// (white space opening the passage is an indent where it is
		// one: a chunk cut inside a line opens with a word's space)
		return "\n"
	}
	return "\n" + cellSpaces(indent)
}

// passageText is what is sent of a passage: its header (when sent) and the
// kept sentences (indices among its sentences, ascending), joined by the
// passage's own white space where they are adjacent and by Gap where
// sentences were left out between them. Every other byte is the passage's,
// but for a header the source gave and the lines above the passage it
// needs (lines of their own, in that order, before its own header; "… "
// opening the next when the passage's first sentences were left out, "…"
// on a line of its own before an indented line, which keeps its indent).
func passageText(p passage, kept []int) string {
	var b strings.Builder
	prevEnd, prevIndex := -1, -2 // the last piece written: its end and its sentence index (-1: the header)
	if p.header != "" && p.units.Header == nil {
		// a title the source gave: a line of its own
		b.WriteString(p.header)
		b.WriteByte('\n')
	}
	if p.above != "" {
		// the lines above the passage it needs: lines of their own
		b.WriteString(p.above)
		b.WriteByte('\n')
	}
	var first string // what marks the units left out before the first kept
	if len(kept) > 0 {
		first = Joiner(p.text, p.units, kept[0])
	}
	if p.header != "" && p.units.Header != nil {
		b.WriteString(p.header)
		prevEnd, prevIndex = p.units.Header[1], -1
	} else if b.Len() > 0 && len(kept) > 0 && kept[0] > 0 && (p.above == "" || first == Gap) {
		// (under lines above it, a row or a turn that starts its line
		// opens on its own line, as after any gap in such a text: a
		// table under its header stays a table)
		if len(first) > 1 && first[0] == '\n' {
			// an indented line (a statement's header, a row) opens
			// after "…" on a line of its own, its indent kept
			b.WriteString(strings.TrimSpace(Gap) + "\n")
		} else {
			b.WriteString(strings.TrimLeft(Gap, " "))
		}
	}
	for _, j := range kept {
		sp := p.units.Sentences[j]
		switch {
		case prevEnd < 0:
			if strings.HasPrefix(first, "\n") && (strings.HasSuffix(b.String(), "\n") || (b.Len() == 0 && j > 0)) {
				// a unit that starts its line opens it with the
				// line's indent: under a title or lines above it, or
				// first in the text after units left out
				b.WriteString(first[1:])
			}
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
