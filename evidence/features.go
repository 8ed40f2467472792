package evidence

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/ctxsel/ctxsel"
)

// passage is one candidate passage split into units.
type passage struct {
	input  int // index into TextQuery.Texts
	rank   int // rank in the curve (0 = best)
	score  float64
	text   string
	units  Units
	header string // "" when none is sent
	// title is its header's text, sent or not ("" when it has none): a
	// title line of its own, else the one the query's Headers give.
	title string
	// headerTokens are the tokens of the header and the line break after it.
	headerTokens int
	first, n     int // its sentences are sents[first : first+n]
}

// sentence is one evidence unit with its features and probability.
type sentence struct {
	passage int // index into the candidate passages
	index   int // among its passage's sentences
	span    [2]int
	text    string
	// tokens estimates what the sentence adds to its passage's text: its
	// own tokens and the joiner before it.
	tokens int
	x      []float64
	p      float64
}

// candidates splits the candidate passages (input indices, best first) into
// units and returns them with their sentences in order.
func (s *Selector) candidates(q ctxsel.TextQuery, set []int, header bool) ([]passage, []sentence, error) {
	// A passage's rank is read from the whole curve (the pool when the
	// query is a composition's), as the model was fitted.
	whole, at := shape(q)
	rank := make(map[int]int, whole.Len())
	for r, idx := range whole.Top(whole.Len()) {
		rank[idx] = r
	}
	var ps []passage
	var ss []sentence
	for _, idx := range set {
		text := q.Texts[idx]
		if err := checkText(q.Curve.Candidate(idx).ID, text); err != nil {
			return nil, nil, err
		}
		u := Split(text)
		if len(u.Sentences) == 0 {
			continue // empty: nothing to send
		}
		p := passage{input: idx, rank: rank[at(idx)], score: q.Curve.Candidate(idx).Score, text: text, units: u, first: len(ss), n: len(u.Sentences)}
		if u.Header != nil {
			p.title = text[u.Header[0]:u.Header[1]]
		} else if q.Headers != nil {
			p.title = headerText(q.Headers[idx])
		}
		if p.title != "" && header {
			p.header = p.title
			p.headerTokens = s.counter.Count(p.header) + 1
		}
		for j, sp := range u.Sentences {
			t := text[sp[0]:sp[1]]
			ss = append(ss, sentence{passage: len(ps), index: j, span: sp, text: t, tokens: s.counter.Count(t) + joinerTokens})
		}
		ps = append(ps, p)
	}
	return ps, ss, nil
}

// joinerTokens is what the joiner before a sentence (a space, a line break
// or the gap marker " … ") is assumed to cost while packing; exact counts
// of the texts as sent settle the budget after.
const joinerTokens = 1

// features fills every sentence's features and probability.
func (s *Selector) features(ctx context.Context, q ctxsel.TextQuery, ps []passage, ss []sentence) error {
	texts := make([]string, len(ss))
	for i, x := range ss {
		texts[i] = x.text
	}
	bm, err := s.lexical.Score(ctx, q.Question, texts)
	if err != nil {
		return fmt.Errorf("sentence BM25: %w", err)
	}
	dense, err := s.sentenceSimilarity(ctx, q, ps, texts)
	if err != nil {
		return fmt.Errorf("sentence similarity: %w", err)
	}
	if len(bm) != len(ss) || len(dense) != len(ss) {
		return fmt.Errorf("sentence scores: %d lexical and %d dense for %d sentences", len(bm), len(dense), len(ss))
	}
	headers := make([]string, len(ps))
	for i, p := range ps {
		headers[i] = p.title
	}
	hb, err := s.lexical.Score(ctx, q.Question, headers)
	if err != nil {
		return fmt.Errorf("header BM25: %w", err)
	}
	bmZ, denseZ, headerZ := zscores(bm), zscores(dense), zscores(hb)
	bridge, bridged := bridges(ps, ss, bmZ, denseZ)

	best := 0.0
	for _, v := range bm {
		best = max(best, v)
	}
	pscores := make([]float64, len(ps))
	for i, p := range ps {
		pscores[i] = p.score
	}
	passZ := zscores(pscores)
	// The gap to the best and the spread are the whole curve's (the pool's
	// when the query is a composition's): the model was fitted on whole
	// curves, where the candidates hold the best passage.
	whole, _ := shape(q)
	top := whole.Candidate(whole.Top(1)[0]).Score
	_, curveSD := meanSD(whole.Scores())
	for i := range ss {
		x := &ss[i]
		p := ps[x.passage]
		rel := 0.0
		if best > 0 {
			rel = bm[i] / best
		}
		gap := 0.0
		if curveSD > 0 {
			gap = (p.score - top) / curveSD
		}
		first := 0.0
		if x.index == 0 {
			first = 1
		}
		nb := math.Inf(-1)
		if x.index > 0 {
			nb = bmZ[i-1]
		}
		if x.index < p.n-1 {
			nb = max(nb, bmZ[i+1])
		}
		if math.IsInf(nb, -1) {
			nb = 0
		}
		hz := 0.0
		if p.title != "" {
			hz = headerZ[x.passage]
		}
		x.x = []float64{
			bmZ[i], rel, denseZ[i], dense[i], passZ[x.passage], gap, math.Log1p(float64(p.rank)),
			first, math.Log1p(float64(x.index)), math.Log(float64(max(1, x.tokens-joinerTokens))), hz, nb,
			bridge[x.passage], bridged[x.passage],
		}
		x.p = s.model.Prob(x.x)
	}
	return nil
}

// bridges finds multi-hop links: a passage whose header (a title, less a
// trailing parenthesis: "Ed Wood (film)" → "ed wood") is named in a
// sentence of another candidate passage. bridge is the best such mention's
// match to the question (the mean of its bm25_z and dense_z), bridged 1
// when there is one; both 0 otherwise.
func bridges(ps []passage, ss []sentence, bmZ, denseZ []float64) (bridge, bridged []float64) {
	bridge, bridged = make([]float64, len(ps)), make([]float64, len(ps))
	var lower []string
	for pi, p := range ps {
		if p.title == "" {
			continue
		}
		key := titleKey(p.title)
		if len([]rune(key)) < 3 {
			continue
		}
		if lower == nil {
			lower = make([]string, len(ss))
			for i, x := range ss {
				lower[i] = strings.ToLower(x.text)
			}
		}
		best := math.Inf(-1)
		for i, x := range ss {
			if x.passage != pi && strings.Contains(lower[i], key) {
				best = max(best, (bmZ[i]+denseZ[i])/2)
			}
		}
		if !math.IsInf(best, -1) {
			bridge[pi], bridged[pi] = best, 1
		}
	}
	return bridge, bridged
}

// titleKey is a header as a name to look for: lower case, without Markdown
// '#' marks or a trailing parenthesis.
func titleKey(h string) string {
	h = strings.TrimSpace(strings.TrimLeft(h, "# "))
	if i := strings.LastIndex(h, " ("); i > 0 && strings.HasSuffix(h, ")") {
		h = h[:i]
	}
	return strings.ToLower(strings.TrimSpace(h))
}

// zscores standardises v (all 0 when it does not vary).
func zscores(v []float64) []float64 {
	m, sd := meanSD(v)
	out := make([]float64, len(v))
	if sd == 0 {
		return out
	}
	for i, x := range v {
		out[i] = (x - m) / sd
	}
	return out
}

func meanSD(v []float64) (float64, float64) {
	if len(v) == 0 {
		return 0, 0
	}
	m := 0.0
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	s := 0.0
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return m, math.Sqrt(s / float64(len(v)))
}
