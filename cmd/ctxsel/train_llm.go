package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"

	"github.com/ctxsel/ctxsel/answer"
	"github.com/ctxsel/ctxsel/eval"
	"github.com/ctxsel/ctxsel/ldar"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/token"
)

// llmRewardFlags are train band's flags for LDAR's own reward: a reader
// answers from every sampled band and a judge scores the answer.
type llmRewardFlags struct {
	reader, judge, prompt *string
	maxTokens             *int64
	llm                   *llmFlags
	cache                 *llm.Cache
}

func addLLMRewardFlags(fs *flag.FlagSet) *llmRewardFlags {
	return &llmRewardFlags{
		reader:    fs.String("reader", "", "reward llm: the reader LLM, PROVIDER:MODEL[@BASE_URL]"),
		judge:     fs.String("judge", "subem", "reward llm: the judge, subem, em, f1, llm:SPEC or llm-binary:SPEC"),
		prompt:    fs.String("prompt", "factoid", "reward llm: reader prompt, factoid, holobench or a template file"),
		maxTokens: fs.Int64("max-llm-tokens", 0, "reward llm: stop training once calls have spent this many tokens (0: no cap)"),
		llm:       addLLMFlags(fs),
	}
}

// reward opens the reader and the judge as an eval.LLMReward.
func (f *llmRewardFlags) reward(stderr io.Writer, counter token.Counter) (*eval.LLMReward, string, error) {
	if *f.reader == "" {
		return nil, "", usageError{errors.New("train band: --reward llm needs --reader")}
	}
	if *f.maxTokens < 0 {
		return nil, "", usageError{errors.New("train band: --max-llm-tokens must not be negative")}
	}
	if _, err := llm.ParseSpec(*f.reader); err != nil {
		return nil, "", usageError{fmt.Errorf("train band --reader: %w", err)}
	}
	tmpl, err := readerTemplate(*f.prompt)
	if err != nil {
		return nil, "", err
	}
	open, cache, err := f.llm.open(stderr)
	if err != nil {
		return nil, "", err
	}
	f.cache = cache
	reader, err := open(*f.reader)
	if err != nil {
		f.close()
		return nil, "", usageError{fmt.Errorf("train band --reader: %w", err)}
	}
	judge, err := answer.ParseJudge(*f.judge, answer.OpenFunc(open))
	if err != nil {
		f.close()
		return nil, "", usageError{fmt.Errorf("train band --judge: %w", err)}
	}
	desc := "LLM-judged answers (reader " + *f.reader + ", judge " + judge.Name() + ")"
	if _, lexical := judge.(answer.Metric); lexical && judge.Name() == "subem" {
		judge = nil // SubEM is the default score
	}
	a := &eval.Answering{Reader: reader, Template: tmpl, Judge: judge, MaxFailures: -1}
	return &eval.LLMReward{Answering: a, Counter: counter, MaxTokens: *f.maxTokens}, desc, nil
}

func (f *llmRewardFlags) close() {
	if f.cache != nil {
		f.cache.Close()
		f.cache = nil
	}
}

// estimateLLMSpend prints, before training, how many calls an LLM reward
// makes at most and about how many tokens they cost: every epoch answers
// samples bands per training question and one per validation question;
// bands are assumed to average a third of the policy's window (an untrained
// policy's bands are wide), plus the prompt around them.
func estimateLLMSpend(w io.Writer, trainQ, valQ []ldar.Question, opt ldar.TrainOptions, judged bool) {
	const promptOverhead = 150
	var perBand float64
	for _, q := range trainQ {
		order := make([]int, len(q.Scores))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool { return q.Scores[order[a]] > q.Scores[order[b]] })
		n := len(order)
		if opt.Config.Window > 0 {
			n = min(n, opt.Config.Window)
		}
		sum := 0
		for _, i := range order[:n] {
			sum += q.Tokens[i]
		}
		perBand += float64(sum) / 3
	}
	if len(trainQ) > 0 {
		perBand /= float64(len(trainQ))
	}
	calls := int64(opt.Epochs) * int64(len(trainQ)*opt.Samples+len(valQ))
	perCall := promptOverhead + perBand
	if judged {
		calls *= 2
		perCall = (perCall + 2*promptOverhead) / 2
	}
	fmt.Fprintf(w, "LLM reward: at most %d calls, about %.1fM tokens (bands of ~%.0f tokens); cached calls are free, --max-llm-tokens caps the spend\n",
		calls, float64(calls)*perCall/1e6, perBand)
}
