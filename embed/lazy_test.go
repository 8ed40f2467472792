package embed_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ctxsel/ctxsel/embed"
)

type constEmbedder struct{}

func (constEmbedder) ModelID() string { return "const@v1" }
func (constEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 0}
	}
	return out, nil
}

func TestLazyOpensOnFirstUseOnce(t *testing.T) {
	var opens, closes atomic.Int32
	l := embed.NewLazy("const", func() (embed.Embedder, func() error, error) {
		opens.Add(1)
		return constEmbedder{}, func() error { closes.Add(1); return nil }, nil
	})
	if got := embed.ModelName(l); got != "const" || opens.Load() != 0 || l.Loaded() {
		t.Fatalf("ModelName = %q, opens = %d, loaded %v: the name must not open the embedder", got, opens.Load(), l.Loaded())
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if v, err := l.Embed(context.Background(), []string{"a"}); err != nil || len(v) != 1 {
				t.Errorf("Embed: %v %v", v, err)
			}
			if _, err := embed.Queries(context.Background(), l, []string{"q"}); err != nil {
				t.Errorf("EmbedQuery: %v", err)
			}
		}()
	}
	wg.Wait()
	if opens.Load() != 1 || !l.Loaded() {
		t.Fatalf("opened %d times, loaded %v; want once", opens.Load(), l.Loaded())
	}
	if l.ModelID() != "const@v1" {
		t.Errorf("ModelID = %q", l.ModelID())
	}
	if err := l.Close(); err != nil || closes.Load() != 1 {
		t.Fatalf("Close: %v, closes %d", err, closes.Load())
	}
	_ = l.Close()
	if closes.Load() != 1 {
		t.Fatalf("closed twice")
	}
}

func TestLazyKeepsOpenError(t *testing.T) {
	opens := 0
	boom := errors.New("boom")
	l := embed.NewLazy("broken", func() (embed.Embedder, func() error, error) { opens++; return nil, nil, boom })
	for range 2 {
		if _, err := l.Embed(context.Background(), []string{"a"}); !errors.Is(err, boom) {
			t.Fatalf("Embed error %v, want boom", err)
		}
	}
	if opens != 1 || l.ModelID() != "broken" || l.Loaded() {
		t.Fatalf("opens %d, ModelID %q, loaded %v", opens, l.ModelID(), l.Loaded())
	}
}

func TestLazyClosedBeforeUseNeverOpens(t *testing.T) {
	opened := false
	l := embed.NewLazy("x", func() (embed.Embedder, func() error, error) { opened = true; return constEmbedder{}, nil, nil })
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Embed(context.Background(), []string{"a"}); err == nil || opened {
		t.Fatalf("Embed after Close: err %v, opened %v", err, opened)
	}
}
