package score

import (
	"context"
	"slices"
	"testing"

	"github.com/ctxsel/ctxsel/lexical"
)

func TestBM25(t *testing.T) {
	s := NewBM25()
	scores, err := s.Score(context.Background(), "Who founded the Acme rocket company?",
		[]string{"Acme rocket company was founded by Wile E. Coyote.", "A recipe for bread.", "Rocket science is hard.", ""})
	if err != nil {
		t.Fatal(err)
	}
	if !(scores[0] > scores[2] && scores[2] > scores[1] && scores[1] == 0 && scores[3] == 0) {
		t.Fatalf("scores %v", scores)
	}
}

// The memo-less zero value, NewBM25, BM25Scores and lexical itself agree
// bit for bit: one BM25.
func TestBM25FormsAgree(t *testing.T) {
	query := "capital city of France"
	texts := []string{"Paris is the capital of France.", "Lyon is a city.", "capital capital", "", "Paris is the capital of France."}
	docs := make([][]string, len(texts))
	for i, x := range texts {
		docs[i] = lexical.Terms(x)
	}
	want := lexical.Default.Score(lexical.QueryTerms(query), docs)
	memo := NewBM25()
	for _, s := range []*BM25{{}, memo, memo} { // memo twice: the second from remembered terms
		got, err := s.Score(context.Background(), query, texts)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("%+v: %v %v, want %v", s, got, err, want)
		}
	}
	if got := BM25Scores(query, texts); !slices.Equal(got, want) {
		t.Fatalf("BM25Scores %v, want %v", got, want)
	}
	other := &BM25{Params: lexical.Params{K1: 2, B: 0}}
	if got, _ := other.Score(context.Background(), query, texts); slices.Equal(got, want) {
		t.Fatal("Params ignored")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := memo.Score(ctx, query, texts); err == nil {
		t.Fatal("cancelled context scored")
	}
}

func TestRankBM25(t *testing.T) {
	texts := []string{"bread", "rocket", "acme rocket", "bread", "rocket"}
	got := RankBM25("acme rocket", texts)
	// acme rocket first; the two equal "rocket" in input order; then the
	// two zero scores in input order.
	if want := []int{2, 1, 4, 0, 3}; !slices.Equal(got, want) {
		t.Fatalf("RankBM25 = %v, want %v", got, want)
	}
	order, scores, err := Rank(context.Background(), &BM25{}, "acme rocket", texts)
	if err != nil || !slices.Equal(order, got) || !slices.Equal(scores, BM25Scores("acme rocket", texts)) {
		t.Fatalf("Rank = %v %v %v", order, scores, err)
	}
	if got := RankBM25("q", nil); len(got) != 0 {
		t.Fatalf("no texts ranked %v", got)
	}
}

type shortScorer struct{}

func (shortScorer) Name() string { return "short" }
func (shortScorer) Score(context.Context, string, []string) ([]float64, error) {
	return []float64{1}, nil
}

func TestRankChecksCount(t *testing.T) {
	if _, _, err := Rank(context.Background(), shortScorer{}, "q", []string{"a", "b"}); err == nil {
		t.Fatal("a scorer returning too few scores was accepted")
	}
}
