package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/ask"
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/fusion"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/internal/termtext"
	"github.com/ctxsel/ctxsel/llm"
)

// llmFromEnv builds the configured LLM client; tests replace it.
var llmFromEnv = llm.FromEnv

func cmdAsk(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("ask", `Usage: ctxsel ask [flags] "QUESTION"

Embeds the question, scores every chunk of the index (hybrid by default:
cosine similarity and BM25, each one's best --candidates chunks scored by both
and fused by z-score with weight --alpha on the cosine side), selects what the
LLM gets, and prints it with why, then the prompt (the factoid QA template of
Adaptive-k, Appendix A.1.1). By default (--strategy default, which is
`+ask.DefaultStrategy+`) it keeps sentences, not whole chunks: the best
sentences of the 20 best chunks within 1,500 tokens, each chunk shown under its
document's title with the sentences kept, its tokens before and after, and why.
Any passage strategy is one --strategy away (topk:k=20, adaptivek, …).

Everything is cut to the reader's window (less --answer-reserve for the
answer and the prompt itself): the reader spec's #window=N or --window, else
what the server says (Ollama's /api/show, which is then sent back as num_ctx;
vLLM's /v1/models; at most `+fmt.Sprint(ask.MaxLearnedWindow)+` tokens), else `+fmt.Sprint(ask.DefaultWindow)+`. What the window
dropped is said. When an LLM is configured it is asked too and its answer is
printed with its token counts:

  CTXSEL_LLM_MODEL      model name (required to call anything)
  CTXSEL_LLM_BASE_URL   OpenAI-compatible server, e.g. https://api.openai.com or http://localhost:8000/v1
  CTXSEL_LLM_API_KEY    its API key
  OLLAMA_HOST           an Ollama server, used when CTXSEL_LLM_BASE_URL is unset
  CTXSEL_LLM_PROVIDER   openai or ollama, to choose explicitly
  CTXSEL_LLM_TIMEOUT    total deadline of one call, retries included, e.g. 90s (default 2m)
  CTXSEL_LLM_MAX_TOKENS cap on the answer's tokens (default: the server's)

Examples:
  ctxsel ask "Who is Scrooge's clerk?"
  ctxsel ask --reader ollama:llama3.2 "Who is Scrooge's clerk?"
  ctxsel ask --strategy topk:k=5 --order edges "Who is Scrooge's clerk?"
  ctxsel ask --retriever bm25 "Who is Scrooge's clerk?"
  ctxsel ask --strategy budget:tokens=2000 --json --show-curve curve.svg "…"`, stderr)
	loc := fs.String("index", defaultIndexLocation(), "index directory, or weaviate://host:port/Collection")
	strategy := fs.String("strategy", ctxsel.DefaultName, "strategy spec: default ("+ask.DefaultStrategy+"), evidence:budget=800, topk:k=20, adaptivek, budget:tokens=2000, … (see ctxsel strategies)")
	var params paramFlag
	fs.Var(&params, "param", "strategy parameter key=value (repeatable), caps included: min_k, max_k, max_tokens")
	order := fs.String("order", "rank", "passage order in the prompt: rank, document, or edges (best at both ends, against lost-in-the-middle)")
	candidates := fs.Int("candidates", ask.DefaultCandidates, "how many best-matching chunks the strategy chooses from")
	retriever := fs.String("retriever", string(index.DefaultRetriever), "how chunks are scored: hybrid (cosine and BM25 fused), dense (cosine) or bm25")
	alpha := fs.Float64("alpha", index.DefaultAlpha, "hybrid: weight of the cosine scores, in (0, 1]")
	fusionRule := fs.String("fusion", "", "hybrid: zscore, minmax (Weaviate's relativeScoreFusion) or rrf (default: zscore for the embedded index, minmax for Weaviate, which has no z-score fusion)")
	embedder := fs.String("embedder", "", "embedding model (default: the one the index was built with)")
	asJSON := fs.Bool("json", false, "print the whole answer as JSON")
	curve := fs.String("show-curve", "", "write an SVG of the similarity curve with the cut marked to this file")
	showPrompt := fs.Bool("prompt", true, "print the assembled prompt")
	useLLM := fs.Bool("llm", true, "ask the configured LLM (set -llm=false to only select)")
	templateFile := fs.String("template", "", "prompt template file with {question} and {context} (default: the factoid QA template)")
	reader := fs.String("reader", "", "LLM that answers: PROVIDER:MODEL[@BASE_URL][#window=N] (default: the CTXSEL_LLM_* environment)")
	window := fs.Int("window", 0, "the reader's context window in tokens, which every selection is cut to (default: the reader spec's #window, else what its server says, else "+fmt.Sprint(ask.DefaultWindow)+")")
	reserve := fs.Int("answer-reserve", llm.DefaultAnswerReserve, "tokens of the window kept for the answer")
	pickerLLM := fs.String("picker", "", "picker LLM endpoint for --strategy picker[:budget=4000,fallback=adaptivek,order=rank]")
	lf := addLLMFlags(fs)
	budget := fs.String("budget", "", "token budget: N or auto (the estimate-length estimate); short for --strategy budget:tokens=N")
	estimate := fs.String("estimate", "", "length estimate report that tokens=auto reads (default $"+envLengthEstimate+")")
	words, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	question := strings.TrimSpace(strings.Join(words, " "))
	if question == "" {
		// The error alone: the flags' 70 lines would push it off screen.
		return usageError{errors.New("ask: no question given: ctxsel ask [flags] QUESTION (ctxsel ask -h lists the flags)")}
	}
	extra, err := params.list()
	if err != nil {
		return err
	}
	if *budget != "" { // --budget N is budget:tokens=N
		*strategy = "budget"
		extra = append([]ctxsel.Param{{Key: "tokens", Value: *budget}}, extra...)
	}
	// One opener and call cache for the run's roles: reader and picker.
	llms := &lazyLLM{lf: lf, stderr: stderr}
	defer llms.Close()
	// The spec is resolved once, here, so that a bad one fails before the
	// index is opened, and ask runs that value. What it needs of the
	// index — the evidence selector's sentence embedder, the token counter
	// of the index's encoding, the sentence vectors stored — are stand-ins
	// that ask binds when the index is open (ask.IndexDeps); the CLI's own
	// dependencies (the picker's LLM, the band's policy, the evidence
	// model) come from src. The sentence embedder is the index's when it
	// is use-lite (index add --sentences stored vectors by it), so that
	// one model and one embedding cache embed the question and the
	// sentences.
	src := &selectorSources{pickerEndpoint: *pickerLLM, openLLM: llms.get}
	defer src.Close()
	late := &ask.IndexDeps{SentenceEmbedder: func(e embed.Embedder) (embed.Embedder, error) { return src.sentencesFrom(e) }}
	rv := specResolver(src, *estimate)
	rv.Deps = ctxsel.ChainDeps(late.Deps, src.deps)
	rv.Params = extra
	how, err := rv.Resolve(*strategy)
	if err != nil {
		return err
	}
	if *window < 0 || *reserve < 0 {
		return usageError{fmt.Errorf("ask: --window and --answer-reserve must not be negative")}
	}
	ord, err := ctxsel.ParseOrder(*order)
	if err != nil {
		return err
	}
	r, err := index.ParseRetriever(*retriever)
	if err != nil {
		return usageError{fmt.Errorf("ask: --retriever: %w", err)}
	}
	var fm fusion.Method
	if *fusionRule != "" {
		if fm, err = fusion.ParseMethod(*fusionRule); err != nil {
			return usageError{fmt.Errorf("ask: --fusion: %w", err)}
		}
	}
	if !(*alpha > 0 && *alpha <= 1) {
		return usageError{fmt.Errorf("ask: --alpha=%v outside (0, 1] (for BM25 alone use --retriever bm25)", *alpha)}
	}
	opts := ask.Options{Resolved: how, IndexDeps: late, Order: ord, Candidates: *candidates, Retriever: r, Alpha: *alpha, Fusion: fm,
		AnswerReserve: *reserve}
	if *candidates <= 0 {
		return usageError{fmt.Errorf("ask: --candidates=%d must be positive", *candidates)}
	}
	if *templateFile != "" {
		b, err := os.ReadFile(*templateFile)
		if err != nil {
			return usageError{fmt.Errorf("ask: template: %w", err)}
		}
		opts.Template = llm.Template(b)
	}
	if *useLLM && *reader != "" {
		sp, err := llm.ParseSpec(*reader)
		if err != nil {
			return usageError{fmt.Errorf("ask --reader: %w", err)}
		}
		open, err := llms.get()
		if err != nil {
			return err
		}
		if opts.LLM, err = open(*reader); err != nil {
			return usageError{fmt.Errorf("ask --reader: %w", err)}
		}
		opts.Window = sp.Window
	} else if *useLLM {
		c, err := llmFromEnv()
		if err != nil {
			return usageError{err}
		}
		opts.LLM = c
	}
	if *window > 0 {
		opts.Window = *window
	}
	store, err := openStore(ctx, *loc, false, "")
	if err != nil {
		return err
	}
	defer store.Close()
	if p, ok := store.(interface{ Preload(context.Context) }); ok {
		p.Preload(ctx) // while the embedding model loads
	}
	st, err := store.Stats(ctx)
	if err != nil {
		return err
	}
	e, closeEmb, err := openEmbedder(*embedder, st.Config.Model)
	if err != nil {
		return err
	}
	defer closeEmb()
	a, err := ask.Ask(ctx, store, e, question, opts)
	if errors.Is(err, index.ErrMismatch) {
		return usageError{fmt.Errorf("%w (choose the index's model with --embedder)", err)}
	}
	if err != nil && a.Prompt == "" {
		return err
	}
	// From here on a failed LLM call still shows the passages, the why
	// and the prompt, and then the error.
	llmErr := err
	if *curve != "" {
		if err := writeFile(*curve, func(w io.Writer) error { return ask.WriteCurveSVG(w, a) }); err != nil {
			return err
		}
	}
	if llmErr == nil && a.ReplyDefect != "" {
		// The call worked, but what came back is not an answer: the job
		// failed, though the reply is shown for what it is.
		llmErr = fmt.Errorf("ask: the LLM's reply was %s", defectText(a))
	}
	if *asJSON {
		if err := writeJSON(stdout, a); err != nil {
			return err
		}
		return llmErr
	}
	printAnswer(stdout, a, *showPrompt)
	if llmErr != nil {
		return llmErr
	}
	if *curve != "" {
		fmt.Fprintf(stdout, "\ncurve written to %s\n", *curve)
	}
	if opts.LLM == nil && *useLLM {
		fmt.Fprintf(stdout, "\n(no LLM configured: set %s and %s or %s to get an answer)\n", llm.EnvModel, llm.EnvBaseURL, llm.EnvOllama)
	}
	return nil
}

