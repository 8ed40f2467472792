package eval

import (
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/answer"
	"github.com/ctxsel/ctxsel/dataset"
)

// SpanCoverage is the share of a gold span's bytes that must be in the sent
// text for the span to count as kept (evidence_recall).
const SpanCoverage = 0.8

// TouchCoverage is the share of a gold span's bytes that must be in the
// sent text for the span to count as touched (touched_recall): a pruner
// that sends fragments of gold units touches far more than it keeps.
const TouchCoverage = 0.3

// EvidenceResult is a strategy's figures on the evidence it sends, over the
// questions with sentence labels (gold_spans). It is embedded in Result.
type EvidenceResult struct {
	// EvidenceQuestions is how many questions carry gold spans.
	EvidenceQuestions int `json:"evidence_questions"`
	// EvidenceRecall is the mean over those questions of the share of their
	// gold spans with at least SpanCoverage of their bytes in the sent text
	// (a passage strategy sends whole passages; a pruning one its pruned
	// texts). EvidenceTokens is the strategy's mean tokens on them.
	EvidenceRecall float64 `json:"evidence_recall"`
	EvidenceTokens float64 `json:"evidence_tokens"`
	// TouchedRecall is the same share with at least TouchCoverage of
	// their bytes sent: beside EvidenceRecall, it shows a selector that
	// sends fragments of gold units (whole passages touch what they keep).
	TouchedRecall float64 `json:"touched_recall"`
	// TurnSpans counts a pruning selector's kept spans, over all the
	// questions, that hold text of a turn of a conversation ("Name: …",
	// "[time] Name: …" lines; eval/turns.go), and TurnPrefixed is the
	// share of them sent with their turn's whole prefix: who said it and
	// when. Both absent when there is no such span.
	TurnSpans    int      `json:"turn_spans,omitempty"`
	TurnPrefixed *float64 `json:"turn_prefixed,omitempty"`
	// EvidenceEnvelope is the better of fixed top-k and fixed token budgets
	// of whole passages of the same scorer at EvidenceTokens, measured the
	// same way; EvidenceGain = EvidenceRecall − EvidenceEnvelope, with its
	// paired bootstrap standard error.
	EvidenceEnvelope float64 `json:"evidence_envelope"`
	EvidenceGain     float64 `json:"evidence_gain"`
	EvidenceGainSE   float64 `json:"evidence_gain_se"`
}

// PresenceResult is a strategy's answer_present figures over the questions
// whose gold answer is not yes/no. It is embedded in Result.
type PresenceResult struct {
	// PresenceQuestions is how many questions are counted; YesNoQuestions
	// how many were left out for a yes/no answer (which no text holds).
	PresenceQuestions int `json:"answer_questions"`
	YesNoQuestions    int `json:"yes_no_questions"`
	// AnswerPresent is the share of counted questions with a gold answer,
	// SQuAD-normalised, as a run of whole words of the sent text,
	// normalised the same way. PresenceTokens is the mean tokens on them.
	AnswerPresent  float64 `json:"answer_present"`
	PresenceTokens float64 `json:"answer_tokens"`
	// AnswerEnvelope, AnswerGain and AnswerGainSE are as for evidence.
	AnswerEnvelope float64 `json:"answer_envelope"`
	AnswerGain     float64 `json:"answer_gain"`
	AnswerGainSE   float64 `json:"answer_gain_se"`
}

// recordEvidence is one question's labels for the evidence figures.
type recordEvidence struct {
	texts []string   // passage texts, input order
	spans [][][2]int // gold spans per passage
	units [][]int    // the gold unit of each span (dataset.Record.GoldUnits)
	total int        // gold units of the question; 0: no sentence labels
	// answers are the normalised gold answers, each padded with spaces;
	// nil when none or yes/no (yesNo).
	answers []string
	yesNo   bool
	// ansIn caches whether a passage holds an answer (0 not yet known, 1
	// no, 2 yes): worked out only for passages a selection or an envelope
	// reaches, since normalising every pooled passage of every question
	// dominated eval's time. Selections of one question are measured
	// concurrently, hence the lock.
	mu    sync.Mutex
	ansIn []int8
}

