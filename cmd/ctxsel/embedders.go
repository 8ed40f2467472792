package main

import (
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/embed/embedders"
	"github.com/ctxsel/ctxsel/score"
)

// newEmbedder builds a named embedder configured by the environment
// (embedders.OpenFromEnv, no index), in the on-disk embedding cache.
// close releases the cache.
func newEmbedder(name string) (e embed.Embedder, close func() error, err error) {
	return embedders.OpenFromEnv(name, "")
}

// newScorerSet builds scorers by name (score.Set) over the embedders
// newEmbedder opens.
func newScorerSet() *score.Set { return embedders.Scorers(newEmbedder) }
