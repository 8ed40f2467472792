package score

import (
	"errors"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/fusion"
)

// TestSet: names build the scorers they say, once; a hybrid and the dense
// baseline share one embedder; unknown names and bad specs are the
// caller's errors; Close releases what was opened.
func TestSet(t *testing.T) {
	opened, closed := 0, 0
	s := &Set{Embedders: []string{"bag"}, Dense: "bag", Open: func(name string) (embed.Embedder, func() error, error) {
		opened++
		return &bagEmbedder{}, func() error { closed++; return nil }, nil
	}}
	h, err := s.Get("hybrid")
	if err != nil {
		t.Fatal(err)
	}
	hy, ok := h.(*Hybrid)
	if !ok || hy.Method != fusion.ZScore || hy.Alpha != DefaultAlpha || hy.Dense.Name() != "bag" {
		t.Fatalf("hybrid: %#v", h)
	}
	base, err := s.Baselines(h)
	if err != nil || len(base) != 2 || base[0] != hy.Dense || base[1].Name() != "bm25" {
		t.Fatalf("baselines: %v %v", base, err)
	}
	if d, _ := s.Get("bag"); d != hy.Dense {
		t.Fatal("the dense scorer is built twice")
	}
	e, err := s.EmbedderOf("bag")
	if err != nil || e != hy.Dense.(*Embedding).Embedder() {
		t.Fatalf("embedder: %v %v", e, err)
	}
	if _, err := s.EmbedderOf("bm25"); err == nil {
		t.Fatal("bm25 has no embedder")
	}
	if b, _ := s.Get("bm25"); b.Name() != "bm25" {
		t.Fatal(b.Name())
	}
	hb, err := s.Get("hybrid:alpha=0.25,fusion=rrf")
	if err != nil || hb.(*Hybrid).Alpha != 0.25 || hb.(*Hybrid).Method != fusion.RRF {
		t.Fatalf("%v %v", hb, err)
	}
	_, err = s.Get("cosine")
	if !errors.Is(err, ErrUnknownScorer) || !errors.Is(err, ctxsel.ErrInvalidInput) || err.Error() != `unknown scorer "cosine" (known: bm25, hybrid[:alpha=0.5,fusion=zscore|minmax|rrf,dense=NAME], bag)` {
		t.Fatalf("unknown: %v", err)
	}
	if _, err := s.Get("hybrid:alpha=2"); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("bad hybrid: %v", err)
	}
	if _, err := s.Get("hybrid:dense=cosine"); !errors.Is(err, ErrUnknownScorer) {
		t.Fatalf("hybrid of an unknown dense: %v", err)
	}
	if err := s.Close(); err != nil || opened != 1 || closed != 1 {
		t.Fatalf("opened %d, closed %d: %v", opened, closed, err)
	}
	failing := &Set{Embedders: []string{"bag"}, Open: func(string) (embed.Embedder, func() error, error) { return nil, nil, errors.New("no model") }}
	if _, err := failing.Get("bag"); err == nil || !strings.Contains(err.Error(), "scorer bag: no model") || errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("open failure: %v", err)
	}
}

// FuzzSet: any --scorer text builds a scorer or is the caller's error,
// never a panic.
func FuzzSet(f *testing.F) {
	for _, seed := range []string{"bm25", "bag", "hybrid", "hybrid:alpha=0.3,fusion=minmax,dense=bag", "hybrid:dense=hybrid", "hybrid:alpha=", "", "hybrid:", "hybrid:dense=bm25", "x:y=z"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, name string) {
		s := &Set{Embedders: []string{"bag"}, Dense: "bag", Open: func(string) (embed.Embedder, func() error, error) {
			return &bagEmbedder{}, func() error { return nil }, nil
		}}
		defer s.Close()
		sc, err := s.Get(name)
		if err != nil && !errors.Is(err, ctxsel.ErrInvalidInput) {
			t.Fatalf("%q: %v is not the caller's error", name, err)
		}
		if err == nil && sc == nil {
			t.Fatalf("%q: no scorer and no error", name)
		}
	})
}
