package eval

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/answer"
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/token"
)

// Answering makes Run measure answers, not only context: for every strategy
// and question a reader LLM answers from the selected passages, and the
// answer is scored against the record's answers (SubEM, EM, token F1, and
// Judge when set). Failed calls are counted per strategy; the run goes on.
type Answering struct {
	// Reader answers from the selected passages.
	Reader llm.Client
	// Template is the reader prompt (default llm.FactoidQA).
	Template llm.Template
	// Judge is an extra judge (an LLM judge, say); SubEM, EM and F1 are
	// always computed.
	Judge answer.Judge
	// Reserve is the part of Options.Window kept for the answer (default
	// llm.DefaultAnswerReserve, 512 tokens).
	Reserve int
	// Datatype fills Self-Route's {datatype} (default "documents").
	Datatype string
	// PromptFor, when set, gives each record's reader prompt instead of
	// Template (LaRA's prompt depends on the record's document kind; see
	// LaRAPrompt).
	PromptFor func(dataset.Record) ReaderPrompt
	// MaxFailures stops the run once more calls than this have failed;
	// negative never stops. Either way Run reports the failures.
	MaxFailures int
	// Workers is how many answers are in flight (default 16); the reader's
	// limiter bounds the calls themselves.
	Workers int
	// Progress is told the running totals after every answer.
	Progress func(AnswerProgress)
	// OnQuestion receives every per-question record as it completes (one
	// call at a time).
	OnQuestion func(QuestionAnswer)

	// window is Options.Window, sent with every request (Ollama runs the
	// model with it: num_ctx).
	window int
}

// AnswerProgress are the running totals of the answering step.
type AnswerProgress struct {
	Done, Total               int
	Calls, Cached, Failures   int
	InputTokens, OutputTokens int
}

// AnswerResult are a strategy's answer figures, means per answered question.
// It is embedded in Result, so its fields sit beside the recall figures.
type AnswerResult struct {
	// Answered is how many questions got an answer (the rest failed).
	Answered int     `json:"answered"`
	SubEM    float64 `json:"subem"`
	EM       float64 `json:"em"`
	F1       float64 `json:"f1"`
	// SubEMErr and JudgeErr are standard errors of the means (the error
	// bars of small splits).
	SubEMErr float64  `json:"subem_se"`
	JudgeErr *float64 `json:"judge_se,omitempty"`
	// Judge is the mean verdict of the extra judge over its valid verdicts;
	// JudgeInvalid counts verdicts it could not read.
	Judge        *float64 `json:"judge,omitempty"`
	JudgeInvalid int      `json:"judge_invalid"`
	// LLMCalls, InputTokens and OutputTokens are the reader's calls and
	// tokens per question (Self-Route counts both of its calls). Tokens are
	// the server's usage; TokensCounted marks rows where a reply had none
	// and our own count of the prompt or answer stood in.
	LLMCalls      float64 `json:"llm_calls"`
	InputTokens   float64 `json:"input_tokens"`
	OutputTokens  float64 `json:"output_tokens"`
	TokensCounted bool    `json:"tokens_counted,omitempty"`
	// JudgeTokens are the judge's input+output tokens per question.
	JudgeTokens float64 `json:"judge_tokens,omitempty"`
	// LLMFailures counts failed reader or judge calls.
	LLMFailures int `json:"llm_failures"`
	// LLMTruncated and LLMEmpty count answers whose reply was degenerate
	// (llm.Response.Defect): cut off at the token limit or over the size
	// bound, or empty. They are answered and scored as they are.
	LLMTruncated int `json:"llm_truncated"`
	LLMEmpty     int `json:"llm_empty"`
	// Routed is Self-Route's share of questions sent to the long context.
	Routed *float64 `json:"routed,omitempty"`
}

// AnswerTotals sum the answering step over strategies.
type AnswerTotals struct {
	Reader   string `json:"reader"`
	Judge    string `json:"judge,omitempty"`
	Window   int    `json:"window,omitempty"`
	Calls    int    `json:"calls"`
	Cached   int    `json:"cached_calls"`
	Failures int    `json:"failures"`
	// Truncated and Empty count degenerate reader replies (see
	// AnswerResult.LLMTruncated).
	Truncated int `json:"llm_truncated"`
	Empty     int `json:"llm_empty"`
	// InputTokens and OutputTokens cover reader and judge calls, cached
	// ones included (what the run would cost cold).
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	// Stopped says why the run ended early ("" when it did not).
	Stopped string `json:"stopped,omitempty"`
}

