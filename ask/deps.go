package ask

import (
	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/index"
)

// SelectorDeps is deps with what Ask supplies where deps has nothing: the
// sentence embedder (SentenceEmbedder(e)) and the store's sentence
// vectors. The token counter is left to the caller: the index's encoding
// is known only by asking the store.
func SelectorDeps(deps ctxsel.Deps, e embed.Embedder, store index.Store) ctxsel.Deps {
	return withDefaults(deps, e, nil, store)
}
