package eval

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/score"
	_ "github.com/ctxsel/ctxsel/selfroute" // registers the answering route
	"github.com/ctxsel/ctxsel/token"
)

// Options configure Run.
type Options struct {
	// Strategies to measure, as the caller resolved them (one
	// Resolver.ResolveList of --strategies; TextSelectors wraps selectors
	// it built): strategies, text selectors, compositions and, with
	// Answer, answering routes. Each is one report row, named by its Spec
	// (a text selector's by SelectorName). The rows that select from the
	// scores alone come first, in list order, then those that read the
	// texts (and may call a model), which run after them; their
	// selections are cut to Window and answered like any other, and a
	// metered selector's row also reports its own calls (Result.Selector).
	Strategies []ctxsel.Resolved
	// Counter counts passage tokens; nil means token.Default.
	Counter token.Counter
	// Workers score questions in parallel; 0 means GOMAXPROCS.
	Workers int
	// Progress, when set, is told how many questions are done.
	Progress func(done, total int)
	// PrepareProgress, when set, follows the scorer's Prepare step.
	PrepareProgress func(done, total int)
	// Window is the reader's context window in tokens (0: none): every
	// selection is cut to it, and full is the whole pool cut to it in
	// document order (see ctxsel.FitWindow).
	Window int
	// Answer, when set, has a reader answer from every selection and scores
	// the answers; strategies may then include answering routes
	// (selfroute:k=5). Records need no gold passages: without any, the
	// recall figures are left out.
	Answer *Answering
	// Baselines are single scorers (dense, BM25) whose top-k/budget
	// envelopes every result is also compared with (GainVsBestSingle). A
	// baseline named like a channel of a score.ChannelScorer reuses that
	// channel's scores instead of scoring again.
	Baselines []score.Scorer
	// Bootstrap is the number of paired bootstrap resamples behind the
	// standard errors (0 means 200; negative disables them).
	Bootstrap int
	// TextWorkers questions are given to the selectors that read texts at once (0:
	// Workers; an LLM picker wants the LLM concurrency), and TextProgress,
	// when set, follows them.
	TextWorkers  int
	TextProgress func(done, total int)
	// Versus names a row every other row is compared with question by
	// question (Result.Versus): a spec as given in Strategies, or a row's
	// name; "" for none.
	Versus string
}

// Report is what Run measured.
type Report struct {
	Scorer   string `json:"scorer"`
	Encoding string `json:"encoding"`
	// Questions is how many were measured; Skipped had no gold passage.
	Questions         int     `json:"questions"`
	Skipped           int     `json:"skipped_no_gold"`
	MeanPassages      float64 `json:"mean_passages"`
	MeanContextTokens float64 `json:"mean_context_tokens"`
	MeanGold          float64 `json:"mean_gold"`
	// NoGoldLabels marks data without gold passages (LaRA): the recall
	// figures are then meaningless and left blank.
	NoGoldLabels   bool            `json:"no_gold_labels,omitempty"`
	Answers        *AnswerTotals   `json:"answers,omitempty"`
	Results        []Result        `json:"results"`
	Frontier       []FrontierPoint `json:"frontier"`
	BudgetFrontier []FrontierPoint `json:"budget_frontier"`
	Baselines      []Baseline      `json:"baselines,omitempty"`
	// EvidenceFrontier and EvidenceBudgetFrontier are evidence_recall of
	// fixed top-k and fixed budgets of whole passages (data with
	// gold_spans); AnswerFrontier and AnswerBudgetFrontier answer_present.
	EvidenceFrontier       []FrontierPoint `json:"evidence_frontier,omitempty"`
	EvidenceBudgetFrontier []FrontierPoint `json:"evidence_budget_frontier,omitempty"`
	AnswerFrontier         []FrontierPoint `json:"answer_frontier,omitempty"`
	AnswerBudgetFrontier   []FrontierPoint `json:"answer_budget_frontier,omitempty"`
	// SpanLabels marks data with sentence labels (gold_spans).
	SpanLabels bool `json:"span_labels,omitempty"`
}

// Baseline is a single scorer's fixed top-k and budget frontiers on the
// same questions.
type Baseline struct {
	Scorer         string          `json:"scorer"`
	Frontier       []FrontierPoint `json:"frontier"`
	BudgetFrontier []FrontierPoint `json:"budget_frontier"`
}

