package main

import (
	"context"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/llm/llmtest"
)

func TestLLMFlagsValidate(t *testing.T) {
	for _, args := range [][]string{
		{"--llm-concurrency=0"}, {"--temperature=-1"}, {"--max-tokens=-5"},
		{"--llm-timeout=0s"}, {"--llm-retries=99"}, {"--seed-llm=-2"},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		f := addLLMFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.open(io.Discard); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

// TestLLMFlagsOpenAndCache: one opener serves a role; with the cache on, the
// same request a second time reaches the server no more.
func TestLLMFlagsOpenAndCache(t *testing.T) {
	t.Setenv("CTXSEL_LLM_CACHE", t.TempDir())
	srv := llmtest.New(llmtest.Echo)
	defer srv.Close()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	f := addLLMFlags(fs)
	if err := fs.Parse([]string{"--seed-llm=7", "--llm-concurrency=2"}); err != nil {
		t.Fatal(err)
	}
	open, cache, err := f.open(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	c, err := open(srv.OpenAISpec("m"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := llm.Ask(context.Background(), c, "hello"); err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.Requests(); n != 1 {
		t.Fatalf("server saw %d requests, want 1 (second from cache)", n)
	}
	calls := srv.Calls()
	if calls[0].Seed == nil || *calls[0].Seed != 7 {
		t.Fatalf("seed not sent: %+v", calls[0])
	}
	if _, err := open("nosuch:model"); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Fatalf("bad spec: %v", err)
	}
}

// TestLLMFlagsTimeoutFromEnv: CTXSEL_LLM_TIMEOUT bounds the calls of a
// client a flag names (ask --reader), unless --llm-timeout is given.
func TestLLMFlagsTimeoutFromEnv(t *testing.T) {
	t.Setenv("CTXSEL_LLM_CACHE", "off")
	hang := make(chan struct{})
	srv := llmtest.New(func(c llmtest.Call) llmtest.Reply { <-hang; return llmtest.Reply{Content: "late"} })
	defer srv.Close()
	defer close(hang)
	for _, tc := range []struct {
		env  string
		args []string
		want string
	}{
		{"50ms", nil, "total deadline of 50ms"},
		{"50ms", []string{"--llm-timeout=60ms"}, "total deadline of 60ms"},
	} {
		t.Setenv("CTXSEL_LLM_TIMEOUT", tc.env)
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		f := addLLMFlags(fs)
		if err := fs.Parse(append(tc.args, "--llm-retries=0")); err != nil {
			t.Fatal(err)
		}
		open, _, err := f.open(io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		c, err := open(srv.OpenAISpec("m"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := llm.Ask(context.Background(), c, "hello"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("env %s, flags %v: %v, want %q", tc.env, tc.args, err, tc.want)
		}
	}
	t.Setenv("CTXSEL_LLM_TIMEOUT", "soon")
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	if _, _, err := addLLMFlags(fs).open(io.Discard); err == nil || !strings.Contains(err.Error(), "CTXSEL_LLM_TIMEOUT") {
		t.Errorf("a bad CTXSEL_LLM_TIMEOUT: %v", err)
	}
}
