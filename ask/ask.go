// Package ask answers a question over an index: embed the question, score
// the index's chunks (hybrid by default: cosine and BM25 fused), let a
// ctxsel strategy cut the score curve, assemble the prompt from the selected
// passages and, when an LLM is configured, ask it. Every step is reported — the passages with their scores and tokens, the
// explanation of the cut, the prompt, the answer with its token counts — so a
// user sees exactly what the LLM was handed and why.
//
// Ask is what `ctxsel ask` runs; servers call it the same way.
package ask

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ctxsel/ctxsel"
	_ "github.com/ctxsel/ctxsel/cutoff" // registers the strategies
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/fusion"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/llm"
	_ "github.com/ctxsel/ctxsel/selfroute" // registers the answering route
	"github.com/ctxsel/ctxsel/token"
)

// Defaults.
const (
	DefaultStrategy = ctxsel.DefaultStrategy
	// DefaultCandidates is how many of the best-scoring chunks the strategy
	// chooses from — the papers score ~1000 passages per question, and it is
	// what a vector database returns in one nearVector query.
	DefaultCandidates = 1000
)

// Options configure Ask. The zero value asks with DefaultStrategy over the
// best 1000 chunks by hybrid retrieval, rank order, the factoid QA prompt
// and no LLM.
type Options struct {
	// Strategy is a spec that ctxsel.Resolve turns into a strategy
	// ("adaptivek", "topk:k=5", "budget:tokens=2000",
	// "knee:max_tokens=4000") or a registered answering route
	// ("selfroute:k=5", which needs LLM); "" is DefaultStrategy.
	Strategy string
	// Selector, when set, selects instead of Strategy: a text selector
	// the caller resolved or built (the LLM picker, a composition such as
	// topk:k=30+picker).
	Selector ctxsel.TextSelector
	// Order arranges the selected passages in the prompt.
	Order ctxsel.Order
	// Candidates is how many best chunks the store returns (default 1000).
	Candidates int
	// Template is the prompt (default llm.FactoidQA). An answering route
	// asks its own first step with its own prompt (Self-Route's lets the
	// reader decline) and its long-context step with Template.
	Template llm.Template
	// LLM answers when set; otherwise Answer.Reply is nil.
	LLM llm.Client
	// Encoding counts the prompt's tokens (default: the index's encoding).
	Encoding string
	// Window is the reader's context window in tokens; Self-Route's
	// long-context step is cut to it (default DefaultWindow).
	Window int
	// Retriever scores the index's chunks: index.Hybrid (the default:
	// dense and BM25 fused), index.Dense or index.BM25.
	Retriever index.Retriever
	// Alpha weights the dense side of a hybrid retrieval (0 means
	// index.DefaultAlpha, 0.5) and Fusion is its rule ("" is the index's
	// default: z-score embedded, minmax on Weaviate).
	Alpha  float64
	Fusion fusion.Method
}

// DefaultWindow is Self-Route's long-context window when none is given.
const DefaultWindow = 32000

// Passage is a selected chunk.
type Passage struct {
	index.Hit
	// ID is the chunk id ("doc#index") the prompt cites.
	ID string `json:"id"`
	// Rank is the chunk's place among the candidates (0 = best match).
	Rank int `json:"rank"`
}

// Timings are the wall times of Ask's steps.
type Timings struct {
	Embed  time.Duration `json:"embed_ns"`
	Search time.Duration `json:"search_ns"`
	Select time.Duration `json:"select_ns"`
	LLM    time.Duration `json:"llm_ns,omitempty"`
}

// Answer is everything Ask did.
type Answer struct {
	Question string `json:"question"`
	// Index is the store's location, Model the embedding model.
	Index string `json:"index"`
	Model string `json:"model"`
	// Retriever is how the candidates were scored (dense, bm25, hybrid).
	Retriever index.Retriever `json:"retriever"`
	// Scores are the candidates' scores in rank order (cosine, BM25 or
	// fused, by Retriever): the curve the strategy cut.
	Scores []float64 `json:"scores"`
	// Passages are the selected chunks in the requested order.
	Passages  []Passage        `json:"passages"`
	Selection ctxsel.Selection `json:"selection"`
	// Prompt is the assembled prompt; PromptTokens its exact token count.
	Prompt       string `json:"prompt"`
	PromptTokens int    `json:"prompt_tokens"`
	Encoding     string `json:"encoding"`
	// Reply is the LLM's answer, when one was asked.
	Reply *llm.Response `json:"reply,omitempty"`
	// ReplyDefect flags a degenerate reply ("empty", or "truncated": cut
	// off at the token limit or over the size bound; llm.Response.Defect):
	// it is shown as it is, but it is not a whole answer.
	ReplyDefect string `json:"reply_defect,omitempty"`
	// Route is what Self-Route did (strategy selfroute:k=N); Passages,
	// Selection, Prompt and Reply are then its final step's.
	Route *Route `json:"route,omitempty"`
	// Pick is what the selector's own model call did, when Options.Selector
	// is a ctxsel.MeteredSelector (the LLM picker): its tokens, apart from
	// the reader's in Reply.
	Pick    *Pick   `json:"pick,omitempty"`
	Timings Timings `json:"timings"`
}

// Pick is the LLM picker's own call: what it cost and whether its answer
// was used.
type Pick struct {
	// Calls is 1 when the picker asked its model (a failed call included),
	// 0 when no candidate fitted its budget.
	Calls            int `json:"calls"`
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// Valid is false when the fallback strategy selected; Invalid says why.
	Valid   bool   `json:"valid"`
	Invalid string `json:"invalid,omitempty"`
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ctxsel.ErrInvalidInput, fmt.Sprintf(format, args...))
}

