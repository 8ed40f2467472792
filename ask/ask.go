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
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ctxsel/ctxsel"
	_ "github.com/ctxsel/ctxsel/cutoff" // registers the strategies
	"github.com/ctxsel/ctxsel/embed"
	_ "github.com/ctxsel/ctxsel/evidence" // registers the default selector
	"github.com/ctxsel/ctxsel/fusion"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/llm"
	_ "github.com/ctxsel/ctxsel/selfroute" // registers the answering route
	"github.com/ctxsel/ctxsel/token"
)

// Defaults.
const (
	// DefaultStrategy is what Ask selects with when nothing is named:
	// ctxsel.DefaultStrategy, the evidence selector (the best passages'
	// sentences within a token budget), cut further to the reader's window.
	DefaultStrategy = ctxsel.DefaultStrategy
	// DefaultCandidates is how many of the best-scoring chunks the strategy
	// chooses from — the papers score ~1000 passages per question, and it is
	// what a vector database returns in one nearVector query.
	DefaultCandidates = 1000
	// DefaultWindow is the reader's context window when neither the
	// caller (Options.Window, #window=N) nor the LLM's server (Ollama's
	// /api/show, vLLM's /v1/models) says: the selection is cut to it. A
	// server that reports more is used with at most MaxLearnedWindow.
	DefaultWindow = 32000
	// MaxLearnedWindow bounds a window learned from the server: an Ollama
	// model reporting 131,072 tokens would otherwise be run with a
	// 128k-token context (num_ctx), whose memory a local machine may not
	// have. Give #window=N to use more.
	MaxLearnedWindow = 32768
)

// Options configure Ask. The zero value asks with DefaultStrategy over the
// best 1000 chunks by hybrid retrieval, rank order, the factoid QA prompt
// and no LLM, the selection fitted to DefaultWindow.
type Options struct {
	// Strategy is a spec that ctxsel.Resolve turns into a strategy
	// ("adaptivek", "topk:k=5", "budget:tokens=2000"), a text selector
	// ("evidence:budget=800", "topk:k=30+evidence:budget=500"; the
	// default), or a registered answering route ("selfroute:k=5", which
	// needs LLM); "" is DefaultStrategy.
	Strategy string
	// Resolved, when it holds something to run (Runnable or Route),
	// selects instead of Strategy: a spec the caller resolved (a server
	// does, to refuse a bad one before any work) or a text selector it
	// built (the LLM picker, a composition such as topk:k=30+picker:
	// ctxsel.Resolved{Selector: s}).
	Resolved ctxsel.Resolved
	// IndexDeps, when Resolved was resolved with their Deps before the
	// index was open, are bound to the index, the question's embedder and
	// the counter Ask opens, before it selects.
	IndexDeps *IndexDeps
	// Deps supplies what the text selectors Strategy names need. Ask adds
	// what it has: the evidence selector's sentence embedder
	// (ctxsel.DepEmbedder: SentenceEmbedder of the question's embedder),
	// the token counter (ctxsel.DepCounter, the index's encoding) and the
	// sentence vectors the index stored (ctxsel.DepSentences, when the
	// store is a ctxsel.SentenceStore: the embedded index).
	Deps ctxsel.Deps
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
	// Window is the reader's context window in tokens (#window=N). When
	// 0, it is asked of the LLM's server (llm.ContextWindow: Ollama's
	// /api/show, vLLM's /v1/models; at most MaxLearnedWindow), else it is
	// DefaultWindow. Every selection, Self-Route's steps included, is cut
	// so that the prompt and AnswerReserve fit in it, and the window is
	// sent with the request (Ollama runs the model with it: num_ctx).
	Window int
	// AnswerReserve is the part of the window kept for the answer
	// (default llm.DefaultAnswerReserve, 512 tokens).
	AnswerReserve int
	// NoWindow leaves the selection uncut by any window: retrieval that
	// asks no LLM (the MCP search tool). It is refused with an LLM.
	NoWindow bool
	// Retriever scores the index's chunks: index.Hybrid (the default:
	// dense and BM25 fused), index.Dense or index.BM25.
	Retriever index.Retriever
	// Alpha weights the dense side of a hybrid retrieval (0 means
	// index.DefaultAlpha, 0.5) and Fusion is its rule ("" is the index's
	// default: z-score embedded, minmax on Weaviate).
	Alpha  float64
	Fusion fusion.Method
}

