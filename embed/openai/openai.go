// Package openai embeds texts through an OpenAI-compatible embeddings API:
// api.openai.com, or any server speaking the same wire format (vLLM, llama.cpp
// server, text-embeddings-inference, LiteLLM, Together, …).
//
// It sends POST {BaseURL}/v1/embeddings with
//
//	{"model": ..., "input": [...], "dimensions": n, "encoding_format": "float"}
//
// in batches (Options.BatchSize texts per request, Options.Concurrency
// requests at once), reorders each response's data by its "index" field, and
// validates the result: one vector per input, one dimension across all
// batches (equal to Options.Dimensions when set), no NaN or Inf.
//
// Failed requests are retried with exponential backoff and jitter on 429, 5xx
// and network errors, honouring Retry-After; other 4xx fail at once with an
// error carrying the status and the server's {"error":{"message",...}}. The
// API key is sent only as "Authorization: Bearer" and is redacted from every
// error.
//
// # API key
//
// Options.APIKey when set; otherwise $CTXSEL_EMBED_API_KEY; otherwise
// $OPENAI_API_KEY, but only when the base URL's host is api.openai.com, so an
// OpenAI key is never sent to a third-party server by accident. Servers that
// need no key get no Authorization header.
//
// # Prefixes
//
// Some models expect instruction prefixes ("query: " / "passage: " for E5,
// "search_query: " / "search_document: " for Nomic). Embed prepends
// Options.PassagePrefix; EmbedQuery prepends Options.QueryPrefix (use
// embed.Queries to embed queries through any Embedder). ModelID covers the
// base URL host and path, the model, the dimensions and both prefixes.
//
// # Real endpoint tests
//
// The package tests run against local httptest servers. To also run against a
// real endpoint set
//
//	CTXSEL_TEST_OPENAI_BASE_URL  e.g. https://api.openai.com or http://localhost:8000/v1
//	CTXSEL_TEST_OPENAI_MODEL     e.g. text-embedding-3-small
//	OPENAI_API_KEY               the key, if the server needs one
//
// and run go test ./embed/openai -run Real -v.
package openai

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/embed/remote"
	"github.com/ctxsel/ctxsel/internal/httpretry"
)

// Defaults for zero-valued Options fields.
const (
	DefaultBaseURL     = "https://api.openai.com"
	DefaultBatchSize   = 96
	DefaultMaxRetries  = 4
	DefaultTimeout     = 60 * time.Second
	DefaultConcurrency = 2
)

// Environment variables consulted for the API key when Options.APIKey is
// empty (see the package documentation for the order).
const (
	EnvAPIKey       = "CTXSEL_EMBED_API_KEY"
	EnvOpenAIAPIKey = "OPENAI_API_KEY"
)

// Options configures a Client. Only Model is required.
type Options struct {
	// Config holds the settings every remote embedder takes. Here BaseURL
	// may end in "/v1" (and "/"), default DefaultBaseURL; an empty APIKey
	// is read as the package documentation says.
	remote.Config

	// sleep replaces the backoff timer in tests.
	sleep func(context.Context, time.Duration) error
}

// Usage counts tokens the server reported across all calls of a Client.
type Usage struct {
	Requests     int64
	PromptTokens int64
	TotalTokens  int64
}

// Client is an embed.Embedder and embed.QueryEmbedder for an
// OpenAI-compatible server. It is safe for concurrent use.
type Client struct {
	opts     Options
	endpoint string
	key      string
	modelID  string
	client   *http.Client
	policy   httpretry.Policy

	requests, promptTokens, totalTokens atomic.Int64
}

var (
	_ embed.Embedder      = (*Client)(nil)
	_ embed.QueryEmbedder = (*Client)(nil)
)

