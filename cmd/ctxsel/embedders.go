package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/embed/cache"
	"github.com/ctxsel/ctxsel/embed/ollama"
	"github.com/ctxsel/ctxsel/embed/openai"
	"github.com/ctxsel/ctxsel/embed/uselite"
	"github.com/ctxsel/ctxsel/index"
)

// Environment variables that configure the remote embedders.
const (
	envEmbedBaseURL       = "CTXSEL_EMBED_BASE_URL"       // openai: server base URL (default api.openai.com)
	envEmbedModel         = "CTXSEL_EMBED_MODEL"          // openai, ollama: model name (required)
	envEmbedDimensions    = "CTXSEL_EMBED_DIMENSIONS"     // openai, ollama: optional shortened dimension
	envEmbedQueryPrefix   = "CTXSEL_EMBED_QUERY_PREFIX"   // instruction prefix for queries, e.g. "query: "
	envEmbedPassagePrefix = "CTXSEL_EMBED_PASSAGE_PREFIX" // instruction prefix for passages, e.g. "passage: "
	envEmbedCache         = "CTXSEL_EMBED_CACHE"          // cache directory; "off" disables the cache
	envUseLitePrecision   = "CTXSEL_USELITE_PRECISION"    // use-lite: fp32, bf16 or int8 (default: the index's, else uselite.DefaultPrecision)
)

var embedderNames = []string{"use-lite", "openai", "ollama"}

// newEmbedder builds a named embedder, wrapped in the on-disk cache unless
// CTXSEL_EMBED_CACHE=off (or the cache cannot be opened: a warning says
// so). close releases the cache.
func newEmbedder(name string) (e embed.Embedder, close func() error, err error) {
	return newEmbedderFor(name, "")
}

// useLitePrecision is the precision of use-lite: $CTXSEL_USELITE_PRECISION
// when set, else the precision indexModel (the model id an index was built
// with, or "") names, else uselite's default. A set variable that differs
// from the index's precision is an error: the index's vectors and the
// query's would not be comparable.
func useLitePrecision(indexModel string) (uselite.Precision, error) {
	have, fromIndex := uselite.PrecisionOf(indexModel)
	v, set := os.LookupEnv(envUseLitePrecision)
	if !set || v == "" {
		if fromIndex {
			return have, nil
		}
		return uselite.DefaultPrecision, nil
	}
	p, err := uselite.ParsePrecision(v)
	if err != nil {
		return 0, usageError{fmt.Errorf("%s=%q: want fp32, bf16 or int8", envUseLitePrecision, v)}
	}
	if fromIndex && p != have {
		return 0, usageError{fmt.Errorf("%w: %s=%s, but the index's vectors were made at %s precision (model %s): unset %s to use the index's precision, or rebuild the index",
			index.ErrMismatch, envUseLitePrecision, p, have, indexModel, envUseLitePrecision)}
	}
	return p, nil
}

// newEmbedderFor is newEmbedder for an index built with indexModel (""
// when there is none yet): use-lite takes its precision (useLitePrecision).
func newEmbedderFor(name, indexModel string) (e embed.Embedder, close func() error, err error) {
	dims := 0
	if s := os.Getenv(envEmbedDimensions); s != "" {
		if dims, err = strconv.Atoi(s); err != nil || dims < 0 {
			return nil, nil, usageError{fmt.Errorf("%s=%q: want a positive whole number", envEmbedDimensions, s)}
		}
	}
	switch name {
	case "use-lite":
		p, perr := useLitePrecision(indexModel)
		if perr != nil {
			return nil, nil, perr
		}
		e, err = uselite.New(uselite.Options{Precision: p})
	case "openai":
		e, err = openai.New(openai.Options{BaseURL: os.Getenv(envEmbedBaseURL), Model: os.Getenv(envEmbedModel), Dimensions: dims,
			QueryPrefix: os.Getenv(envEmbedQueryPrefix), PassagePrefix: os.Getenv(envEmbedPassagePrefix)})
	case "ollama":
		e, err = ollama.New(ollama.Options{Model: os.Getenv(envEmbedModel), Dimensions: dims,
			QueryPrefix: os.Getenv(envEmbedQueryPrefix), PassagePrefix: os.Getenv(envEmbedPassagePrefix)})
	default:
		return nil, nil, usageError{fmt.Errorf("unknown embedder %q (known: %s)", name, strings.Join(embedderNames, ", "))}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("embedder %s: %w", name, err)
	}
	dir := os.Getenv(envEmbedCache)
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
		slog.Warn(fmt.Sprintf("embedding cache %s cannot be used (%v): going on without it (set %s to another folder, or off)", dir, err, envEmbedCache))
		return e, func() error { return nil }, nil
	}
	return cache.Wrap(e, store), store.Close, nil
}