// Window is the reader's window the selection was fitted to.
type Window struct {
	// Tokens is the window; Source says where it came from: "given"
	// (Options.Window, #window=N), "server" (the LLM's server said),
	// "default" (DefaultWindow) or "none" (Options.NoWindow); Note adds detail (a server's larger
	// window capped, or why the server could not say).
	Tokens int    `json:"tokens"`
	Source string `json:"source"`
	Note   string `json:"note,omitempty"`
	// Reserve is kept for the answer, Prompt is the prompt around the
	// passages, Passages what is left for them (with each passage's
	// label line counted against it).
	Reserve  int `json:"answer_reserve"`
	Prompt   int `json:"prompt_tokens"`
	Passages int `json:"passage_tokens"`
	// Dropped passages (and their tokens) did not fit; Capped is set when
	// a text selector's own budget was lowered to Passages.
	Dropped       int  `json:"dropped,omitempty"`
	DroppedTokens int  `json:"dropped_tokens,omitempty"`
	Capped        bool `json:"capped,omitempty"`
}

// describe says how the window was learned, for explanations and errors.
func (w Window) describe() string {
	from := map[string]string{"given": "given", "server": "from the LLM's server", "default": "ctxsel's default, no window given or reported"}[w.Source]
	s := fmt.Sprintf("%d tokens (%s", w.Tokens, from)
	if w.Note != "" {
		s += "; " + w.Note
	}
	return s + ")"
}

// Passage is a selected chunk.
type Passage struct {
	index.Hit
	// ID is the chunk id ("doc#index") the prompt cites, without the
	// directories of a document indexed by an absolute path (Labels).
	ID string `json:"id"`
	// Rank is the chunk's place among the candidates (0 = best match).
	Rank int `json:"rank"`
	// Evidence, when the selector pruned the chunk (the default), is what
	// the prompt holds of it: the kept sentences (byte spans into Text),
	// the pruned text, its tokens and why; nil when the whole chunk is
	// sent.
	Evidence *ctxsel.Evidence `json:"evidence,omitempty"`
}

