package llm_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/llm/llmtest"
)

// Parse an endpoint spec; the key is never part of it.
func ExampleParseSpec() {
	sp, err := llm.ParseSpec("openai:qwen2.5-7b@http://127.0.0.1:8000/v1#window=32768")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sp.Provider, sp.Model, sp.BaseURL, sp.Window)
	_, err = llm.ParseSpec("anthropic:claude")
	fmt.Println(err)
	// Output:
	// openai qwen2.5-7b http://127.0.0.1:8000/v1 32768
	// llm: endpoint "anthropic:claude": unknown provider "anthropic" (want openai or ollama): invalid input
}

// Open clients for several roles sharing one concurrency limit and the call
// cache: the second identical call is answered from disk.
func ExampleOpener() {
	srv := llmtest.New(nil) // echoes the prompt
	defer srv.Close()
	dir, _ := os.MkdirTemp("", "llmcache")
	defer os.RemoveAll(dir)
	cache, err := llm.OpenCache(dir, llm.CacheOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer cache.Close()

	open := llm.Opener(llm.Options{Limiter: llm.NewLimiter(4)}, cache)
	reader, err := open(srv.OpenAISpec("reader"))
	if err != nil {
		log.Fatal(err)
	}
	for range 2 {
		r, err := llm.Ask(context.Background(), reader, "hello")
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(r.Content, r.Cached)
	}
	fmt.Println("server saw", srv.Requests(), "request")
	// Output:
	// hello false
	// hello true
	// server saw 1 request
}
