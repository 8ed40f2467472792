package score_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/ctxsel/ctxsel/score"
)

// Scoring the sentences of a candidate set against a question: BM25 counts
// document frequencies over the sentences themselves, and RankBM25 orders
// them best first.
func ExampleBM25() {
	sentences := []string{
		"Scrooge's clerk is Bob Cratchit.",
		"Cratchit lives in Camden Town.",
		"Marley was dead, to begin with.",
	}
	question := "Who is Scrooge's clerk?"
	scores, err := (&score.BM25{}).Score(context.Background(), question, sentences)
	if err != nil {
		panic(err)
	}
	fmt.Println(scores[0] > scores[1], scores[2])
	fmt.Println(score.RankBM25(question, sentences))
	// Output:
	// true 0
	// [0 1 2]
}

// letters embeds a text as the counts of a, b and c: a stand-in for a real
// embed.Embedder (embed/uselite, or any embedder wrapped by embed/cache).
type letters struct{}

func (letters) ModelID() string { return "letters" }
func (letters) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = []float32{float32(strings.Count(t, "a")), float32(strings.Count(t, "b")), float32(strings.Count(t, "c"))}
	}
	return out, nil
}

// An Embedding scorer embeds the texts in batches through any embedder
// and scores them by cosine similarity to the query; a Hybrid fuses it with
// BM25.
func ExampleEmbedding() {
	dense := score.NewEmbedding("letters", letters{}, score.EmbeddingOptions{Batch: 64})
	texts := []string{"aaa", "abc", "ccc"}
	scores, err := dense.Score(context.Background(), "aa", texts)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%.3f %.3f %.3f\n", scores[0], scores[1], scores[2])
	h, err := score.NewHybrid(dense, score.DefaultMethod, score.DefaultAlpha)
	if err != nil {
		panic(err)
	}
	order, _, err := score.Rank(context.Background(), h, "aa", texts)
	if err != nil {
		panic(err)
	}
	fmt.Println(h.Name(), order)
	// Output:
	// 1.000 0.577 0.000
	// hybrid(letters+bm25):alpha=0.5,fusion=zscore [0 1 2]
}
