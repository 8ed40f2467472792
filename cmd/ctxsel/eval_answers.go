package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/ctxsel/ctxsel/answer"
	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/eval"
	"github.com/ctxsel/ctxsel/internal/progress"
	"github.com/ctxsel/ctxsel/internal/termtext"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/token"
)

// answerFlags are eval's flags for measuring answers: the reader, the
// judge, the prompt and the window, on top of the shared LLM flags.
type answerFlags struct {
	reader, judge, prompt, questionsOut *string
	window, maxFailures, reserve        *int
	llm                                 *llmFlags

	mu      sync.Mutex
	records []eval.QuestionAnswer
	open    func(spec string) (llm.Client, error)
	cache   *llm.Cache
}

// opener returns the run's one LLM opener, opening it and the call cache on
// first use: the reader, the judge and the picker share them (and so the
// concurrency limit). close closes the cache.
func (f *answerFlags) opener(stderr io.Writer) (func(spec string) (llm.Client, error), error) {
	if f.open != nil {
		return f.open, nil
	}
	open, cache, err := f.llm.open(stderr)
	if err != nil {
		return nil, err
	}
	f.open, f.cache = open, cache
	return open, nil
}

const answerUsage = `
With --reader, a reader LLM answers every question from each strategy's
selection (the paper's prompt: --prompt factoid is Adaptive-k A.1.1,
holobench A.1.2, lara LaRA's — the default on lara: data —, or a template
file with {question} and {context}), and the
answers are scored: SubEM, EM, token F1, and --judge (llm:SPEC is the
Adaptive-k A.1.3 judge as its official code runs it — final answer
extracted, 8 worked examples, the mean over the gold entries; llm-any:SPEC
ctxsel's variant that takes the best entry, for alias lists; llm-binary:SPEC
ctxsel's correct/incorrect judge; llm-ldar:SPEC LDAR's True/False). Calls go
through the LLM call cache: a re-run makes no calls, and a run stopped with
Ctrl-C resumes where it stopped. selfroute (Self-Route) is an answering
route, available only with --reader: selfroute:k=5 is LDAR's (top 5
passages, its Table 5 prompt; the default), selfroute:prompt=adaptivek the
Adaptive-k code's (5,000 tokens, its prompt); a reply holding "unanswerable"
is asked again with the long context and --prompt. --window cuts every selection to the
reader's window (full keeps the best-scoring passages that fit, in document
order) and is sent with every request (Ollama runs the model with it:
num_ctx); it defaults to the reader spec's #window=N, else to what the
reader's server says (Ollama's /api/show, vLLM's /v1/models), else none
(an OpenAI-compatible server that refuses a long prompt is reported as such).
`

func addAnswerFlags(fs *flag.FlagSet) *answerFlags {
	return &answerFlags{
		reader:       fs.String("reader", "", "reader LLM that answers from each selection: PROVIDER:MODEL[@BASE_URL][#window=N]"),
		judge:        fs.String("judge", "subem", "extra judge of the answers: subem, em, f1, llm:SPEC (A.1.3), llm-any:SPEC, llm-binary:SPEC or llm-ldar:SPEC"),
		prompt:       fs.String("prompt", "auto", "reader prompt: factoid (Adaptive-k A.1.1), holobench (A.1.2), lara (LaRA's, as LDAR's code sends it) or a template file; auto: lara on lara: data, else factoid"),
		questionsOut: fs.String("questions-out", "", "write per-question answer records (JSONL) here"),
		window:       fs.Int("window", 0, "reader context window in tokens (0: the reader spec's #window, else what its server says, else none)"),
		maxFailures:  fs.Int("max-failures", 10, "stop once more LLM calls than this have failed (-1: never stop)"),
		reserve:      fs.Int("answer-reserve", 512, "tokens of the window kept for the answer"),
		llm:          addLLMFlags(fs),
	}
}

// readerTemplate resolves --prompt. "lara" is LaRA's prompt, chosen per
// record (eval.LaRAPrompt); its Template, the factoid one, serves records of
// other data.
func readerTemplate(name string) (llm.Template, error) {
	switch name {
	case "", "factoid", "auto", "lara":
		return llm.FactoidQA, nil
	case "holobench":
		return llm.HoloBench, nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return "", usageError{fmt.Errorf("--prompt: want factoid, holobench or a template file: %w", err)}
	}
	t := llm.Template(b)
	if err := t.Check(); err != nil {
		return "", usageError{fmt.Errorf("--prompt %s: %w", name, err)}
	}
	return t, nil
}

