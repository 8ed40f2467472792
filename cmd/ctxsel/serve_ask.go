package main

import (
	"context"
	"fmt"

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
	llm    llm.Client // nil: select and build the prompt, no answer
	window int        // the reader's window for Self-Route (0: ask.DefaultWindow)
}

// askReader is the LLM that answers /v1/ask, from serve --reader; a zero
// askReader falls back to the CTXSEL_LLM_* environment.
type askReader struct {
	client llm.Client
	window int
}

func (a indexAsker) Ask(ctx context.Context, req server.AskRequest) (server.AskResponse, error) {
	ans, err := ask.Ask(ctx, a.store, a.e, req.Query, ask.Options{Strategy: req.Spec, Selector: req.Selector, Order: req.Order, Candidates: req.TopN,
		Retriever: index.Retriever(req.Retriever), LLM: a.llm, Window: a.window})
	if err != nil {
		return server.AskResponse{}, fmt.Errorf("ask: %w", err)
	}
	resp := server.AskResponse{Selection: ans.Selection, Scores: ans.Scores}
	if ans.Reply != nil {
		resp.Answer = ans.Reply.Content
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
func serverBackends(ctx context.Context, cmd, embedderName, indexLoc string, rd askReader) (emb embed.Embedder, asker server.Asker, done func(), err error) {
	closeEmb := func() error { return nil }
	if embedderName != "" && embedderName != "none" {
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
	return indexAsker{store: store, e: e, llm: rd.client, window: rd.window}, func() { closeEmb(); store.Close() }, nil
}
