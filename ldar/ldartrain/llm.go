package ldartrain

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/answer"
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/eval"
	"github.com/ctxsel/ctxsel/ldar"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/token"
)

// LLMRewardOptions set up LDAR's own reward: a reader answers from every
// sampled band and a judge scores the answer.
type LLMRewardOptions struct {
	// Reader is the reader's endpoint spec (llm.ParseSpec).
	Reader string
	// Judge is a judge spec (answer.ParseJudge), or "auto": LDAR's
	// True/False judge asked of the reader's endpoint on LaRA data, else
	// SubEM.
	Judge string
	// Prompt names the reader prompt: "lara" (LaRA's, per document kind;
	// LaRA data only), another name Template knows, or "auto": lara on
	// LaRA data, else factoid.
	Prompt string
	// Template gives a prompt name's template (factoid, holobench, a
	// template file; for lara, the template of records that are not
	// LaRA's).
	Template func(name string) (llm.Template, error)
	// MaxTokens caps the tokens of calls made (0: no cap).
	MaxTokens int64
	// OnLaRA says the data is LaRA's.
	OnLaRA bool
}

// NewLLMReward builds LDAR's reward from o, opening the reader and the
// judge with open, and describes it for the policy's metadata. Notes (the
// judge LaRA data gets) go to notes. Errors about the options wrap
// ctxsel.ErrInvalidInput.
func NewLLMReward(o LLMRewardOptions, open func(string) (llm.Client, error), counter token.Counter, notes io.Writer) (*LLMReward, string, error) {
	prompt := o.Prompt
	if prompt == "auto" {
		prompt = "factoid"
		if o.OnLaRA {
			prompt = "lara"
		}
	}
	if prompt == "lara" && !o.OnLaRA {
		return nil, "", fmt.Errorf("%w: train band: --prompt lara needs lara: data", ctxsel.ErrInvalidInput)
	}
	// With "lara", Template's answer serves records that are not LaRA's
	// (Answering.PromptFor gives LaRA's their own).
	tmpl, err := o.Template(prompt)
	if err != nil {
		return nil, "", err
	}
	judgeSpec := o.Judge
	if judgeSpec == "auto" {
		judgeSpec = "subem"
		if o.OnLaRA {
			judgeSpec = "llm-ldar:" + o.Reader
			fmt.Fprintf(notes, "note: LaRA data: LDAR's True/False judge, asked of the reader's endpoint (%s); LDAR judged with GPT-4o — --judge llm-ldar:SPEC names another\n", o.Reader)
		}
	}
	reader, err := open(o.Reader)
	if err != nil {
		return nil, "", fmt.Errorf("%w: train band --reader: %w", ctxsel.ErrInvalidInput, err)
	}
	judge, err := answer.ParseJudge(judgeSpec, answer.OpenFunc(open))
	if err != nil {
		return nil, "", fmt.Errorf("%w: train band --judge: %w", ctxsel.ErrInvalidInput, err)
	}
	withPrompt := ""
	if prompt == "lara" {
		withPrompt = " with LaRA's prompt"
	}
	desc := "LLM-judged answers (reader " + o.Reader + withPrompt + ", judge " + judge.Name() + ")"
	if _, lexical := judge.(answer.Metric); lexical && judge.Name() == "subem" {
		judge = nil // SubEM is the default score
	}
	a := &eval.Answering{Reader: reader, Template: tmpl, Judge: judge, MaxFailures: -1}
	if prompt == "lara" {
		a.PromptFor = eval.LaRAPrompt
	}
	return &LLMReward{Answering: a, Counter: counter, MaxTokens: o.MaxTokens}, desc, nil
}

// sentenceWords is the median answer length, in words, from which answers
// count as sentences rather than factoid strings.
const sentenceWords = 5

// warnSubEMOnSentences warns when SubEM scores sentence-long answers
// (LaRA's): a reader's paraphrase of a sentence almost never contains it
// word for word, so the reward is 0 nearly everywhere.
func warnSubEMOnSentences(w io.Writer, recs []dataset.Record) {
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

// EstimateLLMSpend prints, before training, how many calls an LLM reward
// makes at most and about how many tokens they cost: every epoch answers
// opt.Samples bands per training question and one per validation
// question; bands are assumed to average a third of the policy's window
// (an untrained policy's bands are wide), plus the prompt around them.
func EstimateLLMSpend(w io.Writer, trainQ, valQ []ldar.Question, opt ldar.TrainOptions, judge answer.Judge, counter token.Counter) {
	const promptOverhead = 150
	var perBand float64
	for _, q := range trainQ {
		order := ctxsel.Ranking(q.Scores)
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
