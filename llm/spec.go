package llm

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"unicode"

	"github.com/ctxsel/ctxsel"
)

// Spec names one LLM endpoint on the command line, for every role that
// needs a model (reader, judge, router, picker, …):
//
//	PROVIDER:MODEL[@BASE_URL][#window=N]
//
//	openai:gpt-4o-mini                         api.openai.com
//	openai:qwen2.5-7b@http://127.0.0.1:8000/v1 any OpenAI-compatible server
//	ollama:llama3.2@127.0.0.1:11434            an Ollama server (OLLAMA_HOST syntax)
//	ollama:llama3.2:3b                         Ollama on its default address
//	openai:m@http://h:8000/v1#window=128000    with the model's context window
//
// The API key is never part of a spec: Open reads it from CTXSEL_LLM_API_KEY.
type Spec struct {
	// Provider is "openai" (any OpenAI-compatible server) or "ollama".
	Provider string
	// Model is the model name sent with every request. It may contain ':'
	// (Ollama tags) but not '@', '#' or white space.
	Model string
	// BaseURL is the server as written; "" means the provider's default
	// (https://api.openai.com, or OLLAMA_HOST / 127.0.0.1:11434).
	BaseURL string
	// Window is the model's context window in tokens; 0 means unknown.
	Window int
}

// Providers ParseSpec accepts.
const (
	ProviderOpenAI = "openai"
	ProviderOllama = "ollama"
)

// DefaultOpenAIBaseURL is the server an openai spec without @BASE_URL uses.
const DefaultOpenAIBaseURL = "https://api.openai.com/v1"

// maxWindow bounds #window= (2^30 tokens): larger is a typo, not a model.
const maxWindow = 1 << 30

// ParseSpec reads PROVIDER:MODEL[@BASE_URL][#window=N]. Every error wraps
// ctxsel.ErrInvalidInput.
func ParseSpec(text string) (Spec, error) {
	bad := func(format string, args ...any) (Spec, error) {
		return Spec{}, fmt.Errorf("llm: endpoint %q: %s: %w", text, fmt.Sprintf(format, args...), ctxsel.ErrInvalidInput)
	}
	provider, rest, ok := strings.Cut(text, ":")
	if !ok {
		return bad("want PROVIDER:MODEL[@BASE_URL][#window=N], e.g. openai:gpt-4o-mini")
	}
	var sp Spec
	switch provider {
	case ProviderOpenAI, ProviderOllama:
		sp.Provider = provider
	default:
		return bad("unknown provider %q (want openai or ollama)", provider)
	}
	rest, frag, hasFrag := strings.Cut(rest, "#")
	model, base, hasBase := strings.Cut(rest, "@")
	if model == "" {
		return bad("empty model name")
	}
	if i := strings.IndexFunc(model, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }); i >= 0 {
		return bad("model name contains white space or a control character")
	}
	sp.Model = model
	if hasBase {
		if base == "" {
			return bad("empty base URL after '@'")
		}
		if err := checkBase(sp.Provider, base); err != nil {
			return bad("%v", err)
		}
		sp.BaseURL = base
	}
	if hasFrag {
		v, ok := strings.CutPrefix(frag, "window=")
		if !ok {
			return bad("unknown option %q after '#' (want window=TOKENS)", frag)
		}
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > maxWindow {
			return bad("window %q: want a positive number of tokens", v)
		}
		sp.Window = n
	}
	return sp, nil
}

// checkBase validates a base URL without echoing anything but its shape.
func checkBase(provider, base string) error {
	if strings.IndexFunc(base, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) >= 0 {
		return fmt.Errorf("base URL contains white space or a control character")
	}
	if provider == ProviderOllama {
		_, err := parseOllamaHost(base)
		if err != nil {
			return fmt.Errorf("base URL: want [http(s)://]host[:port]")
		}
		return nil
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("base URL: want http(s)://host[:port][/path]")
	}
	return nil
}

// String writes the spec back in ParseSpec's syntax.
func (s Spec) String() string {
	var b strings.Builder
	b.WriteString(s.Provider)
	b.WriteByte(':')
	b.WriteString(s.Model)
	if s.BaseURL != "" {
		b.WriteByte('@')
		b.WriteString(s.BaseURL)
	}
	if s.Window > 0 {
		b.WriteString("#window=")
		b.WriteString(strconv.Itoa(s.Window))
	}
	return b.String()
}