// Sent is the text the prompt holds of the passage.
func (p Passage) Sent() string {
	if p.Evidence != nil {
		return p.Evidence.Text
	}
	return p.Text
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
	// Window is the reader's window the selection was fitted to.
	Window Window `json:"window"`
	// Route is what Self-Route did (strategy selfroute:k=N); Passages,
	// Selection, Prompt and Reply are then its final step's.
	Route *Route `json:"route,omitempty"`
	// Pick is what the selector's own model call did, when the selector
	// is a ctxsel.MeteredSelector (the LLM picker): its tokens, apart from
	// the reader's in Reply.
	Pick    *Pick   `json:"pick,omitempty"`
	Timings Timings `json:"timings"`

	// selectorBudget is the cap a text selector last packed within.
	selectorBudget int
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

// invalidf is ctxsel.Invalidf: invalid input, described in words.
var invalidf = ctxsel.Invalidf

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
	if opts.Window < 0 || opts.AnswerReserve < 0 {
		return a, invalidf("window %d and answer reserve %d must not be negative", opts.Window, opts.AnswerReserve)
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
	if opts.IndexDeps != nil {
		opts.IndexDeps.bind(e, counter, store)
	}

	how := opts.Resolved
	if how.Runnable() == nil && how.Route == nil {
		r := ctxsel.Resolver{Default: DefaultStrategy, Deps: withDefaults(opts.Deps, e, counter, store)}
		if how, err = r.Resolve(opts.Strategy); err != nil {
			return a, err
		}
	}
	if how.Route != nil && opts.LLM == nil {
		return a, invalidf("%s is an answering route: it needs an LLM", how.Spec)
	}
	if opts.NoWindow && opts.LLM != nil {
		return a, invalidf("NoWindow with an LLM: a prompt must fit the reader's window")
	}
	if opts.NoWindow {
		a.Window = Window{Tokens: 0, Source: "none"}
	} else if a.Window, err = readerWindow(ctx, opts, tmpl, question, counter); err != nil {
		return a, err
	}

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
	if how.Route != nil {
		a.Timings.Select = time.Since(t)
		return a, askRoute(ctx, &a, curve, hits, how.Route, tmpl, counter, opts)
	}
	run := how.Runnable()
	tq := ctxsel.TextQuery{Curve: curve, Order: opts.Order}
	if run.ReadsTexts() {
		tq.Question = question
		tq.Texts, tq.Headers = make([]string, len(hits)), make([]string, len(hits))
		for i, h := range hits {
			tq.Texts[i], tq.Headers[i] = h.Text, Header(h)
		}
		if ar, ok := store.(index.AboveReader); ok {
			// read for the passages the selector reads, when it reads them
			// (the evidence selector: 20 and its second hop's, of up to
			// 1,000 candidates)
			// (each read once: the selector may be asked again with a
			// lower cap)
			var mu sync.Mutex
			read := map[int]string{}
			tq.AboveOf = func(ctx context.Context, indices []int) ([]string, error) {
				mu.Lock()
				defer mu.Unlock()
				var want []int
				for _, j := range indices {
					if _, ok := read[j]; !ok {
						read[j], want = "", append(want, j) // once, however often asked
					}
				}
				if len(want) > 0 {
					hs := make([]index.Hit, len(want))
					for i, j := range want {
						hs[i] = hits[j]
					}
					above, err := ar.Above(ctx, hs)
					if err == nil && len(above) != len(hs) {
						// a store of the caller's, broken: its fault, not
						// the question's (no ErrInvalidInput: a server
						// shows those to its client)
						err = fmt.Errorf("the store gave %d for %d chunks", len(above), len(hs))
					}
					if err != nil {
						for _, j := range want {
							delete(read, j)
						}
						return nil, fmt.Errorf("what lies above the chunks: %w", err)
					}
					for i, j := range want {
						read[j] = above[i]
					}
				}
				out := make([]string, len(indices))
				for i, j := range indices {
					out[i] = read[j]
				}
				return out, nil
			}
		}
		// A selector that reads the texts packs within what the window
		// leaves for passages (it chose its sentences for that room); a
		// strategy keeps its own caps and is fitted below.
		tq.Caps = ctxsel.Caps{MaxTokens: max(a.Window.Passages, 0)}
	}
	sel, u, err := run.Select(ctx, tq)
	if err != nil {
		return a, err
	}
	if run.ReadsTexts() && tq.Caps.MaxTokens > 0 && a.Window.Source != "none" {
		if sel, u, err = a.refit(ctx, run, tq, sel, u, hits, tmpl, counter); err != nil {
			return a, err
		}
	}
	if u.Metered {
		// The selector's own calls are reported on their own, as eval does.
		a.Pick = &Pick{Calls: u.Calls, PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, Valid: u.Invalid == "", Invalid: u.Invalid}
	}
	if run.ReadsTexts() && slices.Contains(sel.Explanation.CapsApplied, "max_tokens") {
		a.Window.Capped = true
	}
	if sel, err = a.fit(curve, sel, hits, tmpl, counter, opts.Order); err != nil {
		return a, err
	}
	a.Timings.Select = time.Since(t)

	if opts.LLM != nil {
		t = time.Now()
		r, err := llm.AskWithin(ctx, opts.LLM, a.Prompt, a.Window.sent())
		if err != nil {
			return a, a.llmError(err)
		}
		a.Reply, a.ReplyDefect = &r, r.Defect()
		a.Timings.LLM = time.Since(t)
	}
	return a, nil
}

// maxRefits bounds how often refit asks a selector again.
const maxRefits = 3

// refit keeps the window's fit from dropping what a text selector packed:
// the selector's cap (what the window leaves for passages) has no room for
// each passage's label line, which the fit charges, so while the selection
// with its labels (and the prompt, counted exactly) is over the window, the
// selector is asked again with its cap lowered by the excess. The usage of
// every call is summed. What still does not fit is dropped by fit.
func (a *Answer) refit(ctx context.Context, run ctxsel.Selector, tq ctxsel.TextQuery, sel ctxsel.Selection, u ctxsel.SelectorUsage,
	hits []index.Hit, tmpl llm.Template, counter token.Counter) (ctxsel.Selection, ctxsel.SelectorUsage, error) {
	a.selectorBudget = tq.Caps.MaxTokens
	for range maxRefits {
		excess := sel.Tokens + sel.K*llm.LabelledPassageOverhead - a.Window.Passages
		if err := a.show(sel, hits, tmpl, counter); err != nil {
			return sel, u, err
		}
		excess = max(excess, a.PromptTokens+a.Window.Reserve-a.Window.Tokens)
		if excess <= 0 || tq.Caps.MaxTokens-excess < 1 {
			break
		}
		tq.Caps.MaxTokens -= excess
		again, more, err := run.Select(ctx, tq)
		if err != nil {
			return sel, u, err
		}
		u.Calls += more.Calls
		u.PromptTokens += more.PromptTokens
		u.CompletionTokens += more.CompletionTokens
		u.Invalid, u.CallError, u.Metered = more.Invalid, more.CallError, u.Metered || more.Metered
		sel, a.selectorBudget = again, tq.Caps.MaxTokens
	}
	return sel, u, nil
}

// withDefaults adds to deps what Ask can supply: the sentence embedder
// (SentenceEmbedder(e)), the token counter (nil: none) and the store's
// sentence vectors.
func withDefaults(deps ctxsel.Deps, e embed.Embedder, counter token.Counter, store index.Store) ctxsel.Deps {
	return ctxsel.ChainDeps(deps, func(name string) (any, error) {
		switch name {
		case ctxsel.DepEmbedder:
			return SentenceEmbedder(e)
		case ctxsel.DepCounter:
			if counter != nil {
				return counter, nil
			}
		case ctxsel.DepSentences:
			if ss, ok := store.(ctxsel.SentenceStore); ok {
				return ss, nil
			}
		}
		return nil, fmt.Errorf("%w: %s", ctxsel.ErrNoDep, name)
	})
}

// Header is the header a chunk is shown under when its text has none of
// its own: the title of the document it comes from, which the index knows
// as the document's file name ("books/A Christmas Carol.txt" → "A
// Christmas Carol"). Records of a .jsonl file, whose ids name no title,
// have none.
func Header(h index.Hit) string {
	ext := strings.ToLower(path.Ext(h.Doc))
	switch ext {
	case ".txt", ".md", ".markdown", ".html", ".htm":
	default:
		return ""
	}
	if src := strings.ToLower(h.Source); strings.HasSuffix(src, ".jsonl") || strings.HasSuffix(src, ".jsonl.gz") {
		return ""
	}
	base := path.Base(strings.ReplaceAll(h.Doc, "\\", "/"))
	return strings.TrimSpace(strings.TrimSuffix(base, path.Ext(base)))
}

// sent is the window the LLM call names (Ollama's num_ctx): one given or
// reported by the server, never ctxsel's default, which would make Ollama
// run the model with a context nobody asked for when /api/show failed.
func (w Window) sent() int {
	if w.Source == "default" {
		return 0
	}
	return w.Tokens
}

// readerWindow settles the reader's window and what it leaves for
// passages: opts.Window, else what the LLM's server says (capped), else
// DefaultWindow.
func readerWindow(ctx context.Context, opts Options, tmpl llm.Template, question string, counter token.Counter) (Window, error) {
	w := Window{Tokens: opts.Window, Source: "given", Reserve: opts.AnswerReserve}
	if w.Reserve == 0 {
		w.Reserve = llm.DefaultAnswerReserve
	}
	if w.Tokens == 0 && opts.LLM != nil {
		n, ok, err := llm.ContextWindow(ctx, opts.LLM)
		switch {
		case err != nil:
			w.Note = "the server did not say: " + llm.Failure(err)
		case ok && n > MaxLearnedWindow:
			w.Tokens, w.Source = MaxLearnedWindow, "server"
			w.Note = fmt.Sprintf("the model takes %d; ctxsel uses at most %d unless #window=N says more", n, MaxLearnedWindow)
		case ok:
			w.Tokens, w.Source = n, "server"
		}
	}
	if w.Tokens == 0 {
		w.Tokens, w.Source = DefaultWindow, "default"
	}
	empty, err := tmpl.Render(question, "")
	if err != nil {
		return w, fmt.Errorf("%w: %v", ctxsel.ErrInvalidInput, err)
	}
	w.Prompt = counter.Count(empty)
	w.Passages = w.Tokens - w.Reserve - w.Prompt
	if w.Passages < 1 {
		return w, invalidf("the reader's window of %s leaves no room for passages: %d tokens are kept for the answer and the prompt takes %d (give a larger window with #window=N)",
			w.describe(), w.Reserve, w.Prompt)
	}
	return w, nil
}

// fit cuts sel to the reader's window — its passages, each with its label
// line, within what the window leaves for them — shows it, and checks the
// prompt exactly, dropping the lowest-ranked passage while the prompt and
// the answer's reserve would not fit. The explanation says what was
// dropped.
func (a *Answer) fit(curve *ctxsel.Curve, sel ctxsel.Selection, hits []index.Hit, tmpl llm.Template, counter token.Counter, order ctxsel.Order) (ctxsel.Selection, error) {
	if a.Window.Source == "none" { // NoWindow
		return sel, a.show(sel, hits, tmpl, counter)
	}
	before, beforeTokens := sel.K, sel.Tokens
	budget := llm.PassageBudget(a.Window.Tokens, a.Window.Reserve, tmpl, a.Question, counter)
	if budget < 1 {
		return sel, invalidf("the reader's window of %s leaves no room for passages after %d tokens for the answer and the prompt",
			a.Window.describe(), a.Window.Reserve)
	}
	for {
		fitted, err := ctxsel.FitWindow(curve, sel, budget, llm.LabelledPassageOverhead, order)
		if err != nil {
			return sel, err
		}
		if err := a.show(fitted, hits, tmpl, counter); err != nil {
			return sel, err
		}
		over := a.PromptTokens + a.Window.Reserve - a.Window.Tokens
		if over <= 0 || fitted.K == 0 {
			sel = fitted
			break
		}
		budget -= over
		if budget < 1 {
			sel = fitted
			break
		}
	}
	a.Window.Dropped, a.Window.DroppedTokens = before-sel.K, beforeTokens-sel.Tokens
	if a.Window.Dropped > 0 || a.Window.Capped {
		sel.Explanation.Reason += fmt.Sprintf("; the reader's window is %s: less %d tokens for the answer and %d for the prompt leaves %d for passages",
			a.Window.describe(), a.Window.Reserve, a.Window.Prompt, a.Window.Passages)
		if a.Window.Capped {
			if a.selectorBudget > 0 && a.selectorBudget < a.Window.Passages {
				sel.Explanation.Reason += fmt.Sprintf(", %d of them the selector's budget and the rest its passages' label lines", a.selectorBudget)
			} else {
				sel.Explanation.Reason += ", the selector's budget"
			}
		}
		if a.Window.Dropped > 0 {
			sel.Explanation.Reason += fmt.Sprintf(", so %d of %d selected passages (%d tokens) were dropped", a.Window.Dropped, before, a.Window.DroppedTokens)
		}
		if !slices.Contains(sel.Explanation.CapsApplied, "window") {
			sel.Explanation.CapsApplied = append(slices.Clone(sel.Explanation.CapsApplied), "window")
		}
	}
	if sel.K == 0 && before > 0 {
		return sel, invalidf("no selected passage fits the reader's window of %s", a.Window.describe())
	}
	sel.IDs = a.Selection.IDs // show named the same passages by their labels
	a.Selection = sel
	return sel, nil
}

// llmError explains a call the model refused for its window: the window
// ctxsel fitted the prompt to is more than the model takes.
func (a *Answer) llmError(err error) error {
	var ce *llm.ContextLengthError
	if !errors.As(err, &ce) {
		return fmt.Errorf("ask the LLM: %w", err)
	}
	limit := ""
	if ce.Limit > 0 {
		limit = fmt.Sprintf("; the server says the model takes %d", ce.Limit)
	}
	return fmt.Errorf("ask the LLM: the prompt (%d tokens, with %d kept for the answer) was fitted to a reader window of %s, more than the model takes%s: give the model's window with #window=N on the reader spec (or --window N): %w",
		a.PromptTokens, a.Window.Reserve, a.Window.describe(), limit, err)
}