func newRecordEvidence(r dataset.Record) *recordEvidence {
	e := &recordEvidence{texts: make([]string, len(r.Passages)), spans: make([][][2]int, len(r.Passages)), ansIn: make([]int8, len(r.Passages))}
	for i, p := range r.Passages {
		e.texts[i], e.spans[i] = p.Text, p.GoldSpans
	}
	e.units, e.total = r.GoldUnits()
	for _, a := range r.Answers {
		n := answer.Normalize(a)
		if n == "yes" || n == "no" {
			e.yesNo = true
			continue
		}
		if n != "" {
			e.answers = append(e.answers, " "+n+" ")
		}
	}
	if e.yesNo {
		e.answers = nil
	}
	return e
}

// answerIn reports whether passage idx holds a gold answer.
func (e *recordEvidence) answerIn(idx int) bool {
	if len(e.answers) == 0 {
		return false
	}
	e.mu.Lock()
	known := e.ansIn[idx]
	e.mu.Unlock()
	if known != 0 {
		return known == 2
	}
	in := e.holds(e.texts[idx])
	known = 1
	if in {
		known = 2
	}
	e.mu.Lock()
	e.ansIn[idx] = known
	e.mu.Unlock()
	return in
}

// holds reports a gold answer as whole words of text, both normalised.
func (e *recordEvidence) holds(text string) bool {
	t := " " + answer.Normalize(text) + " "
	for _, a := range e.answers {
		if strings.Contains(t, a) {
			return true
		}
	}
	return false
}

// counted reports whether the question counts for answer_present.
func (e *recordEvidence) counted() bool { return len(e.answers) > 0 }

// measureSelection returns how many gold units sel sends (a span of the
// unit at SpanCoverage), how many it touches (at TouchCoverage) and
// whether its sent text holds an answer.
func (e *recordEvidence) measureSelection(sel ctxsel.Selection) (kept, touched int, present bool) {
	var isKept, isTouched []bool // by unit
	if e.total > 0 {
		isKept, isTouched = make([]bool, e.total), make([]bool, e.total)
	}
	mark := func(marks []bool, u int, n *int) {
		if !marks[u] {
			marks[u] = true
			*n++
		}
	}
	for i, idx := range sel.Indices {
		if idx < 0 || idx >= len(e.texts) {
			continue
		}
		if sel.Evidence == nil {
			for _, u := range e.units[idx] {
				mark(isKept, u, &kept)
				mark(isTouched, u, &touched)
			}
			present = present || e.answerIn(idx)
			continue
		}
		ev := sel.Evidence[i]
		sent := ev.Spans
		if ev.Header != nil {
			sent = append([][2]int{*ev.Header}, sent...)
		}
		for j, g := range e.spans[idx] {
			c := covered(g, sent)
			if c >= SpanCoverage*float64(g[1]-g[0]) {
				mark(isKept, e.units[idx][j], &kept)
			}
			if c >= TouchCoverage*float64(g[1]-g[0]) {
				mark(isTouched, e.units[idx][j], &touched)
			}
		}
		if len(e.answers) > 0 && !present {
			present = e.holds(ev.Text)
		}
	}
	return kept, touched, present
}

// measureTurns counts sel's kept spans inside a turn, and those sent
// with its prefix (turnPrefixes), over its pruned passages.
func (e *recordEvidence) measureTurns(sel ctxsel.Selection) (inTurn, prefixed int) {
	for i, idx := range sel.Indices {
		if sel.Evidence == nil || idx < 0 || idx >= len(e.texts) {
			continue
		}
		n, p := turnPrefixes(e.texts[idx], sel.Evidence[i])
		inTurn, prefixed = inTurn+n, prefixed+p
	}
	return inTurn, prefixed
}

