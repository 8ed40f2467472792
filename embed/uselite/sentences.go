package uselite

import (
	"strings"

	ctxembed "github.com/ctxsel/ctxsel/embed"
)

// Name is the model's name: its ModelID starts with it and "@", and
// ctxsel's configuration calls it so (--embedder use-lite).
const Name = "use-lite"

// ForSentences is the first of es (nil ones skipped) that is this model,
// at any precision and through any wrapper that keeps its ModelID (the
// embedding cache): the evidence selector's sentence weights were fitted
// with its vectors, so a caller that already has it (the index's embedder)
// scores sentences with it rather than open a second copy. ok is false
// when none is; the caller then opens a model of its own.
func ForSentences(es ...ctxembed.Embedder) (e ctxembed.Embedder, ok bool) {
	for _, e := range es {
		if e != nil && strings.HasPrefix(e.ModelID(), Name+"@") {
			return e, true
		}
	}
	return nil, false
}
