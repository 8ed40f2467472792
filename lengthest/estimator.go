package lengthest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/score"
)

// Example is one summarisation input: a query over a set of documents.
type Example struct {
	ID       string
	Question string
	Docs     []string
}

// Model is one LLM in a role (panel member or summarizer).
type Model struct {
	// Name is how the report names the model (its spec).
	Name   string
	Client llm.Client
	// Window is the model's context window in tokens (0: Config.DefaultWindow).
	Window int
}

// Config is one estimation run.
type Config struct {
	Panel      []Model
	Summarizer Model
	// Retriever scores the documents against the query (score.BM25, an
	// embedding scorer, a hybrid).
	Retriever score.Scorer
	Tokenizer Tokenizer
	Utility   Utility
	// Budgets are the retrieval lengths searched, in tokens.
	Budgets []int
	// Samples is how many summaries each model writes per input (3);
	// Keep how many silver references MBR keeps per example (3).
	Samples, Keep int
	// Temperature is sent with every call (0.5); sample i is sent with seed
	// Seed+i, so that samples differ and each has its own cache entry.
	Temperature float64
	Seed        int
	// Words is the prompt's {num_words}; MaxTokens caps each summary (0:
	// the server's default).
	Words, MaxTokens int
	// DocTokens is the per-document cut in the search (1024);
	// DefaultWindow the window of a model that names none (128000).
	DocTokens, DefaultWindow int
	// Workers bounds prompts prepared at once (the clients' limiter bounds
	// calls in flight); 0: 16.
	Workers int
	// PerExample adds each example's best budget to the report.
	PerExample bool
	// Progress, when set, is told of every finished call.
	Progress func(Progress)
}

// Defaults of Config.
const (
	DefaultSamples       = 3
	DefaultKeep          = 3
	DefaultTemperature   = 0.5
	DefaultWindow        = 128000
	DefaultSampleFrac    = 0.25
	defaultWorkers       = 16
	estimatedTokensPerWd = 4.0 / 3 // answer tokens per word, for plans only
)

// Progress reports a phase's advance and the spend so far.
type Progress struct {
	Phase       string
	Done, Total int
	Spend       Spend
}

// Spend counts LLM calls and tokens. Prompt and completion tokens include
// replies served from the call cache; Fresh* only those from the servers.
type Spend struct {
	Calls                 int `json:"calls"`
	CachedCalls           int `json:"cached_calls"`
	PromptTokens          int `json:"prompt_tokens"`
	CompletionTokens      int `json:"completion_tokens"`
	FreshPromptTokens     int `json:"fresh_prompt_tokens"`
	FreshCompletionTokens int `json:"fresh_completion_tokens"`
}

func (s *Spend) add(r llm.Response) {
	s.Calls++
	s.PromptTokens += r.PromptTokens
	s.CompletionTokens += r.CompletionTokens
	if r.Cached {
		s.CachedCalls++
		return
	}
	s.FreshPromptTokens += r.PromptTokens
	s.FreshCompletionTokens += r.CompletionTokens
}

func (c *Config) defaults() {
	if c.Samples == 0 {
		c.Samples = DefaultSamples
	}
	if c.Keep == 0 {
		c.Keep = DefaultKeep
	}
	if c.Words == 0 {
		c.Words = DefaultWords
	}
	if c.DocTokens == 0 {
		c.DocTokens = DefaultDocTokens
	}
	if c.DefaultWindow == 0 {
		c.DefaultWindow = DefaultWindow
	}
	if c.Workers <= 0 {
		c.Workers = defaultWorkers
	}
	if c.Utility == nil {
		c.Utility = RougeL{}
	}
}

func (c *Config) validate(needClients bool) error {
	switch {
	case len(c.Panel) == 0:
		return invalidf("no panel models")
	case len(c.Budgets) == 0:
		return invalidf("no budgets")
	case c.Samples < 1 || c.Samples > 100:
		return invalidf("samples=%d must be in 1..100", c.Samples)
	case c.Keep < 1:
		return invalidf("keep=%d must be positive", c.Keep)
	case c.Words < 1:
		return invalidf("words=%d must be positive", c.Words)
	case c.DocTokens < 1:
		return invalidf("doc tokens=%d must be positive", c.DocTokens)
	case c.MaxTokens < 0:
		return invalidf("max tokens=%d must not be negative", c.MaxTokens)
	case !(c.Temperature >= 0 && c.Temperature <= 2):
		return invalidf("temperature=%v must be in 0..2", c.Temperature)
	case c.Tokenizer == nil:
		return errors.New("lengthest: no tokenizer")
	}
	for _, b := range c.Budgets {
		if b <= 0 {
			return invalidf("budget %d is not positive", b)
		}
	}
	if !needClients {
		return nil
	}
	if c.Retriever == nil {
		return errors.New("lengthest: no retriever")
	}
	for _, m := range append([]Model{c.Summarizer}, c.Panel...) {
		if m.Client == nil {
			return fmt.Errorf("lengthest: model %q has no client", m.Name)
		}
	}
	return nil
}