// Ask answers question over store, embedding it with e (which must be the
// model the index was built with).
func Ask(ctx context.Context, store index.Store, e embed.Embedder, question string, opts Options) (Answer, error) {
	a := Answer{Question: question}
	if strings.TrimSpace(question) == "" {
		return a, invalidf("empty question")
	}
	retriever, err := index.ParseRetriever(string(opts.Retriever))
	if err != nil {
		return a, err
	}
	a.Retriever = retriever
	if store == nil || e == nil && retriever != index.BM25 {
		return a, invalidf("ask needs an index and an embedder")
	}
	var how ctxsel.Resolved
	if opts.Selector == nil {
		r := ctxsel.Resolver{Default: DefaultStrategy, Kinds: ctxsel.StrategyKind | ctxsel.RouteKind}
		if how, err = r.Resolve(opts.Strategy); err != nil {
			return a, err
		}
		if how.Kind == ctxsel.RouteKind && opts.LLM == nil {
			return a, invalidf("%s is an answering route: it needs an LLM", how.Spec)
		}
	}
	tmpl := opts.Template
	if tmpl == "" {
		tmpl = llm.FactoidQA
	}
	if err := tmpl.Check(); err != nil {
		return a, fmt.Errorf("%w: %v", ctxsel.ErrInvalidInput, err)
	}
	n := opts.Candidates
	if n == 0 {
		n = DefaultCandidates
	}
	if n < 0 {
		return a, invalidf("candidates=%d must be positive", n)
	}
	st, err := store.Stats(ctx)
	if err != nil {
		return a, err
	}
	a.Index, a.Model = st.Location, st.Config.Model
	if st.Chunks == 0 {
		return a, invalidf("index %s holds no passages: add documents first (ctxsel index add)", st.Location)
	}
	if retriever != index.BM25 && st.Config.Model != e.ModelID() {
		return a, fmt.Errorf("%w: the index was built with embedding model %q, the question would be embedded with %q",
			index.ErrMismatch, st.Config.Model, e.ModelID())
	}
	encoding := opts.Encoding
	if encoding == "" {
		encoding = st.Config.Encoding
	}
	counter, err := token.New(encoding)
	if err != nil {
		return a, fmt.Errorf("%w: %v", ctxsel.ErrInvalidInput, err)
	}
	a.Encoding = counter.Encoding()

	q := index.Query{Text: question, Limit: n, Retriever: retriever, Alpha: opts.Alpha, Fusion: opts.Fusion}
	t := time.Now()
	if retriever != index.BM25 {
		vecs, err := embed.Queries(ctx, e, []string{question})
		if err != nil {
			return a, fmt.Errorf("embed question: %w", err)
		}
		if _, err := embed.CheckVectors(vecs, 1); err != nil {
			return a, fmt.Errorf("embed question: %w", err)
		}
		q.Vector = vecs[0]
	}
	a.Timings.Embed = time.Since(t)

	t = time.Now()
	hits, err := index.Retrieve(ctx, store, q)
	if err != nil {
		return a, fmt.Errorf("search: %w", err)
	}
	a.Timings.Search = time.Since(t)
	if len(hits) == 0 {
		return a, errors.New("search returned no passages")
	}

	t = time.Now()
	cands := make([]ctxsel.Candidate, len(hits))
	a.Scores = make([]float64, len(hits))
	for i, h := range hits {
		cands[i] = ctxsel.Candidate{ID: h.ID(), Score: h.Score, Tokens: h.Tokens}
		a.Scores[i] = h.Score
	}
	curve, err := ctxsel.NewCurve(cands)
	if err != nil {
		return a, fmt.Errorf("candidates: %w", err)
	}
	var sel ctxsel.Selection
	switch {
	case opts.Selector != nil:
		texts := make([]string, len(hits))
		for i, h := range hits {
			texts[i] = h.Text
		}
		tq := ctxsel.TextQuery{Question: question, Curve: curve, Texts: texts, Order: opts.Order}
		if m, ok := opts.Selector.(ctxsel.MeteredSelector); ok {
			// The selector's own call is reported on its own, as eval does.
			var u ctxsel.SelectorUsage
			if sel, u, err = m.SelectMetered(ctx, tq); err == nil {
				a.Pick = &Pick{Calls: u.Calls, PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, Valid: u.Invalid == "", Invalid: u.Invalid}
			}
		} else {
			sel, err = opts.Selector.SelectTexts(ctx, tq)
		}
	case how.Kind == ctxsel.RouteKind:
		a.Timings.Select = time.Since(t)
		return a, askRoute(ctx, &a, curve, hits, how.Route, tmpl, counter, opts)
	default:
		sel, err = ctxsel.Select(curve, how.Strategy, how.Caps, opts.Order)
	}
	if err != nil {
		return a, err
	}
	a.Selection = sel
	a.Timings.Select = time.Since(t)

	if err := a.show(sel, hits, tmpl, counter); err != nil {
		return a, err
	}

	if opts.LLM != nil {
		t = time.Now()
		r, err := llm.Ask(ctx, opts.LLM, a.Prompt)
		if err != nil {
			return a, fmt.Errorf("ask the LLM: %w", err)
		}
		a.Reply, a.ReplyDefect = &r, r.Defect()
		a.Timings.LLM = time.Since(t)
	}
	return a, nil
}
