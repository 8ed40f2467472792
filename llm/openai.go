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
)

// OpenAI talks to an OpenAI-compatible chat completions endpoint.
type OpenAI struct {
	opts     Options
	endpoint string
	policy   httpretry.Policy
	window   windowMemo
}

// NewOpenAI returns a client for the OpenAI-compatible server at
// opts.BaseURL (e.g. https://api.openai.com or http://localhost:8000/v1).
func NewOpenAI(opts Options) (*OpenAI, error) {
	opts = opts.withDefaults()
	u, err := url.Parse(strings.TrimSpace(opts.BaseURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("llm: base URL %q: want http(s)://host[:port][/path]", opts.BaseURL)
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/v1")
	u.RawQuery, u.Fragment = "", ""
	return &OpenAI{opts: opts, endpoint: u.String() + "/v1/chat/completions", policy: policy(opts, openAIError)}, nil
}

func policy(o Options, msg func([]byte) string) httpretry.Policy {
	return httpretry.Policy{MaxRetries: max(o.MaxRetries, 0), Timeout: o.AttemptTimeout, ErrorMessage: msg, Sleep: o.sleep, MaxBody: maxReplyBody}
}

// Identity is the cache identity (see the Identity function).
func (c *OpenAI) Identity() string { return c.opts.identity("openai", c.endpoint) }

// Describe implements Client.
func (c *OpenAI) Describe() string {
	return fmt.Sprintf("openai-compatible %s model %s", strings.TrimSuffix(c.endpoint, "/chat/completions"), c.opts.Model)
}

type openAIRequest struct {
	Model       string    `json:"model"`
	Messages    []Message `json:"messages"`
	Temperature *float64  `json:"temperature,omitempty"`
	MaxTokens   int       `json:"max_tokens,omitempty"`
	Seed        *int      `json:"seed,omitempty"`
	Stream      bool      `json:"stream"`
	// ResponseFormat is {"type":"json_object"} when Request.JSON is set.
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
}

type responseFormat struct {
	Type string `json:"type"`
}

type openAIResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message      Message `json:"message"`
		FinishReason string  `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
}

// Chat implements Client.
func (c *OpenAI) Chat(ctx context.Context, req Request) (Response, error) {
	model, err := checkRequest(req, c.opts.Model)
	if err != nil {
		return Response{}, err
	}
	req = c.opts.fill(req)
	wire := openAIRequest{Model: model, Messages: req.Messages, Temperature: req.Temperature, MaxTokens: req.MaxTokens, Seed: req.Seed}
	if req.JSON {
		wire.ResponseFormat = &responseFormat{Type: "json_object"}
	}
	body, err := json.Marshal(wire)
	if err != nil {
		return Response{}, fmt.Errorf("llm: %w", err)
	}
	h := http.Header{"Content-Type": {"application/json"}}
	if c.opts.APIKey != "" {
		h.Set("Authorization", "Bearer "+c.opts.APIKey)
	}
	start := time.Now()
	raw, err := c.opts.call(ctx, "openai", c.endpoint, func(ctx context.Context) ([]byte, error) {
		return httpretry.Do(ctx, c.opts.HTTP, httpretry.Request{Method: http.MethodPost, URL: c.endpoint, Header: h, Body: body}, c.policy)
	})
	if err != nil {
		return Response{}, contextLength(err)
	}
	var r openAIResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return Response{}, fmt.Errorf("llm: openai: decode response: %w: %v", errMalformed, err)
	}
	if len(r.Choices) == 0 {
		return Response{}, fmt.Errorf("llm: openai: %w: response without choices", errMalformed)
	}
	resp := Response{
		Content: r.Choices[0].Message.Content, Model: r.Model, FinishReason: r.Choices[0].FinishReason,
		PromptTokens: r.Usage.PromptTokens, CompletionTokens: r.Usage.CompletionTokens, TotalTokens: r.Usage.TotalTokens,
		Elapsed: time.Since(start),
	}
	resp.bound(c.opts.MaxReplyBytes)
	return resp, nil
}

// openAIError extracts {"error":{"message":...}}.
func openAIError(body []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil {
		return e.Error.Message
	}
	return ""
}
