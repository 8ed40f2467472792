package eval

import (
	"context"
	"slices"
	"testing"

	"github.com/ctxsel/ctxsel/fusion"
	"github.com/ctxsel/ctxsel/score"
	"github.com/ctxsel/ctxsel/token"
)

func TestRescoredReordersAndKeepsChannels(t *testing.T) {
	h, err := score.NewHybrid(score.NewBM25(), fusion.ZScore, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	counter, err := token.New(token.Default)
	if err != nil {
		t.Fatal(err)
	}
	var gotTokens []int
	r := &Rescored{Base: h, Label: "reversed", Counter: counter, Rescore: func(f []float64, tok []int, ch [][]float64) []float64 {
		gotTokens = tok
		out := make([]float64, len(f))
		for i, v := range f {
			out[i] = -v
		}
		return out
	}}
	passages := []string{"the cat sat on the mat", "dogs bark loudly at night", "a cat and a dog"}
	ctx := context.Background()
	if err := r.Prepare(ctx, passages, nil); err != nil {
		t.Fatal(err)
	}
	s, ch, err := r.ScoreChannels(ctx, "cat on a mat", passages)
	if err != nil {
		t.Fatal(err)
	}
	f, hch, err := h.ScoreChannels(ctx, "cat on a mat", passages)
	if err != nil {
		t.Fatal(err)
	}
	for i := range f {
		if s[i] != -f[i] {
			t.Errorf("passage %d: rescored %v, want %v", i, s[i], -f[i])
		}
		if gotTokens[i] != counter.Count(passages[i]) {
			t.Errorf("passage %d: %d tokens given to Rescore, want %d", i, gotTokens[i], counter.Count(passages[i]))
		}
	}
	if len(ch) != 2 || !slices.Equal(ch[0], hch[0]) || !slices.Equal(ch[1], hch[1]) {
		t.Errorf("channels %v, want the base's %v", ch, hch)
	}
	if r.Name() != "reversed" || !slices.Equal(r.Channels(), h.Channels()) {
		t.Errorf("name %q channels %v", r.Name(), r.Channels())
	}
	r.Rescore = func(f []float64, _ []int, _ [][]float64) []float64 { return f[:1] }
	if _, err := r.Score(ctx, "cat", passages); err == nil {
		t.Error("a rescoring of the wrong length: want an error")
	}
}
