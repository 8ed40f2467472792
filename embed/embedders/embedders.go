// Package embedders builds an embedder by name — the embedded use-lite
// model, an OpenAI-compatible server or Ollama — configured by the
// CTXSEL_EMBED_* environment, in the on-disk embedding cache. The command
// and the service open embedders through it; Scorers makes a score.Set
// over them. It is a package of its own because embed/openai and
// embed/ollama import embed: embed cannot name them.
package embedders

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/embed/cache"
	"github.com/ctxsel/ctxsel/embed/ollama"
	"github.com/ctxsel/ctxsel/embed/openai"
	"github.com/ctxsel/ctxsel/embed/remote"
	"github.com/ctxsel/ctxsel/embed/uselite"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/score"
)

// Environment variables that configure the embedders (FromEnv).
const (
	EnvBaseURL          = "CTXSEL_EMBED_BASE_URL"       // openai: server base URL (default api.openai.com)
	EnvModel            = "CTXSEL_EMBED_MODEL"          // openai, ollama: model name (required)
	EnvDimensions       = "CTXSEL_EMBED_DIMENSIONS"     // openai, ollama: optional shortened dimension
	EnvQueryPrefix      = "CTXSEL_EMBED_QUERY_PREFIX"   // instruction prefix for queries, e.g. "query: "
	EnvPassagePrefix    = "CTXSEL_EMBED_PASSAGE_PREFIX" // instruction prefix for passages, e.g. "passage: "
	EnvCache            = "CTXSEL_EMBED_CACHE"          // cache directory; "off" disables the cache
	EnvUseLitePrecision = "CTXSEL_USELITE_PRECISION"    // use-lite: fp32, bf16 or int8 (default: the index's, else uselite.DefaultPrecision)
)

// Default is the embedder a caller uses when it names none: the embedded
// model, offline, no keys, the papers' kind of retriever (cosine
// similarity of sentence embeddings), and the dense half of a hybrid
// scorer unless dense=NAME says otherwise.
const Default = uselite.Name

// Names are the embedders Open builds.
func Names() []string { return []string{uselite.Name, "openai", "ollama"} }

// ErrUnknown is wrapped by Open's error for a name it does not build,
// which wraps ctxsel.ErrInvalidInput too.
var ErrUnknown = errors.New("unknown embedder")

// Config configures the embedders Open builds.
type Config struct {
	// Config configures the remote embedders (openai.Options,
	// ollama.Options); FromEnv sets its BaseURL (openai's only: ollama's
	// address is $OLLAMA_HOST's), Model, Dimensions and prefixes.
	remote.Config
	// Precision is use-lite's.
	Precision uselite.Precision
	// Cache is the embedding cache's folder: "" the user's cache folder
	// (ctxsel/embeddings; none without a home), "off" no cache.
	Cache string
}

// FromEnv reads the Config of the embedder name from the CTXSEL_EMBED_*
// variables for an index built with indexModel (the model id it was built
// with, or "" when there is none yet): use-lite's precision is
// CTXSEL_USELITE_PRECISION when set, else the index's, else
// uselite.DefaultPrecision (read only for use-lite). A set precision other
// than the index's is an error wrapping index.ErrMismatch: the index's
// vectors and the query's would not be comparable. Every error is the
// environment's and wraps ctxsel.ErrInvalidInput.
func FromEnv(name, indexModel string) (Config, error) {
	cfg := Config{Config: remote.Config{Model: os.Getenv(EnvModel),
		QueryPrefix: os.Getenv(EnvQueryPrefix), PassagePrefix: os.Getenv(EnvPassagePrefix)}, Cache: os.Getenv(EnvCache)}
	if name == "openai" {
		cfg.BaseURL = os.Getenv(EnvBaseURL)
	}
	if s := os.Getenv(EnvDimensions); s != "" {
		dims, err := strconv.Atoi(s)
		if err != nil || dims < 0 {
			return Config{}, inputError{fmt.Errorf("%s=%q: want a positive whole number", EnvDimensions, s)}
		}
		cfg.Dimensions = dims
	}
	if name == uselite.Name {
		p, err := UseLitePrecision(indexModel)
		if err != nil {
			return Config{}, err
		}
		cfg.Precision = p
	}
	return cfg, nil
}

