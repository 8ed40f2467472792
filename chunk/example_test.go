package chunk_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/token"
)

// Token windows with provenance: every chunk knows its document, its index
// and where it lies in the text.
func Example() {
	tk, err := token.New("") // cl100k_base
	if err != nil {
		log.Fatal(err)
	}
	c, err := chunk.Parse("tokens:size=8,overlap=2", tk, nil)
	if err != nil {
		log.Fatal(err)
	}
	text := "Go is an open source programming language that makes it simple to build secure, scalable systems."
	chunks, err := c.Chunk(context.Background(), "go.txt", text)
	if err != nil {
		log.Fatal(err)
	}
	for _, ch := range chunks {
		fmt.Printf("%s [%d:%d] %d tokens %q\n", ch.ID(), ch.Start, ch.End, ch.Tokens, ch.Text)
	}
	// Output:
	// go.txt#0 [0:46] 8 tokens "Go is an open source programming language that"
	// go.txt#1 [32:78] 8 tokens " language that makes it simple to build secure"
	// go.txt#2 [65:97] 6 tokens " build secure, scalable systems."
}

// Whole sentences packed under a token limit.
func ExampleNewSentences() {
	tk, _ := token.New("")
	c, _ := chunk.NewSentences(tk, 12)
	text := "Dr. Watson arrived. Holmes was out. The fog was thick over Baker Street that evening."
	chunks, _ := c.Chunk(context.Background(), "story", text)
	for _, ch := range chunks {
		fmt.Printf("%d: %s\n", ch.Index, strings.TrimSpace(ch.Text))
	}
	// Output:
	// 0: Dr. Watson arrived. Holmes was out.
	// 1: The fog was thick over Baker Street that evening.
}
