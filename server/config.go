package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/token"
)

// Config configures a Server. Start from DefaultConfig: zero limits and
// timeouts are rejected rather than read as "unlimited".
//
// A config file is JSON with these keys (durations as Go durations, "5s"):
//
//	{"addr": "127.0.0.1:8080", "insecure_public": false, "allowed_hosts": ["ctxsel.lan"],
//	 "max_body_bytes": 16777216, "max_inflight_body_bytes": 67108864,
//	 "max_candidates": 100000, "max_text_bytes": 65536,
//	 "max_vector_dim": 8192, "max_curve_points": 2000, "token_encoding": "cl100k_base",
//	 "read_header_timeout": "5s", "read_timeout": "30s", "write_timeout": "90s",
//	 "idle_timeout": "120s", "request_timeout": "60s", "shutdown_timeout": "30s",
//	 "embed_concurrency": 2, "embed_queue": 4096,
//	 "embedding_aliases": {"text-embedding-ada-002": "use-lite"}}
//
// API keys are never read from the file: they come from $CTXSEL_API_KEYS, so
// config files can be committed and logged without leaking them.
type Config struct {
	// Addr is the host:port to listen on.
	Addr string `json:"addr"`
	// APIKeys, when non-empty, turn on bearer-token auth for /v1/* and
	// /metrics.
	APIKeys []string `json:"-"`
	// InsecurePublic allows a non-loopback Addr without API keys.
	InsecurePublic bool `json:"insecure_public"`
	// AllowedHosts are the Host header values served besides the loopback
	// ones (host names or addresses, with or without :PORT; "*" for any).
	// A server listening on a loopback address serves only loopback Host
	// values unless they are listed here (a guard against DNS rebinding);
	// one listening elsewhere checks Host only when the list is given.
	AllowedHosts []string `json:"allowed_hosts"`

	// MaxBodyBytes bounds a request body (an /mcp POST and a ctxsel mcp
	// stdio line included); larger ones get 413 (a JSON-RPC error over MCP)
	// before they are read whole.
	MaxBodyBytes int64 `json:"max_body_bytes"`
	// MaxInflightBodyBytes bounds the bytes all request bodies being read or
	// handled hold together; a request that would cross it gets 503 at
	// once. At least MaxBodyBytes.
	MaxInflightBodyBytes int64 `json:"max_inflight_body_bytes"`
	// MaxCandidates bounds the candidates, documents, inputs and ids of
	// one request, and the top_n it may ask to retrieve.
	MaxCandidates int `json:"max_candidates"`
	// MaxTextBytes bounds the query and each candidate's, document's or
	// input's text, on every route and MCP tool; texts must also be valid
	// UTF-8.
	MaxTextBytes int `json:"max_text_bytes"`
	// MaxVectorDim bounds the dimension of a vector.
	MaxVectorDim int `json:"max_vector_dim"`
	// MaxCurvePoints bounds the sorted scores an explanation carries for
	// plotting; longer curves are sampled, keeping the ranks around the cut.
	MaxCurvePoints int `json:"max_curve_points"`
	// TokenEncoding counts the tokens of candidates given as text.
	TokenEncoding string `json:"token_encoding"`

	ReadHeaderTimeout Duration `json:"read_header_timeout"`
	ReadTimeout       Duration `json:"read_timeout"`
	WriteTimeout      Duration `json:"write_timeout"`
	IdleTimeout       Duration `json:"idle_timeout"`
	// RequestTimeout bounds one request from when its handling starts, on
	// every route and transport (MCP tool calls included), even where a
	// back end does not watch it; keep it below WriteTimeout so the error
	// can still be written.
	RequestTimeout Duration `json:"request_timeout"`
	// ShutdownTimeout bounds how long shutdown waits for in-flight requests.
	ShutdownTimeout Duration `json:"shutdown_timeout"`

	// EmbedConcurrency bounds the embedding calls that run at once, across
	// every request and transport (DefaultConfig: the cores Go may use).
	EmbedConcurrency int `json:"embed_concurrency"`
	// EmbedQueue bounds the texts of the embedding calls that wait for a
	// slot; a call past it is refused at once with 503 and Retry-After (see embedlimit.go).
	EmbedQueue int `json:"embed_queue"`
	// EmbeddingAliases maps model names clients send to /v1/embeddings
	// (their defaults, e.g. "text-embedding-ada-002") to the served
	// model's name. Opt-in: without an alias such a name is refused with
	// a 400 naming the served model.
	EmbeddingAliases map[string]string `json:"embedding_aliases"`
}

