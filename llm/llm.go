// Package llm is a minimal chat client for the reader LLM that answers from
// the selected passages: OpenAI-compatible servers (POST
// {base}/v1/chat/completions: api.openai.com, vLLM, llama.cpp, LiteLLM, …)
// and Ollama (POST {host}/api/chat), plus the prompt templates of the papers
// ctxsel follows.
//
// # Endpoint specs
//
// Commands name an endpoint with one spec per role (see Spec):
//
//	PROVIDER:MODEL[@BASE_URL][#window=N]    e.g. openai:gpt-4o-mini, ollama:llama3.2@127.0.0.1:11434
//
// Open turns a Spec into a Client: the key comes from CTXSEL_LLM_API_KEY;
// Options set temperature, seed, max tokens, the total deadline of a call
// (Timeout, retries and backoff included) and the Limiter that bounds calls
// in flight (default 8; share one Limiter across roles).
//
// # Call cache
//
// Cached(client, cache) answers a repeated request from an on-disk Cache
// keyed by the client's Identity (provider, endpoint, model, defaults) and
// the full Request. OpenCacheFromEnv reads CTXSEL_LLM_CACHE: unset means
// os.UserCacheDir()/ctxsel/llm, "off" disables, else a directory.
//
// # Configuration from the environment
//
// FromEnv builds a client when one is configured, and returns nil otherwise:
//
//	CTXSEL_LLM_MODEL       the model name; required, nothing is called without it
//	CTXSEL_LLM_BASE_URL    an OpenAI-compatible server, with or without /v1
//	                       (e.g. https://api.openai.com, http://localhost:8000/v1)
//	CTXSEL_LLM_API_KEY     its API key (sent as a Bearer token; optional for local servers)
//	OLLAMA_HOST            an Ollama server (host:port or URL), used when
//	                       CTXSEL_LLM_BASE_URL is unset
//	CTXSEL_LLM_PROVIDER    openai or ollama, to choose explicitly
//	CTXSEL_LLM_TIMEOUT     total deadline of one call, retries included (Go duration, default 2m)
//	CTXSEL_LLM_MAX_TOKENS  cap on the answer's tokens (default: the server's)
//
// Requests are retried on 429, 5xx and network errors with backoff; the API
// key never appears in errors.
//
// # Real endpoint tests
//
// The tests run against httptest servers speaking each wire format. To also
// call a real endpoint, configure it as above and set CTXSEL_TEST_LLM=1:
//
//	CTXSEL_TEST_LLM=1 CTXSEL_LLM_BASE_URL=https://api.openai.com CTXSEL_LLM_MODEL=gpt-4o-mini \
//	    CTXSEL_LLM_API_KEY=sk-... go test ./llm -run Real -v
//	CTXSEL_TEST_LLM=1 OLLAMA_HOST=127.0.0.1:11434 CTXSEL_LLM_MODEL=llama3.2 go test ./llm -run Real -v
package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel/internal/httpretry"
)

// Message is one chat message.
type Message struct {
	Role    string `json:"role"` // system, user or assistant
	Content string `json:"content"`
}

// Request is one chat completion request.
type Request struct {
	// Model overrides the client's model when set.
	Model    string    `json:"model,omitempty"`
	Messages []Message `json:"messages"`
	// Temperature is sent when non-nil (ctxsel's readers use 0).
	Temperature *float64 `json:"temperature,omitempty"`
	// MaxTokens caps the answer when positive.
	MaxTokens int `json:"max_tokens,omitempty"`
	// Seed asks the server for reproducible sampling when non-nil (sent as
	// "seed" to OpenAI-compatible servers and options.seed to Ollama).
	Seed *int `json:"seed,omitempty"`
	// JSON asks for a JSON object answer where the server supports it
	// (OpenAI response_format json_object, Ollama format "json"); callers
	// still parse defensively, since not every server honours it.
	JSON bool `json:"json,omitempty"`
	// Window, when positive, is the context window in tokens the prompt
	// was fitted to: Ollama is asked to run the model with it
	// (options.num_ctx); OpenAI-compatible servers fix the window
	// themselves and are not told.
	Window int `json:"window,omitempty"`
}

