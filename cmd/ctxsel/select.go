package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/internal/wire"
	"github.com/ctxsel/ctxsel/server"
	"github.com/ctxsel/ctxsel/token"
)

// paramFlag collects repeated --param key=value flags.
type paramFlag []string

func (p *paramFlag) String() string     { return strings.Join(*p, ",") }
func (p *paramFlag) Set(v string) error { *p = append(*p, v); return nil }

// list returns the collected parameters as values for
// ctxsel.Resolver.Params, which merges them into the strategy spec's (a
// flag may hold several, comma-separated, as a spec does).
func (p paramFlag) list() ([]ctxsel.Param, error) {
	var out []ctxsel.Param
	for _, v := range p {
		for _, kv := range strings.Split(v, ",") {
			if strings.TrimSpace(kv) == "" {
				continue
			}
			k, val, ok := strings.Cut(kv, "=")
			if !ok {
				return nil, fmt.Errorf("%w: --param %q is not key=value", ctxsel.ErrInvalidInput, kv)
			}
			out = append(out, ctxsel.Param{Key: k, Value: val})
		}
	}
	return out, nil
}

func cmdSelect(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("select", `Usage: ctxsel select --strategy NAME [--param key=value ...] [--order rank|document|edges] < candidates.jsonl

Reads candidates as JSON lines, one per passage, in any order:
  {"id": "a", "score": 0.83, "tokens": 120}
  {"id": "b", "score": 0.41, "text": "passage text, counted with --encoding"}
and prints one JSON object: the selected ids in the requested order, k, the
tokens selected and an explanation of the cut. Plug it after any retriever.
Fields are those of a candidate of the server's /v1/select, read by the same
reader (exact names; ids non-empty, unique, valid UTF-8; texts valid UTF-8;
a line at most `+strconv.FormatInt(maxLineBytes>>20, 10)+` MiB, the server's max_body_bytes);
other fields are passed-along metadata and ignored, unless they look like a
misspelt field ("Score", "tokns"), which is an error as in the server. Errors
name the candidate by its place in the input, from 1.

A text selector reads the candidates' texts and --question: with
--strategy evidence:budget=500 (or default, `+ctxsel.DefaultStrategy+`, or
topk:k=30+evidence:budget=500) it keeps sentences, not whole passages, and
the output's "evidence" gives per selected passage (aligned with "ids") the
kept sentences as byte spans into its text, the pruned text that would be
sent, its tokens before ("passage_tokens") and after ("tokens"), and why.

Examples:
  printf '{"id":"a","score":0.9,"tokens":50}\n{"id":"b","score":0.2,"tokens":70}\n' | ctxsel select --strategy adaptivek --param buffer=0
  ctxsel select --strategy evidence:budget=300 --question "Who is Scrooge's clerk?" < candidates_with_text.jsonl`, stderr)
	strategy := fs.String("strategy", ctxsel.DefaultSelectStrategy, "strategy name, optionally with parameters (adaptivek:head=0.05)")
	var params paramFlag
	fs.Var(&params, "param", "strategy parameter key=value (repeatable), caps included: min_k, max_k, max_tokens")
	order := fs.String("order", "rank", "order of the selected passages: rank, document (input order) or edges")
	encoding := fs.String("encoding", token.Default, "token encoding for candidates given as text")
	pickerLLM := fs.String("picker", "", "picker LLM endpoint for --strategy picker[:budget=4000,fallback=adaptivek,order=rank] (every candidate needs \"text\")")
	question := fs.String("question", "", "the question, for a text selector (evidence, picker), which reads it with the texts")
	llmf := addLLMFlags(fs)
	estimate := fs.String("estimate", "", "length estimate report that budget:tokens=auto reads (default $"+envLengthEstimate+")")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if !slices.Contains(token.Encodings, *encoding) {
		return usageError{fmt.Errorf("select: --encoding %q: unknown (known: %s)", *encoding, strings.Join(token.Encodings, ", "))}
	}
	llms := &lazyLLM{lf: llmf, stderr: stderr}
	defer llms.Close()
	counter, err := token.New(*encoding)
	if err != nil {
		return usageError{err}
	}
	src := &selectorSources{pickerEndpoint: *pickerLLM, openLLM: llms.get, counter: counter}
	defer src.Close()
	r := specResolver(src, *estimate)
	r.Kinds = ctxsel.StrategyKind | ctxsel.SelectorKind
	if r.Params, err = params.list(); err != nil {
		return err
	}
	how, err := r.Resolve(*strategy)
	if err != nil {
		return err
	}
	run := how.Runnable()
	if run.ReadsTexts() && strings.TrimSpace(*question) == "" {
		return usageError{fmt.Errorf("select --strategy %s needs --question", how.Spec)}
	}
	ord, err := ctxsel.ParseOrder(*order)
	if err != nil {
		return err
	}
	curve, texts, above, err := readCandidates(stdin, *encoding)
	if err != nil {
		return err
	}
	q := ctxsel.TextQuery{Curve: curve, Order: ord}
	if run.ReadsTexts() {
		// A text selector (evidence, picker, topk:k=30+picker) reads
		// every candidate's text and the question.
		for i, t := range texts {
			if t == "" {
				return fmt.Errorf("%w: candidate %q has no \"text\": %s reads every candidate", ctxsel.ErrInvalidInput, curve.Candidate(i).ID, how.Spec)
			}
		}
		q.Texts, q.Question, q.Above = texts, *question, above
	}
	sel, u, err := run.Select(ctx, q)
	if err != nil {
		return err
	}
	if err := writeSelection(stdout, sel); err != nil {
		return err
	}
	if u.CallError != nil {
		// The fallback selected, but not because of what the model said:
		// the endpoint, the key or the network needs attention, and a
		// script must not take the fallback for the picker's answer.
		return fmt.Errorf("select: the picker's model call failed, so its fallback selected (the selection above): %w", u.CallError)
	}
	return nil
}

