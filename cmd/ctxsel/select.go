package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/ctxsel/ctxsel"
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

// inputCandidate is one line of select's input.
type inputCandidate struct {
	ID     json.RawMessage `json:"id"`
	Score  *float64        `json:"score"`
	Tokens *int            `json:"tokens"`
	Text   *string         `json:"text"`
}

func cmdSelect(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("select", `Usage: ctxsel select --strategy NAME [--param key=value ...] [--order rank|document|edges] < candidates.jsonl

Reads candidates as JSON lines, one per passage, in any order:
  {"id": "a", "score": 0.83, "tokens": 120}
  {"id": "b", "score": 0.41, "text": "passage text, counted with --encoding"}
and prints one JSON object: the selected ids in the requested order, k, the
tokens selected and an explanation of the cut. Plug it after any retriever.

Example:
  printf '{"id":"a","score":0.9,"tokens":50}\n{"id":"b","score":0.2,"tokens":70}\n' | ctxsel select --strategy adaptivek --param buffer=0`, stderr)
	strategy := fs.String("strategy", "adaptivek", "strategy name, optionally with parameters (adaptivek:head=0.05)")
	var params paramFlag
	fs.Var(&params, "param", "strategy parameter key=value (repeatable), caps included: min_k, max_k, max_tokens")
	order := fs.String("order", "rank", "order of the selected passages: rank, document (input order) or edges")
	encoding := fs.String("encoding", token.Default, "token encoding for candidates given as text")
	pickerLLM := fs.String("picker", "", "picker LLM endpoint for --strategy picker[:budget=4000,fallback=adaptivek,order=rank] (every candidate needs \"text\")")
	question := fs.String("question", "", "the question, for --strategy picker (the picker reads it with the texts)")
	llmf := addLLMFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	spec := params.appendTo(*strategy)
	if isPickerSpec(spec) {
		return selectPicked(ctx, spec, *question, *order, *encoding, *pickerLLM, llmf, stdin, stdout, stderr)
	}
	st, caps, err := ctxsel.Parse(spec)
	if err != nil {
		return err
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
	sel, err := ctxsel.Select(curve, st, caps, ord)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(sel); err != nil {
		return fmt.Errorf("select: write: %w", err)
	}
	return nil
}

// readCandidates reads select's input; texts[i] is candidate i's text ("" when
// it has none).
func readCandidates(r io.Reader, encoding string) ([]ctxsel.Candidate, []string, error) {
	var counter *token.Tiktoken
	dec := json.NewDecoder(bufio.NewReader(r))
	dec.UseNumber()
	var out []ctxsel.Candidate
	var texts []string
	for line := 1; ; line++ {
		var in inputCandidate
		if err := dec.Decode(&in); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, nil, fmt.Errorf("%w: candidate %d: %v", ctxsel.ErrInvalidInput, line, err)
		}
		id, err := candidateID(in.ID)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: candidate %d: %v", ctxsel.ErrInvalidInput, line, err)
		}
		if in.Score == nil {
			return nil, nil, fmt.Errorf("%w: candidate %d (%q): missing \"score\"", ctxsel.ErrInvalidInput, line, id)
		}
		c := ctxsel.Candidate{ID: id, Score: *in.Score}
		switch {
		case in.Tokens != nil:
			c.Tokens = *in.Tokens
		case in.Text != nil:
			if counter == nil {
				if counter, err = token.New(encoding); err != nil {
					return nil, nil, usageError{err}
				}
			}
			c.Tokens = counter.Count(*in.Text)
		}
		out = append(out, c)
		text := ""
		if in.Text != nil {
			text = *in.Text
		}
		texts = append(texts, text)
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("%w: no candidates on standard input", ctxsel.ErrInvalidInput)
	}
	return out, texts, nil
}

// candidateID accepts a string or a number as id.
func candidateID(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		return "", errors.New(`missing "id"`)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		if f, err := n.Float64(); err == nil && !math.IsInf(f, 0) {
			return n.String(), nil
		}
	}
	return "", fmt.Errorf(`"id" must be a string or a number, got %s`, raw)
}

func cmdStrategies(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("strategies", "Usage: ctxsel strategies\n\nLists every strategy with its parameters, defaults and ranges.", stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	for _, d := range ctxsel.Defs() {
		fmt.Fprintf(stdout, "%s — %s\n", d.Name, d.Doc)
		for _, p := range d.Params {
			fmt.Fprintf(stdout, "    %-19s default %-8g %s\n", p.Name, p.Default, p.Doc)
		}
	}
	fmt.Fprintln(stdout, "\ncaps, accepted by every strategy:")
	for _, p := range ctxsel.CapParams {
		fmt.Fprintf(stdout, "    %-19s %s\n", p.Name, p.Doc)
	}
	fmt.Fprintln(stdout, "\nexample: ctxsel select --strategy adaptivek:head=0.05,buffer=3,max_tokens=4000 < candidates.jsonl")
	return nil
}