func (c *Config) window(m Model) int {
	if m.Window > 0 {
		return m.Window
	}
	return c.DefaultWindow
}

// answerReserve is what a prompt leaves of the window for the answer.
func (c *Config) answerReserve() int {
	if c.MaxTokens > 0 {
		return c.MaxTokens
	}
	return int(math.Ceil(float64(c.Words) * estimatedTokensPerWd))
}

// fenceSlack is what the documents' fence may cost beyond the empty
// prompt's count: a token may merge across each of its two boundaries with
// the text, and a document holding a run of backticks lengthens it.
const fenceSlack = 4

// docLimit is how many document tokens fit a model's window with the
// prompt's own text and the answer.
func (c *Config) docLimit(m Model, ex Example) int {
	overhead := c.Tokenizer.Count(RenderPrompt(make([]string, len(ex.Docs)), ex.Question, c.Words))
	return c.window(m) - overhead - fenceSlack - c.answerReserve()
}

// fullPrompt is a model's full-context prompt, cut to its window.
func (c *Config) fullPrompt(m Model, ex Example) (string, int, error) {
	docs, n, err := FitWindow(c.Tokenizer, ex.Docs, c.docLimit(m, ex))
	if err != nil {
		return "", 0, err
	}
	total := 0
	for _, k := range n {
		total += k
	}
	return RenderPrompt(docs, ex.Question, c.Words), total, nil
}

// runner makes the calls of one run, counting spend and progress.
type runner struct {
	cfg   *Config
	mu    sync.Mutex
	spend Spend
}

func (r *runner) call(ctx context.Context, m Model, prompt string, sample int) (llm.Response, error) {
	temp := r.cfg.Temperature
	seed := r.cfg.Seed + sample
	req := llm.Request{Messages: []llm.Message{{Role: "user", Content: prompt}}, Temperature: &temp, Seed: &seed,
		MaxTokens: r.cfg.MaxTokens}
	resp, err := m.Client.Chat(ctx, req)
	if err != nil {
		return llm.Response{}, fmt.Errorf("%s: %w", m.Name, err)
	}
	r.mu.Lock()
	r.spend.add(resp)
	r.mu.Unlock()
	return resp, nil
}

// each runs fn(0..n-1) on the configured number of workers and returns the
// first error, cancelling the rest; progress is reported after each item.
func (r *runner) each(ctx context.Context, phase string, n int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	jobs := make(chan int)
	var wg sync.WaitGroup
	done := 0
	for range min(r.cfg.Workers, max(n, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if err := fn(ctx, i); err != nil {
					cancel(err)
					continue
				}
				r.mu.Lock()
				done++
				p := Progress{Phase: phase, Done: done, Total: n, Spend: r.spend}
				if r.cfg.Progress != nil {
					r.cfg.Progress(p)
				}
				r.mu.Unlock()
			}
		}()
	}
feed:
	for i := range n {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return err
	}
	return nil
}

// prepared is one example ready for the search.
type prepared struct {
	docs   []string // each cut to DocTokens at a sentence boundary
	tokens []int
	scores []float64
}

func (r *runner) prepare(ctx context.Context, ex Example) (prepared, error) {
	p := prepared{docs: make([]string, len(ex.Docs)), tokens: make([]int, len(ex.Docs))}
	for i, d := range ex.Docs {
		t, err := TruncateSentences(r.cfg.Tokenizer, d, r.cfg.DocTokens)
		if err != nil {
			return p, fmt.Errorf("example %s document %d: %w", ex.ID, i, err)
		}
		p.docs[i], p.tokens[i] = t, r.cfg.Tokenizer.Count(t)
	}
	// The documents are scored as they will be shown, cut to DocTokens: the
	// official code truncates first (retriever_utils.preprocess_rag), then
	// retrieves over the truncated documents.
	s, err := r.cfg.Retriever.Score(ctx, ex.Question, p.docs)
	if err != nil {
		return p, fmt.Errorf("example %s: retriever %s: %w", ex.ID, r.cfg.Retriever.Name(), err)
	}
	if len(s) != len(ex.Docs) {
		return p, fmt.Errorf("example %s: retriever %s gave %d scores for %d documents", ex.ID, r.cfg.Retriever.Name(), len(s), len(ex.Docs))
	}
	p.scores = s
	return p, nil
}

// packKey names a packing, so that budgets admitting the same documents
// share their summaries instead of asking again.
func packKey(chosen []int) string {
	var b strings.Builder
	for _, i := range chosen {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte(',')
	}
	return b.String()
}