// Run scores every record's passages against its question, applies each
// strategy, and aggregates the figures. Records without gold passages are
// skipped and counted.
func Run(ctx context.Context, recs []dataset.Record, scorer score.Scorer, opt Options) (*Report, error) {
	if scorer == nil {
		return nil, fmt.Errorf("eval: no scorer")
	}
	if len(opt.Strategies) == 0 {
		return nil, fmt.Errorf("eval: no strategies")
	}
	counter := opt.Counter
	if counter == nil {
		c, err := token.New(token.Default)
		if err != nil {
			return nil, fmt.Errorf("eval: %w", err)
		}
		counter = c
	}
	slots, err := newSlots(opt)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	versus, err := versusIndex(opt, slots)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	gold := false
	for _, r := range recs {
		gold = gold || r.GoldCount() > 0
	}
	var kept []dataset.Record
	skipped := 0
	for _, r := range recs {
		if r.GoldCount() == 0 && (gold || opt.Answer == nil) {
			skipped++
			continue
		}
		kept = append(kept, r)
	}
	rep := &Report{Scorer: scorer.Name(), Encoding: counter.Encoding(), Questions: len(kept), Skipped: skipped, NoGoldLabels: !gold}
	if len(kept) == 0 {
		return nil, fmt.Errorf("eval: none of %d records has a gold passage", len(recs))
	}
	curves, err := scoreAll(ctx, kept, scorer, counter, opt.Workers, opt.Progress, opt.PrepareProgress)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	budget := windowBudget(opt, counter)
	stats := make([]questionStats, len(kept))
	for i, q := range curves {
		if stats[i], err = measure(kept[i], q, slots, budget); err != nil {
			return nil, fmt.Errorf("eval: record %q: %w", kept[i].ID, err)
		}
	}
	textWorkers := opt.TextWorkers
	if textWorkers <= 0 {
		textWorkers = opt.Workers
	}
	if err := selectTexts(ctx, kept, curves, stats, slots, budget, textWorkers, opt.TextProgress); err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	var answers [][]*QuestionAnswer
	var answerErr error
	if opt.Answer != nil {
		var tot AnswerTotals
		answers, tot, answerErr = answerAll(ctx, opt.Answer, counter, kept, stats, slots, opt.Window)
		rep.Answers = &tot
	}
	var base [][]questionStats
	if gold {
		if base, err = baselineStats(ctx, kept, curves, scorer, counter, opt); err != nil {
			return nil, fmt.Errorf("eval: %w", err)
		}
	}

	for _, q := range stats {
		rep.MeanPassages += float64(len(q.goldPrefix) - 1)
		rep.MeanContextTokens += float64(q.totalTokens)
		rep.MeanGold += float64(q.gold)
	}
	n := float64(len(stats))
	rep.MeanPassages /= n
	rep.MeanContextTokens /= n
	rep.MeanGold /= n
	if gold {
		rep.Frontier = frontier(stats)
		rep.BudgetFrontier = budgetFrontier(stats)
		for i, b := range base {
			rep.Baselines = append(rep.Baselines, Baseline{Scorer: opt.Baselines[i].Name(), Frontier: frontier(b), BudgetFrontier: budgetFrontier(b)})
		}
	}
	for i, sl := range slots {
		res := aggregate(sl.name, i, stats, rep.Frontier)
		res.Spread = tokenSpread(stats, i)
		if gold {
			res.EnvelopeRecall = envelope(rep.Frontier, rep.BudgetFrontier, res.MeanTokens)
			res.GainVsEnvelope = res.Recall - res.EnvelopeRecall
			if len(base) > 0 {
				res.BestSingleRecall = bestSingle(rep.Baselines, res.MeanTokens)
				res.GainVsBestSingle = res.Recall - res.BestSingleRecall
			}
		}
		if sl.text {
			res.Selector = selectorCalls(i, stats)
		}
		if answers != nil {
			res.AnswerResult = aggregateAnswers(answers[i], opt.Answer.Judge != nil, sl.route != nil)
		}
		rep.Results = append(rep.Results, res)
	}
	if gold {
		bootstrap(rep, stats, base, opt.Bootstrap)
	}
	evidenceResults(rep, stats)
	rep.SpanLabels = rep.EvidenceFrontier != nil
	resamples := opt.Bootstrap
	if resamples == 0 {
		resamples = 200
	}
	rng := rand.New(rand.NewPCG(2, 0xe71d))
	bootstrapEvidence(rep, stats, resamples, rng.IntN)
	versusResults(rep, stats, versus)
	if answerErr != nil {
		// What was computed so far is reported; the caller writes it.
		return rep, fmt.Errorf("eval: answering stopped: %w", answerErr)
	}
	return rep, nil
}

// strategySlot is one row of the report: a pure strategy, an answering
// route (Self-Route) when route is set, or a text selector when text is.
type strategySlot struct {
	name  string
	spec  string          // as given in Options.Strategies
	run   ctxsel.Selector // nil for a route
	full  bool
	route ctxsel.Route
	text  bool // run reads the texts: it selects in selectTexts, after measure
}

func bestSingle(bs []Baseline, tokens float64) float64 {
	best := 0.0
	for _, b := range bs {
		best = max(best, envelope(b.Frontier, b.BudgetFrontier, tokens))
	}
	return best
}

