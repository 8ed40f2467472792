package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/server"
	"github.com/ctxsel/ctxsel/token"
)

// paramFlag collects repeated --param key=value flags.
type paramFlag []string

func (p *paramFlag) String() string     { return strings.Join(*p, ",") }
func (p *paramFlag) Set(v string) error { *p = append(*p, v); return nil }

// appendTo adds the collected parameters to a strategy spec:
// "adaptivek" + [buffer=0] → "adaptivek:buffer=0".
func (p paramFlag) appendTo(spec string) string {
	if len(p) == 0 {
		return spec
	}
	sep := ":"
	if strings.Contains(spec, ":") {
		sep = ","
	}
	return spec + sep + strings.Join(p, ",")
}

func cmdSelect(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("select", `Usage: ctxsel select --strategy NAME [--param key=value ...] [--order rank|document|edges] < candidates.jsonl

Reads candidates as JSON lines, one per passage, in any order:
  {"id": "a", "score": 0.83, "tokens": 120}
  {"id": "b", "score": 0.41, "text": "passage text, counted with --encoding"}
and prints one JSON object: the selected ids in the requested order, k, the
tokens selected and an explanation of the cut. Plug it after any retriever.
Fields are those of a candidate of the server's /v1/select (exact names; ids
non-empty, unique, valid UTF-8); other fields are passed-along metadata and
ignored, unless they look like a misspelt field ("Score", "tokns"), which is
an error as in the server. Errors name the candidate by its place in the
input, from 1.

Example:
  printf '{"id":"a","score":0.9,"tokens":50}\n{"id":"b","score":0.2,"tokens":70}\n' | ctxsel select --strategy adaptivek --param buffer=0`, stderr)
	strategy := fs.String("strategy", ctxsel.DefaultSelectStrategy, "strategy name, optionally with parameters (adaptivek:head=0.05)")
	var params paramFlag
	fs.Var(&params, "param", "strategy parameter key=value (repeatable), caps included: min_k, max_k, max_tokens")
	order := fs.String("order", "rank", "order of the selected passages: rank, document (input order) or edges")
	encoding := fs.String("encoding", token.Default, "token encoding for candidates given as text")
	pickerLLM := fs.String("picker", "", "picker LLM endpoint for --strategy picker[:budget=4000,fallback=adaptivek,order=rank] (every candidate needs \"text\")")
	question := fs.String("question", "", "the question, for --strategy picker (the picker reads it with the texts)")
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
	how, err := r.Resolve(params.appendTo(*strategy))
	if err != nil {
		return err
	}
	if how.Kind == ctxsel.SelectorKind {
		return selectTexts(ctx, how.Selector, how.Spec, *question, *order, *encoding, stdin, stdout)
	}
	ord, err := ctxsel.ParseOrder(*order)
	if err != nil {
		return err
	}
	cands, _, err := readCandidates(stdin, *encoding)
	if err != nil {
		return err
	}
	curve, err := ctxsel.NewCurve(cands)
	if err != nil {
		return err
	}
	sel, err := ctxsel.Select(curve, how.Strategy, how.Caps, ord)
	if err != nil {
		return err
	}
	return writeSelection(stdout, sel)
}

// readCandidates reads candidates as JSON objects (one a line), numbered from
// 1 in input order in every message. Fields are those of a candidate of the
// server's /v1/select, matched exactly (case included) and checked alike:
// id, score, tokens, text; other fields are the caller's metadata and are
// ignored, as the server ignores them. A vector needs a query vector, which
// only the server takes, so it is an error here rather than ignored.
// texts[i] is candidate i's text ("" when it has none), for the picker.
func readCandidates(r io.Reader, encoding string) ([]ctxsel.Candidate, []string, error) {
	var counter *token.Tiktoken
	dec := json.NewDecoder(bufio.NewReader(r))
	var out []ctxsel.Candidate
	var texts []string
	seen := map[string]int{}
	for n := 1; ; n++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, nil, fmt.Errorf("%w: candidate %d: %v", ctxsel.ErrInvalidInput, n, err)
		}
		c, text, err := parseCandidate(raw)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: candidate %d: %v", ctxsel.ErrInvalidInput, n, err)
		}
		if first, dup := seen[c.ID]; dup {
			return nil, nil, fmt.Errorf("%w: candidate %d: id: duplicate id %q (also candidate %d)", ctxsel.ErrInvalidInput, n, c.ID, first)
		}
		seen[c.ID] = n
		if text != nil {
			if counter == nil {
				if counter, err = token.New(encoding); err != nil {
					return nil, nil, usageError{err}
				}
			}
			c.Tokens = counter.Count(*text)
		}
		out = append(out, c)
		if text != nil {
			texts = append(texts, *text)
		} else {
			texts = append(texts, "")
		}
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("%w: no candidates on standard input", ctxsel.ErrInvalidInput)
	}
	return out, texts, nil
}