// QuestionAnswer is one question answered under one strategy: the record
// --questions-out writes.
type QuestionAnswer struct {
	ID       string   `json:"id"`
	Strategy string   `json:"strategy"`
	Question string   `json:"question"`
	Selected []string `json:"selected"`
	// Tokens are the selected passages' tokens; Why the selection's
	// explanation (what a window dropped included).
	Tokens     int      `json:"tokens"`
	Why        string   `json:"why,omitempty"`
	Gold       []string `json:"gold_answers"`
	Prediction string   `json:"prediction"`
	SubEM      float64  `json:"subem"`
	EM         float64  `json:"em"`
	F1         float64  `json:"f1"`
	// Verdict is the extra judge's, raw output included.
	Verdict      *answer.Verdict `json:"verdict,omitempty"`
	Calls        int             `json:"llm_calls"`
	Cached       int             `json:"cached_calls,omitempty"`
	InputTokens  int             `json:"input_tokens"`
	OutputTokens int             `json:"output_tokens"`
	Counted      bool            `json:"tokens_counted,omitempty"`
	// Routed marks a Self-Route answer from the long context.
	Routed bool `json:"routed,omitempty"`
	// Defect flags a degenerate reply ("truncated" or "empty", see
	// llm.Response.Defect): Prediction is what there was of it.
	Defect string `json:"llm_defect,omitempty"`
	Error  string `json:"error,omitempty"`

	judgeTokens int
	failures    int
}

// ErrTooManyFailures stops a run whose LLM calls fail beyond MaxFailures.
var ErrTooManyFailures = errors.New("too many failed LLM calls")

func (a *Answering) template() llm.Template {
	if a == nil || a.Template == "" {
		return llm.FactoidQA
	}
	return a.Template
}

// ReaderPrompt is a reader prompt as a paper's code sends it: the template,
// an optional system message, and how the passages become its {context}
// (nil: llm.FormatContext, numbered passages).
type ReaderPrompt struct {
	Template llm.Template
	System   string
	Context  func([]llm.Passage) string
	// Verbatim renders Template exactly as written (llm.RenderVerbatim): no
	// fence around the passages, so a reproduction sends the paper's code's
	// prompt byte for byte. Only for a benchmark's trusted passages (LaRA);
	// otherwise Render fences them.
	Verbatim bool
}

// promptFor is rec's reader prompt: PromptFor's, else Template.
func (a *Answering) promptFor(rec dataset.Record) ReaderPrompt {
	if a != nil && a.PromptFor != nil {
		if p := a.PromptFor(rec); p.Template != "" {
			return p
		}
	}
	return ReaderPrompt{Template: a.template()}
}

func (a *Answering) reserve() int {
	if a.Reserve > 0 {
		return a.Reserve
	}
	return llm.DefaultAnswerReserve
}

// Answer asks the reader with the passages of sel, a selection over
// rec.Passages made by any selector (a strategy, a TextSelector, a route's
// step), and scores the reply. A failed reader or judge call is returned
// as an error with the record filled as far as it got.
func (a *Answering) Answer(ctx context.Context, counter token.Counter, rec dataset.Record, sel ctxsel.Selection) (QuestionAnswer, error) {
	return a.answerWith(ctx, counter, rec, sel, a.promptFor(rec))
}

func (a *Answering) answerWith(ctx context.Context, counter token.Counter, rec dataset.Record, sel ctxsel.Selection, p ReaderPrompt) (QuestionAnswer, error) {
	qa := a.newRecord(rec, sel)
	r, err := a.read(ctx, counter, rec, sel, p, &qa)
	if err != nil {
		return qa, err
	}
	qa.Prediction, qa.Defect = r.Content, r.Defect()
	return qa, a.score(ctx, rec, &qa)
}

func (a *Answering) newRecord(rec dataset.Record, sel ctxsel.Selection) QuestionAnswer {
	qa := QuestionAnswer{ID: rec.ID, Question: rec.Question, Gold: rec.Answers, Tokens: sel.Tokens, Why: sel.Explanation.Reason,
		Selected: make([]string, len(sel.Indices))}
	for i, idx := range sel.Indices {
		qa.Selected[i] = rec.Passages[idx].ID
	}
	return qa
}