// DefaultConfig returns the defaults `ctxsel serve` starts from.
func DefaultConfig() Config {
	return Config{
		Addr:                 "127.0.0.1:8080",
		MaxBodyBytes:         16 << 20,
		MaxInflightBodyBytes: 64 << 20,
		MaxCandidates:        100_000,
		MaxTextBytes:         64 << 10,
		MaxVectorDim:         8192,
		MaxCurvePoints:       2000,
		TokenEncoding:        token.Default,
		ReadHeaderTimeout:    Duration(5 * time.Second),
		ReadTimeout:          Duration(30 * time.Second),
		WriteTimeout:         Duration(90 * time.Second),
		IdleTimeout:          Duration(120 * time.Second),
		RequestTimeout:       Duration(60 * time.Second),
		ShutdownTimeout:      Duration(30 * time.Second),
		EmbedConcurrency:     runtime.GOMAXPROCS(0),
		EmbedQueue:           defaultEmbedQueue,
	}
}

// Validate reports settings that cannot work, including a public address
// without API keys (see CheckBind). Errors wrap ctxsel.ErrInvalidInput.
func (c Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: config: %s", ctxsel.ErrInvalidInput, fmt.Sprintf(format, args...))
	}
	switch {
	case c.MaxBodyBytes <= 0:
		return bad("max_body_bytes must be positive")
	case c.MaxInflightBodyBytes < c.MaxBodyBytes:
		return bad("max_inflight_body_bytes (%d) must be at least max_body_bytes (%d)", c.MaxInflightBodyBytes, c.MaxBodyBytes)
	case c.MaxCandidates <= 0:
		return bad("max_candidates must be positive")
	case c.MaxTextBytes <= 0:
		return bad("max_text_bytes must be positive")
	case c.MaxVectorDim <= 0:
		return bad("max_vector_dim must be positive")
	case c.MaxCurvePoints < 16:
		return bad("max_curve_points must be at least 16")
	case c.EmbedConcurrency <= 0:
		return bad("embed_concurrency must be positive")
	case c.EmbedQueue < 0:
		return bad("embed_queue must be zero or more")
	}
	if err := checkAllowedHosts(c.AllowedHosts); err != nil {
		return err
	}
	for alias, model := range c.EmbeddingAliases {
		if strings.TrimSpace(alias) == "" || strings.TrimSpace(model) == "" || alias != strings.TrimSpace(alias) || model != strings.TrimSpace(model) {
			return bad("embedding_aliases: %q=%q: want NAME=MODEL, both non-empty, no surrounding spaces", alias, model)
		}
	}
	for _, d := range []struct {
		name string
		v    Duration
	}{
		{"read_header_timeout", c.ReadHeaderTimeout}, {"read_timeout", c.ReadTimeout},
		{"write_timeout", c.WriteTimeout}, {"idle_timeout", c.IdleTimeout},
		{"request_timeout", c.RequestTimeout}, {"shutdown_timeout", c.ShutdownTimeout},
	} {
		if d.v <= 0 {
			return bad("%s must be positive", d.name)
		}
	}
	if c.TokenEncoding != "" && !slices.Contains(token.Encodings, c.TokenEncoding) {
		return bad("token_encoding %q: known: %s", c.TokenEncoding, strings.Join(token.Encodings, ", "))
	}
	for i, k := range c.APIKeys {
		if strings.TrimSpace(k) == "" {
			return bad("API key %d is empty", i)
		}
	}
	return CheckBind(c.Addr, len(c.APIKeys) > 0, c.InsecurePublic)
}

// CheckBind refuses to serve a non-loopback address without API keys unless
// insecure is set: an open selection service on a public interface lets
// anyone spend the embedder's and the LLM's money.
func CheckBind(addr string, haveKeys, insecure bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%w: address %q: %v", ctxsel.ErrInvalidInput, addr, err)
	}
	if haveKeys || insecure || IsLoopback(host) {
		return nil
	}
	return fmt.Errorf("%w: refusing to listen on %q without API keys: set CTXSEL_API_KEYS, bind 127.0.0.1, or pass --insecure-public",
		ctxsel.ErrInvalidInput, addr)
}

// IsLoopback reports whether host (from host:port) names only loopback
// interfaces. An empty host means every interface, which is not loopback.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.Unmap().IsLoopback()
}

// LoadConfigFile reads a JSON config file into base, keeping base's values
// for keys the file leaves out. Unknown keys are errors: a misspelt limit
// silently left at its default is worse than a refusal to start. into may
// be any struct that embeds Config (extra keys for the command line).
func LoadConfigFile(path string, into any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return fmt.Errorf("%w: config %s: %v", ctxsel.ErrInvalidInput, path, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: config %s: more than one JSON value", ctxsel.ErrInvalidInput, path)
	}
	return nil
}

// ParseAPIKeys splits a comma-separated key list ($CTXSEL_API_KEYS),
// dropping blanks.
func ParseAPIKeys(s string) []string {
	var keys []string
	for _, k := range strings.Split(s, ",") {
		if k = strings.TrimSpace(k); k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

// Duration is a time.Duration written as "5s" in JSON config files.
type Duration time.Duration

// D returns the duration as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes the duration as a string ("1m30s").
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads "1m30s".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New(`a duration must be a string such as "5s"`)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}
