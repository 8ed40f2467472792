package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/ctxsel/ctxsel/internal/httpretry"
)

// WindowReporter is a client whose server can say the model's context
// window: Ollama (/api/show, the model's context length) and vLLM-style
// OpenAI-compatible servers (/v1/models, max_model_len).
type WindowReporter interface {
	// ContextWindow returns the model's context window in tokens; ok is
	// false, with no error, when the server does not say.
	ContextWindow(ctx context.Context) (tokens int, ok bool, err error)
}

// ContextWindow asks c's server for the model's context window, looking
// through the wrappers this package puts around a client (the Limiter, the
// call cache). ok is false when neither c nor its server can say.
func ContextWindow(ctx context.Context, c Client) (tokens int, ok bool, err error) {
	for c != nil {
		if r, is := c.(WindowReporter); is {
			return r.ContextWindow(ctx)
		}
		u, is := c.(interface{ Unwrap() Client })
		if !is {
			break
		}
		c = u.Unwrap()
	}
	return 0, false, nil
}

// Unwrap returns the wrapped client.
func (c *limited) Unwrap() Client { return c.inner }

// Unwrap returns the wrapped client.
func (c *cachedClient) Unwrap() Client { return c.inner }

// windowMemo remembers a server's answer about a model's window: it does
// not change while the server runs, and an answer per question would
// double the calls.
type windowMemo struct {
	mu     sync.Mutex
	tokens int
	ok     bool
	asked  bool
}

func (m *windowMemo) get(ask func() (int, bool, error)) (int, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.asked {
		return m.tokens, m.ok, nil
	}
	n, ok, err := ask()
	if err != nil {
		return 0, false, err // asked again next time
	}
	m.tokens, m.ok, m.asked = n, ok, true
	return n, ok, nil
}

// ContextWindow implements WindowReporter: POST /api/show reports the
// model's context length ("model_info": {"llama.context_length": 131072});
// a num_ctx the model's Modelfile sets is preferred, being what the server
// runs it with.
func (c *Ollama) ContextWindow(ctx context.Context) (int, bool, error) {
	return c.window.get(func() (int, bool, error) {
		if c.opts.Model == "" {
			return 0, false, ErrNoModel
		}
		body, _ := json.Marshal(map[string]string{"model": c.opts.Model})
		url := strings.TrimSuffix(c.endpoint, "/chat") + "/show"
		raw, err := c.opts.call(ctx, "ollama", url, func(ctx context.Context) ([]byte, error) {
			return httpretry.Do(ctx, c.opts.HTTP, httpretry.Request{Method: http.MethodPost, URL: url,
				Header: http.Header{"Content-Type": {"application/json"}}, Body: body}, c.policy)
		})
		if err != nil {
			return 0, false, fmt.Errorf("llm: ollama: the model's context window: %w", err)
		}
		var show struct {
			ModelInfo  map[string]any `json:"model_info"`
			Parameters string         `json:"parameters"`
		}
		if err := json.Unmarshal(raw, &show); err != nil {
			return 0, false, fmt.Errorf("llm: ollama: /api/show: %w: %v", errMalformed, err)
		}
		for _, line := range strings.Split(show.Parameters, "\n") {
			f := strings.Fields(line)
			if len(f) == 2 && f[0] == "num_ctx" {
				if n, err := strconv.Atoi(f[1]); err == nil && n > 0 {
					return n, true, nil
				}
			}
		}
		for k, v := range show.ModelInfo {
			if !strings.HasSuffix(k, ".context_length") {
				continue
			}
			if f, ok := v.(float64); ok && f > 0 && f <= maxWindow {
				return int(f), true, nil
			}
		}
		return 0, false, nil
	})
}

// ContextWindow implements WindowReporter: GET /v1/models lists each
// model's max_model_len on vLLM (and servers copying it); others do not
// say, and an error answer (404) means the same.
func (c *OpenAI) ContextWindow(ctx context.Context) (int, bool, error) {
	return c.window.get(func() (int, bool, error) {
		url := strings.TrimSuffix(c.endpoint, "/chat/completions") + "/models"
		h := http.Header{}
		if c.opts.APIKey != "" {
			h.Set("Authorization", "Bearer "+c.opts.APIKey)
		}
		raw, err := c.opts.call(ctx, "openai", url, func(ctx context.Context) ([]byte, error) {
			return httpretry.Do(ctx, c.opts.HTTP, httpretry.Request{Method: http.MethodGet, URL: url, Header: h}, c.policy)
		})
		var se *httpretry.StatusError
		if errors.As(err, &se) && se.StatusCode < 500 {
			return 0, false, nil // no model list here: the server cannot say
		}
		if err != nil {
			return 0, false, fmt.Errorf("llm: openai: the model's context window: %w", err)
		}
		var list struct {
			Data []struct {
				ID          string `json:"id"`
				MaxModelLen int    `json:"max_model_len"`
			} `json:"data"`
		}
		if json.Unmarshal(raw, &list) != nil {
			return 0, false, nil
		}
		for _, m := range list.Data {
			if m.ID == c.opts.Model && m.MaxModelLen > 0 && m.MaxModelLen <= maxWindow {
				return m.MaxModelLen, true, nil
			}
		}
		return 0, false, nil
	})
}

// ErrContextLength is wrapped by the error of a call whose prompt did not
// fit the model's context window: an OpenAI-compatible server's 400
// "context length exceeded" (OpenAI, vLLM, llama.cpp, LiteLLM).
var ErrContextLength = errors.New("the prompt is longer than the model's context window")

// ContextLengthError is a call refused because its prompt did not fit the
// model's window. It wraps ErrContextLength and the server's error.
type ContextLengthError struct {
	// Limit is the window the server named ("maximum context length is
	// 4096 tokens"); 0 when it named none.
	Limit int
	Err   error
}

func (e *ContextLengthError) Error() string {
	if e.Limit > 0 {
		return fmt.Sprintf("%v (the server's limit: %d tokens): %v", ErrContextLength, e.Limit, e.Err)
	}
	return fmt.Sprintf("%v: %v", ErrContextLength, e.Err)
}

func (e *ContextLengthError) Unwrap() []error { return []error{ErrContextLength, e.Err} }

var (
	contextLengthSays = []string{"context_length_exceeded", "maximum context length", "context length exceeded",
		"exceed_context_size", "exceeds the available context size", "context window", "too long to fit into the model",
		"input is too long", "prompt is too long"}
	contextLimit = regexp.MustCompile(`(?i)(?:maximum context length is|context length (?:is|of)|context size \(|context length\s*\()\s*(\d+)`)
)

// contextLength turns a 400 that says the prompt was too long into a
// ContextLengthError; other errors are returned as they are.
func contextLength(err error) error {
	var se *httpretry.StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusBadRequest {
		return err
	}
	text := strings.ToLower(se.Message + " " + string(se.Body))
	for _, s := range contextLengthSays {
		if strings.Contains(text, s) {
			ce := &ContextLengthError{Err: err}
			if m := contextLimit.FindStringSubmatch(text); m != nil {
				if n, perr := strconv.Atoi(m[1]); perr == nil && n > 0 && n <= maxWindow {
					ce.Limit = n
				}
			}
			return ce
		}
	}
	return err
}