// read renders the prompt from sel's passages (in sel's order; pruned
// texts when sel carries Evidence) and asks the reader, adding the call to
// qa.
func (a *Answering) read(ctx context.Context, counter token.Counter, rec dataset.Record, sel ctxsel.Selection, p ReaderPrompt, qa *QuestionAnswer) (llm.Response, error) {
	ps := make([]llm.Passage, len(sel.Indices))
	for i, idx := range sel.Indices {
		if idx < 0 || idx >= len(rec.Passages) {
			return llm.Response{}, fmt.Errorf("record %q: selected index %d out of range", rec.ID, idx)
		}
		ps[i] = llm.Passage{Text: rec.Passages[idx].Text}
		if sel.Evidence != nil { // a pruning selector sends its pruned text
			ps[i].Text = sel.Evidence[i].Text
		}
	}
	format := p.Context
	if format == nil {
		format = llm.FormatContext
	}
	render := p.Template.Render
	if p.Verbatim {
		render = p.Template.RenderVerbatim
	}
	prompt, err := render(rec.Question, format(ps))
	if err != nil {
		return llm.Response{}, fmt.Errorf("%w: %v", ctxsel.ErrInvalidInput, err)
	}
	qa.Calls++
	var r llm.Response
	if p.System == "" {
		r, err = llm.AskWithin(ctx, a.Reader, prompt, a.window)
	} else {
		zero := 0.0 // as llm.Ask: ctxsel's readers answer at temperature 0
		r, err = a.Reader.Chat(ctx, llm.Request{Messages: []llm.Message{{Role: "system", Content: p.System}, {Role: "user", Content: prompt}}, Temperature: &zero, Window: a.window})
	}
	if err != nil {
		qa.failures++
		qa.Error = err.Error()
		return r, fmt.Errorf("reader: %w", err)
	}
	if r.Cached {
		qa.Cached++
	}
	in, out := r.PromptTokens, r.CompletionTokens
	if in == 0 {
		in, qa.Counted = counter.Count(prompt), true
	}
	if out == 0 && r.Content != "" {
		out, qa.Counted = counter.Count(r.Content), true
	}
	qa.InputTokens += in
	qa.OutputTokens += out
	return r, nil
}

// score fills the lexical metrics and runs the extra judge.
func (a *Answering) score(ctx context.Context, rec dataset.Record, qa *QuestionAnswer) error {
	qa.SubEM = answer.SubEM(qa.Prediction, rec.Answers)
	qa.EM = answer.EM(qa.Prediction, rec.Answers)
	qa.F1 = answer.F1(qa.Prediction, rec.Answers)
	if a.Judge == nil {
		return nil
	}
	v, err := a.Judge.Judge(ctx, answer.Item{Question: rec.Question, Prediction: qa.Prediction, Gold: rec.Answers, Task: rec.Task})
	if err != nil {
		qa.failures++
		qa.Error = err.Error()
		return fmt.Errorf("judge %s: %w", a.Judge.Name(), err)
	}
	qa.Verdict = &v
	qa.judgeTokens = v.PromptTokens + v.CompletionTokens
	return nil
}

// route answers one question with an answering route (Self-Route) over
// its planned steps, each already cut to the window: the route's own steps
// with its prompt (Datatype filling LDAR's {datatype}), the long-context
// step with the record's reader prompt (the reader's own template).
func (a *Answering) route(ctx context.Context, counter token.Counter, rec dataset.Record, r ctxsel.Route, steps []ctxsel.RouteStep) (QuestionAnswer, ctxsel.Selection, error) {
	top := steps[0].Selection
	qa := a.newRecord(rec, top)
	long := a.promptFor(rec)
	var final llm.Response
	n, err := ctxsel.RunRoute(ctx, r, steps, func(ctx context.Context, st ctxsel.RouteStep) (string, error) {
		p := long // with its system message and context format
		if !st.Long {
			p = ReaderPrompt{Template: llm.Template(r.Prompt(a.Datatype))}
		}
		resp, err := a.read(ctx, counter, rec, st.Selection, p, &qa)
		final = resp
		return resp.Content, err
	})
	if err != nil {
		return qa, top, err
	}
	last := steps[n-1].Selection
	if n > 1 {
		calls, cached, in, out, counted := qa.Calls, qa.Cached, qa.InputTokens, qa.OutputTokens, qa.Counted
		qa = a.newRecord(rec, last)
		qa.Calls, qa.Cached, qa.InputTokens, qa.OutputTokens, qa.Counted = calls, cached, in, out, counted
		qa.Routed = true
	}
	qa.Prediction, qa.Defect = final.Content, final.Defect()
	return qa, last, a.score(ctx, rec, &qa)
}

// answerJob is one (question, strategy) pair.
type answerJob struct{ q, s int }

