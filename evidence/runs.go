package evidence

import (
	"cmp"
	"math"
	"slices"
)

// Runs of turns (the run parameter): in a meeting the relevant part of a
// conversation is a range of turns — QMSum's gold spans are runs of 51
// turns on average (validation), where nearly every neighbour of a gold
// turn is gold — while the model scores each turn on its own words, so a
// run's middle turns ("Uh-huh.", "So the remote needs a battery.") look
// no more likely than any other. With run=λ, a kept turn lends each of
// its neighbouring turns at least λ times its own value: after a turn
// of value v is chosen, the turn just before it and the turn just after
// it in its passage are worth no less than λ·v, the next ones λ²·v once
// those are chosen in turn, and so on. λ is the chance a gold turn's
// neighbour is gold too. The model's own p is left as it is for the stop
// (the expected evidence), so a lent value never ends packing early.

// turnAt is the span [from, to) of the candidate sentences of the turn
// candidate i belongs to (groupSpan: its group's sentences when it has
// one, else itself); ok is false when i is no turn's sentence.
func turnAt(ps []passage, ss []sentence, i int) (span [2]int, ok bool) {
	if ss[i].kind != Turn {
		return [2]int{}, false
	}
	return groupSpan(ps, ss, i), true
}

// neighbourTurn is the turn next to the turn span t in its passage, the
// one before it (step -1) or after it (step 1), passing over context
// lines (a turn's "[time] Name:" prefix); ok is false when the passage
// has none there or the next unit is not a turn.
func neighbourTurn(ps []passage, ss []sentence, t [2]int, step int) (span [2]int, ok bool) {
	j := t[0] - 1
	if step > 0 {
		j = t[1]
	}
	pi := ss[t[0]].passage
	for ; j >= 0 && j < len(ss) && ss[j].passage == pi; j += step {
		if ss[j].kind != Context {
			return turnAt(ps, ss, j)
		}
	}
	return [2]int{}, false
}

// candidateTurns are the turns among the candidates, in their order:
// spans[t] is turn t's span (turnAt), of[i] the turn candidate i belongs
// to (-1: none), nbrs[t] the turns before and after t in its passage
// (neighbourTurn; -1: none), found once for the readers that walk them
// (the turn features, the neighbourhood prior, the stretch).
type candidateTurns struct {
	spans [][2]int
	of    []int
	nbrs  [][2]int
}

func turnsAmong(ps []passage, ss []sentence) candidateTurns {
	ct := candidateTurns{of: make([]int, len(ss))}
	for i := range ct.of {
		ct.of[i] = -1
	}
	for i := 0; i < len(ss); {
		t, ok := turnAt(ps, ss, i)
		if !ok {
			i++
			continue
		}
		for k := t[0]; k < t[1]; k++ {
			ct.of[k] = len(ct.spans)
		}
		ct.spans = append(ct.spans, t)
		i = t[1]
	}
	ct.nbrs = make([][2]int, len(ct.spans))
	for n, t := range ct.spans {
		for k, step := range []int{-1, 1} {
			ct.nbrs[n][k] = -1
			if nb, ok := neighbourTurn(ps, ss, t, step); ok {
				ct.nbrs[n][k] = ct.of[nb[0]]
			}
		}
	}
	return ct
}

// lendRun raises, after the candidates chosen were kept, the values
// (val, per candidate sentence) of the turns next to the turns they
// belong to: each neighbour's sentences not kept yet are worth together
// at least lend × the chosen sentences' value, raised in proportion to
// their own values (evenly when those are all 0). A chosen sentence that
// is no turn's lends nothing.
func lendRun(ps []passage, ss []sentence, chosen []int, val []float64, kept []bool, lend float64) {
	if lend <= 0 || len(chosen) == 0 {
		return
	}
	t, ok := turnAt(ps, ss, chosen[0])
	if !ok {
		return
	}
	t[1] = max(t[1], chosen[len(chosen)-1]+1)
	v := 0.0
	for _, i := range chosen {
		v += val[i]
	}
	for _, step := range []int{-1, 1} {
		nb, ok := neighbourTurn(ps, ss, t, step)
		if !ok {
			continue
		}
		var open []int
		have := 0.0
		for i := nb[0]; i < nb[1]; i++ {
			if !kept[i] {
				open = append(open, i)
				have += val[i]
			}
		}
		want := lend * v
		if len(open) == 0 || have >= want {
			continue
		}
		for _, i := range open {
			if have > 0 {
				val[i] *= want / have
			} else {
				val[i] = want / float64(len(open))
			}
		}
	}
}

