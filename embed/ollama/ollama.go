// Package ollama embeds texts through a local (or remote) Ollama server.
//
// It sends POST {BaseURL}/api/embed with
//
//	{"model": ..., "input": [...], "truncate": bool, "keep_alive": ..., "dimensions": n}
//
// (optional fields only when set) in batches of Options.BatchSize texts, and
// reads {"model": ..., "embeddings": [[...], ...]}. Results are validated:
// one vector per input, one dimension across all batches (equal to
// Options.Dimensions when set), no NaN or Inf.
//
// Failed requests are retried with exponential backoff and jitter on 429, 5xx
// and network errors (e.g. the server still starting), honouring Retry-After;
// other 4xx — such as 404 for a model that has not been pulled — fail at once
// with the server's {"error": "..."} in the message.
//
// The base URL is Options.BaseURL, else $OLLAMA_HOST (parsed the way the
// ollama CLI does: "host", "host:port", ":port", "http(s)://host[:port]"),
// else http://127.0.0.1:11434.
//
// Embed prepends Options.PassagePrefix and EmbedQuery Options.QueryPrefix
// (nomic-embed-text, for one, expects "search_document: " and
// "search_query: "). ModelID covers the host, model, dimensions, truncation
// and both prefixes. It does not cover the weights behind a mutable tag such
// as ":latest"; pin a specific tag when caching vectors.
//
// # Real server tests
//
// The package tests run against local httptest servers. To also run against
// a real Ollama set
//
//	CTXSEL_TEST_OLLAMA_HOST   e.g. http://127.0.0.1:11434
//	CTXSEL_TEST_OLLAMA_MODEL  e.g. nomic-embed-text (already pulled)
//
// and run go test ./embed/ollama -run Real -v.
package ollama

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/embed/remote"
	"github.com/ctxsel/ctxsel/internal/httpretry"
	"github.com/ctxsel/ctxsel/internal/ollamahost"
)

// Defaults for zero-valued Options fields.
const (
	DefaultBaseURL     = "http://127.0.0.1:11434"
	DefaultBatchSize   = 32
	DefaultMaxRetries  = 4
	DefaultTimeout     = 60 * time.Second
	DefaultConcurrency = 1
)

// EnvHost is consulted for the server address when Options.BaseURL is empty.
const EnvHost = "OLLAMA_HOST"

// Options configures a Client. Only Model is required.
type Options struct {
	// Config holds the settings every remote embedder takes. Here BaseURL
	// is e.g. "http://127.0.0.1:11434" (a trailing "/api" or "/" is
	// ignored), default $OLLAMA_HOST, else DefaultBaseURL; APIKey serves
	// Ollama behind an authenticating proxy, or ollama.com, with no
	// environment fallback.
	remote.Config
	// Truncate, when non-nil, is sent as "truncate": true cuts inputs to
	// the model's context length, false makes over-long inputs an error.
	// nil leaves the server default (true).
	Truncate *bool
	// KeepAlive, when non-empty, is sent as "keep_alive": how long the
	// model stays loaded after the request, as a Go duration ("10m",
	// "0s" unloads at once, "-1s" keeps it forever).
	KeepAlive string

	// sleep replaces the backoff timer in tests.
	sleep func(context.Context, time.Duration) error
}

// Client is an embed.Embedder and embed.QueryEmbedder for an Ollama server.
// It is safe for concurrent use.
type Client struct {
	opts     Options
	endpoint string
	modelID  string
	client   *http.Client
	policy   httpretry.Policy
}

var (
	_ embed.Embedder      = (*Client)(nil)
	_ embed.QueryEmbedder = (*Client)(nil)
)

