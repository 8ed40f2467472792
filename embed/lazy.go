package embed

import (
	"context"
	"fmt"
	"sync"
)

// Lazy is an Embedder opened on its first use: a service that may never
// embed (one sent only scores) does not pay for loading a model or reading
// an embedding cache at start. It is safe for concurrent use; callers that
// arrive while it opens wait for it. A failure to open is kept and returned
// by every call.
type Lazy struct {
	name string
	open func() (Embedder, func() error, error)

	once     sync.Once
	mu       sync.Mutex // guards closed and the close func against Close
	e        Embedder
	closeFn  func() error
	err      error
	closed   bool
	isLoaded bool
}

// NewLazy returns an Embedder that calls open on first use. name is the
// model's name (what ModelName reports before and after opening, e.g.
// "use-lite"); open returns the embedder and a function that releases it
// (nil when there is nothing to release).
func NewLazy(name string, open func() (Embedder, func() error, error)) *Lazy {
	return &Lazy{name: name, open: open}
}

func (l *Lazy) load() (Embedder, error) {
	l.once.Do(func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.closed {
			l.err = fmt.Errorf("embedder %s: used after Close", l.name)
			return
		}
		e, closeFn, err := l.open()
		if err != nil {
			l.err = fmt.Errorf("embedder %s: %w", l.name, err)
			return
		}
		l.e, l.closeFn, l.isLoaded = e, closeFn, true
	})
	return l.e, l.err
}

// Loaded reports whether the embedder has been opened.
func (l *Lazy) Loaded() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.isLoaded
}

// Embed opens the embedder if need be and embeds texts as passages.
func (l *Lazy) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e, err := l.load()
	if err != nil {
		return nil, err
	}
	return e.Embed(ctx, texts)
}

// EmbedQuery opens the embedder if need be and embeds texts as queries.
func (l *Lazy) EmbedQuery(ctx context.Context, texts []string) ([][]float32, error) {
	e, err := l.load()
	if err != nil {
		return nil, err
	}
	return Queries(ctx, e, texts)
}

// ModelID opens the embedder (the ID may depend on what is loaded) and
// returns its ModelID; if it cannot be opened, the name.
func (l *Lazy) ModelID() string {
	e, err := l.load()
	if err != nil {
		return l.name
	}
	return e.ModelID()
}

// ModelName is the name NewLazy was given; it never opens the embedder.
func (l *Lazy) ModelName() string { return l.name }

// Close releases the embedder if it was opened; one not opened yet never
// will be (a later use fails).
func (l *Lazy) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	if l.closeFn != nil {
		return l.closeFn()
	}
	return nil
}
