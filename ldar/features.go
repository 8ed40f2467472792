package ldar

import (
	"math"

	"github.com/ctxsel/ctxsel"
)

// Per-token input features. Each of the top W ranks of the curve is one
// token; its features are, with z the score standardised by the mean and
// standard deviation of all N scores of the question:
//
//	0: z
//	1: z − z of the next rank (the gap below; 0 for the last token)
//	2: rank / (W−1): where in the window the token sits
//	3: the passage's tokens / 256
//	4: the tokens of ranks 0…r together / 4096
//	5: the next rank's tokens / 256 (0 for the last token)
//	6: the mean z of ranks 0…r / 10
//
// Standardising per question makes BM25 scores and cosine similarities
// comparable and says how far the head stands out from the bulk of the
// curve; the gap feature hands the encoder what Adaptive-k looks at. The
// token features let the policy price what a longer band costs: at a
// matched mean budget, stopping before a long passage of doubtful
// relevance buys recall elsewhere (token features are clipped at 8).
const baseFeatures = 7

// featuresPerChannel is what a policy with Config.Channels > 0 reads per
// component curve (see channelFeatures).
const featuresPerChannel = 3

// numFeatures is the width of one token's feature vector.
func (c Config) numFeatures() int { return baseFeatures + featuresPerChannel*c.Channels }

// zClip bounds standardised scores so that one extreme score cannot blow up
// the periodic embedding.
const zClip = 50

// curveStats returns the mean and standard deviation of scores (σ floored
// so that a flat curve standardises to zeros). Scores near the float64
// limit (±1.7e308) would overflow the sum and the squares: above 1 the
// scores are summed divided by a power of two, which is exact, so the
// result is the same as unscaled wherever that does not overflow.
func curveStats(scores []float64) (mean, std float64) {
	scale := 0.0
	for _, s := range scores {
		scale = max(scale, math.Abs(s))
	}
	unit := 1.0
	if scale > 1 {
		_, exp := math.Frexp(scale) // scale < 2^exp
		unit = math.Ldexp(1, exp-1) // ≤ scale: finite, and |s/unit| < 2
	}
	n := float64(len(scores))
	for _, s := range scores {
		mean += s / unit
	}
	mean /= n
	for _, s := range scores {
		d := s/unit - mean
		std += d * d
	}
	// |mean| ≤ scale and σ ≤ scale but for rounding, which the clamps undo
	mean = max(-math.MaxFloat64, min(math.MaxFloat64, mean*unit))
	std = min(math.MaxFloat64, math.Sqrt(std/n)*unit)
	return mean, max(std, 1e-6*max(scale, 1e-12), 1e-12)
}

// zScore is (s − mean)/σ clipped to ±zClip. s − mean overflows for scores
// of both signs near the float64 limit; the two quotients cannot, σ being
// at least 1e-6 of the largest |score| (curveStats). A NaN (a caller's NaN
// mean or σ) reads as 0.
func zScore(s, mean, std float64) float64 {
	d := s - mean
	z := d / std
	if math.IsInf(d, 0) {
		z = s/std - mean/std
	}
	if z != z {
		return 0
	}
	return max(-zClip, min(zClip, z))
}

// features fills x (len ≥ m·numFeatures) for the m best scores, given the
// best scores in descending order (at least m of them; one more gives the
// last token its gap), their token counts (nil: unknown, 0) and the mean
// and σ of all the question's scores.
// nf is the stride of x (Config.numFeatures); columns past the first
// baseFeatures are left to channelFeatures.
func features(top []float64, tokens []int, m, nf int, mean, std float64, x []float64) {
	cum, zsum := 0, 0.0
	z := func(i int) float64 { return zScore(top[i], mean, std) }
	for i := range m {
		zi := z(i)
		gap := 0.0
		if i+1 < len(top) {
			gap = zi - z(i+1)
		}
		pos := 0.0
		if m > 1 {
			pos = float64(i) / float64(m-1)
		}
		x[i*nf] = zi
		x[i*nf+1] = gap
		x[i*nf+2] = pos
		t := 0
		if tokens != nil {
			t = tokens[i]
		}
		cum += t
		x[i*nf+3] = min(float64(t)/256, 8)
		x[i*nf+4] = min(float64(cum)/4096, 8)
		next := 0
		if tokens != nil && i+1 < len(tokens) && i+1 < len(top) {
			next = tokens[i+1]
		}
		x[i*nf+5] = min(float64(next)/256, 8)
		zsum += zi
		x[i*nf+6] = zsum / float64(i+1) / 10
	}
}

// channelFeatures fills the component-curve columns of x for the m best
// ranks of the fused curve, whose input indices are order[:m]. For each
// channel j (all N scores of the question, input order) and each rank r:
//
//	z of the passage in channel j (standardised over the channel's N scores)
//	log(1 + its rank in channel j) / log(1 + N): where that curve puts it
//	|top r+1 of the fused curve ∩ top r+1 of channel j| / (r+1): how far
//	the two rankings agree so far
//
// A passage both retrievers rank high is likelier evidence than one only
// one of them likes; the agreement curve says where the retrievers stop
// agreeing, which a single fused score cannot show.
func channelFeatures(x []float64, nf, m int, order []int, chans [][]float64) {
	n := len(order)
	if len(chans) > 0 {
		n = len(chans[0])
	}
	for j, ch := range chans {
		mean, std := curveStats(ch)
		rank := ctxsel.Ranking(ch) // channel j's ranking: input indices
		rankOf := make(map[int]int, m)
		for r := range min(m, len(rank)) {
			rankOf[rank[r]] = r
		}
		fusedRank := make(map[int]int, m)
		for r := range m {
			fusedRank[order[r]] = r
		}
		// the channel rank of each of the fused top m (beyond m: counted)
		chRank := func(i int) int {
			if r, ok := rankOf[i]; ok {
				return r
			}
			v, c := ch[i], 0
			for k, w := range ch {
				if w > v || (w == v && k < i) {
					c++
				}
			}
			return c
		}
		overlap := 0
		col := baseFeatures + featuresPerChannel*j
		for r := range m {
			i := order[r]
			cr := chRank(i)
			if cr <= r {
				overlap++
			}
			if r < len(rank) {
				if fr, ok := fusedRank[rank[r]]; ok && fr < r {
					overlap++
				}
			}
			x[r*nf+col] = zScore(ch[i], mean, std)
			x[r*nf+col+1] = math.Log1p(float64(cr)) / math.Log1p(float64(n))
			x[r*nf+col+2] = float64(overlap) / float64(r+1)
		}
	}
}
