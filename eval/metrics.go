package eval

import (
	"sort"

	"github.com/ctxsel/ctxsel"
)

// Result is one strategy's figures over a data set. Averages are over the
// questions that have at least one gold passage.
type Result struct {
	Strategy string `json:"strategy"`
	// N is the number of questions measured.
	N int `json:"n"`
	// Recall is the mean of gold selected / gold.
	Recall float64 `json:"recall"`
	// Precision is the mean of gold selected / selected (an empty
	// selection counts as 0).
	Precision float64 `json:"precision"`
	// AllGold is the fraction of questions with every gold passage selected.
	AllGold    float64 `json:"all_gold"`
	MeanK      float64 `json:"mean_k"`
	MeanTokens float64 `json:"mean_tokens"`
	// TokenFraction is the mean of selected tokens / all tokens of the
	// question's context; ReductionPct is 100·(1 − TokenFraction).
	TokenFraction float64 `json:"token_fraction"`
	ReductionPct  float64 `json:"reduction_pct"`
	// MeanTrueK is the mean oracle k: the smallest top-k holding every gold
	// passage. DiffK is the mean of |k − true-k|.
	MeanTrueK float64 `json:"mean_true_k"`
	DiffK     float64 `json:"diff_k"`
	// FrontierRecall is the recall of fixed top-k linearly interpolated at
	// this strategy's MeanTokens; GainVsTopK = Recall − FrontierRecall, the
	// headline figure: positive means better recall than fixed top-k at
	// the same mean budget.
	FrontierRecall float64 `json:"frontier_recall"`
	GainVsTopK     float64 `json:"gain_vs_topk"`
	// EnvelopeRecall is the upper envelope of the same scorer's fixed top-k
	// and fixed token-budget frontiers at MeanTokens (the larger of the two
	// interpolated recalls); GainVsEnvelope = Recall − EnvelopeRecall is the
	// honest headline: no simple fixed cut of this curve does as well.
	// GainSE is its paired bootstrap standard error (questions resampled,
	// strategy and frontiers together).
	EnvelopeRecall float64 `json:"envelope_recall"`
	GainVsEnvelope float64 `json:"gain_vs_envelope"`
	GainSE         float64 `json:"gain_vs_envelope_se"`
	// BestSingleRecall is the best envelope of the baseline scorers
	// (Options.Baselines: dense, BM25) at MeanTokens, and GainVsBestSingle
	// the gain over it, with its bootstrap standard error; zero without
	// baselines.
	BestSingleRecall float64 `json:"best_single_recall,omitempty"`
	GainVsBestSingle float64 `json:"gain_vs_best_single,omitempty"`
	BestSingleSE     float64 `json:"gain_vs_best_single_se,omitempty"`
	// Prunes marks a selector that sends parts of passages (pruned
	// texts): its passage Recall counts gold passages it took anything
	// from, so it is not comparable with whole-passage strategies; compare
	// EvidenceRecall and AnswerPresent instead.
	Prunes bool `json:"prunes,omitempty"`
	// EvidenceResult holds evidence_recall and its gain (data with
	// gold_spans); PresenceResult answer_present and its gain.
	*EvidenceResult
	*PresenceResult
	// AnswerResult holds the answer figures when a reader ran.
	*AnswerResult
	// Selector is the model usage of a selector that reads texts (a
	// picker); nil for score-only strategies.
	Selector *SelectorCalls `json:"selector,omitempty"`
	// Spread is how the tokens sent spread over the questions (MeanTokens
	// is their mean).
	Spread *TokenSpread `json:"tokens_per_question,omitempty"`
	// Versus is the paired difference from the row Options.Versus names
	// (nil on that row, and when none is named).
	Versus *Versus `json:"versus,omitempty"`
}

// FrontierPoint is fixed top-k at one k, or a fixed token budget (the
// best-ranked passages in order, stopping before the first that would
// cross it): mean recall and mean tokens.
type FrontierPoint struct {
	K          int     `json:"k,omitempty"`
	Budget     int     `json:"budget,omitempty"`
	Recall     float64 `json:"recall"`
	MeanTokens float64 `json:"mean_tokens"`
}

// questionStats are one question's facts the aggregates need.
type questionStats struct {
	gold          int
	totalTokens   int
	trueK         int
	goldPrefix    []int // goldPrefix[k] = gold among the top k
	tokenPrefix   []int // tokenPrefix[k] = tokens of the top k
	perStrategy   []selStats
	contextLength int
	goldOf        []bool // per passage, input order
	// ev holds the sentence labels and answers; spanPrefix[k] counts the
	// gold spans in the top k passages, ansPrefix[k] is 1 when an answer
	// is in them.
	ev         *recordEvidence
	spanPrefix []int
	ansPrefix  []int
}

// selStats is one strategy's selection on one question; steps are an
// answering route's contexts (Self-Route's top-k, then the full pool), cut
// to the window, and sel the first until the reader has answered.
type selStats struct {
	k, gold, tokens int
	sel             ctxsel.Selection
	steps           []ctxsel.RouteStep
	call            *callStats // a ctxsel.MeteredSelector's own usage
	// spansKept counts the gold spans sent (spansTouched those touched),
	// present whether an answer is in the sent text, pruned whether the
	// selection sent pruned texts.
	spansKept, spansTouched int
	present, pruned         bool
	// turnSpans counts the kept spans inside a turn of a conversation,
	// turnPrefixed those sent with the turn's prefix (turnPrefixes).
	turnSpans, turnPrefixed int
}

