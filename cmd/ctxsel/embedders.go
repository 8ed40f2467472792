package main

import (
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/embed/embedders"
	"github.com/ctxsel/ctxsel/score"
)

// newScorerSet builds scorers by name (score.Set) over the embedders
// openEmbedder opens, configured by the environment (no index).
func newScorerSet() *score.Set {
	return embedders.Scorers(func(name string) (embed.Embedder, func() error, error) { return openEmbedder(name, "") })
}
