// Package askserve serves ask over the service: its Asker answers /v1/ask
// and the MCP tools ask and search with ask.Ask over one index. It lives
// beside the server so that ask, the domain, links no transport.
package askserve

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/ask"
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/server"
)

// Asker answers the service's /v1/ask and the MCP tools ask and search
// with ask.Ask over one index: hand it to server.New (Options.Asker) to
// serve a question-answering endpoint without further glue.
//
//	a := askserve.New(store, embedder, reader, askserve.Options{})
//	srv, err := server.New(server.DefaultConfig(), server.Options{Embedder: embedder, Asker: a})
type Asker struct {
	store index.Store
	e     embed.Embedder
	llm   llm.Client
	opts  Options
}

// Options configure an Asker. The zero value answers with
// ctxsel.DefaultStrategy fitted to the reader's window as ask.Ask learns it.
type Options struct {
	// Window is the reader's context window (ask.Options.Window): 0 asks
	// the reader's server, else ask.DefaultWindow.
	Window int
	// Deps supply what the text selectors of a request's default need
	// beyond what ask.Ask has (ask.Options.Deps).
	Deps ctxsel.Deps
	// Location is where the index lives as its operator knows it (a
	// path, a URL): errors a client sees name "the index" instead. ""
	// is the store's own (index.Stats.Location).
	Location string
}

var (
	_ server.Asker        = (*Asker)(nil)
	_ server.DepsSupplier = (*Asker)(nil)
	_ server.Searcher     = (*Asker)(nil)
	_ server.ReadyChecker = (*Asker)(nil)
)

// New answers over store, embedding questions with e (the model the
// index was built with) and answering with reader; a nil reader selects and
// returns the passages with no answer.
func New(store index.Store, e embed.Embedder, reader llm.Client, opts Options) *Asker {
	return &Asker{store: store, e: e, llm: reader, opts: opts}
}

// Ask implements server.Asker.
func (a *Asker) Ask(ctx context.Context, req server.AskRequest) (server.AskResponse, error) {
	ans, err := ask.Ask(ctx, a.store, a.e, req.Query, ask.Options{Resolved: req.Strategy, Deps: a.opts.Deps, Order: req.Order,
		Candidates: req.TopN, Retriever: index.Retriever(req.Retriever), LLM: a.llm, Window: a.opts.Window})
	if err != nil {
		return server.AskResponse{}, a.clientSafe(ctx, a.unavailable(ctx, fmt.Errorf("ask: %w", err)))
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

// SelectorDeps implements server.DepsSupplier: what a /v1/ask request's
// text selector gets from the Asker where the server's own dependencies
// (server.Options.SelectorDeps) supply nothing: the options' Deps, the
// sentence embedder ask.Ask would use and the sentence vectors the index
// stored (ask.SelectorDeps). The token counter is left to the server.
func (a *Asker) SelectorDeps() ctxsel.Deps {
	return ask.SelectorDeps(a.opts.Deps, a.e, a.store)
}

// Search implements server.Searcher: the index's best passages for query,
// neither selected nor cut to a window.
func (a *Asker) Search(ctx context.Context, query string, topN int) ([]server.Passage, error) {
	ans, err := ask.Ask(ctx, a.store, a.e, query, ask.Options{Strategy: "full", Candidates: topN, NoWindow: true})
	if err != nil {
		return nil, a.clientSafe(ctx, a.unavailable(ctx, fmt.Errorf("search: %w", err)))
	}
	out := make([]server.Passage, 0, len(ans.Passages))
	for _, p := range ans.Passages {
		out = append(out, server.Passage{ID: p.ID, Score: p.Score, Tokens: p.Tokens, Text: p.Text})
	}
	return out, nil
}

// Ready implements server.ReadyChecker: an embedded index must pass its
// cheap check (manifest, every file's size, header and checksum trailer),
// another back end must answer for its statistics.
func (a *Asker) Ready(ctx context.Context) error {
	if d, ok := a.store.(*index.Dir); ok {
		// A deleted directory reads as an index with nothing in it yet:
		// under a running server it is a vanished one.
		if _, err := os.Stat(d.Path()); err != nil {
			return fmt.Errorf("index %s: %w", d.Path(), err)
		}
		chk, err := d.Check(ctx, false)
		if err != nil {
			return err
		}
		return chk.Err(d.Path())
	}
	_, err := a.store.Stats(ctx)
	return err
}

// unavailable marks err server.ErrUnavailable when the index fails its
// readiness check too (deleted, unreadable, damaged): the request failed
// because the index did, not the client ("holds no passages" of a deleted
// directory is not bad input).
func (a *Asker) unavailable(ctx context.Context, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if rerr := a.Ready(context.WithoutCancel(ctx)); rerr != nil {
		return fmt.Errorf("%w: %w (the index fails its check: %v)", server.ErrUnavailable, err, rerr)
	}
	return err
}

// clientSafe keeps the index's location out of an error the server shows
// its client (bad input: the rest is logged, never shown).
func (a *Asker) clientSafe(ctx context.Context, err error) error {
	loc := a.opts.Location
	if loc == "" {
		if st, serr := a.store.Stats(context.WithoutCancel(ctx)); serr == nil {
			loc = st.Location
		}
	}
	if loc == "" || !strings.Contains(err.Error(), loc) {
		return err
	}
	return &redacted{msg: strings.ReplaceAll(err.Error(), loc, "the index"), err: err}
}

// redacted is an error with its text rewritten and its chain kept.
type redacted struct {
	msg string
	err error
}

func (e *redacted) Error() string { return e.msg }
func (e *redacted) Unwrap() error { return e.err }

// LogDetail is the text before redaction, for the server's log (which may
// name the location: its advice then reads "--index /srv/idx", not
// "--index the index").
func (e *redacted) LogDetail() string { return e.err.Error() }
