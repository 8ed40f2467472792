package llm

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Environment variables FromEnv reads (see the package documentation).
const (
	EnvModel     = "CTXSEL_LLM_MODEL"
	EnvBaseURL   = "CTXSEL_LLM_BASE_URL"
	EnvAPIKey    = "CTXSEL_LLM_API_KEY"
	EnvProvider  = "CTXSEL_LLM_PROVIDER"
	EnvTimeout   = "CTXSEL_LLM_TIMEOUT"
	EnvMaxTokens = "CTXSEL_LLM_MAX_TOKENS"
	EnvOllama    = "OLLAMA_HOST"
)

// FromEnv returns the client the environment configures, or nil when none
// is (no endpoint, or no model). A configuration that is present but wrong
// is an error. The client is built as Open builds a spec's, wrapped in a
// limiter of DefaultConcurrency calls; the model name is taken as written
// (it may hold '@' or '#', which a spec cannot).
func FromEnv() (Client, error) { return fromEnv(os.Getenv) }

func fromEnv(get func(string) string) (Client, error) {
	model := strings.TrimSpace(get(EnvModel))
	base := strings.TrimSpace(get(EnvBaseURL))
	host := strings.TrimSpace(get(EnvOllama))
	provider := strings.ToLower(strings.TrimSpace(get(EnvProvider)))
	if provider == "" {
		switch {
		case base != "":
			provider = "openai"
		case host != "":
			provider = "ollama"
		default:
			return nil, nil
		}
	}
	if model == "" {
		if get(EnvProvider) != "" || base != "" {
			return nil, fmt.Errorf("llm: an endpoint is configured (%s or %s) but %s is not set", EnvBaseURL, EnvProvider, EnvModel)
		}
		return nil, nil // OLLAMA_HOST alone does not turn answering on
	}
	o := Options{APIKey: get(EnvAPIKey)}
	if v := strings.TrimSpace(get(EnvTimeout)); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("llm: %s=%q: want a positive duration such as 90s", EnvTimeout, v)
		}
		o.Timeout = d
	}
	if v := strings.TrimSpace(get(EnvMaxTokens)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("llm: %s=%q: want a positive integer", EnvMaxTokens, v)
		}
		o.MaxTokens = n
	}
	sp := Spec{Provider: provider, Model: model}
	switch provider {
	case ProviderOpenAI:
		if base == "" {
			return nil, fmt.Errorf("llm: provider openai needs %s", EnvBaseURL)
		}
		sp.BaseURL = base
	case ProviderOllama:
		sp.BaseURL = host
		if base != "" && host == "" {
			sp.BaseURL = base
		}
	default:
		return nil, fmt.Errorf("llm: %s=%q: want openai or ollama", EnvProvider, provider)
	}
	return open(sp, o)
}