// Response is the model's reply with the token counts the server reported.
type Response struct {
	Content          string `json:"content"`
	Model            string `json:"model"`
	FinishReason     string `json:"finish_reason,omitempty"`
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
	TotalTokens      int    `json:"total_tokens"`
	// Elapsed is the wall time of the call, retries included (for a cached
	// reply: of the original call).
	Elapsed time.Duration `json:"elapsed_ns"`
	// Cached is set when the reply came from a Cache, not the server.
	Cached bool `json:"cached,omitempty"`
	// Oversize is set when the reply's content was over
	// Options.MaxReplyBytes and was cut to it.
	Oversize bool `json:"oversize,omitempty"`
}

// Degenerate replies (Response.Defect): the call worked, but what came back
// is not a whole answer. They are answers flagged as such, never errors,
// and a Cache does not keep them.
const (
	// DefectEmpty is a reply with no content (or only white space).
	DefectEmpty = "empty"
	// DefectTruncated is a reply cut off at the token limit (finish reason
	// "length") or over Options.MaxReplyBytes.
	DefectTruncated = "truncated"
)

// Defect says what is wrong with a reply that is not a whole answer
// (DefectEmpty, DefectTruncated), or "" for a sound one.
func (r Response) Defect() string {
	switch {
	case strings.TrimSpace(r.Content) == "":
		return DefectEmpty
	case r.FinishReason == "length" || r.Oversize:
		return DefectTruncated
	}
	return ""
}

// DefaultMaxReplyBytes bounds a reply's content when Options.MaxReplyBytes
// is 0: no reader, picker or judge answer comes near it, and a runaway
// generation must not be carried through reports and caches whole.
const DefaultMaxReplyBytes = 1 << 20

// maxReplyBody bounds a reply's HTTP body: a body over it fails the call
// (one within it but with content over MaxReplyBytes is cut and flagged).
const maxReplyBody = 64 << 20

// bound cuts r's content to max bytes (at a UTF-8 boundary), flagging it.
func (r *Response) bound(max int) {
	if max <= 0 {
		max = DefaultMaxReplyBytes
	}
	if len(r.Content) <= max {
		return
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(r.Content[cut]) {
		cut--
	}
	r.Content, r.Oversize = r.Content[:cut], true
}

// Client sends chat requests. Implementations are safe for concurrent use.
type Client interface {
	Chat(ctx context.Context, req Request) (Response, error)
	// Describe names the provider, endpoint and model (never the key).
	Describe() string
}

// Options configure the clients.
type Options struct {
	// BaseURL is the server: an OpenAI-compatible base URL, or an Ollama
	// host. Model is the default model for requests.
	BaseURL, Model string
	// APIKey is sent as "Authorization: Bearer" (OpenAI-compatible only).
	APIKey string
	// Timeout bounds one Chat call in total, retries and backoff waits
	// included (default 2 minutes). AttemptTimeout additionally bounds each
	// attempt (default: none beyond Timeout), so that a hung attempt can be
	// retried. MaxRetries is how often a retryable failure is retried
	// (default 2; negative: never).
	Timeout        time.Duration
	AttemptTimeout time.Duration
	MaxRetries     int
	// MaxTokens is the default answer cap for requests that set none.
	MaxTokens int
	// MaxReplyBytes bounds a reply's content (DefaultMaxReplyBytes when
	// 0): a longer one is cut and flagged (Response.Oversize, Defect
	// "truncated").
	MaxReplyBytes int
	// Temperature and Seed are the defaults for requests that set none.
	Temperature *float64
	Seed        *int
	// Limiter bounds concurrent calls of the client Open returns (default:
	// a fresh NewLimiter(DefaultConcurrency)); NewOpenAI/NewOllama ignore it.
	Limiter *Limiter
	// HTTP is the client to use (default http.DefaultClient).
	HTTP *http.Client
	// sleep replaces backoff waits in tests.
	sleep func(context.Context, time.Duration) error
}

// ErrNoModel is returned when a client is configured without a model.
var ErrNoModel = errors.New("llm: no model configured (set CTXSEL_LLM_MODEL)")

// ErrTokenCap is wrapped by the error of work that stopped because it
// reached its cap on LLM tokens (mining's and LDAR training's
// --max-llm-tokens), so callers tell a deliberate stop from a failure.
var ErrTokenCap = errors.New("LLM token cap reached")

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Minute
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = 2
	}
	return o
}