// turnFigures sums a strategy's kept spans inside turns and those sent
// with their prefix over the questions.
func turnFigures(qs []questionStats, idx int) (int, *float64) {
	n, p := 0, 0
	for _, q := range qs {
		n += q.perStrategy[idx].turnSpans
		p += q.perStrategy[idx].turnPrefixed
	}
	if n == 0 {
		return 0, nil
	}
	share := float64(p) / float64(n)
	return n, &share
}

// covered counts the bytes of g inside spans (disjoint).
func covered(g [2]int, spans [][2]int) float64 {
	n := 0
	for _, s := range spans {
		lo, hi := max(g[0], s[0]), min(g[1], s[1])
		if hi > lo {
			n += hi - lo
		}
	}
	return float64(n)
}

// prefixes fills a question's per-rank evidence facts: gold units and
// answer presence of its top k whole passages, for the envelopes.
func (e *recordEvidence) prefixes(ranked []int) (spanPrefix, ansPrefix []int) {
	spanPrefix, ansPrefix = make([]int, len(ranked)+1), make([]int, len(ranked)+1)
	seen := make([]bool, e.total) // units the passages above rank r hold
	for r, idx := range ranked {
		spanPrefix[r+1] = spanPrefix[r]
		for _, u := range e.units[idx] {
			if !seen[u] {
				seen[u] = true
				spanPrefix[r+1]++
			}
		}
		ansPrefix[r+1] = ansPrefix[r]
		if ansPrefix[r] == 0 && e.answerIn(idx) {
			ansPrefix[r+1] = 1
		}
	}
	return spanPrefix, ansPrefix
}

// metric reads one per-question figure for the evidence envelopes: the
// per-rank prefix and its denominator; ok false leaves the question out.
type metric func(q *questionStats) (prefix []int, denom int, ok bool)

func evidenceMetric(q *questionStats) ([]int, int, bool) {
	return q.spanPrefix, q.ev.total, q.ev.total > 0
}

func answerMetric(q *questionStats) ([]int, int, bool) {
	return q.ansPrefix, 1, q.ev.counted()
}

// metricFrontiers are fixed top-k (k = 1 … the largest context) and fixed
// token budgets (the geometric grid of budgetFrontier) of whole passages,
// measured by m over the questions m counts.
func metricFrontiers(qs []questionStats, m metric) (topk, budget []FrontierPoint) {
	var in []*questionStats
	maxN, maxT := 0, 0
	for i := range qs {
		if _, _, ok := m(&qs[i]); ok {
			in = append(in, &qs[i])
			maxN = max(maxN, len(qs[i].tokenPrefix)-1)
			maxT = max(maxT, qs[i].tokenPrefix[len(qs[i].tokenPrefix)-1])
		}
	}
	if len(in) == 0 {
		return nil, nil
	}
	n := float64(len(in))
	value := func(q *questionStats, k int) float64 {
		p, d, _ := m(q)
		return float64(p[k]) / float64(d)
	}
	for k := 1; k <= maxN; k++ {
		var v, tok float64
		for _, q := range in {
			kk := min(k, len(q.tokenPrefix)-1)
			v += value(q, kk)
			tok += float64(q.tokenPrefix[kk])
		}
		topk = append(topk, FrontierPoint{K: k, Recall: v / n, MeanTokens: tok / n})
	}
	for b := 16.0; ; b *= 1.05 {
		bud := min(int(b), maxT)
		var v, tok float64
		for _, q := range in {
			k := sort.SearchInts(q.tokenPrefix, bud+1) - 1
			v += value(q, k)
			tok += float64(q.tokenPrefix[k])
		}
		budget = append(budget, FrontierPoint{Budget: bud, Recall: v / n, MeanTokens: tok / n})
		if bud == maxT {
			break
		}
	}
	return topk, budget
}