// New validates opts, fills in defaults and returns a Client. It does not
// contact the server.
func New(opts Options) (*Client, error) {
	cfg, err := opts.Settle("openai", remote.Defaults{BatchSize: DefaultBatchSize, Concurrency: DefaultConcurrency,
		MaxRetries: DefaultMaxRetries, Timeout: DefaultTimeout})
	if err != nil {
		return nil, err
	}
	opts.Config = cfg
	base := opts.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(strings.TrimSpace(base))
	if err != nil {
		return nil, fmt.Errorf("openai: bad BaseURL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("openai: BaseURL %q: want http(s)://host[:port][/path]", redactURL(u))
	}
	if u.User != nil {
		return nil, errors.New("openai: BaseURL must not contain credentials; use Options.APIKey")
	}
	u.RawQuery, u.Fragment = "", ""
	path := strings.TrimRight(u.Path, "/")
	path = strings.TrimSuffix(path, "/v1")
	u.Path, u.RawPath = path, ""
	endpoint := u.String() + "/v1/embeddings"

	key := opts.APIKey
	if key == "" {
		key = os.Getenv(EnvAPIKey)
	}
	official := strings.EqualFold(u.Hostname(), "api.openai.com")
	if key == "" && official {
		key = os.Getenv(EnvOpenAIAPIKey)
		if key == "" {
			return nil, fmt.Errorf("openai: no API key for api.openai.com: set Options.APIKey, $%s or $%s", EnvAPIKey, EnvOpenAIAPIKey)
		}
	}

	return &Client{
		opts:     opts,
		endpoint: endpoint,
		key:      key,
		modelID:  "openai:" + opts.ID(u.Host+path).Encode(),
		client:   opts.HTTPClient,
		policy: httpretry.Policy{
			MaxRetries:   opts.MaxRetries,
			BaseDelay:    opts.RetryBaseDelay,
			MaxDelay:     opts.RetryMaxDelay,
			Timeout:      opts.Timeout,
			ErrorMessage: errorMessage,
			Sleep:        opts.sleep,
		},
	}, nil
}

// ModelID identifies the server (host and path), model, dimensions and
// prefixes, e.g. "openai:base=api.openai.com&dims=256&model=text-embedding-3-small".
func (c *Client) ModelID() string { return c.modelID }

// ModelName is the model's name at the server, as configured
// (embed.Named): what ctxsel's /v1/embeddings reports and accepts.
func (c *Client) ModelName() string { return c.opts.Model }

// Endpoint is the URL requests are posted to.
func (c *Client) Endpoint() string { return c.endpoint }

// Usage returns the token counts reported by the server so far.
func (c *Client) Usage() Usage {
	return Usage{
		Requests:     c.requests.Load(),
		PromptTokens: c.promptTokens.Load(),
		TotalTokens:  c.totalTokens.Load(),
	}
}

// Embed embeds texts as passages (with Options.PassagePrefix).
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return c.embed(ctx, texts, c.opts.PassagePrefix)
}

// EmbedQuery embeds texts as search queries (with Options.QueryPrefix).
func (c *Client) EmbedQuery(ctx context.Context, texts []string) ([][]float32, error) {
	return c.embed(ctx, texts, c.opts.QueryPrefix)
}

func (c *Client) embed(ctx context.Context, texts []string, prefix string) ([][]float32, error) {
	b := remote.Batch{Backend: "openai", Model: c.opts.Model, Size: c.opts.BatchSize, Concurrency: c.opts.Concurrency,
		Dimensions: c.opts.Dimensions, Secret: c.key}
	return b.Embed(ctx, texts, prefix, c.request)
}

type request struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	Dimensions     int      `json:"dimensions,omitempty"`
	EncodingFormat string   `json:"encoding_format"`
}

