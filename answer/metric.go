// Package answer scores a reader's answer against gold answers: the SQuAD
// lexical metrics (EM, token F1), HELMET's substring match (SubEM), and two
// LLM judges (the Adaptive-k A.1.3 judge and a binary correct/incorrect
// judge), behind one Judge interface that ParseJudge resolves from a
// command-line spec (subem|em|f1|llm:SPEC|llm-binary:SPEC).
//
// An LLM judge's verdict keeps the raw output for audit; a verdict the
// parser cannot read unambiguously is Invalid, never scored.
package answer

import (
	"strings"
	"unicode"
)

// Normalize is SQuAD's answer normalisation: lower case, drop ASCII
// punctuation, drop the articles a/an/the (as whole words), and collapse
// white space.
func Normalize(s string) string {
	s = strings.ToLower(s)
	s = strings.Map(func(r rune) rune {
		if r < 128 && unicode.IsPunct(r) || r < 128 && unicode.IsSymbol(r) {
			return -1
		}
		return r
	}, s)
	// \b(a|an|the)\b: a maximal run of word characters equal to an article.
	var b strings.Builder
	word := func(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }
	rs := []rune(s)
	for i := 0; i < len(rs); {
		if !word(rs[i]) {
			b.WriteRune(rs[i])
			i++
			continue
		}
		j := i
		for j < len(rs) && word(rs[j]) {
			j++
		}
		switch w := string(rs[i:j]); w {
		case "a", "an", "the":
			b.WriteByte(' ')
		default:
			b.WriteString(w)
		}
		i = j
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// EM is 1 when the normalised prediction equals a normalised gold answer.
func EM(pred string, gold []string) float64 {
	p := Normalize(pred)
	for _, g := range gold {
		if Normalize(g) == p {
			return 1
		}
	}
	return 0
}

// SubEM is 1 when a normalised gold answer occurs in the normalised
// prediction (HELMET's substring exact match). Gold answers that normalise
// to nothing are ignored: they would match every prediction.
func SubEM(pred string, gold []string) float64 {
	p := Normalize(pred)
	for _, g := range gold {
		if n := Normalize(g); n != "" && strings.Contains(p, n) {
			return 1
		}
	}
	return 0
}

// F1 is SQuAD's token F1 between the normalised prediction and the best
// gold answer. Two empty token lists score 1; one empty, 0.
func F1(pred string, gold []string) float64 {
	pt := strings.Fields(Normalize(pred))
	best := 0.0
	for _, g := range gold {
		best = max(best, tokenF1(pt, strings.Fields(Normalize(g))))
	}
	return best
}

func tokenF1(pred, gold []string) float64 {
	if len(pred) == 0 || len(gold) == 0 {
		if len(pred) == len(gold) {
			return 1
		}
		return 0
	}
	counts := map[string]int{}
	for _, t := range gold {
		counts[t]++
	}
	same := 0
	for _, t := range pred {
		if counts[t] > 0 {
			counts[t]--
			same++
		}
	}
	if same == 0 {
		return 0
	}
	p := float64(same) / float64(len(pred))
	r := float64(same) / float64(len(gold))
	return 2 * p * r / (p + r)
}
