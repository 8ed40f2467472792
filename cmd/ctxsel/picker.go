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

// lazyLLM opens the run's LLM opener and call cache on first use, so a run
// that calls no model opens neither; Close closes the cache.
type lazyLLM struct {
	lf     *llmFlags
	stderr io.Writer
	open   func(string) (llm.Client, error)
	cache  *llm.Cache
}

func (l *lazyLLM) get() (func(string) (llm.Client, error), error) {
	if l.open == nil {
		open, cache, err := l.lf.open(l.stderr)
		if err != nil {
			return nil, err
		}
		l.open, l.cache = open, cache
	}
	return l.open, nil
}

func (l *lazyLLM) Close() {
	if l.cache != nil {
		l.cache.Close()
	}
}

// newPicker opens the picker LLM (an endpoint spec from --picker, never
// from input data) for a picker configuration: serve's.
func newPicker(open func(string) (llm.Client, error), endpoint string, cfg picker.Config, deps ctxsel.Deps) (*picker.Picker, error) {
	if strings.TrimSpace(endpoint) == "" {
		return nil, usageError{fmt.Errorf("%s needs --picker PROVIDER:MODEL[@BASE_URL], the picker LLM", cfg)}
	}
	c, err := open(endpoint)
	if err != nil {
		return nil, usageError{fmt.Errorf("--picker: %w", err)}
	}
	return picker.NewWith(c, cfg, deps)
}

// selectTexts is `select` with a text selector (--strategy picker, or
// topk:k=30+picker): it reads the candidates' texts and the question;
// an invalid picker output falls back (and says so).
func selectTexts(ctx context.Context, sel ctxsel.TextSelector, spec, question, order, encoding string, stdin io.Reader, stdout io.Writer) error {
	if strings.TrimSpace(question) == "" {
		return usageError{fmt.Errorf("select --strategy %s needs --question", spec)}
	}
	ord, err := ctxsel.ParseOrder(order)
	if err != nil {
		return err
	}
	curve, texts, err := readCandidates(stdin, encoding)
	if err != nil {
		return err
	}
	for i, t := range texts {
		if t == "" {
			return fmt.Errorf("%w: candidate %q has no \"text\": %s reads every candidate", ctxsel.ErrInvalidInput, curve.Candidate(i).ID, spec)
		}
	}
	q := ctxsel.TextQuery{Curve: curve, Texts: texts, Order: ord, Question: question}
	m, metered := sel.(ctxsel.MeteredSelector)
	if !metered {
		out, err := sel.SelectTexts(ctx, q)
		if err != nil {
			return err
		}
		return writeSelection(stdout, out)
	}
	out, u, err := m.SelectMetered(ctx, q)
	if err != nil {
		return err
	}
	if err := writeSelection(stdout, out); err != nil {
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
