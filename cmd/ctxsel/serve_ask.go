package main

import (
	"context"
	"fmt"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/embed/embedders"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/server"
	"github.com/ctxsel/ctxsel/server/askserve"
)

// askReader is the LLM that answers /v1/ask, from serve --reader; a zero
// askReader falls back to the CTXSEL_LLM_* environment. deps are the
// operator's strategy dependencies every ask resolves its spec with (the
// band's policy read at start).
type askReader struct {
	client llm.Client
	window int
	deps   ctxsel.Deps
}

// backends are what serve and mcp hand server.New: the served embedder
// (nil for "" or "none"), the asker over an index (nil without one) and
// the index's embedder, which embeds its questions. done releases them.
type backends struct {
	emb, indexEmb embed.Embedder
	asker         server.Asker
	done          func()
}

// serverBackends opens what serve and mcp hand server.New: the embedder
// (none for "" or "none") and, given an index location, the asker answering
// with rd (or the environment's LLM). On error nothing is left open.
//
// The offline model (with its embedding cache) is opened on first use: a
// server that is only ever sent scores never loads it (~45 MB resident,
// and the cache's files are read whole on open).
func serverBackends(ctx context.Context, cmd, embedderName, indexLoc string, rd askReader) (backends, error) {
	var b backends
	closeEmb := func() error { return nil }
	switch embedderName {
	case "", "none":
	case "use-lite":
		// A bad setting is refused at start, not at the first request.
		if _, err := embedders.UseLitePrecision(""); err != nil {
			return b, fmt.Errorf("%s: %w", cmd, err)
		}
		lazy := embed.NewLazy("use-lite", func() (embed.Embedder, func() error, error) { return openEmbedder(embedders.Default, "") })
		b.emb, closeEmb = lazy, lazy.Close
	default:
		var err error
		if b.emb, closeEmb, err = openEmbedder(embedderName, ""); err != nil {
			return b, fmt.Errorf("%s: %w", cmd, err)
		}
	}
	closeAsker := func() {}
	if indexLoc != "" {
		var err error
		if b.asker, b.indexEmb, closeAsker, err = newIndexAsker(ctx, cmd, indexLoc, rd); err != nil {
			_ = closeEmb()
			return backends{}, err
		}
	}
	b.done = func() { closeAsker(); _ = closeEmb() }
	return b, nil
}

// newIndexAsker opens the index at loc with the embedder it was built with
// (returned too: it embeds the index's questions) and rd's LLM, or else
// the one the environment configures, if any. cmd ("serve", "mcp") names
// the command in errors.
func newIndexAsker(ctx context.Context, cmd, loc string, rd askReader) (server.Asker, embed.Embedder, func(), error) {
	store, err := openStore(ctx, loc, false, "")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s --index: %w", cmd, err)
	}
	st, err := store.Stats(ctx)
	if err != nil {
		store.Close()
		return nil, nil, nil, fmt.Errorf("%s --index: %w", cmd, err)
	}
	e, closeEmb, err := openEmbedder("", st.Config.Model)
	if err != nil {
		store.Close()
		return nil, nil, nil, fmt.Errorf("%s --index: %w", cmd, err)
	}
	if rd.client == nil {
		if rd.client, err = llmFromEnv(); err != nil {
			store.Close()
			closeEmb()
			return nil, nil, nil, usageError{fmt.Errorf("%s: %w", cmd, err)}
		}
	}
	asker := askserve.New(store, e, rd.client, askserve.Options{Window: rd.window, Deps: rd.deps, Location: st.Location})
	return asker, e, func() { closeEmb(); store.Close() }, nil
}