// printAnswer writes the answer for a reader. w escapes what the terminal
// could act on (run passes a termtext.Writer); the one-line fields — ids,
// reasons, notes, whatever a document, the index or an LLM supplied — are
// escaped here with termtext.Line, so that no line break in them breaks
// the layout.
func printAnswer(w io.Writer, a ask.Answer, showPrompt bool) {
	ex := a.Selection.Explanation
	fmt.Fprintf(w, "Question: %s\n", termtext.Line(a.Question))
	fmt.Fprintf(w, "Selected %d of %d candidate passages (%s retrieval, %s), %d tokens of %d (ranks count from 0 = best match):\n\n", a.Selection.K, len(a.Scores), a.Retriever, termtext.Line(ex.Strategy), a.Selection.Tokens, ex.TotalTokens)
	for i, p := range a.Passages {
		ev := p.Evidence
		if ev == nil {
			fmt.Fprintf(w, "[%d] %s  score %.4f  rank %d  %d tokens  bytes %d–%d\n", i+1, termtext.Line(p.ID), p.Score, p.Rank, p.Tokens, p.Start, p.End)
			fmt.Fprintf(w, "    %s\n", termtext.Line(snippet(p.Text, 160)))
			continue
		}
		// What is sent of a pruned chunk, in full: its header and kept
		// sentences, with where they are in the chunk and why.
		fmt.Fprintf(w, "[%d] %s  score %.4f  rank %d  %d of %d tokens sent  bytes %d–%d\n", i+1, termtext.Line(p.ID), p.Score, p.Rank, ev.Tokens, p.Tokens, p.Start, p.End)
		fmt.Fprintf(w, "    %s\n", termtext.Line(ev.Why))
		for _, line := range strings.Split(ev.Text, "\n") {
			if strings.TrimSpace(line) != "" {
				fmt.Fprintf(w, "    | %s\n", termtext.Line(line))
			}
		}
	}
	fmt.Fprintf(w, "\nWhy: %s\n", termtext.Line(ex.Reason))
	win := a.Window
	fmt.Fprintf(w, "Window: %d tokens (%s", win.Tokens, win.Source)
	if win.Note != "" {
		fmt.Fprintf(w, "; %s", termtext.Line(win.Note))
	}
	fmt.Fprintf(w, ") − %d for the answer − %d for the prompt = %d for passages", win.Reserve, win.Prompt, win.Passages)
	if win.Dropped > 0 {
		fmt.Fprintf(w, "; %d selected passages (%d tokens) did not fit and were dropped", win.Dropped, win.DroppedTokens)
	}
	fmt.Fprintln(w)
	if len(ex.CapsApplied) > 0 {
		fmt.Fprintf(w, "Caps applied: %s\n", termtext.Line(strings.Join(ex.CapsApplied, ", ")))
	}
	if showPrompt {
		fmt.Fprintf(w, "\n--- prompt (%d tokens, %s) ---\n%s\n--- end of prompt ---\n", a.PromptTokens, a.Encoding, a.Prompt)
	}
	if rt := a.Route; rt != nil {
		fmt.Fprintf(w, "\nSelf-Route: ")
		for i, st := range rt.Steps {
			if i > 0 {
				fmt.Fprint(w, ", then ")
			}
			fmt.Fprintf(w, "%d passages (%d prompt tokens) → %q", st.K, st.PromptTokens, snippet(st.Reply.Content, 60))
		}
		fmt.Fprintf(w, "; %d + %d tokens over both calls\n", rt.InputTokens, rt.OutputTokens)
	}
	if pk := a.Pick; pk != nil && pk.Calls > 0 {
		fmt.Fprintf(w, "\nPicker call: %d prompt + %d completion tokens", pk.PromptTokens, pk.CompletionTokens)
		if !pk.Valid {
			fmt.Fprintf(w, " (output invalid: %s)", termtext.Line(pk.Invalid))
		}
		fmt.Fprintln(w)
	}
	if r := a.Reply; r != nil {
		took := r.Elapsed.Round(1e6).String()
		if r.Cached { // the original call's time, not this run's
			took = "(cached) the call took " + took
		}
		fmt.Fprintf(w, "\n--- answer (%s; %d prompt + %d completion tokens, %s) ---\n%s\n", termtext.Line(r.Model), r.PromptTokens, r.CompletionTokens,
			took, strings.TrimSpace(r.Content))
		if a.ReplyDefect != "" {
			fmt.Fprintf(w, "--- the reply was %s ---\n", defectText(a))
		}
	}
}

// defectText says what is wrong with a degenerate reply.
func defectText(a ask.Answer) string {
	switch {
	case a.ReplyDefect == llm.DefectEmpty:
		return "empty: no answer"
	case a.Reply != nil && a.Reply.Oversize:
		return "cut off: it was over the size bound of a reply (the answer above is incomplete)"
	}
	return "cut off at the token limit (finish_reason \"length\"): the answer above is incomplete; raise the reader's max tokens"
}

// snippet shortens text to about n characters on one line.
func snippet(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
