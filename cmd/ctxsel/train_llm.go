package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

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
		judge:     fs.String("judge", "auto", "reward llm: the judge, subem, em, f1, llm-ldar:SPEC (LDAR's True/False), llm:SPEC (A.1.3), llm-any:SPEC, llm-binary:SPEC; auto: llm-ldar with the reader's endpoint on lara: data, else subem"),
		prompt:    fs.String("prompt", "auto", "reward llm: reader prompt, factoid, holobench, lara (LaRA's, per document kind) or a template file; auto: lara on lara: data, else factoid"),
		maxTokens: fs.Int64("max-llm-tokens", 0, "reward llm: stop training once calls have spent this many tokens (0: no cap)"),
		llm:       addLLMFlags(fs),
	}
}

// reward opens the reader and the judge as an eval.LLMReward. On LaRA data
// the defaults are LDAR's: LaRA's reader prompt and LDAR's True/False judge
// (the reader's endpoint judging unless --judge names another).
func (f *llmRewardFlags) reward(stderr io.Writer, counter token.Counter, onLaRA bool) (*eval.LLMReward, string, error) {
	if *f.reader == "" {
		return nil, "", usageError{errors.New("train band: --reward llm needs --reader")}
	}
	if *f.maxTokens < 0 {
		return nil, "", usageError{errors.New("train band: --max-llm-tokens must not be negative")}
	}
	if _, err := llm.ParseSpec(*f.reader); err != nil {
		return nil, "", usageError{fmt.Errorf("train band --reader: %w", err)}
	}
	prompt := *f.prompt
	if prompt == "auto" {
		prompt = "factoid"
		if onLaRA {
			prompt = "lara"
		}
	}
	if prompt == "lara" && !onLaRA {
		return nil, "", usageError{errors.New("train band: --prompt lara needs lara: data")}
	}
	tmpl, err := readerTemplate(prompt)
	if err != nil {
		return nil, "", err
	}
	judgeSpec := *f.judge
	if judgeSpec == "auto" {
		judgeSpec = "subem"
		if onLaRA {
			judgeSpec = "llm-ldar:" + *f.reader
			fmt.Fprintf(stderr, "note: LaRA data: LDAR's True/False judge, asked of the reader's endpoint (%s); LDAR judged with GPT-4o — --judge llm-ldar:SPEC names another\n", *f.reader)
		}
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
	judge, err := answer.ParseJudge(judgeSpec, answer.OpenFunc(open))
	if err != nil {
		f.close()
		return nil, "", usageError{fmt.Errorf("train band --judge: %w", err)}
	}
	withPrompt := ""
	if prompt == "lara" {
		withPrompt = " with LaRA's prompt"
	}
	desc := "LLM-judged answers (reader " + *f.reader + withPrompt + ", judge " + judge.Name() + ")"
	if _, lexical := judge.(answer.Metric); lexical && judge.Name() == "subem" {
		judge = nil // SubEM is the default score
	}
	a := &eval.Answering{Reader: reader, Template: tmpl, Judge: judge, MaxFailures: -1}
	if prompt == "lara" {
		a.PromptFor = eval.LaRAPrompt
	}
	return &eval.LLMReward{Answering: a, Counter: counter, MaxTokens: *f.maxTokens}, desc, nil
}

// sentenceWords is the median answer length, in words, from which answers
// count as sentences rather than factoid strings.
const sentenceWords = 5

// warnSubEMOnSentences warns when SubEM scores sentence-long answers
// (LaRA's): a reader's paraphrase of a sentence almost never contains it
// word for word, so the reward is 0 nearly everywhere.
func warnSubEMOnSentences(w io.Writer, recs []eval.Record) {
	var lengths []int
	for _, r := range recs {
		for _, a := range r.Answers {
			lengths = append(lengths, len(strings.Fields(a)))
		}
	}
	if len(lengths) == 0 {
		return
	}
	slices.Sort(lengths)
	if med := lengths[len(lengths)/2]; med >= sentenceWords {
		fmt.Fprintf(w, "warning: the judge is SubEM, but the answers are sentences (median %d words): a paraphrase scores 0; use an LLM judge (--judge llm-ldar:SPEC, LDAR's)\n", med)
	}
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
func estimateLLMSpend(w io.Writer, trainQ, valQ []ldar.Question, opt ldar.TrainOptions, judge answer.Judge, counter token.Counter) {
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
	answers := int64(opt.Epochs) * int64(len(trainQ)*opt.Samples+len(valQ))
	calls, perAnswer := answers, promptOverhead+perBand
	switch judge.(type) {
	case nil:
	case *answer.LLMJudge: // extraction, then the 8-example template
		calls += 2 * answers
		perAnswer += float64(counter.Count(answer.ExtractTemplateA13)+counter.Count(answer.JudgeTemplateA13)) + 2*promptOverhead
	default:
		calls += answers
		perAnswer += 2 * promptOverhead
	}
	perCall := perAnswer * float64(answers) / float64(max(calls, 1))
	fmt.Fprintf(w, "LLM reward: at most %d calls, about %.1fM tokens (bands of ~%.0f tokens); cached calls are free, --max-llm-tokens caps the spend\n",
		calls, float64(calls)*perCall/1e6, perBand)
}
