package lengthest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/internal/vecmath"
)

// Utility measures how similar two summaries are, for MBR and for scoring a
// summary against the silver references. Higher is more similar.
type Utility interface {
	Name() string
	// Matrix returns sim[i][j] = similarity(a[i], b[j]).
	Matrix(ctx context.Context, a, b []string) ([][]float64, error)
}

// RougeL is the ROUGE-L F1 score (β = 1) on lower-cased alphanumeric
// words, the tokenisation of the rouge-score package without stemming.
type RougeL struct{}

// Name implements Utility.
func (RougeL) Name() string { return "rouge-l" }

// Matrix implements Utility.
func (RougeL) Matrix(ctx context.Context, a, b []string) ([][]float64, error) {
	ta, tb := words(a), words(b)
	out := make([][]float64, len(a))
	for i := range a {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[i] = make([]float64, len(b))
		for j := range b {
			out[i][j] = rougeLF1(ta[i], tb[j])
		}
	}
	return out, nil
}

// RougeLF1 is ROUGE-L F1 of one pair.
func RougeLF1(a, b string) float64 {
	return rougeLF1(tokenize(a), tokenize(b))
}

func words(texts []string) [][]string {
	out := make([][]string, len(texts))
	for i, t := range texts {
		out[i] = tokenize(t)
	}
	return out
}

func tokenize(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)))
	})
}

func rougeLF1(a, b []string) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	// longest common subsequence, one row at a time
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			switch {
			case a[i] == b[j]:
				cur[j+1] = prev[j] + 1
			case prev[j+1] >= cur[j]:
				cur[j+1] = prev[j+1]
			default:
				cur[j+1] = cur[j]
			}
		}
		prev, cur = cur, prev
	}
	lcs := float64(prev[len(b)])
	if lcs == 0 {
		return 0
	}
	p, r := lcs/float64(len(a)), lcs/float64(len(b))
	return 2 * p * r / (p + r)
}

// Embedding is the cosine similarity of the texts' embeddings (e.g. the
// embedded USE-Lite model; wrap it in the embedding cache to embed each
// summary once).
type Embedding struct {
	Label    string
	Embedder embed.Embedder
}

// Name implements Utility.
func (e Embedding) Name() string {
	if e.Label != "" {
		return "cosine:" + e.Label
	}
	return "cosine:" + e.Embedder.ModelID()
}

// Matrix implements Utility.
func (e Embedding) Matrix(ctx context.Context, a, b []string) ([][]float64, error) {
	vecs, err := e.Embedder.Embed(ctx, append(append([]string(nil), a...), b...))
	if err != nil {
		return nil, fmt.Errorf("embed summaries: %w", err)
	}
	if len(vecs) != len(a)+len(b) {
		return nil, fmt.Errorf("embed summaries: %d vectors for %d texts", len(vecs), len(a)+len(b))
	}
	out := make([][]float64, len(a))
	for i := range a {
		out[i] = make([]float64, len(b))
		for j := range b {
			out[i][j] = vecmath.Cosine32(vecs[i], vecs[len(a)+j])
		}
	}
	return out, nil
}

// Candidate is one panel summary.
type Candidate struct {
	Model  string `json:"model"`
	Sample int    `json:"sample"`
	Text   string `json:"text"`
}

// Ranked is a candidate with its MBR utility.
type Ranked struct {
	Candidate
	Utility float64 `json:"utility"`
}

// MBR ranks candidates by their mean similarity to all other candidates and
// returns the best keep (ties: the earlier candidate), best first.
func MBR(ctx context.Context, u Utility, cands []Candidate, keep int) ([]Ranked, error) {
	texts := make([]string, len(cands))
	for i, c := range cands {
		texts[i] = c.Text
	}
	sim, err := u.Matrix(ctx, texts, texts)
	if err != nil {
		return nil, fmt.Errorf("MBR %s: %w", u.Name(), err)
	}
	ranked := make([]Ranked, len(cands))
	for i, c := range cands {
		ranked[i].Candidate = c
		if len(cands) < 2 {
			continue
		}
		s := 0.0
		for j := range cands {
			if j != i {
				s += sim[i][j]
			}
		}
		ranked[i].Utility = s / float64(len(cands)-1)
	}
	// stable: equal utilities keep the panel's order
	slices.SortStableFunc(ranked, func(a, b Ranked) int { return cmp.Compare(b.Utility, a.Utility) })
	return ranked[:min(keep, len(ranked))], nil
}
