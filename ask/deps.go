package ask

import (
	"fmt"
	"sync"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/embed/uselite"
	"github.com/ctxsel/ctxsel/index"
)

// SelectorDeps is deps with what Ask supplies where deps has nothing: the
// sentence embedder (SentenceEmbedder(e)) and the store's sentence
// vectors. The token counter is left to the caller: the index's encoding
// is known only by asking the store.
func SelectorDeps(deps ctxsel.Deps, e embed.Embedder, store index.Store) ctxsel.Deps {
	return withDefaults(deps, e, nil, store)
}

// SentenceEmbedder is the embedder the evidence selector scores sentences
// with when the caller supplies none: e when it is the embedded USE-lite
// model, which the sentence weights were fitted with, else a USE-lite
// model of the process's own. `index add --sentences` stores sentence
// vectors by it, so that ask finds them under its ModelID.
func SentenceEmbedder(e embed.Embedder) (embed.Embedder, error) {
	if m, ok := uselite.ForSentences(e); ok {
		return m, nil
	}
	return sentenceEmbedder()
}

// sentenceEmbedder is the process's USE-lite model for sentences, built
// once (its weights are decoded once per process either way).
var sentenceEmbedder = sync.OnceValues(func() (embed.Embedder, error) {
	m, err := uselite.New(uselite.Options{})
	if err != nil {
		return nil, fmt.Errorf("the sentence embedder: %w", err)
	}
	return m, nil
})
