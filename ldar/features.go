package ldar

import (
	"math"
	"slices"
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
const numFeatures = 7

// zClip bounds standardised scores so that one extreme score cannot blow up
// the periodic embedding.
const zClip = 50

// curveStats returns the mean and standard deviation of scores (σ floored
// so that a flat curve standardises to zeros).
func curveStats(scores []float64) (mean, std float64) {
	n := float64(len(scores))
	for _, s := range scores {
		mean += s
	}
	mean /= n
	for _, s := range scores {
		std += (s - mean) * (s - mean)
	}
	std = math.Sqrt(std / n)
	scale := 0.0
	for _, s := range scores {
		scale = max(scale, math.Abs(s))
	}
	return mean, max(std, 1e-6*max(scale, 1e-12), 1e-12)
}

// features fills x (len ≥ m·numFeatures) for the m best scores, given the
// best scores in descending order (at least m of them; one more gives the
// last token its gap), their token counts (nil: unknown, 0) and the mean
// and σ of all the question's scores.
func features(top []float64, tokens []int, m int, mean, std float64, x []float64) {
	cum, zsum := 0, 0.0
	z := func(i int) float64 { return max(-zClip, min(zClip, (top[i]-mean)/std)) }
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
		x[i*numFeatures] = zi
		x[i*numFeatures+1] = gap
		x[i*numFeatures+2] = pos
		t := 0
		if tokens != nil {
			t = tokens[i]
		}
		cum += t
		x[i*numFeatures+3] = min(float64(t)/256, 8)
		x[i*numFeatures+4] = min(float64(cum)/4096, 8)
		next := 0
		if tokens != nil && i+1 < len(tokens) && i+1 < len(top) {
			next = tokens[i+1]
		}
		x[i*numFeatures+5] = min(float64(next)/256, 8)
		zsum += zi
		x[i*numFeatures+6] = zsum / float64(i+1) / 10
	}
}

// sortedDesc returns a copy of scores sorted best first.
func sortedDesc(scores []float64) []float64 {
	s := slices.Clone(scores)
	slices.SortFunc(s, func(a, b float64) int {
		switch {
		case a > b:
			return -1
		case a < b:
			return 1
		}
		return 0
	})
	return s
}
