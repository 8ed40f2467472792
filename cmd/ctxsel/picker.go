package main

import (
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