// Ask sends one user message and returns the reply: the common case.
func Ask(ctx context.Context, c Client, prompt string) (Response, error) {
	return AskWithin(ctx, c, prompt, 0)
}

// AskWithin is Ask for a prompt fitted to a context window of window
// tokens (Request.Window; 0: none given).
func AskWithin(ctx context.Context, c Client, prompt string, window int) (Response, error) {
	if c == nil {
		return Response{}, errors.New("llm: no client configured")
	}
	zero := 0.0
	return c.Chat(ctx, Request{Messages: []Message{{Role: "user", Content: prompt}}, Temperature: &zero, Window: window})
}

// fill applies the client's defaults to req.
func (o Options) fill(req Request) Request {
	if req.MaxTokens <= 0 {
		req.MaxTokens = o.MaxTokens
	}
	if req.Temperature == nil {
		req.Temperature = o.Temperature
	}
	if req.Seed == nil {
		req.Seed = o.Seed
	}
	return req
}

// identity names the settings that change a reply besides the request.
func (o Options) identity(provider, endpoint string) string {
	s := fmt.Sprintf("%s %s model=%s max_tokens=%d", provider, endpoint, o.Model, o.MaxTokens)
	if o.Temperature != nil {
		s += fmt.Sprintf(" temperature=%g", *o.Temperature)
	}
	if o.Seed != nil {
		s += fmt.Sprintf(" seed=%d", *o.Seed)
	}
	return s
}

// call runs send under the total deadline o.Timeout and turns its expiry
// into an error that says so. Errors never show the endpoint or the key.
func (o Options) call(ctx context.Context, provider, endpoint string, send func(context.Context) ([]byte, error)) ([]byte, error) {
	cctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	raw, err := send(cctx)
	if err == nil {
		return raw, nil
	}
	if ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("call exceeded its total deadline of %s: %w", o.Timeout, err)
	}
	return nil, redactEndpoint(fmt.Errorf("llm: %s: %w", provider, err), endpoint, o.APIKey)
}

// redactEndpoint scrubs the key and the endpoint's secrets from err: the
// key wherever it appears (servers echo it), and the URL's user
// information and query, where services put tokens (net/http puts the URL
// in transport errors). The address itself stays: it is what the user
// configured, and "dial tcp 127.0.0.1:11434: connection refused" is what
// they need to see. A server passes these errors to remote clients only as
// "failed" (server.upstream), never their text.
func redactEndpoint(err error, endpoint, key string) error {
	err = httpretry.Redact(err, key)
	if u, perr := url.Parse(endpoint); perr == nil {
		if u.User != nil {
			if p, ok := u.User.Password(); ok {
				err = httpretry.Redact(err, p)
			}
			err = httpretry.Redact(err, u.User.Username())
		}
		err = httpretry.Redact(err, u.RawQuery)
	}
	return err
}

func checkRequest(req Request, model string) (string, error) {
	if req.Model != "" {
		model = req.Model
	}
	if model == "" {
		return "", ErrNoModel
	}
	if len(req.Messages) == 0 {
		return "", fmt.Errorf("llm: request without messages")
	}
	for i, m := range req.Messages {
		switch m.Role {
		case "system", "user", "assistant":
		default:
			return "", fmt.Errorf("llm: message %d: role %q, want system, user or assistant", i, m.Role)
		}
	}
	return model, nil
}

// Failure describes a failed call in a few words that carry nothing the
// server sent, nor its address or key: "HTTP 401 Unauthorized", "timed
// out", "network error", "malformed reply". It is for text shown beyond the
// operator (a remote client, an explanation); the error itself, for the
// operator's log, may quote the server's error body.
func Failure(err error) string {
	var se *httpretry.StatusError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &se):
		if t := http.StatusText(se.StatusCode); t != "" {
			return fmt.Sprintf("HTTP %d %s", se.StatusCode, t)
		}
		return fmt.Sprintf("HTTP %d", se.StatusCode)
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, errMalformed):
		return "malformed reply"
	case errors.Is(err, ErrNoModel):
		return "no model configured"
	}
	return "network error"
}

// errMalformed marks a reply that arrived but could not be read.
var errMalformed = errors.New("malformed reply")