// New validates opts, fills in defaults and returns a Client. It does not
// contact the server.
func New(opts Options) (*Client, error) {
	cfg, err := opts.Settle("ollama", remote.Defaults{BatchSize: DefaultBatchSize, Concurrency: DefaultConcurrency,
		MaxRetries: DefaultMaxRetries, Timeout: DefaultTimeout})
	if err != nil {
		return nil, err
	}
	opts.Config = cfg
	if opts.KeepAlive != "" {
		if _, err := time.ParseDuration(opts.KeepAlive); err != nil {
			return nil, fmt.Errorf("ollama: Options.KeepAlive: %w", err)
		}
	}
	base := strings.TrimSpace(opts.BaseURL)
	if base == "" {
		base = strings.TrimSpace(os.Getenv(EnvHost))
	}
	u, err := ParseHost(base)
	if err != nil {
		return nil, fmt.Errorf("ollama: %w", err)
	}
	path := strings.TrimSuffix(strings.TrimRight(u.Path, "/"), "/api")
	u.Path, u.RawPath = path, ""
	endpoint := u.String() + "/api/embed"

	id := opts.ID(u.Host + path)
	if opts.Truncate != nil {
		id.Set("truncate", strconv.FormatBool(*opts.Truncate))
	}

	return &Client{
		opts:     opts,
		endpoint: endpoint,
		modelID:  "ollama:" + id.Encode(),
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

// ParseHost turns an OLLAMA_HOST-style address into a base URL the way
// the ollama CLI does, strictly: no scheme means http; no port means 11434
// (80/443 when the scheme is given explicitly); "" means
// http://127.0.0.1:11434; a bad port, a scheme other than http(s), user
// info, a query or white space is an error. The chat client (llm) reads
// addresses with the same parser.
func ParseHost(s string) (*url.URL, error) { return ollamahost.Parse(s) }

// ModelID identifies the server (host and path), model and every
// vector-changing option, e.g.
// "ollama:base=127.0.0.1%3A11434&model=nomic-embed-text%3Av1.5".
func (c *Client) ModelID() string { return c.modelID }

// ModelName is the model's name at the server, as configured
// (embed.Named).
func (c *Client) ModelName() string { return c.opts.Model }

// Endpoint is the URL requests are posted to.
func (c *Client) Endpoint() string { return c.endpoint }

// Embed embeds texts as passages (with Options.PassagePrefix).
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return c.embed(ctx, texts, c.opts.PassagePrefix)
}

// EmbedQuery embeds texts as search queries (with Options.QueryPrefix).
func (c *Client) EmbedQuery(ctx context.Context, texts []string) ([][]float32, error) {
	return c.embed(ctx, texts, c.opts.QueryPrefix)
}

func (c *Client) embed(ctx context.Context, texts []string, prefix string) ([][]float32, error) {
	b := remote.Batch{Backend: "ollama", Model: c.opts.Model, Size: c.opts.BatchSize, Concurrency: c.opts.Concurrency,
		Dimensions: c.opts.Dimensions, Secret: c.opts.APIKey}
	return b.Embed(ctx, texts, prefix, c.request)
}

type request struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Truncate   *bool    `json:"truncate,omitempty"`
	KeepAlive  string   `json:"keep_alive,omitempty"`
	Dimensions int      `json:"dimensions,omitempty"`
}

type response struct {
	Model      string      `json:"model"`
	Embeddings [][]float32 `json:"embeddings"`
}

func (c *Client) request(ctx context.Context, input []string) ([][]float32, error) {
	body, err := json.Marshal(request{
		Model:      c.opts.Model,
		Input:      input,
		Truncate:   c.opts.Truncate,
		KeepAlive:  c.opts.KeepAlive,
		Dimensions: c.opts.Dimensions,
	})
	if err != nil {
		return nil, fmt.Errorf("encoding request: %w", err)
	}
	h := c.opts.RequestHeader(c.opts.APIKey)
	raw, err := httpretry.Do(ctx, c.client, httpretry.Request{
		Method: http.MethodPost, URL: c.endpoint, Header: h, Body: body,
	}, c.policy)
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", c.endpoint, err)
	}
	var resp response
	if err := json.Unmarshal(raw, &resp); err != nil {
		return nil, fmt.Errorf("malformed response from %s: %w (body starts %q)", c.endpoint, err, httpretry.Shorten(string(raw), 120))
	}
	if len(resp.Embeddings) != len(input) {
		return nil, fmt.Errorf("server returned %d embeddings for %d inputs", len(resp.Embeddings), len(input))
	}
	for i, v := range resp.Embeddings {
		if len(v) == 0 {
			return nil, fmt.Errorf("embedding %d is empty", i)
		}
	}
	return resp.Embeddings, nil
}

// errorMessage extracts Ollama's {"error": "..."}.
func errorMessage(body []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || len(e.Error) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(e.Error, &s) == nil {
		return httpretry.Shorten(s, 1024)
	}
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(e.Error, &obj) == nil && obj.Message != "" {
		return httpretry.Shorten(obj.Message, 1024)
	}
	return ""
}