// touchedRecall is a strategy's mean touched-span share over the
// questions with sentence labels.
func touchedRecall(qs []questionStats, idx int) float64 {
	v, n := 0.0, 0
	for i := range qs {
		if q := &qs[i]; q.ev != nil && q.ev.total > 0 {
			v += float64(q.perStrategy[idx].spansTouched) / float64(q.ev.total)
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return v / float64(n)
}

// evidenceFigures are a strategy's mean kept-span share (or answer
// presence) and mean tokens over the questions m counts.
func evidenceFigures(qs []questionStats, idx int, m metric, answers bool) (value, tokens float64, n int) {
	for i := range qs {
		q := &qs[i]
		_, d, ok := m(q)
		if !ok {
			continue
		}
		s := q.perStrategy[idx]
		if answers {
			if s.present {
				value++
			}
		} else {
			value += float64(s.spansKept) / float64(d)
		}
		tokens += float64(s.tokens)
		n++
	}
	if n == 0 {
		return 0, 0, 0
	}
	return value / float64(n), tokens / float64(n), n
}

// evidenceResults fills every result's evidence and answer-presence
// figures (without standard errors; bootstrapEvidence adds them).
func evidenceResults(rep *Report, stats []questionStats) {
	evTop, evBud := metricFrontiers(stats, evidenceMetric)
	ansTop, ansBud := metricFrontiers(stats, answerMetric)
	yesNo := 0
	for i := range stats {
		if stats[i].ev.yesNo {
			yesNo++
		}
	}
	rep.EvidenceFrontier, rep.EvidenceBudgetFrontier = evTop, evBud
	rep.AnswerFrontier, rep.AnswerBudgetFrontier = ansTop, ansBud
	for si := range rep.Results {
		if evTop != nil {
			v, tok, n := evidenceFigures(stats, si, evidenceMetric, false)
			env := envelope(evTop, evBud, tok)
			rep.Results[si].EvidenceResult = &EvidenceResult{EvidenceQuestions: n, EvidenceRecall: v, EvidenceTokens: tok, EvidenceEnvelope: env, EvidenceGain: v - env,
				TouchedRecall: touchedRecall(stats, si)}
			rep.Results[si].EvidenceResult.TurnSpans, rep.Results[si].EvidenceResult.TurnPrefixed = turnFigures(stats, si)
		}
		if ansTop != nil {
			v, tok, n := evidenceFigures(stats, si, answerMetric, true)
			env := envelope(ansTop, ansBud, tok)
			rep.Results[si].PresenceResult = &PresenceResult{PresenceQuestions: n, YesNoQuestions: yesNo, AnswerPresent: v, PresenceTokens: tok, AnswerEnvelope: env, AnswerGain: v - env}
		}
	}
}

// bootstrapEvidence fills the standard errors of the evidence and answer
// gains by the same paired bootstrap over questions as the recall gains.
func bootstrapEvidence(rep *Report, stats []questionStats, resamples int, draw func(int) int) {
	if resamples <= 0 || len(rep.Results) == 0 {
		return
	}
	type acc struct{ s, s2 float64 }
	ev := make([]acc, len(rep.Results))
	an := make([]acc, len(rep.Results))
	sub := make([]questionStats, len(stats))
	for range resamples {
		for i := range sub {
			sub[i] = stats[draw(len(stats))]
		}
		evTop, evBud := metricFrontiers(sub, evidenceMetric)
		anTop, anBud := metricFrontiers(sub, answerMetric)
		for si := range rep.Results {
			if evTop != nil {
				v, tok, _ := evidenceFigures(sub, si, evidenceMetric, false)
				g := v - envelope(evTop, evBud, tok)
				ev[si].s += g
				ev[si].s2 += g * g
			}
			if anTop != nil {
				v, tok, _ := evidenceFigures(sub, si, answerMetric, true)
				g := v - envelope(anTop, anBud, tok)
				an[si].s += g
				an[si].s2 += g * g
			}
		}
	}
	sd := func(a acc) float64 {
		m := a.s / float64(resamples)
		return math.Sqrt(max(0, a.s2/float64(resamples)-m*m))
	}
	for si := range rep.Results {
		if r := rep.Results[si].EvidenceResult; r != nil {
			r.EvidenceGainSE = sd(ev[si])
		}
		if r := rep.Results[si].PresenceResult; r != nil {
			r.AnswerGainSE = sd(an[si])
		}
	}
}
