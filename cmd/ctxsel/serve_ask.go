package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/ask"
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/server"
)

// indexAsker answers /v1/ask from an index with package ask: the server
// only translates HTTP, ask does the retrieval, selection and prompting.
type indexAsker struct {
	store  index.Store
	e      embed.Embedder
	llm    llm.Client  // nil: select and build the prompt, no answer
	window int         // the reader's window for Self-Route (0: ask.DefaultWindow)
	deps   ctxsel.Deps // the operator's strategy dependencies (the band's policy)
	// location is the store's (a path or a URL): it is the operator's to
	// know, so errors a client sees name "the index" instead.
	location string
}

var _ server.ReadyChecker = indexAsker{}

// Ready implements server.ReadyChecker: an embedded index must pass its
// cheap check (manifest, every file's size, header and checksum trailer),
// another back end must answer for its statistics.
func (a indexAsker) Ready(ctx context.Context) error {
	if d, ok := a.store.(*index.Dir); ok {
		chk, err := d.Check(ctx, false)
		if err != nil {
			return err
		}
		return chk.Err(d.Path())
	}
	_, err := a.store.Stats(ctx)
	return err
}

// clientSafe keeps the index's location out of an error the server shows
// its client (bad input: the rest is logged, never shown).
func (a indexAsker) clientSafe(err error) error {
	if err == nil || a.location == "" || !strings.Contains(err.Error(), a.location) {
		return err
	}
	return &redacted{msg: strings.ReplaceAll(err.Error(), a.location, "the index"), err: err}
}

// redacted is an error with its text rewritten and its chain kept.
type redacted struct {
	msg string
	err error
}

func (e *redacted) Error() string { return e.msg }
func (e *redacted) Unwrap() error { return e.err }

// askReader is the LLM that answers /v1/ask, from serve --reader; a zero
// askReader falls back to the CTXSEL_LLM_* environment. deps are the
// operator's strategy dependencies every ask resolves its spec with (the
// band's policy read at start).
type askReader struct {
	client llm.Client
	window int
	deps   ctxsel.Deps
}

func (a indexAsker) Ask(ctx context.Context, req server.AskRequest) (server.AskResponse, error) {
	ans, err := ask.Ask(ctx, a.store, a.e, req.Query, ask.Options{Strategy: req.Spec, Deps: a.deps, Selector: req.Selector, Order: req.Order, Candidates: req.TopN,
		Retriever: index.Retriever(req.Retriever), LLM: a.llm, Window: a.window})
	if err != nil {
		return server.AskResponse{}, a.clientSafe(fmt.Errorf("ask: %w", err))
	}
	resp := server.AskResponse{Selection: ans.Selection, Scores: ans.Scores}
	if ans.Reply != nil {
		resp.Answer, resp.AnswerDefect = ans.Reply.Content, ans.ReplyDefect
		resp.Usage = &server.AskUsage{LLMCalls: 1, InputTokens: ans.Reply.PromptTokens, OutputTokens: ans.Reply.CompletionTokens}
	}
	if rt := ans.Route; rt != nil {
		resp.Usage = &server.AskUsage{LLMCalls: len(rt.Steps), InputTokens: rt.InputTokens, OutputTokens: rt.OutputTokens, Routed: rt.Routed}
	}
	if pk := ans.Pick; pk != nil && pk.Calls > 0 {
		if resp.Usage == nil {
			resp.Usage = &server.AskUsage{}
		}
		resp.Usage.PickerCalls, resp.Usage.PickerPromptTokens, resp.Usage.PickerCompletionTokens = pk.Calls, pk.PromptTokens, pk.CompletionTokens
		resp.Usage.PickerInvalid = !pk.Valid
	}
	for _, p := range ans.Passages {
		resp.Passages = append(resp.Passages, server.Passage{ID: p.ID, Score: p.Score, Tokens: p.Tokens, Text: p.Text})
	}
	return resp, nil
}

// serverBackends opens what serve and mcp hand server.New: the embedder
// (none for "" or "none") and, given an index location, the asker answering
// with rd (or the environment's LLM). done releases both; on error nothing
// is left open.
//
// The offline model (with its embedding cache) is opened on first use: a
// server that is only ever sent scores never loads it (~45 MB resident,
// and the cache's files are read whole on open).
func serverBackends(ctx context.Context, cmd, embedderName, indexLoc string, rd askReader) (emb embed.Embedder, asker server.Asker, done func(), err error) {
	closeEmb := func() error { return nil }
	switch embedderName {
	case "", "none":
	case "use-lite":
		// A bad setting is refused at start, not at the first request.
		if _, err := useLitePrecision(""); err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %w", cmd, err)
		}
		lazy := embed.NewLazy("use-lite", func() (embed.Embedder, func() error, error) { return newEmbedder("use-lite") })
		emb, closeEmb = lazy, lazy.Close
	default:
		if emb, closeEmb, err = newEmbedder(embedderName); err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %w", cmd, err)
		}
	}
	closeAsker := func() {}
	if indexLoc != "" {
		if asker, closeAsker, err = newIndexAsker(ctx, indexLoc, rd); err != nil {
			_ = closeEmb()
			return nil, nil, nil, err
		}
	}
	return emb, asker, func() { closeAsker(); _ = closeEmb() }, nil
}

// newIndexAsker opens the index at loc with the embedder it was built with
// and rd's LLM, or else the one the environment configures, if any.
func newIndexAsker(ctx context.Context, loc string, rd askReader) (server.Asker, func(), error) {
	store, err := openStore(ctx, loc, false, "")
	if err != nil {
		return nil, nil, fmt.Errorf("serve --index: %w", err)
	}
	st, err := store.Stats(ctx)
	if err != nil {
		store.Close()
		return nil, nil, fmt.Errorf("serve --index: %w", err)
	}
	e, closeEmb, err := embedderFor("", st.Config.Model)
	if err != nil {
		store.Close()
		return nil, nil, fmt.Errorf("serve --index: %w", err)
	}
	if rd.client == nil {
		if rd.client, err = llmFromEnv(); err != nil {
			store.Close()
			closeEmb()
			return nil, nil, usageError{fmt.Errorf("serve: %w", err)}
		}
	}
	return indexAsker{store: store, e: e, llm: rd.client, window: rd.window, deps: rd.deps, location: st.Location}, func() { closeEmb(); store.Close() }, nil
}
