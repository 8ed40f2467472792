package cache

import (
	"context"
	"crypto/sha256"
	"fmt"

	"github.com/ctxsel/ctxsel/embed"
)

// Wrap returns an embed.Embedder that answers from s where it can and asks e
// for the rest, storing e's answers in s. Its ModelID is e's.
//
// The result also implements embed.QueryEmbedder: when e does, query vectors
// are cached separately from passage vectors; when it does not, queries and
// passages share e.Embed's cache.
//
// Vectors from e are validated (count, one dimension matching what is
// already cached for the model, finite values) before anything is stored.
// A store that cannot be written or read is bypassed with one note (see
// "A cache that cannot be written"): the call still answers. Two
// concurrent calls missing on the same text may both send it to e; the
// store keeps one copy.
//
// Keys are sha256 of the text as given (before any prefix the backend adds;
// prefixes are part of the ModelID). Wrap(e, nil) returns e unchanged.
func Wrap(e embed.Embedder, s *Store) embed.Embedder {
	if s == nil {
		return e
	}
	return &cached{inner: e, store: s}
}

type cached struct {
	inner embed.Embedder
	store *Store
}

var _ embed.QueryEmbedder = (*cached)(nil)

func (c *cached) ModelID() string { return c.inner.ModelID() }

// ModelName implements embed.Named with e's name.
func (c *cached) ModelName() string { return embed.ModelName(c.inner) }

func (c *cached) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return c.embed(ctx, texts, kindPassage)
}

func (c *cached) EmbedQuery(ctx context.Context, texts []string) ([][]float32, error) {
	if _, ok := c.inner.(embed.QueryEmbedder); !ok {
		return c.embed(ctx, texts, kindPassage)
	}
	return c.embed(ctx, texts, kindQuery)
}

func (c *cached) embed(ctx context.Context, texts []string, kind byte) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n := ns{kind: kind, id: c.inner.ModelID()}
	keys := make([]key, len(texts))
	for i, t := range texts {
		keys[i] = sha256.Sum256([]byte(t))
	}
	out, err := c.store.get(n, keys)
	if err != nil {
		return nil, err
	}

	// Distinct missing texts, in first-seen order.
	var (
		missTexts []string
		missKeys  []key
		missAt    = map[key]int{}
	)
	for i, v := range out {
		if v != nil {
			continue
		}
		if _, ok := missAt[keys[i]]; !ok {
			missAt[keys[i]] = len(missTexts)
			missTexts = append(missTexts, texts[i])
			missKeys = append(missKeys, keys[i])
		}
	}
	misses := 0
	for _, v := range out {
		if v == nil {
			misses++
		}
	}
	c.store.hits.Add(int64(len(texts) - misses))
	c.store.misses.Add(int64(misses))
	if len(missTexts) == 0 {
		return out, nil
	}

	var vecs [][]float32
	if kind == kindQuery {
		vecs, err = embed.Queries(ctx, c.inner, missTexts)
	} else {
		vecs, err = c.inner.Embed(ctx, missTexts)
	}
	if err != nil {
		return nil, err
	}
	dim, err := embed.CheckVectors(vecs, len(missTexts))
	if err != nil {
		return nil, fmt.Errorf("cache: embedder %s: %w", n.id, err)
	}
	for i, v := range out {
		if v != nil && len(v) != dim {
			return nil, fmt.Errorf("cache: embedder %s returned %d-dimensional vectors, cached text %d has %d", n.id, dim, i, len(v))
		}
	}
	if err := c.store.put(n, missKeys, vecs); err != nil {
		return nil, err
	}
	used := make([]bool, len(vecs))
	for i, v := range out {
		if v != nil {
			continue
		}
		j := missAt[keys[i]]
		if used[j] {
			out[i] = append([]float32(nil), vecs[j]...) // repeated text: its own copy
		} else {
			out[i], used[j] = vecs[j], true
		}
	}
	return out, nil
}