// Open returns a client for the endpoint sp names. opts.BaseURL and
// opts.Model are taken from sp; opts.APIKey, when empty, from
// CTXSEL_LLM_API_KEY. The client is wrapped by opts.Limiter, or by a fresh
// limiter of DefaultConcurrency calls when that is nil (pass one Limiter to
// every Open to share the limit across roles).
func Open(sp Spec, opts Options) (Client, error) {
	if _, err := ParseSpec(sp.String()); err != nil {
		return nil, err
	}
	return open(sp, opts)
}

// open builds the client of an already validated endpoint: the one
// construction path of Open and FromEnv.
func open(sp Spec, opts Options) (Client, error) {
	opts.Model = sp.Model
	opts.BaseURL = sp.BaseURL
	if opts.APIKey == "" {
		opts.APIKey = os.Getenv(EnvAPIKey)
	}
	var (
		c   Client
		err error
	)
	switch sp.Provider {
	case ProviderOpenAI:
		if opts.BaseURL == "" {
			opts.BaseURL = DefaultOpenAIBaseURL
		}
		c, err = NewOpenAI(opts)
	case ProviderOllama:
		if opts.BaseURL == "" {
			opts.BaseURL = os.Getenv(EnvOllama)
		}
		c, err = NewOllama(opts)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", err, ctxsel.ErrInvalidInput)
	}
	l := opts.Limiter
	if l == nil {
		l = NewLimiter(DefaultConcurrency)
	}
	return l.Wrap(c), nil
}

// OpenSpec parses text and opens it: the one call a command needs.
func OpenSpec(text string, opts Options) (Client, Spec, error) {
	sp, err := ParseSpec(text)
	if err != nil {
		return nil, Spec{}, err
	}
	c, err := Open(sp, opts)
	return c, sp, err
}

// DefaultConcurrency is how many calls a Limiter lets run at once by default.
const DefaultConcurrency = 8

// Limiter bounds the number of calls in flight across every client it
// wraps, e.g. a reader and a judge sharing one server.
type Limiter struct{ slots chan struct{} }

// NewLimiter allows n concurrent calls (DefaultConcurrency when n <= 0).
func NewLimiter(n int) *Limiter {
	if n <= 0 {
		n = DefaultConcurrency
	}
	return &Limiter{slots: make(chan struct{}, n)}
}

// Cap is the number of concurrent calls allowed.
func (l *Limiter) Cap() int { return cap(l.slots) }

// Wrap returns c with its calls counted against l.
func (l *Limiter) Wrap(c Client) Client { return &limited{inner: c, l: l} }

// Limit wraps c with a limiter of its own allowing n concurrent calls.
func Limit(c Client, n int) Client { return NewLimiter(n).Wrap(c) }

type limited struct {
	inner Client
	l     *Limiter
}

func (c *limited) Chat(ctx context.Context, req Request) (Response, error) {
	select {
	case c.l.slots <- struct{}{}:
	case <-ctx.Done():
		return Response{}, fmt.Errorf("llm: waiting for a free slot: %w", ctx.Err())
	}
	defer func() { <-c.l.slots }()
	return c.inner.Chat(ctx, req)
}

func (c *limited) Describe() string { return c.inner.Describe() }
func (c *limited) Identity() string { return Identity(c.inner) }

// Identity is what distinguishes c's answers to one Request: its provider,
// endpoint, model and request defaults. Clients may supply it with an
// Identity() string method; otherwise it is Describe(). The call cache keys
// on it.
func Identity(c Client) string {
	if id, ok := c.(interface{ Identity() string }); ok {
		return id.Identity()
	}
	return c.Describe()
}

// Opener returns a function that opens endpoint specs with opts, every
// client it opens sharing one Limiter (opts.Limiter, or a fresh one of
// DefaultConcurrency) and, when cache is non-nil, the call cache: the
// wiring a command needs for its reader, judge and other roles.
func Opener(opts Options, cache *Cache) func(spec string) (Client, error) {
	if opts.Limiter == nil {
		opts.Limiter = NewLimiter(DefaultConcurrency)
	}
	return func(spec string) (Client, error) {
		c, _, err := OpenSpec(spec, opts)
		if err != nil {
			return nil, err
		}
		return Cached(c, cache), nil
	}
}