// answerAll answers every question under every strategy slot, filling the
// route slots' selection statistics from the context the route ended with.
// It returns the per-slot answers (nil where a question failed) and the
// totals; err is a cancellation or too many failures.
func answerAll(ctx context.Context, a *Answering, counter token.Counter, recs []dataset.Record, stats []questionStats, slots []strategySlot, window int) ([][]*QuestionAnswer, AnswerTotals, error) {
	ac := *a
	ac.window = window
	a = &ac
	tot := AnswerTotals{Reader: a.Reader.Describe(), Window: window}
	if a.Judge != nil {
		tot.Judge = a.Judge.Name()
	}
	out := make([][]*QuestionAnswer, len(slots))
	for i := range out {
		out[i] = make([]*QuestionAnswer, len(recs))
	}
	workers := a.Workers
	if workers <= 0 {
		workers = 16
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu      sync.Mutex
		done    int
		stopErr error
		wg      sync.WaitGroup
	)
	total := len(recs) * len(slots)
	jobs := make(chan answerJob)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				st := &stats[j.q].perStrategy[j.s]
				var (
					qa  QuestionAnswer
					err error
				)
				if slots[j.s].route != nil {
					var final ctxsel.Selection
					qa, final, err = a.route(ctx, counter, recs[j.q], slots[j.s].route, st.steps)
					st.setSelection(final, &stats[j.q])
				} else {
					qa, err = a.Answer(ctx, counter, recs[j.q], st.sel)
				}
				qa.Strategy = slots[j.s].name
				canceled := err != nil && ctx.Err() != nil
				mu.Lock()
				if !canceled {
					done++
					tot.Calls += qa.Calls - qa.Cached
					tot.Cached += qa.Cached
					tot.Failures += qa.failures
					switch qa.Defect {
					case llm.DefectTruncated:
						tot.Truncated++
					case llm.DefectEmpty:
						tot.Empty++
					}
					tot.InputTokens += qa.InputTokens
					tot.OutputTokens += qa.OutputTokens
					if v := qa.Verdict; v != nil {
						tot.InputTokens += v.PromptTokens
						tot.OutputTokens += v.CompletionTokens
						tot.Calls += v.Calls - v.CachedCalls
						tot.Cached += v.CachedCalls
					}
					rec := qa
					out[j.s][j.q] = &rec
					if a.OnQuestion != nil {
						a.OnQuestion(rec)
					}
					if a.Progress != nil {
						a.Progress(AnswerProgress{Done: done, Total: total, Calls: tot.Calls, Cached: tot.Cached, Failures: tot.Failures,
							InputTokens: tot.InputTokens, OutputTokens: tot.OutputTokens})
					}
					if a.MaxFailures >= 0 && tot.Failures > a.MaxFailures && stopErr == nil {
						stopErr = fmt.Errorf("%w: %d (more than --max-failures=%d); last: %v", ErrTooManyFailures, tot.Failures, a.MaxFailures, err)
						cancel()
					}
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for q := range recs {
		for s := range slots {
			select {
			case jobs <- answerJob{q, s}:
			case <-ctx.Done():
				break feed
			}
		}
	}
	close(jobs)
	wg.Wait()
	if stopErr == nil {
		stopErr = ctx.Err()
	}
	if stopErr != nil {
		tot.Stopped = stopErr.Error()
	}
	return out, tot, stopErr
}

// aggregateAnswers sums one slot's answered questions.
func aggregateAnswers(qas []*QuestionAnswer, judged, route bool) *AnswerResult {
	r := &AnswerResult{}
	var judge []answer.Verdict
	var subem []float64
	routed := 0
	for _, qa := range qas {
		if qa == nil {
			continue
		}
		r.LLMFailures += qa.failures
		r.TokensCounted = r.TokensCounted || qa.Counted
		if qa.Error != "" {
			continue
		}
		r.Answered++
		switch qa.Defect {
		case llm.DefectTruncated:
			r.LLMTruncated++
		case llm.DefectEmpty:
			r.LLMEmpty++
		}
		r.SubEM += qa.SubEM
		subem = append(subem, qa.SubEM)
		r.EM += qa.EM
		r.F1 += qa.F1
		r.LLMCalls += float64(qa.Calls)
		r.InputTokens += float64(qa.InputTokens)
		r.OutputTokens += float64(qa.OutputTokens)
		r.JudgeTokens += float64(qa.judgeTokens)
		if qa.Verdict != nil {
			judge = append(judge, *qa.Verdict)
		}
		if qa.Routed {
			routed++
		}
	}
	if r.Answered > 0 {
		n := float64(r.Answered)
		for _, p := range []*float64{&r.SubEM, &r.EM, &r.F1, &r.LLMCalls, &r.InputTokens, &r.OutputTokens, &r.JudgeTokens} {
			*p /= n
		}
		if route {
			f := float64(routed) / n
			r.Routed = &f
		}
		r.SubEMErr = stdErr(subem)
	}
	if judged {
		s := answer.Summarize(judge)
		r.JudgeInvalid = s.Invalid
		if s.Valid > 0 {
			m := s.Mean
			r.Judge = &m
			var scores []float64
			for _, v := range judge {
				if !v.Invalid {
					scores = append(scores, v.Score)
				}
			}
			se := stdErr(scores)
			r.JudgeErr = &se
		}
	}
	return r
}

// stdErr is the standard error of the mean of xs (0 for fewer than two).
func stdErr(xs []float64) float64 {
	n := float64(len(xs))
	if n < 2 {
		return 0
	}
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= n
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss / (n - 1) / n)
}