// baselineStats scores the kept records with every baseline scorer (or
// takes the matching channel of the main scorer) and returns their ranking
// prefixes per question.
func baselineStats(ctx context.Context, kept []dataset.Record, curves []QuestionCurve, scorer score.Scorer, counter token.Counter, opt Options) ([][]questionStats, error) {
	var channels []string
	if cs, ok := scorer.(score.ChannelScorer); ok {
		channels = cs.Channels()
	}
	out := make([][]questionStats, len(opt.Baselines))
	for bi, b := range opt.Baselines {
		var bc []QuestionCurve
		if j := slices.Index(channels, b.Name()); j >= 0 {
			bc = make([]QuestionCurve, len(curves))
			for i, q := range curves {
				bc[i] = QuestionCurve{RecordID: q.RecordID, Scores: q.Channels[j], Tokens: q.Tokens, Gold: q.Gold}
			}
		} else {
			var err error
			if bc, err = scoreAll(ctx, kept, b, counter, opt.Workers, nil, nil); err != nil {
				return nil, fmt.Errorf("baseline %s: %w", b.Name(), err)
			}
		}
		out[bi] = make([]questionStats, len(kept))
		for i, q := range bc {
			st, err := measure(kept[i], q, nil, nil)
			if err != nil {
				return nil, fmt.Errorf("baseline %s: record %q: %w", b.Name(), kept[i].ID, err)
			}
			out[bi][i] = st
		}
	}
	return out, nil
}

// bootstrap fills the standard errors of the gains by a paired bootstrap
// over questions (seeded, so reports are reproducible): each resample
// recomputes every strategy's recall and tokens and every frontier on the
// same questions.
func bootstrap(rep *Report, stats []questionStats, base [][]questionStats, n int) {
	if n < 0 {
		return
	}
	if n == 0 {
		n = 200
	}
	rng := rand.New(rand.NewPCG(1, 0xb007))
	sum := make([][2]float64, len(rep.Results))  // gain vs envelope: Σ, Σ²
	sumB := make([][2]float64, len(rep.Results)) // gain vs best single
	sub := make([]questionStats, len(stats))
	subBase := make([][]questionStats, len(base))
	for i := range base {
		subBase[i] = make([]questionStats, len(stats))
	}
	bl := make([]Baseline, len(base))
	for range n {
		for i := range sub {
			j := rng.IntN(len(stats))
			sub[i] = stats[j]
			for b := range base {
				subBase[b][i] = base[b][j]
			}
		}
		f, bf := frontier(sub), budgetFrontier(sub)
		for b := range base {
			bl[b] = Baseline{Frontier: frontier(subBase[b]), BudgetFrontier: budgetFrontier(subBase[b])}
		}
		for si := range rep.Results {
			r := aggregate("", si, sub, nil)
			g := r.Recall - envelope(f, bf, r.MeanTokens)
			sum[si][0] += g
			sum[si][1] += g * g
			if len(base) > 0 {
				g = r.Recall - bestSingle(bl, r.MeanTokens)
				sumB[si][0] += g
				sumB[si][1] += g * g
			}
		}
	}
	sd := func(s [2]float64) float64 {
		m := s[0] / float64(n)
		return math.Sqrt(max(0, s[1]/float64(n)-m*m))
	}
	for si := range rep.Results {
		rep.Results[si].GainSE = sd(sum[si])
		if len(base) > 0 {
			rep.Results[si].BestSingleSE = sd(sumB[si])
		}
	}
}

func newSlots(opt Options) ([]strategySlot, error) {
	var slots, texts []strategySlot
	for _, res := range opt.Strategies {
		sl := strategySlot{name: res.Spec, spec: res.Spec, run: res.Runnable(), route: res.Route}
		switch {
		case sl.route != nil:
			if opt.Answer == nil {
				return nil, fmt.Errorf("%w: %s is an answering route: it needs a reader (--reader)", ctxsel.ErrInvalidInput, res.Spec)
			}
		case sl.run == nil:
			return nil, fmt.Errorf("%w: %q resolves to nothing that selects", ctxsel.ErrInvalidInput, res.Spec)
		case sl.run.ReadsTexts():
			sl.text, sl.name = true, SelectorName(res.Selector)
			texts = append(texts, sl)
			continue
		default:
			sp, _ := res.AsSpec()
			sl.full = sp.Name == "full"
		}
		slots = append(slots, sl)
	}
	return append(slots, texts...), nil
}

// TextSelectors are selectors the caller built (an LLM picker), resolved
// for Options.Strategies.
func TextSelectors(ts ...ctxsel.TextSelector) []ctxsel.Resolved {
	out := make([]ctxsel.Resolved, len(ts))
	for i, s := range ts {
		out[i] = ctxsel.Resolved{Kind: ctxsel.SelectorKind, Spec: SelectorName(s), Selector: s}
	}
	return out
}