// Broad questions (breadth.go) pack their turns as runs two ways: a kept
// turn lends its neighbours broad_run (lendRun) and, before packing,
// broad_prior = w values each turn in its neighbourhood (neighbourPrior):
// a turn in a stretch of likely turns is chosen before an isolated one
// the model values as much, so a run starts where the model's values
// cluster, not at one turn that matches the question's words.
// broad_reach = h widens that neighbourhood to the h turns on each side
// (a meeting's gold is a range of ~51 turns, wider than ±1 smooths), and
// broad_passage = γ first scales each turn by its passage's retrieval
// standing (passagePrior), so the stretch comes from the chunk retrieval
// believes in, and broad_chunk = γ2 by its passage's standing in the
// model's own values (chunkPrior). broad_decay = δ lets the weights fall with distance
// (priorWeight), so a wide reach still ranks a turn by its near
// neighbours first.

// neighbourPrior raises val (per candidate sentence) so that each turn
// is worth its own value plus w × the values of the turns up to reach
// (at least 1) before and after it in its passage (values as they were
// before any was raised), the turn d away weighted by priorWeight(d,
// reach, decay), its sentences raised in proportion to their values
// (evenly when those are all 0). Sentences of no turn keep their value.
func neighbourPrior(ps []passage, ss []sentence, val []float64, w float64, reach int, decay float64) {
	if w <= 0 {
		return
	}
	reach = max(reach, 1)
	ct := turnsAmong(ps, ss)
	value := make([]float64, len(ct.spans)) // each turn's, before any was raised
	for n, t := range ct.spans {
		for k := t[0]; k < t[1]; k++ {
			value[n] += val[k]
		}
	}
	for n, t := range ct.spans {
		raised := value[n]
		for side := range 2 {
			for nb, d := n, 0; d < reach; d++ {
				if nb = ct.nbrs[nb][side]; nb < 0 {
					break
				}
				raised += w * priorWeight(d+1, reach, decay) * value[nb]
			}
		}
		if raised == value[n] {
			continue
		}
		for k := t[0]; k < t[1]; k++ {
			if value[n] > 0 {
				val[k] *= raised / value[n]
			} else {
				val[k] = raised / float64(t[1]-t[0])
			}
		}
	}
}

// priorWeight is the weight of the turn d (1 … reach) away in the
// neighbourhood prior: 1 − decay × (d − 1) / reach, so with decay 0 every
// turn in reach counts alike (exactly 1: the uniform prior's values to
// the bit) and with decay 1 the weights fall linearly from 1 next to the
// turn to 1/reach at the reach's edge (0 one turn beyond it: a triangle).
func priorWeight(d, reach int, decay float64) float64 {
	return 1 - decay*float64(d-1)/float64(reach)
}

// passagePrior multiplies the value (val) of every turn's sentence by
// 1 + g × its passage's score among the candidates', min-max normalised
// (the best passage 1, the worst 0): a whole chunk's rank carries the
// topic of a discussion, which a turn's own words may not. Sentences of
// no turn, and candidates whose scores are all equal, keep their value.
func passagePrior(ps []passage, ss []sentence, val []float64, g float64) {
	if g <= 0 || len(ps) == 0 {
		return
	}
	scores := make([]float64, len(ps))
	for pi, p := range ps {
		scores[pi] = p.score
	}
	scaleTurns(ss, val, g, scores, nil)
}

// scaleTurns multiplies the value (val) of every turn's sentence by 1 +
// g × its passage's worth, min-max normalised among the passages in (nil:
// all of them): the passage and chunk priors' shared step. Nothing
// changes when those worths are all equal.
func scaleTurns(ss []sentence, val []float64, g float64, worth []float64, in []bool) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for pi, w := range worth {
		if in == nil || in[pi] {
			lo, hi = min(lo, w), max(hi, w)
		}
	}
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return
	}
	for i, x := range ss {
		if x.kind == Turn {
			val[i] *= 1 + g*(worth[x.passage]-lo)/(hi-lo)
		}
	}
}

