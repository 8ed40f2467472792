package relevance

import (
	"math"
	"slices"
)

// Feature names, in the order of a feature vector. The first block reads the
// curve being cut (the fused one); the channel block is present when the
// model reads channels (a hybrid's dense and lexical curves).
var (
	curveFeatures = []string{
		"z",          // the passage's score, standardised over the question's N scores
		"log_rank",   // log(1 + rank) in the curve
		"gap_next",   // z(rank) − z(rank+1)
		"gap_prev",   // z(rank−1) − z(rank)
		"head_z",     // z of rank 0: how strong the head is
		"head_gap",   // z(0) − z(1)
		"log_tokens", // log(1 + the passage's tokens)
	}
	perChannel = []string{
		"z",         // standardised channel score
		"log_rank",  // log(1 + rank in the channel)
		"below_top", // channel's top z minus this z
	}
	agreementFeatures = []string{
		"rank_disagreement", // |log rank in channel 0 − log rank in channel 1|
		"both_top10",        // in the top 10 of both channels
	}
)

// FeatureNames lists the features a model with the given number of channels
// reads, in vector order.
func FeatureNames(channels int) []string {
	out := slices.Clone(curveFeatures)
	for j := range channels {
		for _, f := range perChannel {
			out = append(out, "ch"+string(rune('0'+j))+"_"+f)
		}
	}
	if channels >= 2 {
		out = append(out, agreementFeatures...)
	}
	return out
}

// features computes the feature vectors of the top min(n, window) ranks of a
// curve. scores, tokens and every chans[j] are in input order; order lists
// input indices by rank (best first) and may be shorter than n. Only the
// first `channels` channels are read.
func features(scores []float64, tokens []int, chans [][]float64, order []int, channels int) [][]float64 {
	z := standardise(scores)
	m := len(order)
	type chInfo struct {
		z    []float64
		rank []int
		top  float64
	}
	ch := make([]chInfo, channels)
	for j := range channels {
		ch[j].z = standardise(chans[j])
		ch[j].rank = ranks(chans[j])
		ch[j].top = math.Inf(-1)
		for _, v := range ch[j].z {
			ch[j].top = max(ch[j].top, v)
		}
	}
	headZ := z[order[0]]
	headGap := 0.0
	if m > 1 {
		headGap = headZ - z[order[1]]
	}
	nf := len(FeatureNames(channels))
	out := make([][]float64, m)
	for r, i := range order {
		x := make([]float64, 0, nf)
		next, prev := 0.0, 0.0
		if r+1 < m {
			next = z[i] - z[order[r+1]]
		}
		if r > 0 {
			prev = z[order[r-1]] - z[i]
		}
		x = append(x, z[i], math.Log1p(float64(r)), next, prev, headZ, headGap, math.Log1p(float64(tokens[i])))
		for j := range channels {
			x = append(x, ch[j].z[i], math.Log1p(float64(ch[j].rank[i])), ch[j].top-ch[j].z[i])
		}
		if channels >= 2 {
			a, b := ch[0].rank[i], ch[1].rank[i]
			both := 0.0
			if a < 10 && b < 10 {
				both = 1
			}
			x = append(x, math.Abs(math.Log1p(float64(a))-math.Log1p(float64(b))), both)
		}
		out[r] = x
	}
	return out
}

// standardise returns (v − mean)/σ; a flat curve gives zeros.
func standardise(v []float64) []float64 {
	mean := 0.0
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	ss := 0.0
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / float64(len(v)))
	out := make([]float64, len(v))
	if sd == 0 || math.IsNaN(sd) {
		return out
	}
	for i, x := range v {
		out[i] = (x - mean) / sd
	}
	return out
}

// ranks returns each input position's rank by score, highest first; ties keep
// input order (as ctxsel.Curve ranks).
func ranks(v []float64) []int {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case v[a] > v[b]:
			return -1
		case v[a] < v[b]:
			return 1
		}
		return 0
	})
	out := make([]int, len(v))
	for r, i := range idx {
		out[i] = r
	}
	return out
}
