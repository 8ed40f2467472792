package uselite

import (
	"context"
	"testing"

	ctxembed "github.com/ctxsel/ctxsel/embed"
)

type namedEmbedder string

func (n namedEmbedder) ModelID() string                                    { return string(n) }
func (namedEmbedder) Embed(context.Context, []string) ([][]float32, error) { return nil, nil }

// TestForSentences: the first embedder that is this model (any precision,
// any wrapper keeping its id) is the one sentences use; none is none.
func TestForSentences(t *testing.T) {
	other, int8 := namedEmbedder("ollama:nomic"), namedEmbedder(weightsID+"+windows128s96+int8")
	if e, ok := ForSentences(nil, other, int8, namedEmbedder(weightsID)); !ok || e != ctxembed.Embedder(int8) {
		t.Fatalf("got %v %v", e, ok)
	}
	if e, ok := ForSentences(other, namedEmbedder("use-lite-ish")); ok || e != nil {
		t.Fatalf("got %v %v", e, ok)
	}
	if _, ok := ForSentences(); ok {
		t.Fatal("none given")
	}
}
