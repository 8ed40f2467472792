package remote

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Config is what every HTTP embedding back end is configured by, embedded
// in openai.Options and ollama.Options (and embed/embedders.Config), and
// checked and completed by one method, Settle. Each back end documents how
// it reads BaseURL and an empty APIKey.
type Config struct {
	// BaseURL of the server; each back end has its default and the path
	// suffixes it ignores.
	BaseURL string
	// Model name sent with every request, e.g. "text-embedding-3-small"
	// or "nomic-embed-text:v1.5". Required.
	Model string
	// APIKey, when set, is sent as "Authorization: Bearer" and redacted
	// from every error.
	APIKey string
	// Dimensions, when > 0, is sent as "dimensions" (models that shorten
	// their vectors, such as text-embedding-3) and every vector must have
	// it.
	Dimensions int
	// BatchSize is the most texts per request. Default: the back end's.
	BatchSize int
	// Concurrency is the most requests in flight per Embed call.
	// Default: the back end's.
	Concurrency int
	// MaxRetries per request: 0 means the back end's default, < 0 none.
	MaxRetries int
	// Timeout per request attempt (for a local server the first one may
	// include loading the model). Default: the back end's.
	Timeout time.Duration
	// RetryBaseDelay is the first backoff wait (doubling per retry, with
	// jitter); RetryMaxDelay caps any wait, Retry-After included.
	// Defaults 500ms and 30s.
	RetryBaseDelay time.Duration
	RetryMaxDelay  time.Duration
	// HTTPClient sends the requests. Default http.DefaultClient.
	HTTPClient *http.Client
	// Header holds extra request headers (e.g. OpenAI-Organization).
	Header http.Header
	// QueryPrefix is prepended to texts by EmbedQuery, PassagePrefix to
	// texts by Embed.
	QueryPrefix   string
	PassagePrefix string
}

// Defaults are a back end's values for Config's zero fields.
type Defaults struct {
	BatchSize, Concurrency, MaxRetries int
	Timeout                            time.Duration
}

// Settle checks c and returns it with its zero fields filled from d: Model
// is required and Dimensions must not be negative (errors begin with
// backend); a negative MaxRetries becomes 0, no retries; a nil HTTPClient
// becomes http.DefaultClient. BaseURL and APIKey are the back end's to read.
func (c Config) Settle(backend string, d Defaults) (Config, error) {
	if strings.TrimSpace(c.Model) == "" {
		return Config{}, fmt.Errorf("%s: Options.Model is required", backend)
	}
	if c.Dimensions < 0 {
		return Config{}, fmt.Errorf("%s: Options.Dimensions is negative (%d)", backend, c.Dimensions)
	}
	if c.BatchSize <= 0 {
		c.BatchSize = d.BatchSize
	}
	if c.Concurrency <= 0 {
		c.Concurrency = d.Concurrency
	}
	switch {
	case c.MaxRetries == 0:
		c.MaxRetries = d.MaxRetries
	case c.MaxRetries < 0:
		c.MaxRetries = 0
	}
	if c.Timeout <= 0 {
		c.Timeout = d.Timeout
	}
	if c.HTTPClient == nil {
		c.HTTPClient = http.DefaultClient
	}
	return c, nil
}

// ID is what a back end's ModelID names of c for the server at base (host
// and path): the model, the dimensions and both prefixes, the settings
// that change vectors. The back end adds its own before encoding.
func (c Config) ID(base string) url.Values {
	id := url.Values{}
	id.Set("base", base)
	id.Set("model", c.Model)
	if c.Dimensions > 0 {
		id.Set("dims", strconv.Itoa(c.Dimensions))
	}
	if c.QueryPrefix != "" {
		id.Set("query", c.QueryPrefix)
	}
	if c.PassagePrefix != "" {
		id.Set("passage", c.PassagePrefix)
	}
	return id
}

// RequestHeader is a JSON request's header: c.Header's, then the content
// type, and key as a bearer token when it is not empty.
func (c Config) RequestHeader(key string) http.Header {
	h := http.Header{}
	for k, vs := range c.Header {
		h[http.CanonicalHeaderKey(k)] = vs
	}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json")
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
	return h
}
