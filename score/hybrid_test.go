package score

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/fusion"
)

func TestParseHybrid(t *testing.T) {
	for _, c := range []struct {
		in   string
		want HybridSpec
		ok   bool
		err  bool
	}{
		{"use-lite", HybridSpec{}, false, false},
		{"hybrid", DefaultHybrid, true, false},
		{"hybrid:alpha=0.3,fusion=rrf", HybridSpec{Method: fusion.RRF, Alpha: 0.3}, true, false},
		{"hybrid:fusion=relative,dense=openai", HybridSpec{Dense: "openai", Method: fusion.MinMax, Alpha: DefaultHybrid.Alpha}, true, false},
		{"hybrid:alpha=1.5", HybridSpec{}, true, true},
		{"hybrid:alpha=NaN", HybridSpec{}, true, true},
		{"hybrid:alpha=0.2,alpha=0.3", HybridSpec{}, true, true},
		{"hybrid:fusion=max", HybridSpec{}, true, true},
		{"hybrid:dense=bm25", HybridSpec{}, true, true},
		{"hybrid:k=3", HybridSpec{}, true, true},
		{"hybrid:alpha", HybridSpec{}, true, true},
	} {
		got, ok, err := ParseHybrid(c.in)
		if ok != c.ok || (err != nil) != c.err || (err == nil && got != c.want) {
			t.Errorf("ParseHybrid(%q) = %+v, %v, %v; want %+v, %v, error %v", c.in, got, ok, err, c.want, c.ok, c.err)
		}
	}
}

func FuzzParseHybrid(f *testing.F) {
	for _, s := range []string{"hybrid", "hybrid:alpha=0.5,fusion=zscore", "hybrid:fusion=rrf,dense=ollama", "hybrid:alpha=-0", "hybrid:,", "bm25"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spec, ok, err := ParseHybrid(s)
		if !ok || err != nil {
			return
		}
		if !(spec.Alpha >= 0 && spec.Alpha <= 1) || strings.Contains(spec.Dense, ",") {
			t.Fatalf("%q parsed to %+v", s, spec)
		}
		if _, err := NewHybrid(NewBM25(), spec.Method, spec.Alpha); err != nil {
			t.Fatalf("%q: parsed spec %+v rejected: %v", s, spec, err)
		}
	})
}

// The hybrid's fused curve is fusion.Fuse of its parts, and its channels
// are the parts.
func TestHybridScores(t *testing.T) {
	dense := NewEmbedding("bag", &bagEmbedder{}, EmbeddingOptions{})
	h, err := NewHybrid(dense, DefaultMethod, DefaultAlpha)
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"abc rocket", "bread", "acme rocket", "ddd"}
	fused, ch, err := h.ScoreChannels(context.Background(), "acme rocket", texts)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := dense.Score(context.Background(), "acme rocket", texts)
	l := BM25Scores("acme rocket", texts)
	want, _ := fusion.Fuse(fusion.ZScore, 0.5, d, l)
	if !slices.Equal(fused, want) || !slices.Equal(ch[0], d) || !slices.Equal(ch[1], l) {
		t.Fatalf("fused %v channels %v, want %v from %v and %v", fused, ch, want, d, l)
	}
	if got := h.Name(); got != "hybrid(bag+bm25):alpha=0.5,fusion=zscore" {
		t.Fatalf("name %q", got)
	}
	if _, err := NewHybrid(nil, DefaultMethod, 0.5); err == nil {
		t.Fatal("no dense scorer accepted")
	}
	if _, err := NewHybrid(dense, "max", 0.5); err == nil {
		t.Fatal("unknown fusion accepted")
	}
	keys, scores, err := FuseLists(fusion.ZScore, 0.5, []string{"a", "b"}, []float64{1, 0}, []string{"b", "c"}, []float64{2, 1})
	wk, ws, _ := fusion.Lists(fusion.ZScore, 0.5, []string{"a", "b"}, []float64{1, 0}, []string{"b", "c"}, []float64{2, 1})
	if err != nil || !slices.Equal(keys, wk) || !slices.Equal(scores, ws) {
		t.Fatalf("FuseLists %v %v %v", keys, scores, err)
	}
}
