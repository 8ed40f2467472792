package ask

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/token"
)

// IndexDeps stand in for what Ask supplies from the index it asks — the
// sentence embedder, the token counter of the index's encoding and the
// sentence vectors it stored — when a spec is resolved before that index
// is open: the command line resolves the user's spec once, first, so that
// a bad one fails before anything is opened, and Ask runs that value
// (Options.Resolved). Resolve with Deps, pass the same IndexDeps as
// Options.IndexDeps, and Ask binds them to the index, the question's
// embedder and the counter it opens. Until then each stand-in is the
// dependency left out: the embedder fails, the counter counts as
// token.Default does, no sentence vectors are stored. Bind them to one
// Ask at a time.
type IndexDeps struct {
	// SentenceEmbedder chooses the sentence embedder from the question's
	// embedder, on first need (nil: the package's SentenceEmbedder).
	SentenceEmbedder func(e embed.Embedder) (embed.Embedder, error)

	mu       sync.Mutex
	bound    bool
	e        embed.Embedder // the question's
	counter  token.Counter
	store    index.Store
	sentence embed.Embedder // chosen from e on first need
}

// errUnbound is what the sentence embedder says when used before Ask bound
// it.
var errUnbound = errors.New("ask: the index's dependencies were used before Ask opened the index")

// Deps serves the stand-ins: ctxsel.DepEmbedder, ctxsel.DepCounter and
// ctxsel.DepSentences; any other name wraps ctxsel.ErrNoDep.
func (d *IndexDeps) Deps(name string) (any, error) {
	switch name {
	case ctxsel.DepEmbedder:
		return lateEmbedder{d}, nil
	case ctxsel.DepCounter:
		c, err := token.New(token.Default) // shared: counts until Ask binds
		if err != nil {
			return nil, err
		}
		return lateCounter{d, c}, nil
	case ctxsel.DepSentences:
		return lateSentences{d}, nil
	}
	return nil, fmt.Errorf("%w: %s", ctxsel.ErrNoDep, name)
}

// bind makes the stand-ins what withDefaults would supply for this
// index: the sentence embedder chosen from e, counter, and store's
// sentence vectors when it stores them.
func (d *IndexDeps) bind(e embed.Embedder, counter token.Counter, store index.Store) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.bound, d.e, d.counter, d.store, d.sentence = true, e, counter, store, nil
}

// sentenceEmbedder is the bound sentence embedder, chosen on first need.
func (d *IndexDeps) sentenceEmbedder() (embed.Embedder, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.bound {
		return nil, errUnbound
	}
	if d.sentence == nil {
		choose := d.SentenceEmbedder
		if choose == nil {
			choose = SentenceEmbedder
		}
		e, err := choose(d.e)
		if err != nil {
			return nil, err
		}
		d.sentence = e
	}
	return d.sentence, nil
}

// boundCounter is the bound counter; nil before Ask binds one.
func (d *IndexDeps) boundCounter() token.Counter {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.counter
}

// sentenceStore is the bound store's sentence vectors; ok is false when
// it stores none or is not bound yet.
func (d *IndexDeps) sentenceStore() (ss ctxsel.SentenceStore, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.bound {
		return nil, false
	}
	ss, ok = d.store.(ctxsel.SentenceStore)
	return ss, ok
}

// lateEmbedder is the sentence embedder Ask binds.
type lateEmbedder struct{ d *IndexDeps }

func (l lateEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e, err := l.d.sentenceEmbedder()
	if err != nil {
		return nil, err
	}
	return e.Embed(ctx, texts)
}

func (l lateEmbedder) EmbedQuery(ctx context.Context, texts []string) ([][]float32, error) {
	e, err := l.d.sentenceEmbedder()
	if err != nil {
		return nil, err
	}
	return embed.Queries(ctx, e, texts)
}

// ModelID is the bound embedder's; "" before Ask binds it (or when it
// cannot be opened: Embed then says why).
func (l lateEmbedder) ModelID() string {
	e, err := l.d.sentenceEmbedder()
	if err != nil {
		return ""
	}
	return e.ModelID()
}

// lateCounter counts as the counter Ask binds, before that as unbound
// (token.Default's).
type lateCounter struct {
	d       *IndexDeps
	unbound token.Counter
}

func (l lateCounter) counter() token.Counter {
	if c := l.d.boundCounter(); c != nil {
		return c
	}
	return l.unbound
}

func (l lateCounter) Count(text string) int { return l.counter().Count(text) }
func (l lateCounter) Encoding() string      { return l.counter().Encoding() }

// lateSentences are the bound store's sentence vectors: none stored when
// it keeps none.
type lateSentences struct{ d *IndexDeps }

func (l lateSentences) StoredSentences(ctx context.Context, model string, ids, texts []string) ([]*ctxsel.StoredSentences, error) {
	if ss, ok := l.d.sentenceStore(); ok {
		return ss.StoredSentences(ctx, model, ids, texts)
	}
	return make([]*ctxsel.StoredSentences, len(ids)), nil
}