func (s *selStats) setSelection(sel ctxsel.Selection, q *questionStats) {
	s.sel, s.k, s.tokens, s.gold = sel, sel.K, sel.Tokens, 0
	for _, idx := range sel.Indices {
		if q.goldOf[idx] {
			s.gold++
		}
	}
	s.pruned = sel.Evidence != nil
	if q.ev != nil {
		s.spansKept, s.spansTouched, s.present = q.ev.measureSelection(sel)
		s.turnSpans, s.turnPrefixed = q.ev.measureTurns(sel)
	}
}

// frontier averages fixed top-k over questions for k = 1 … the largest
// context; a question with fewer passages contributes all of them.
func frontier(qs []questionStats) []FrontierPoint {
	maxN := 0
	for _, q := range qs {
		maxN = max(maxN, len(q.goldPrefix)-1)
	}
	pts := make([]FrontierPoint, maxN)
	for k := 1; k <= maxN; k++ {
		var r, tok float64
		for _, q := range qs {
			kk := min(k, len(q.goldPrefix)-1)
			r += float64(q.goldPrefix[kk]) / float64(q.gold)
			tok += float64(q.tokenPrefix[kk])
		}
		n := float64(len(qs))
		pts[k-1] = FrontierPoint{K: k, Recall: r / n, MeanTokens: tok / n}
	}
	return pts
}

// budgetFrontier averages fixed token budgets over questions, on a
// geometric grid (ratio 1.05) from 16 tokens to the largest context.
func budgetFrontier(qs []questionStats) []FrontierPoint {
	maxT := 0
	for _, q := range qs {
		maxT = max(maxT, q.tokenPrefix[len(q.tokenPrefix)-1])
	}
	var pts []FrontierPoint
	for b := 16.0; ; b *= 1.05 {
		budget := int(b)
		if budget > maxT {
			budget = maxT
		}
		var r, tok float64
		for _, q := range qs {
			// the longest prefix within the budget
			k := sort.SearchInts(q.tokenPrefix, budget+1) - 1
			r += float64(q.goldPrefix[k]) / float64(q.gold)
			tok += float64(q.tokenPrefix[k])
		}
		n := float64(len(qs))
		pts = append(pts, FrontierPoint{Budget: budget, Recall: r / n, MeanTokens: tok / n})
		if budget == maxT {
			return pts
		}
	}
}

// envelope is the upper envelope of a scorer's fixed top-k and fixed
// budget frontiers: the larger interpolated recall at a mean token count.
func envelope(topk, budget []FrontierPoint, tokens float64) float64 {
	return max(interpolate(topk, tokens), interpolate(budget, tokens))
}

// interpolate returns the frontier's recall at a mean token count: linear
// between neighbouring k, from (0 tokens, 0 recall) below k = 1, and flat
// past the largest k.
func interpolate(pts []FrontierPoint, tokens float64) float64 {
	if len(pts) == 0 {
		return 0
	}
	i := sort.Search(len(pts), func(i int) bool { return pts[i].MeanTokens >= tokens })
	if i == len(pts) {
		return pts[len(pts)-1].Recall
	}
	x1, y1 := pts[i].MeanTokens, pts[i].Recall
	x0, y0 := 0.0, 0.0
	if i > 0 {
		x0, y0 = pts[i-1].MeanTokens, pts[i-1].Recall
	}
	if x1 == x0 {
		return y1
	}
	return y0 + (y1-y0)*(tokens-x0)/(x1-x0)
}

func aggregate(name string, idx int, qs []questionStats, pts []FrontierPoint) Result {
	r := Result{Strategy: name, N: len(qs)}
	if len(qs) == 0 {
		return r
	}
	for _, q := range qs {
		s := q.perStrategy[idx]
		if q.gold > 0 {
			r.Recall += float64(s.gold) / float64(q.gold)
			if s.gold == q.gold {
				r.AllGold++
			}
		}
		if s.k > 0 {
			r.Precision += float64(s.gold) / float64(s.k)
		}
		r.MeanK += float64(s.k)
		r.MeanTokens += float64(s.tokens)
		if q.totalTokens > 0 {
			r.TokenFraction += float64(s.tokens) / float64(q.totalTokens)
		}
		r.MeanTrueK += float64(q.trueK)
		r.DiffK += absInt(s.k - q.trueK)
		r.Prunes = r.Prunes || s.pruned
	}
	n := float64(len(qs))
	for _, p := range []*float64{&r.Recall, &r.Precision, &r.AllGold, &r.MeanK, &r.MeanTokens, &r.TokenFraction, &r.MeanTrueK, &r.DiffK} {
		*p /= n
	}
	r.ReductionPct = 100 * (1 - r.TokenFraction)
	r.FrontierRecall = interpolate(pts, r.MeanTokens)
	r.GainVsTopK = r.Recall - r.FrontierRecall
	return r
}

func absInt(x int) float64 {
	if x < 0 {
		return float64(-x)
	}
	return float64(x)
}