// readCandidates reads candidates as JSON objects, one a line (or any
// whitespace between), with the reader /v1/select reads its candidates
// with (internal/wire): the same fields, matched exactly (case included),
// checked alike and refused with the same messages, naming the candidate
// by its place in the input, from 1. Here every candidate needs a score,
// and a vector, which needs a query vector that only the server takes, is
// refused rather than ignored. texts[i] is candidate i's text ("" when it
// has none), for a text selector; a text without "tokens" is counted.
// above[i] is the lines above candidate i, nil when no candidate gives any.
func readCandidates(r io.Reader, encoding string) (curve *ctxsel.Curve, texts, above []string, err error) {
	in, err := io.ReadAll(&lineBound{r: r, max: maxLineBytes, line: 1})
	if errors.Is(err, ctxsel.ErrInvalidInput) {
		return nil, nil, nil, err
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("select: read candidates: %w", err)
	}
	var c wire.Candidates
	err = wire.DecodeStream(string(in), &c, wire.Unlimited, func(i int) error {
		switch {
		case c.Has[i]&wire.HasVector != 0:
			return &wire.FieldError{Path: wire.CandidatePath(i, "vector"), Msg: "vectors need a query vector, which only the server's /v1/select takes (query_vector): give scores here"}
		case c.Has[i]&wire.HasScore == 0:
			return &wire.FieldError{Path: wire.CandidatePath(i, "score"), Msg: "missing (every candidate needs a score)"}
		}
		return nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	if len(c.Cands) == 0 {
		return nil, nil, nil, fmt.Errorf("%w: no candidates on standard input", ctxsel.ErrInvalidInput)
	}
	var counter *token.Tiktoken
	texts = make([]string, len(c.Cands))
	for i, h := range c.Has {
		texts[i] = c.Text(i)
		if h&wire.HasText == 0 || h&wire.HasTokens != 0 {
			continue // tokens given win over counting the text
		}
		if counter == nil {
			if counter, err = token.New(encoding); err != nil {
				return nil, nil, nil, usageError{err}
			}
		}
		c.Cands[i].Tokens = counter.Count(texts[i])
	}
	if c.AnyAbove() {
		above = make([]string, len(c.Cands))
		for i := range above {
			above[i] = c.Above(i)
		}
	}
	curve, err = ctxsel.NewCurve(c.Cands)
	if err != nil {
		return nil, nil, nil, wire.InStream(err)
	}
	return curve, texts, above, nil
}

// maxLineBytes bounds one line of select's input as the server bounds a
// request body (its default max_body_bytes): a line that long is refused
// with a message instead of being read into memory whole.
var maxLineBytes = server.DefaultConfig().MaxBodyBytes

// lineBound reads r, failing with invalid input once a line grows past
// max bytes.
type lineBound struct {
	r        io.Reader
	max, run int64 // the limit; bytes of the current line so far
	line     int
}

func (l *lineBound) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for rest := p[:n]; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		seg := int64(len(rest))
		if i >= 0 {
			seg = int64(i)
		}
		if l.run+seg > l.max {
			return n, fmt.Errorf("%w: select: line %d of the input is longer than %d bytes, the limit (the server's max_body_bytes): one candidate a line", ctxsel.ErrInvalidInput, l.line, l.max)
		}
		if i < 0 {
			l.run += seg
			break
		}
		l.run, l.line, rest = 0, l.line+1, rest[i+1:]
	}
	return n, err
}

