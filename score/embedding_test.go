package score

import (
	"context"
	"errors"
	"math"
	"slices"
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

func TestEmbedding(t *testing.T) {
	e := &bagEmbedder{}
	s := NewEmbedding("bag", e, EmbeddingOptions{Memo: true})
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

func TestEmbeddingErrors(t *testing.T) {
	s := NewEmbedding("fail", failingEmbedder{}, EmbeddingOptions{})
	if _, err := s.Score(context.Background(), "q", []string{"p"}); err == nil || !strings.Contains(err.Error(), "backend down") {
		t.Fatalf("err = %v", err)
	}
}

// Without Memo every Score embeds its texts afresh, in batches of Batch,
// each distinct text once per call; with it, never twice.
func TestEmbeddingBatchesAndMemo(t *testing.T) {
	texts := []string{"ab", "cd", "ab", "ee", "ac"}
	e := &bagEmbedder{}
	s := NewEmbedding("bag", e, EmbeddingOptions{Batch: 2})
	first, err := s.Score(context.Background(), "a", texts)
	if err != nil {
		t.Fatal(err)
	}
	// 4 distinct texts in batches of 2, then the query.
	if e.calls.Load() != 3 || e.texts.Load() != 5 {
		t.Fatalf("%d calls for %d texts, want 3 for 5", e.calls.Load(), e.texts.Load())
	}
	again, _ := s.Score(context.Background(), "a", texts)
	if e.texts.Load() != 10 || !slices.Equal(first, again) {
		t.Fatalf("memo-less rescoring: %d texts embedded, scores %v then %v", e.texts.Load(), first, again)
	}
	if first[0] != first[2] || math.Abs(first[3]) > 0 || math.Abs(first[0]-1/math.Sqrt2) > 1e-12 {
		t.Fatalf("scores %v", first)
	}
	if err := s.Prepare(context.Background(), texts, nil); err != nil || e.texts.Load() != 10 {
		t.Fatalf("prepare without memo embedded: %d texts, %v", e.texts.Load(), err)
	}

	m := &bagEmbedder{}
	ms := NewEmbedding("bag", m, EmbeddingOptions{Memo: true, Batch: 3})
	var progress []int
	if err := ms.Prepare(context.Background(), texts, func(done, total int) { progress = append(progress, done, total) }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(progress, []int{3, 4, 4, 4}) {
		t.Fatalf("progress %v", progress)
	}
	got, _ := ms.Score(context.Background(), "a", append(texts, "bb"))
	if m.texts.Load() != 6 || !slices.Equal(got[:len(texts)], first) { // "bb" and the query
		t.Fatalf("memo: %d texts embedded, scores %v", m.texts.Load(), got)
	}
}

// A dimension that differs between a passage and the query is an error,
// not a silent 0.
func TestEmbeddingDimensionMismatch(t *testing.T) {
	s := NewEmbedding("odd", oddEmbedder{}, EmbeddingOptions{})
	if _, err := s.Score(context.Background(), "query", []string{"p"}); err == nil || !strings.Contains(err.Error(), "dimension") {
		t.Fatalf("err = %v", err)
	}
}

// oddEmbedder gives texts longer than 2 bytes a 3-dimensional vector and
// the rest a 2-dimensional one.
type oddEmbedder struct{}

func (oddEmbedder) ModelID() string { return "odd" }
func (oddEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if len(t) > 2 {
			out[i] = []float32{1, 0, 0}
		} else {
			out[i] = []float32{1, 0}
		}
	}
	return out, nil
}

// ScoreKnown embeds only the texts whose vectors are not given, and scores
// given vectors as it scores embedded ones.
func TestEmbeddingScoreKnown(t *testing.T) {
	e := &bagEmbedder{}
	s := NewEmbedding("bag", e, EmbeddingOptions{})
	texts := []string{"aa", "ab", "cc"}
	all, err := s.Score(context.Background(), "a", texts)
	if err != nil {
		t.Fatal(err)
	}
	e.texts.Store(0)
	known := [][]float32{{2, 0, 0, 0, 0}, nil, {0, 0, 2, 0, 0}} // what "aa" and "cc" embed to
	got, err := s.ScoreKnown(context.Background(), "a", texts, known)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, all) {
		t.Fatalf("with known vectors %v, embedded %v", got, all)
	}
	if e.texts.Load() != 2 { // "ab" and the query
		t.Fatalf("%d texts embedded, want 2", e.texts.Load())
	}
	// A known vector is used as given, not re-embedded.
	known[0] = []float32{0, 1, 0, 0, 0}
	if got, _ := s.ScoreKnown(context.Background(), "a", texts, known); got[0] != 0 {
		t.Fatalf("score %v for a known vector orthogonal to the query", got[0])
	}
	if _, err := s.ScoreKnown(context.Background(), "a", texts, [][]float32{{1, 2}}); err == nil {
		t.Fatal("a known vector of another dimension accepted")
	}
}
