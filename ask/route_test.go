package ask_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/ask"
	"github.com/ctxsel/ctxsel/index/indextest"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/llm/llmtest"
)

// TestAskSelfRoute: the reader declines the top-1, so Self-Route asks again
// with every candidate (document order) and counts both calls' tokens.
func TestAskSelfRoute(t *testing.T) {
	calls := 0
	srv := llmtest.New(func(c llmtest.Call) llmtest.Reply {
		calls++
		if calls == 1 {
			return llmtest.Reply{Content: "Unanswerable.", PromptTokens: 50, CompletionTokens: 3}
		}
		return llmtest.Reply{Content: "Four craters", PromptTokens: 200, CompletionTokens: 2}
	})
	defer srv.Close()
	client, _, err := llm.OpenSpec(srv.OpenAISpec("m"), llm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	store := build(t)
	q := "How many craters does the Etna summit have?"
	a, err := ask.Ask(ctx, store, indextest.HashEmbedder{}, q, ask.Options{Strategy: "selfroute:k=1", LLM: client})
	if err != nil {
		t.Fatal(err)
	}
	rt := a.Route
	if rt == nil || !rt.Routed || len(rt.Steps) != 2 || rt.Steps[0].K != 1 || rt.InputTokens != 250 || rt.OutputTokens != 5 {
		t.Fatalf("route %+v", rt)
	}
	if a.Reply.Content != "Four craters" || a.Selection.K != len(a.Scores) || !slices.IsSorted(a.Selection.Indices) {
		t.Fatalf("final step: reply %q, k %d of %d, indices %v", a.Reply.Content, a.Selection.K, len(a.Scores), a.Selection.Indices)
	}
	// The first step has the Self-Route prompt; the long context the normal
	// one (the answer's prompt).
	if !strings.Contains(srv.Calls()[0].Prompt(), "write “unanswerable”") || !strings.Contains(srv.Calls()[1].Prompt(), "Etna volcano summit has four craters") ||
		strings.Contains(a.Prompt, "unanswerable") || !strings.HasPrefix(a.Prompt, "Your task is to answer the question provided.") || a.Prompt != srv.Calls()[1].Prompt() {
		t.Fatalf("prompts %q, then %q", srv.Calls()[0].Prompt(), a.Prompt)
	}

	// answered from the top-k: one call
	calls = 1
	a, err = ask.Ask(ctx, store, indextest.HashEmbedder{}, q, ask.Options{Strategy: "selfroute:k=2", LLM: client})
	if err != nil || a.Route.Routed || len(a.Route.Steps) != 1 || a.Selection.K != 2 {
		t.Fatalf("one step: %+v %v", a.Route, err)
	}

	// Adaptive-k's variant: its own prompt and 5,000 tokens first, and the
	// official rule, case included: "Unanswerable." does not route, "The
	// question is unanswerable." does.
	for reply, routed := range map[string]bool{"Unanswerable.": false, "The question is unanswerable.": true} {
		calls = 0
		srv2 := llmtest.New(func(c llmtest.Call) llmtest.Reply {
			calls++
			if calls == 1 {
				return llmtest.Reply{Content: reply}
			}
			return llmtest.Reply{Content: "Four craters"}
		})
		c2, _, err := llm.OpenSpec(srv2.OpenAISpec("m"), llm.Options{})
		if err != nil {
			t.Fatal(err)
		}
		a, err = ask.Ask(ctx, store, indextest.HashEmbedder{}, q, ask.Options{Strategy: "selfroute:prompt=adaptivek", LLM: c2})
		if err != nil || a.Route.Routed != routed || !strings.Contains(srv2.Calls()[0].Prompt(), `Write "unanswerable" if the query can not be answered`) {
			t.Fatalf("%q: routed %v (%v), first prompt %q", reply, a.Route.Routed, err, srv2.Calls()[0].Prompt())
		}
		srv2.Close()
	}

	// a route needs an LLM; a bad k is bad input
	for _, opts := range []ask.Options{{Strategy: "selfroute"}, {Strategy: "selfroute:k=0", LLM: client}} {
		if _, err := ask.Ask(ctx, store, indextest.HashEmbedder{}, q, opts); !errors.Is(err, ctxsel.ErrInvalidInput) {
			t.Fatalf("%+v: %v", opts, err)
		}
	}
}

// TestAskLLMFailureKeepsSelection: a failing LLM returns the error with the
// passages and the prompt filled, so the caller can still show them.
func TestAskLLMFailureKeepsSelection(t *testing.T) {
	srv := llmtest.New(llmtest.Echo)
	defer srv.Close()
	srv.Script(llmtest.Fault{Status: 401})
	client, _, err := llm.OpenSpec(srv.OpenAISpec("m"), llm.Options{MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	a, err := ask.Ask(ctx, build(t), indextest.HashEmbedder{}, "How many craters does the Etna summit have?", ask.Options{Strategy: "topk:k=2", LLM: client})
	if err == nil || a.Prompt == "" || len(a.Passages) != 2 || a.Reply != nil {
		t.Fatalf("err %v, answer %+v", err, a)
	}
}