func cmdStrategies(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("strategies", "Usage: ctxsel strategies\n\nLists every strategy with its parameters: default, range ([ ] includes the\nbound, ( ) excludes it; \"whole\" for whole numbers) and meaning; then the\ntext selectors, the answering routes and the defaults.", stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	for _, d := range ctxsel.Defs() {
		fmt.Fprintf(stdout, "%s — %s\n", d.Name, d.Doc)
		writeParams(stdout, d.Params)
	}
	fmt.Fprintln(stdout, "\ncaps, accepted by every strategy:")
	writeParams(stdout, ctxsel.CapParams())
	fmt.Fprintln(stdout, "\ntext selectors, which read the question and the passages' texts (select --question, ask, eval):")
	for _, d := range ctxsel.SelectorDefs() {
		fmt.Fprintf(stdout, "%s — %s\n", d.Name, d.Doc)
		writeParams(stdout, d.Params)
	}
	fmt.Fprintln(stdout, "\nanswering routes, which need the reader's reply (ask, eval --reader):")
	for _, d := range ctxsel.RouteDefs() {
		fmt.Fprintf(stdout, "%s — %s\n", d.Name, d.Doc)
		writeParams(stdout, d.Params)
	}
	fmt.Fprintf(stdout, "\ndefault (ask, /v1/ask, the name \"default\"): %s; select and rerank: %s\n", ctxsel.DefaultStrategy, ctxsel.DefaultSelectStrategy)
	fmt.Fprintln(stdout, "\nexample: ctxsel select --strategy adaptivek:head=0.05,buffer=3,max_tokens=4000 < candidates.jsonl")
	return nil
}

// writeParams lists parameters, one a line: name, default, the values
// accepted (ParamDef.Accepts) and meaning.
func writeParams(w io.Writer, params []ctxsel.ParamDef) {
	for _, p := range params {
		fmt.Fprintf(w, "    %-19s default %-8s %-27s %s\n", p.Name, p.DefaultText(), p.Accepts(), p.Doc)
	}
}

// writeSelection prints a selection as indented JSON: select's output, with
// or without a picker.
func writeSelection(w io.Writer, sel ctxsel.Selection) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(sel); err != nil {
		return fmt.Errorf("select: write: %w", err)
	}
	return nil
}
