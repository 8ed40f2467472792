package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/picker"
)

// isPickerSpec reports a strategy spec naming the LLM picker.
func isPickerSpec(spec string) bool {
	name, _, _ := strings.Cut(strings.TrimSpace(spec), ":")
	return strings.EqualFold(strings.TrimSpace(name), "picker")
}

// splitStrategies splits a --strategies list into score-only specs and
// picker specs. Picker parameters are not all numbers
// (picker:budget=4000,fallback=adaptivek,order=document), so the list is
// grouped here, a bare key=value continuing the strategy before it, and
// each group goes to its own parser.
func splitStrategies(text string) ([]ctxsel.Spec, []picker.Config, error) {
	var groups []string
	for _, tok := range strings.Split(text, ",") {
		tok = strings.TrimSpace(tok)
		if tok == "" {
			continue
		}
		if !strings.Contains(tok, ":") && strings.Contains(tok, "=") && len(groups) > 0 {
			groups[len(groups)-1] += "," + tok
			continue
		}
		groups = append(groups, tok)
	}
	var specs []ctxsel.Spec
	var pickers []picker.Config
	for _, g := range groups {
		if isPickerSpec(g) {
			cfg, err := picker.ParseSpec(g)
			if err != nil {
				return nil, nil, err
			}
			pickers = append(pickers, cfg)
			continue
		}
		sp, err := ctxsel.ParseSpecList(g)
		if err != nil {
			return nil, nil, err
		}
		specs = append(specs, sp...)
	}
	if len(specs) == 0 && len(pickers) == 0 {
		return nil, nil, fmt.Errorf("%w: no strategy given", ctxsel.ErrInvalidInput)
	}
	return specs, pickers, nil
}

// newPicker opens the picker LLM (an endpoint spec from --picker, never
// from input data) for a picker spec.
func newPicker(open func(string) (llm.Client, error), endpoint string, cfg picker.Config) (*picker.Picker, error) {
	if strings.TrimSpace(endpoint) == "" {
		return nil, usageError{fmt.Errorf("%s needs --picker PROVIDER:MODEL[@BASE_URL], the picker LLM", cfg)}
	}
	c, err := open(endpoint)
	if err != nil {
		return nil, usageError{fmt.Errorf("--picker: %w", err)}
	}
	return picker.New(c, cfg)
}

// meteredPicker is a picker as eval measures it: its row named by its spec
// (two pickers with different settings are two rows), with its own call's
// tokens and invalid outputs reported apart from the reader's.
type meteredPicker struct{ *picker.Picker }

var _ ctxsel.MeteredSelector = meteredPicker{}

func (m meteredPicker) Name() string { return m.Config().String() }

// selectPicked is `select --strategy picker...`: the picker LLM reads the
// candidates' texts and picks; invalid output falls back (and says so).
func selectPicked(ctx context.Context, spec, question, order, encoding, endpoint string, llmf *llmFlags, stdin io.Reader, stdout, stderr io.Writer) error {
	if strings.TrimSpace(question) == "" {
		return usageError{fmt.Errorf("select --strategy %s needs --question", spec)}
	}
	ord, err := ctxsel.ParseOrder(order)
	if err != nil {
		return err
	}
	cands, texts, err := readCandidates(stdin, encoding)
	if err != nil {
		return err
	}
	for i, t := range texts {
		if t == "" {
			return fmt.Errorf("%w: candidate %q has no \"text\": the picker reads every candidate", ctxsel.ErrInvalidInput, cands[i].ID)
		}
	}
	curve, err := ctxsel.NewCurve(cands)
	if err != nil {
		return err
	}
	p, closeCache, err := openPickerFlags(spec, endpoint, llmf, stderr)
	if err != nil {
		return err
	}
	defer closeCache()
	res, err := p.Pick(ctx, ctxsel.TextQuery{Curve: curve, Texts: texts, Order: ord, Question: question})
	if err != nil {
		return err
	}
	if err := writeSelection(stdout, res.Selection); err != nil {
		return err
	}
	if res.CallErr != nil {
		// The fallback selected, but not because of what the model said:
		// the endpoint, the key or the network needs attention, and a
		// script must not take the fallback for the picker's answer.
		return fmt.Errorf("select: the picker's model call failed, so its fallback selected (the selection above): %w", res.CallErr)
	}
	return nil
}

// openPickerFlags builds the picker a picker spec names, its LLM from
// --picker and the shared LLM flags; the caller closes the call cache.
func openPickerFlags(spec, endpoint string, llmf *llmFlags, stderr io.Writer) (*picker.Picker, func() error, error) {
	cfg, err := picker.ParseSpec(spec)
	if err != nil {
		return nil, nil, err
	}
	open, cache, err := llmf.open(stderr)
	if err != nil {
		return nil, nil, err
	}
	p, err := newPicker(open, endpoint, cfg)
	if err != nil {
		cache.Close()
		return nil, nil, err
	}
	return p, cache.Close, nil
}
