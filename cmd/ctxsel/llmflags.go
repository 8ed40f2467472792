package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ctxsel/ctxsel/internal/termtext"
	"github.com/ctxsel/ctxsel/llm"
)

// llmFlags are the flags shared by every command that calls an LLM in some
// role (reader, judge, router, picker, generator, panel, summarizer): one
// concurrency limit, one call cache and one set of sampling defaults for all
// roles of a run.
type llmFlags struct {
	concurrency int
	temperature float64
	seed        int
	maxTokens   int
	timeout     time.Duration
	retries     int
	fs          *flag.FlagSet
}

// llmHelp is the environment a command that calls an LLM documents.
const llmHelp = `LLM endpoints are PROVIDER:MODEL[@BASE_URL][#window=N] (openai:gpt-4o-mini,
openai:qwen2.5-7b@http://127.0.0.1:8000/v1, ollama:llama3.2@127.0.0.1:11434).
  CTXSEL_LLM_API_KEY   API key sent to OpenAI-compatible servers (never printed)
  CTXSEL_LLM_TIMEOUT   total deadline of one call, retries included, unless --llm-timeout is given
  CTXSEL_LLM_CACHE     call cache directory, or "off" (default: the user cache dir)`

func addLLMFlags(fs *flag.FlagSet) *llmFlags {
	f := &llmFlags{fs: fs}
	fs.IntVar(&f.concurrency, "llm-concurrency", llm.DefaultConcurrency, "LLM calls in flight at once, over all roles")
	fs.Float64Var(&f.temperature, "temperature", 0, "sampling temperature sent with every LLM call")
	fs.IntVar(&f.seed, "seed-llm", -1, "sampling seed sent with every LLM call (-1: none is sent)")
	fs.IntVar(&f.maxTokens, "max-tokens", 0, "cap on each LLM answer's tokens (0: the server's default)")
	fs.DurationVar(&f.timeout, "llm-timeout", 2*time.Minute, "total deadline of one LLM call, retries included (default: $CTXSEL_LLM_TIMEOUT, else 2m)")
	fs.IntVar(&f.retries, "llm-retries", 2, "retries of a failed LLM call (429, 5xx, network)")
	return f
}

// open validates the flags and returns the opener every role of the run
// uses, with the call cache (nil when CTXSEL_LLM_CACHE=off). Notes about the
// cache (a damaged file quarantined and rebuilt) go to stderr. The caller
// closes the cache.
func (f *llmFlags) open(stderr io.Writer) (func(spec string) (llm.Client, error), *llm.Cache, error) {
	// CTXSEL_LLM_TIMEOUT holds for every client, a --reader's as the
	// environment's own; --llm-timeout, given, wins.
	if v := strings.TrimSpace(os.Getenv(llm.EnvTimeout)); v != "" && !flagGiven(f.fs, "llm-timeout") {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, nil, usageError{fmt.Errorf("%s=%q: want a positive duration such as 90s", llm.EnvTimeout, v)}
		}
		f.timeout = d
	}
	switch {
	case f.concurrency < 1 || f.concurrency > 1024:
		return nil, nil, usageError{fmt.Errorf("--llm-concurrency=%d must be in 1..1024", f.concurrency)}
	case !(f.temperature >= 0 && f.temperature <= 2):
		return nil, nil, usageError{fmt.Errorf("--temperature=%v must be in 0..2", f.temperature)}
	case f.maxTokens < 0 || f.maxTokens > 1<<20:
		return nil, nil, usageError{fmt.Errorf("--max-tokens=%d must be in 0..%d", f.maxTokens, 1<<20)}
	case f.timeout <= 0:
		return nil, nil, usageError{fmt.Errorf("--llm-timeout=%v must be positive", f.timeout)}
	case f.retries < 0 || f.retries > 20:
		return nil, nil, usageError{fmt.Errorf("--llm-retries=%d must be in 0..20", f.retries)}
	case f.seed < -1:
		return nil, nil, usageError{fmt.Errorf("--seed-llm=%d must be -1 (none) or non-negative", f.seed)}
	}
	temp := f.temperature
	opts := llm.Options{
		Timeout:     f.timeout,
		MaxRetries:  f.retries,
		MaxTokens:   f.maxTokens,
		Temperature: &temp,
		Limiter:     llm.NewLimiter(f.concurrency),
	}
	if f.retries == 0 {
		opts.MaxRetries = -1
	}
	if f.seed >= 0 {
		seed := f.seed
		opts.Seed = &seed
	}
	cache, err := llm.OpenCacheFromEnv(llm.CacheOptions{Note: func(s string) { fmt.Fprintln(stderr, "note:", termtext.Line(s)) }})
	if err != nil {
		return nil, nil, fmt.Errorf("LLM call cache: %w", err)
	}
	return llm.Opener(opts, cache), cache, nil
}

// flagGiven reports whether the flag name was set on the command line.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	if fs != nil {
		fs.Visit(func(fl *flag.Flag) { given = given || fl.Name == name })
	}
	return given
}
