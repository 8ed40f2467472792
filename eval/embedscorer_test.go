package eval

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"
)

// bagEmbedder embeds a text as counts of the letters a–e: cosine is easy to
// work out, and calls are counted.
type bagEmbedder struct{ calls, texts atomic.Int64 }

func (b *bagEmbedder) ModelID() string { return "bag" }
func (b *bagEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	b.calls.Add(1)
	b.texts.Add(int64(len(texts)))
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 5)
		for _, r := range t {
			if r >= 'a' && r <= 'e' {
				v[r-'a']++
			}
		}
		out[i] = v
	}
	return out, nil
}

func TestEmbedScorer(t *testing.T) {
	e := &bagEmbedder{}
	s := NewEmbedScorer("bag", e)
	passages := []string{"aa", "ab", "cc", "zz", "aa"}
	if err := s.Prepare(context.Background(), passages, nil); err != nil {
		t.Fatal(err)
	}
	if e.texts.Load() != 4 {
		t.Fatalf("prepare embedded %d texts, want 4 distinct", e.texts.Load())
	}
	scores, err := s.Score(context.Background(), "a", passages)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1, 1 / math.Sqrt2, 0, 0, 1} // "zz" has a zero vector: score 0
	for i := range want {
		if math.Abs(scores[i]-want[i]) > 1e-9 {
			t.Fatalf("scores %v, want %v", scores, want)
		}
	}
	if e.texts.Load() != 5 { // only the query was embedded
		t.Fatalf("score re-embedded passages: %d texts", e.texts.Load())
	}
}

type failingEmbedder struct{}

func (failingEmbedder) ModelID() string { return "fail" }
func (failingEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("backend down")
}

func TestEmbedScorerErrors(t *testing.T) {
	s := NewEmbedScorer("fail", failingEmbedder{})
	if _, err := s.Score(context.Background(), "q", []string{"p"}); err == nil || !strings.Contains(err.Error(), "backend down") {
		t.Fatalf("err = %v", err)
	}
}
