package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ctxsel/ctxsel/internal/httpretry"
	"github.com/ctxsel/ctxsel/internal/ollamahost"
)

// Ollama talks to an Ollama server's /api/chat.
type Ollama struct {
	opts     Options
	endpoint string
	policy   httpretry.Policy
	window   windowMemo
}

// NewOllama returns a client for the Ollama server at opts.BaseURL, an
// OLLAMA_HOST-style address ("" means 127.0.0.1:11434).
func NewOllama(opts Options) (*Ollama, error) {
	opts = opts.withDefaults()
	u, err := parseOllamaHost(opts.BaseURL)
	if err != nil {
		return nil, err
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/api")
	return &Ollama{opts: opts, endpoint: u.String() + "/api/chat", policy: policy(opts, ollamaError)}, nil
}

// parseOllamaHost reads an address the way the ollama CLI reads
// OLLAMA_HOST, strictly (internal/ollamahost: the embedder's parser too).
func parseOllamaHost(s string) (*url.URL, error) {
	u, err := ollamahost.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("llm: Ollama %w", err)
	}
	return u, nil
}

// Identity is the cache identity (see the Identity function).
func (c *Ollama) Identity() string { return c.opts.identity("ollama", c.endpoint) }

// Describe implements Client.
func (c *Ollama) Describe() string {
	return fmt.Sprintf("ollama %s model %s", strings.TrimSuffix(c.endpoint, "/api/chat"), c.opts.Model)
}

type ollamaRequest struct {
	Model    string         `json:"model"`
	Messages []Message      `json:"messages"`
	Stream   bool           `json:"stream"`
	Options  map[string]any `json:"options,omitempty"`
	// Format is "json" when Request.JSON is set.
	Format string `json:"format,omitempty"`
}

type ollamaResponse struct {
	Model           string  `json:"model"`
	Message         Message `json:"message"`
	Done            bool    `json:"done"`
	DoneReason      string  `json:"done_reason"`
	PromptEvalCount int     `json:"prompt_eval_count"`
	EvalCount       int     `json:"eval_count"`
}

// Chat implements Client.
func (c *Ollama) Chat(ctx context.Context, req Request) (Response, error) {
	model, err := checkRequest(req, c.opts.Model)
	if err != nil {
		return Response{}, err
	}
	req = c.opts.fill(req)
	o := ollamaRequest{Model: model, Messages: req.Messages, Options: map[string]any{}}
	if req.JSON {
		o.Format = "json"
	}
	if req.Temperature != nil {
		o.Options["temperature"] = *req.Temperature
	}
	if req.Seed != nil {
		o.Options["seed"] = *req.Seed
	}
	if req.MaxTokens > 0 {
		o.Options["num_predict"] = req.MaxTokens
	}
	if req.Window > 0 {
		// Ollama runs a model with its own default context (a few
		// thousand tokens) and silently cuts a longer prompt: the window
		// the prompt was fitted to is sent as the context to run with.
		o.Options["num_ctx"] = req.Window
	}
	if len(o.Options) == 0 {
		o.Options = nil
	}
	body, err := json.Marshal(o)
	if err != nil {
		return Response{}, fmt.Errorf("llm: %w", err)
	}
	start := time.Now()
	raw, err := c.opts.call(ctx, "ollama", c.endpoint, func(ctx context.Context) ([]byte, error) {
		return httpretry.Do(ctx, c.opts.HTTP, httpretry.Request{Method: http.MethodPost, URL: c.endpoint,
			Header: http.Header{"Content-Type": {"application/json"}}, Body: body}, c.policy)
	})
	if err != nil {
		return Response{}, err
	}
	var r ollamaResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return Response{}, fmt.Errorf("llm: ollama: decode response: %w: %v", errMalformed, err)
	}
	if !r.Done {
		return Response{}, fmt.Errorf("llm: ollama: %w: incomplete response (done=false)", errMalformed)
	}
	resp := Response{Content: r.Message.Content, Model: r.Model, FinishReason: r.DoneReason,
		PromptTokens: r.PromptEvalCount, CompletionTokens: r.EvalCount, TotalTokens: r.PromptEvalCount + r.EvalCount,
		Elapsed: time.Since(start)}
	resp.bound(c.opts.MaxReplyBytes)
	return resp, nil
}

// ollamaError extracts {"error": "..."}.
func ollamaError(body []byte) string {
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil {
		return e.Error
	}
	return ""
}
