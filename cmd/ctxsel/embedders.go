package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/embed/cache"
	"github.com/ctxsel/ctxsel/embed/ollama"
	"github.com/ctxsel/ctxsel/embed/openai"
	"github.com/ctxsel/ctxsel/embed/uselite"
)

// Environment variables that configure the remote embedders.
const (
	envEmbedBaseURL       = "CTXSEL_EMBED_BASE_URL"       // openai: server base URL (default api.openai.com)
	envEmbedModel         = "CTXSEL_EMBED_MODEL"          // openai, ollama: model name (required)
	envEmbedDimensions    = "CTXSEL_EMBED_DIMENSIONS"     // openai, ollama: optional shortened dimension
	envEmbedQueryPrefix   = "CTXSEL_EMBED_QUERY_PREFIX"   // instruction prefix for queries, e.g. "query: "
	envEmbedPassagePrefix = "CTXSEL_EMBED_PASSAGE_PREFIX" // instruction prefix for passages, e.g. "passage: "
	envEmbedCache         = "CTXSEL_EMBED_CACHE"          // cache directory; "off" disables the cache
)

var embedderNames = []string{"use-lite", "openai", "ollama"}

// newEmbedder builds a named embedder, wrapped in the on-disk cache unless
// CTXSEL_EMBED_CACHE=off. close releases the cache.
func newEmbedder(name string) (e embed.Embedder, close func() error, err error) {
	dims := 0
	if s := os.Getenv(envEmbedDimensions); s != "" {
		if dims, err = strconv.Atoi(s); err != nil || dims < 0 {
			return nil, nil, usageError{fmt.Errorf("%s=%q: want a positive whole number", envEmbedDimensions, s)}
		}
	}
	switch name {
	case "use-lite":
		e, err = uselite.New(uselite.Options{})
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
		return nil, nil, fmt.Errorf("embedding cache %s (set %s=off to run without): %w", dir, envEmbedCache, err)
	}
	return cache.Wrap(e, store), store.Close, nil
}
