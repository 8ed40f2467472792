package ctxsel

import "context"

// DepSentences names the optional dependency of text selectors that score
// sentences (the evidence selector): a SentenceStore, whose stored vectors
// are used instead of embedding the passages' sentences at query time.
const DepSentences = "sentences"

// SentenceStore gives the sentence vectors an index stored beside its
// passages (ctxsel index add --sentences), so that a selector embeds no
// passage text at query time.
type SentenceStore interface {
	// StoredSentences returns, for each passage — its candidate id (an
	// index's "doc#chunk") and its text — the sentences stored for it by
	// the embedding model named: their byte spans into the text and their
	// vectors. An entry is nil where nothing is stored for that passage,
	// text and model (a passage from elsewhere, another model's vectors, a
	// text that changed): the caller embeds those. An error — a damaged
	// store wraps its own ErrCorrupt — fails the selection: stored vectors
	// are never silently replaced by fresh ones.
	StoredSentences(ctx context.Context, model string, ids, texts []string) ([]*StoredSentences, error)
}

// StoredSentences are one passage's stored sentences: Spans[i] are the
// byte offsets [start, end) of sentence i in the passage text, Vectors[i]
// its vector.
type StoredSentences struct {
	Spans   [][2]int
	Vectors [][]float32
}
