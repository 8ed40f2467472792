package ldartrain

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/eval"
	"github.com/ctxsel/ctxsel/ldar"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/token"
)

// LLMReward is LDAR's own reward (ldar.txt): the reader answers from the
// sampled band's passages and the judge scores the answer — the extra
// judge's score when Answering has one (an invalid verdict scores 0 and is
// counted), else SubEM. Calls go through the reader's cache and limiter.
// Questions need Question, Answers and Texts.
type LLMReward struct {
	Answering *eval.Answering
	Counter   token.Counter
	// MaxTokens caps the tokens of calls actually made (cached replies are
	// free); past it Reward fails, which stops training. 0: no cap.
	MaxTokens int64

	recs                           sync.Map // question id → Record
	tokens, calls, cached, invalid atomic.Int64
}

// LLMRewardStats are the calls and tokens a reward has spent.
type LLMRewardStats struct {
	Calls, Cached, Tokens, JudgeInvalid int64
}

// Stats reports the spending so far.
func (r *LLMReward) Stats() LLMRewardStats {
	return LLMRewardStats{Calls: r.calls.Load(), Cached: r.cached.Load(), Tokens: r.tokens.Load(), JudgeInvalid: r.invalid.Load()}
}

// Reward implements ldar.Reward.
func (r *LLMReward) Reward(ctx context.Context, q ldar.Question, b ldar.Band) (float64, error) {
	if r.MaxTokens > 0 && r.tokens.Load() >= r.MaxTokens {
		return 0, fmt.Errorf("%w: %d tokens spent (--max-llm-tokens=%d)", llm.ErrTokenCap, r.tokens.Load(), r.MaxTokens)
	}
	if q.Question == "" || len(q.Texts) != len(q.Scores) {
		return 0, fmt.Errorf("%w: question %q: an LLM reward needs the question and every passage's text", ctxsel.ErrInvalidInput, q.ID)
	}
	v, ok := r.recs.Load(q.ID)
	if !ok {
		rec := dataset.Record{ID: q.ID, Question: q.Question, Answers: q.Answers, Passages: make([]dataset.Passage, len(q.Texts))}
		for i, t := range q.Texts {
			rec.Passages[i] = dataset.Passage{ID: fmt.Sprint(i), Text: t}
		}
		v, _ = r.recs.LoadOrStore(q.ID, rec)
	}
	rec := v.(dataset.Record)
	sel := ctxsel.Selection{Indices: b.Indices, K: len(b.Indices), Tokens: b.Tokens}
	qa, err := r.Answering.Answer(ctx, r.Counter, rec, sel)
	judgeCalls := 0
	if v := qa.Verdict; v != nil {
		judgeCalls = v.Calls - v.CachedCalls
		r.cached.Add(int64(v.CachedCalls))
	}
	r.calls.Add(int64(qa.Calls - qa.Cached + judgeCalls))
	r.cached.Add(int64(qa.Cached))
	if qa.Cached < qa.Calls {
		r.tokens.Add(int64(qa.InputTokens + qa.OutputTokens))
	}
	if judgeCalls > 0 {
		r.tokens.Add(int64(qa.Verdict.PromptTokens + qa.Verdict.CompletionTokens))
	}
	if err != nil {
		return 0, fmt.Errorf("LLM reward, question %q: %w", q.ID, err)
	}
	if qa.Verdict != nil {
		if qa.Verdict.Invalid {
			r.invalid.Add(1)
			return 0, nil
		}
		return qa.Verdict.Score, nil
	}
	return qa.SubEM, nil
}

var _ ldar.Reward = (*LLMReward)(nil)