// chunkTurns is how many of a passage's best turns its chunk value
// averages (chunkPrior): enough that one turn matching the question's
// words does not make a chunk, few enough that a long chunk's chatter
// does not dilute it.
const chunkTurns = 5

// chunkPrior multiplies the value (val) of every turn's sentence by
// 1 + g × its passage's chunk value among the candidate passages that
// hold turns, min-max normalised (the best 1, the worst 0): the model's
// own view of which chunk holds the discussion, where passagePrior reads
// retrieval's. A passage's chunk value is the mean of its best chunkTurns
// turns' values (all of them when it holds fewer), a turn's value the sum
// of its sentences' model p, before any prior (what packing prices a
// whole turn at). Sentences of no turn, and candidates whose chunk values
// are all equal, keep their value.
func chunkPrior(ps []passage, ss []sentence, val []float64, g float64) {
	if g <= 0 || len(ps) == 0 {
		return
	}
	ct := turnsAmong(ps, ss)
	turnValues := make([][]float64, len(ps)) // per passage, its turns' values
	for _, t := range ct.spans {
		v := 0.0
		for k := t[0]; k < t[1]; k++ {
			if ss[k].kind == Turn {
				v += ss[k].p
			}
		}
		pi := ss[t[0]].passage
		turnValues[pi] = append(turnValues[pi], v)
	}
	worth, in := make([]float64, len(ps)), make([]bool, len(ps))
	for pi, vs := range turnValues {
		if len(vs) == 0 {
			continue
		}
		slices.SortFunc(vs, func(a, b float64) int { return cmp.Compare(b, a) })
		vs = vs[:min(len(vs), chunkTurns)]
		for _, v := range vs {
			worth[pi] += v
		}
		worth[pi] /= float64(len(vs))
		in[pi] = true
	}
	scaleTurns(ss, val, g, worth, in)
}

// stretch is the contiguous window of turns of one passage (broad_stretch)
// whose values (val) sum highest among those whose sentences, context
// lines and passage header cost at most limit tokens: the candidate
// sentences of the turns it covers, ascending (nil: no turn fits). Turns
// count as contiguous when nothing but context lines lies between them in
// the passage; sentences skip marks (a repeat sent from elsewhere) are
// neither counted nor returned.
func stretch(ps []passage, ss []sentence, val []float64, limit int, skip func(i int) bool) []int {
	type turn struct {
		span [2]int
		cost int
		v    float64
	}
	ct := turnsAmong(ps, ss)
	turns := make([]turn, 0, len(ct.spans))
	for _, t := range ct.spans {
		x := turn{span: t}
		var ctx []int
		for k := t[0]; k < t[1]; k++ {
			if skip(k) {
				continue
			}
			x.cost += ss[k].tokens
			x.v += val[k]
			for _, c := range ss[k].needs {
				if !slices.Contains(ctx, c) {
					ctx = append(ctx, c)
					x.cost += ss[c].tokens
				}
			}
		}
		turns = append(turns, x)
	}
	bestV, best := 0.0, [2]int{-1, -1}
	from, cost, v := 0, 0, 0.0
	for to, t := range turns {
		if to > 0 && ct.nbrs[to-1][1] != to {
			from, cost, v = to, 0, 0 // a new run of turns
		}
		cost, v = cost+t.cost, v+t.v
		for from < to && cost+ps[ss[t.span[0]].passage].headerTokens > limit {
			cost, v = cost-turns[from].cost, v-turns[from].v
			from++
		}
		if cost+ps[ss[t.span[0]].passage].headerTokens <= limit && v > bestV {
			bestV, best = v, [2]int{from, to}
		}
	}
	if best[0] < 0 {
		return nil
	}
	var m []int
	for k := turns[best[0]].span[0]; k < turns[best[1]].span[1]; k++ {
		if ss[k].kind != Context && !skip(k) {
			m = append(m, k)
		}
	}
	return m
}