// parseCandidate reads one candidate object; text is the passage text when
// tokens are to be counted from it.
func parseCandidate(raw json.RawMessage) (c ctxsel.Candidate, text *string, err error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if t, _ := dec.Token(); t != json.Delim('{') {
		return c, nil, fmt.Errorf("must be an object, got %s", clip(raw))
	}
	given := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return c, nil, err
		}
		key := t.(string) // inside an object, Token returns keys as strings
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return c, nil, fmt.Errorf("%s: %v", key, err)
		}
		switch key {
		case "id", "score", "tokens", "text", "vector":
		default:
			if want, typo := server.MisspeltCandidateField(key); typo {
				return c, nil, fmt.Errorf("%s: unknown field: did you mean %q? (other fields are ignored as metadata: rename it if it is yours)", key, want)
			}
			continue // the caller's metadata
		}
		if given[key] {
			return c, nil, fmt.Errorf("%s: given twice", key)
		}
		given[key] = true
		if string(v) == "null" && key != "id" {
			delete(given, key)
			continue
		}
		switch key {
		case "id":
			c.ID, err = candidateID(v)
		case "score":
			c.Score, err = jsonNumber(v)
		case "tokens":
			var f float64
			if f, err = jsonNumber(v); err == nil && (f < 0 || f > math.MaxInt32 || f != math.Trunc(f)) {
				err = fmt.Errorf("must be a whole number in [0, %d], got %v", math.MaxInt32, f)
			}
			c.Tokens = int(f)
		case "text":
			var s string
			if err = json.Unmarshal(v, &s); err != nil {
				err = fmt.Errorf("must be a string, got %s", clip(v))
			}
			text = &s
		case "vector":
			err = errors.New("vectors need a query vector, which only the server's /v1/select takes (query_vector): give scores here")
		}
		if err != nil {
			return c, nil, fmt.Errorf("%s: %w", key, err)
		}
	}
	switch {
	case !given["id"]:
		return c, nil, errors.New("id: missing")
	case !given["score"]:
		return c, nil, errors.New("score: missing (every candidate needs a score)")
	}
	if given["tokens"] {
		text = nil // tokens given win over counting the text
	}
	return c, text, nil
}

// jsonNumber reads a finite number.
func jsonNumber(v json.RawMessage) (float64, error) {
	var n json.Number
	if err := json.Unmarshal(v, &n); err != nil {
		return 0, fmt.Errorf("must be a number, got %s", clip(v))
	}
	f, err := n.Float64()
	if err != nil && (math.IsInf(f, 0) || !errors.Is(err, strconv.ErrRange)) {
		return 0, fmt.Errorf("number %s is out of range: it must be finite", clip(v))
	}
	return f, nil
}

// candidateID accepts a non-empty string of valid UTF-8, or a number (kept
// as written). Invalid UTF-8 is an error, not a silent U+FFFD: the caller
// could not match the id that came back.
func candidateID(raw json.RawMessage) (string, error) {
	if !utf8.Valid(raw) {
		return "", errors.New(invalidUTF8ID)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if s == "" {
			return "", errors.New("empty id")
		}
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		if f, err := n.Float64(); err == nil && !math.IsInf(f, 0) {
			return n.String(), nil
		}
	}
	return "", fmt.Errorf("must be a string or a number, got %s", clip(raw))
}

// clip shortens a raw value for a message.
func clip(raw []byte) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "…"
	}
	return string(raw)
}

func cmdStrategies(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("strategies", "Usage: ctxsel strategies\n\nLists every strategy with its parameters: default, range ([ ] includes the\nbound, ( ) excludes it; \"whole\" for whole numbers) and meaning.", stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	for _, d := range ctxsel.Defs() {
		fmt.Fprintf(stdout, "%s — %s\n", d.Name, d.Doc)
		for _, p := range d.Params {
			fmt.Fprintf(stdout, "    %-19s default %-8g %-27s %s\n", p.Name, p.Default, paramRange(p), p.Doc)
		}
	}
	fmt.Fprintln(stdout, "\ncaps, accepted by every strategy:")
	for _, p := range ctxsel.CapParams {
		fmt.Fprintf(stdout, "    %-19s default %-8g %-27s %s\n", p.Name, p.Default, paramRange(p), p.Doc)
	}
	fmt.Fprintln(stdout, "\nexample: ctxsel select --strategy adaptivek:head=0.05,buffer=3,max_tokens=4000 < candidates.jsonl")
	return nil
}

// paramRange writes a parameter's accepted values: "[0, 1]", "(0, ∞)",
// "[1, 2147483647] whole".
func paramRange(p ctxsel.ParamDef) string {
	f := byte('g')
	if p.Integer {
		f = 'f'
	}
	lo, hi := strconv.FormatFloat(p.Min, f, -1, 64), strconv.FormatFloat(p.Max, f, -1, 64)
	if p.Min <= -math.MaxFloat64 {
		lo = "-∞"
	}
	if p.Max >= math.MaxFloat64 {
		hi = "∞"
	}
	open, closing := "[", "]"
	if p.MinExclusive || lo == "-∞" {
		open = "("
	}
	if hi == "∞" {
		closing = ")"
	}
	r := open + lo + ", " + hi + closing
	if p.Integer {
		r += " whole"
	}
	return r
}

// invalidUTF8ID is the server's message for the same fault.
const invalidUTF8ID = "not valid UTF-8 (ids come back as they were sent, so they must be UTF-8 text)"

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