// UseLitePrecision is FromEnv's use-lite precision, for a caller that
// refuses a bad setting before it opens the model.
func UseLitePrecision(indexModel string) (uselite.Precision, error) {
	have, fromIndex := uselite.PrecisionOf(indexModel)
	v, set := os.LookupEnv(EnvUseLitePrecision)
	if !set || v == "" {
		if fromIndex {
			return have, nil
		}
		return uselite.DefaultPrecision, nil
	}
	p, err := uselite.ParsePrecision(v)
	if err != nil {
		return 0, inputError{fmt.Errorf("%s=%q: want fp32, bf16 or int8", EnvUseLitePrecision, v)}
	}
	if fromIndex && p != have {
		return 0, inputError{fmt.Errorf("%w: %s=%s, but the index's vectors were made at %s precision (model %s): unset %s to use the index's precision, or rebuild the index",
			index.ErrMismatch, EnvUseLitePrecision, p, have, indexModel, EnvUseLitePrecision)}
	}
	return p, nil
}

// Open builds the named embedder, wrapped in the on-disk cache unless
// cfg.Cache is "off" (or the cache cannot be opened: a warning says so,
// and it runs uncached). close releases the cache.
func Open(name string, cfg Config) (e embed.Embedder, close func() error, err error) {
	switch name {
	case uselite.Name:
		e, err = uselite.New(uselite.Options{Precision: cfg.Precision})
	case "openai":
		e, err = openai.New(openai.Options{Config: cfg.Config})
	case "ollama":
		e, err = ollama.New(ollama.Options{Config: cfg.Config})
	default:
		return nil, nil, inputError{fmt.Errorf("%w %q (known: %s)", ErrUnknown, name, strings.Join(Names(), ", "))}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("embedder %s: %w", name, err)
	}
	dir := cfg.Cache
	if dir == "off" {
		return e, func() error { return nil }, nil
	}
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return e, func() error { return nil }, nil // no home: run uncached
		}
		dir = filepath.Join(base, "ctxsel", "embeddings")
	}
	store, err := cache.Open(dir)
	if err != nil {
		// the cache only saves work: one that cannot be opened (a read-only
		// or full disk) is bypassed, as one that cannot be written is
		slog.Warn(fmt.Sprintf("embedding cache %s cannot be used (%v): going on without it (set %s to another folder, or off)", dir, err, EnvCache))
		return e, func() error { return nil }, nil
	}
	return cache.Wrap(e, store), store.Close, nil
}

// OpenFromEnv is Open configured by FromEnv(name, indexModel); name ""
// opens the embedder an index built with indexModel needs (ForIndex).
func OpenFromEnv(name, indexModel string) (e embed.Embedder, close func() error, err error) {
	if name == "" {
		name = ForIndex(indexModel)
	}
	cfg, err := FromEnv(name, indexModel)
	if err != nil {
		return nil, nil, err
	}
	return Open(name, cfg)
}

// Scorers is a score.Set over the embedders open builds (Names; Default
// the dense half of a hybrid that names none).
func Scorers(open func(name string) (embed.Embedder, func() error, error)) *score.Set {
	return &score.Set{Embedders: Names(), Open: open, Dense: Default}
}

// ForIndex is the name of the embedder an index built with indexModel (the
// model id it records) was built with: the one whose model ids begin
// "NAME:" or "NAME@", else Default (also for "", an index not built yet).
// Its queries must be embedded by the same one.
func ForIndex(indexModel string) string {
	name := Default
	for _, n := range Names() {
		if strings.HasPrefix(indexModel, n+":") || strings.HasPrefix(indexModel, n+"@") {
			name = n
		}
	}
	return name
}

// IsName reports whether Open builds name.
func IsName(name string) bool { return slices.Contains(Names(), name) }

// inputError is err, the caller's to fix: it wraps ctxsel.ErrInvalidInput
// as well, its text unchanged.
type inputError struct{ err error }

func (e inputError) Error() string   { return e.err.Error() }
func (e inputError) Unwrap() []error { return []error{e.err, ctxsel.ErrInvalidInput} }