type response struct {
	Data []struct {
		Index     *int            `json:"index"`
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Model string `json:"model"`
	Usage struct {
		PromptTokens int64 `json:"prompt_tokens"`
		TotalTokens  int64 `json:"total_tokens"`
	} `json:"usage"`
}

// request embeds one batch and returns its vectors in input order.
func (c *Client) request(ctx context.Context, input []string) ([][]float32, error) {
	body, err := json.Marshal(request{
		Model:          c.opts.Model,
		Input:          input,
		Dimensions:     c.opts.Dimensions,
		EncodingFormat: "float",
	})
	if err != nil {
		return nil, fmt.Errorf("encoding request: %w", err)
	}
	h := c.opts.RequestHeader(c.key)
	raw, err := httpretry.Do(ctx, c.client, httpretry.Request{
		Method: http.MethodPost, URL: c.endpoint, Header: h, Body: body,
	}, c.policy)
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", c.endpoint, err)
	}
	c.requests.Add(1)

	var resp response
	if err := json.Unmarshal(raw, &resp); err != nil {
		return nil, fmt.Errorf("malformed response from %s: %w (body starts %q)", c.endpoint, err, httpretry.Shorten(string(raw), 120))
	}
	c.promptTokens.Add(resp.Usage.PromptTokens)
	c.totalTokens.Add(resp.Usage.TotalTokens)
	if len(resp.Data) != len(input) {
		if m := errorMessage(raw); m != "" && len(resp.Data) == 0 {
			return nil, fmt.Errorf("server answered with an error: %s", m)
		}
		return nil, fmt.Errorf("server returned %d embeddings for %d inputs", len(resp.Data), len(input))
	}
	vecs := make([][]float32, len(input))
	for pos, d := range resp.Data {
		i := pos
		if d.Index != nil {
			i = *d.Index
		}
		if i < 0 || i >= len(input) {
			return nil, fmt.Errorf("server returned embedding index %d for %d inputs", i, len(input))
		}
		if vecs[i] != nil {
			return nil, fmt.Errorf("server returned embedding index %d twice", i)
		}
		v, err := decodeEmbedding(d.Embedding)
		if err != nil {
			return nil, fmt.Errorf("embedding %d: %w", i, err)
		}
		if len(v) == 0 {
			return nil, fmt.Errorf("embedding %d is empty", i)
		}
		vecs[i] = v
	}
	return vecs, nil
}

// decodeEmbedding accepts a JSON array of numbers, or a base64 string of
// little-endian float32s (what servers send for encoding_format "base64",
// which a few send regardless of what was asked).
func decodeEmbedding(raw json.RawMessage) ([]float32, error) {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("malformed embedding: %w", err)
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("malformed base64 embedding: %w", err)
		}
		if len(b)%4 != 0 {
			return nil, fmt.Errorf("base64 embedding has %d bytes, not a multiple of 4", len(b))
		}
		v := make([]float32, len(b)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		return v, nil
	}
	var v []float32
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("malformed embedding: %w", err)
	}
	return v, nil
}

// errorMessage formats {"error":{"message","type","code"}} (or
// {"error":"..."}, {"message":"..."}, {"detail":"..."} from other servers).
func errorMessage(body []byte) string {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	var obj struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	var s string
	switch {
	case len(e.Error) > 0 && json.Unmarshal(e.Error, &obj) == nil && obj.Message != "":
		msg := obj.Message
		var extra []string
		if obj.Type != "" {
			extra = append(extra, "type="+obj.Type)
		}
		if c := strings.Trim(string(obj.Code), `"`); c != "" && c != "null" {
			extra = append(extra, "code="+c)
		}
		if len(extra) > 0 {
			msg += " (" + strings.Join(extra, ", ") + ")"
		}
		return httpretry.Shorten(msg, 1024)
	case len(e.Error) > 0 && json.Unmarshal(e.Error, &s) == nil && s != "":
		return httpretry.Shorten(s, 1024)
	case e.Message != "":
		return httpretry.Shorten(e.Message, 1024)
	case len(e.Detail) > 0 && string(e.Detail) != "null":
		if json.Unmarshal(e.Detail, &s) == nil {
			return httpretry.Shorten(s, 1024)
		}
		return httpretry.Shorten(string(e.Detail), 1024)
	}
	return ""
}

func redactURL(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}
