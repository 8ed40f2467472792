package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/ctxsel/ctxsel/ldar/ldartrain"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/token"
)

// llmRewardFlags are train band's flags for LDAR's own reward: a reader
// answers from every sampled band and a judge scores the answer.
type llmRewardFlags struct {
	reader, judge, prompt *string
	maxTokens             *int64
	llm                   *llmFlags
	cache                 *llm.Cache
}

func addLLMRewardFlags(fs *flag.FlagSet) *llmRewardFlags {
	return &llmRewardFlags{
		reader:    fs.String("reader", "", "reward llm: the reader LLM, PROVIDER:MODEL[@BASE_URL]"),
		judge:     fs.String("judge", "auto", "reward llm: the judge, subem, em, f1, llm-ldar:SPEC (LDAR's True/False), llm:SPEC (A.1.3), llm-any:SPEC, llm-binary:SPEC; auto: llm-ldar with the reader's endpoint on lara: data, else subem"),
		prompt:    fs.String("prompt", "auto", "reward llm: reader prompt, factoid, holobench, lara (LaRA's, per document kind) or a template file; auto: lara on lara: data, else factoid"),
		maxTokens: fs.Int64("max-llm-tokens", 0, "reward llm: stop training once calls have spent this many tokens (0: no cap)"),
		llm:       addLLMFlags(fs),
	}
}

// reward opens the reader and the judge as LDAR's reward
// (ldartrain.NewLLMReward: on LaRA data LaRA's reader prompt and LDAR's
// True/False judge, asked of the reader's endpoint unless --judge names
// another).
func (f *llmRewardFlags) reward(stderr io.Writer, counter token.Counter, onLaRA bool) (*ldartrain.LLMReward, string, error) {
	if *f.reader == "" {
		return nil, "", usageError{errors.New("train band: --reward llm needs --reader")}
	}
	if *f.maxTokens < 0 {
		return nil, "", usageError{errors.New("train band: --max-llm-tokens must not be negative")}
	}
	if _, err := llm.ParseSpec(*f.reader); err != nil {
		return nil, "", usageError{fmt.Errorf("train band --reader: %w", err)}
	}
	open, cache, err := f.llm.open(stderr)
	if err != nil {
		return nil, "", err
	}
	f.cache = cache
	r, desc, err := ldartrain.NewLLMReward(ldartrain.LLMRewardOptions{Reader: *f.reader, Judge: *f.judge, Prompt: *f.prompt,
		Template: readerTemplate, MaxTokens: *f.maxTokens, OnLaRA: onLaRA}, open, counter, stderr)
	if err != nil {
		f.close()
		return nil, "", err
	}
	return r, desc, nil
}

func (f *llmRewardFlags) close() {
	if f.cache != nil {
		f.cache.Close()
		f.cache = nil
	}
}