// SelectorName is how a report names a text selector's row: its spec
// (fmt.Stringer: the picker's settings in full, so two pickers are two
// rows) where it has one, else its Name.
func SelectorName(ts ctxsel.TextSelector) string {
	if s, ok := ts.(fmt.Stringer); ok {
		return s.String()
	}
	return ts.Name()
}

// windowBudget returns the passage budget of one question under
// Options.Window (nil without a window): the window less the answer's
// reserve and the prompt around the passages.
func windowBudget(opt Options, counter token.Counter) func(dataset.Record) int {
	if opt.Window <= 0 {
		return nil
	}
	reserve := llm.DefaultAnswerReserve
	if opt.Answer != nil {
		reserve = opt.Answer.reserve()
	}
	return func(r dataset.Record) int {
		// The reader prompt of this record (LaRA's on lara: data), its system
		// message counted as part of it.
		p := opt.Answer.promptFor(r)
		return max(1, llm.PassageBudget(opt.Window, reserve, llm.Template(p.System)+p.Template, r.Question, counter))
	}
}

// candidates are one scored question's passages as ctxsel candidates, with
// the scorer's channels: every strategy and text selector reads these.
func candidates(r dataset.Record, q QuestionCurve) []ctxsel.Candidate {
	cands := make([]ctxsel.Candidate, len(r.Passages))
	for i, p := range r.Passages {
		cands[i] = ctxsel.Candidate{ID: p.ID, Score: q.Scores[i], Tokens: q.Tokens[i]}
		if len(q.Channels) > 0 {
			cands[i].Channels = make([]float64, len(q.Channels))
			for j, ch := range q.Channels {
				cands[i].Channels[j] = ch[i]
			}
		}
	}
	return cands
}

// measure applies every strategy to one scored question. With a window
// budget every selection is cut to it, and full keeps document order.
func measure(r dataset.Record, q QuestionCurve, slots []strategySlot, budget func(dataset.Record) int) (questionStats, error) {
	cands := candidates(r, q)
	curve, err := ctxsel.NewCurve(cands)
	if err != nil {
		return questionStats{}, err
	}
	n := curve.Len()
	st := questionStats{gold: r.GoldCount(), goldOf: q.Gold, totalTokens: curve.TotalTokens(), goldPrefix: make([]int, n+1), tokenPrefix: make([]int, n+1)}
	st.ev = newRecordEvidence(r)
	st.spanPrefix, st.ansPrefix = st.ev.prefixes(curve.Top(n))
	for rank, idx := range curve.Top(n) {
		g := 0
		if q.Gold[idx] {
			g = 1
		}
		st.goldPrefix[rank+1] = st.goldPrefix[rank] + g
		st.tokenPrefix[rank+1] = st.tokenPrefix[rank] + cands[idx].Tokens
		if g == 1 && st.goldPrefix[rank+1] == st.gold {
			st.trueK = rank + 1
		}
	}
	fit := func(sel ctxsel.Selection, order ctxsel.Order) (ctxsel.Selection, error) {
		if budget == nil {
			return sel, nil
		}
		return ctxsel.FitWindow(curve, sel, budget(r), llm.PassageOverhead, order)
	}
	st.perStrategy = make([]selStats, len(slots))
	for i, sc := range slots {
		var sel ctxsel.Selection
		var steps []ctxsel.RouteStep
		if sc.text {
			continue
		} else if sc.route != nil {
			// The route's contexts, each cut like a strategy's selection;
			// the long one is the full pool in document order.
			if steps, err = sc.route.Plan(curve, ctxsel.RankOrder); err != nil {
				return questionStats{}, fmt.Errorf("%s: %w", sc.name, err)
			}
			for j, step := range steps {
				order := ctxsel.RankOrder
				if step.Long {
					order = ctxsel.DocumentOrder
				}
				if steps[j].Selection, err = fit(step.Selection, order); err != nil {
					return questionStats{}, fmt.Errorf("%s: %w", sc.name, err)
				}
			}
			sel = steps[0].Selection
		} else {
			order := ctxsel.RankOrder
			if sc.full {
				order = ctxsel.DocumentOrder
			}
			// A score-only selector neither reads texts nor waits.
			if sel, _, err = sc.run.Select(context.Background(), ctxsel.TextQuery{Curve: curve, Order: ctxsel.RankOrder}); err == nil {
				sel, err = fit(sel, order)
			}
			if err != nil {
				return questionStats{}, fmt.Errorf("select %s: %w", sc.run.Name(), err)
			}
		}
		st.perStrategy[i].steps = steps
		st.perStrategy[i].setSelection(sel, &st)
	}
	return st, nil
}