// setup validates the flags and opens the reader and the judge; nil without
// --reader. window is the reader's window (0: none): --window, else the
// reader spec's #window=N, else what the reader's server says (Ollama's
// /api/show, vLLM's /v1/models), else none.
func (f *answerFlags) setup(ctx context.Context, stderr io.Writer) (a *eval.Answering, window int, err error) {
	window = *f.window
	if window < 0 || *f.reserve < 0 || *f.maxFailures < -1 {
		return nil, 0, usageError{errors.New("eval: --window, --answer-reserve must not be negative; --max-failures must be -1 or more")}
	}
	if *f.reader == "" {
		if *f.questionsOut != "" {
			return nil, 0, usageError{errors.New("eval: --questions-out needs --reader")}
		}
		return nil, window, nil
	}
	sp, err := llm.ParseSpec(*f.reader)
	if err != nil {
		return nil, 0, usageError{fmt.Errorf("eval --reader: %w", err)}
	}
	if window == 0 {
		window = sp.Window
	}
	if window > 0 && window <= *f.reserve {
		return nil, 0, usageError{fmt.Errorf("eval: --window=%d leaves nothing after --answer-reserve=%d", window, *f.reserve)}
	}
	tmpl, err := readerTemplate(*f.prompt)
	if err != nil {
		return nil, 0, err
	}
	open, err := f.opener(stderr)
	if err != nil {
		return nil, 0, err
	}
	reader, err := open(*f.reader)
	if err != nil {
		f.close()
		return nil, 0, usageError{fmt.Errorf("eval --reader: %w", err)}
	}
	if window == 0 {
		n, ok, err := llm.ContextWindow(ctx, reader)
		switch {
		case err != nil:
			fmt.Fprintf(stderr, "eval: the reader's server did not say its window (%s): selections are not cut; give #window=N to cut them\n", termtext.Line(llm.Failure(err)))
		case ok:
			window = n
			fmt.Fprintf(stderr, "eval: the reader's window is %d tokens (from its server): every selection is cut to it\n", n)
		}
		if window > 0 && window <= *f.reserve {
			return nil, 0, usageError{fmt.Errorf("eval: the reader's window of %d tokens leaves nothing after --answer-reserve=%d", window, *f.reserve)}
		}
	}
	judge, err := answer.ParseJudge(*f.judge, answer.OpenFunc(open))
	if err != nil {
		f.close()
		return nil, 0, usageError{fmt.Errorf("eval --judge: %w", err)}
	}
	if _, lexical := judge.(answer.Metric); lexical {
		judge = nil // SubEM, EM and F1 are always computed
	}
	bar := progress.New(stderr, "answers")
	a = &eval.Answering{
		Reader: reader, Template: tmpl, Judge: judge, Reserve: *f.reserve, MaxFailures: *f.maxFailures,
		Workers: 2 * f.llm.concurrency,
		Progress: func(p eval.AnswerProgress) {
			bar.Note(fmt.Sprintf("%d calls (%d cached), %d failed, %s tokens", p.Calls, p.Cached, p.Failures,
				humanCount(p.InputTokens+p.OutputTokens)))
			bar.Update(p.Done, p.Total)
		},
		OnQuestion: func(qa eval.QuestionAnswer) {
			f.mu.Lock()
			f.records = append(f.records, qa)
			f.mu.Unlock()
		},
	}
	return a, window, nil
}

func (f *answerFlags) close() {
	if f.cache != nil {
		f.cache.Close()
		f.cache = nil
	}
	f.open = nil
}

// finish writes the per-question records and turns failed calls into the
// command's error, after everything computed has been written.
func (f *answerFlags) finish(rep *eval.Report, strategies []string) error {
	defer f.close()
	if *f.questionsOut != "" {
		order := map[string]int{}
		for i, s := range strategies {
			order[s] = i
		}
		f.mu.Lock()
		recs := f.records
		f.mu.Unlock()
		sort.SliceStable(recs, func(i, j int) bool {
			if recs[i].ID != recs[j].ID {
				return recs[i].ID < recs[j].ID
			}
			return order[recs[i].Strategy] < order[recs[j].Strategy]
		})
		err := writeFile(*f.questionsOut, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			for _, r := range recs {
				if err := enc.Encode(r); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if rep != nil && rep.Answers != nil && rep.Answers.Failures > 0 {
		return fmt.Errorf("eval: %d LLM calls failed (see llm_failures per strategy)", rep.Answers.Failures)
	}
	return nil
}

func humanCount(n int) string {
	switch {
	case n >= 10_000_000:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 10_000:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

// laraDefaultDir is where the LaRA benchmark sits in the project workspace.
const laraDefaultDir = "../shared/data/lara"

// loadLaRA reads --data lara:LENGTH/KIND[/LEVEL], chunked 600/100 tokens.
func loadLaRA(ctx context.Context, dir, spec string, counter *token.Tiktoken) ([]dataset.Record, error) {
	ch, err := chunk.NewTokens(counter, chunk.DefaultSize, chunk.DefaultOverlap)
	if err != nil {
		return nil, err
	}
	recs, err := dataset.LoadLaRA(ctx, dir, strings.TrimPrefix(spec, "lara:"), ch)
	if err != nil {
		return nil, fmt.Errorf("--data %s (LaRA under %s, see --lara-dir): %w", spec, dir, err)
	}
	return recs, nil
}
