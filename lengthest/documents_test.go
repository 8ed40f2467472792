package lengthest

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/score"
	"github.com/ctxsel/ctxsel/token"
)

func tiktoken(t testing.TB) *token.Tiktoken {
	t.Helper()
	tok, err := token.New("")
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// summhay loads the real SummHay records (../shared/data); in CI their
// absence is a failure, not a skip.
func summhay(t testing.TB) []dataset.Record {
	t.Helper()
	const path = "../../shared/data/summhay_news.jsonl.gz"
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("SummHay data missing in CI: %v", err)
		}
		t.Skip("SummHay data not available")
	}
	recs, err := dataset.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// TestTruncateSentencesSummHay cuts real SummHay documents (about 1,200
// tokens each) to 1,024 tokens: each cut is a prefix of the document, ends
// where a sentence ends, fits, and is the longest such prefix.
func TestTruncateSentencesSummHay(t *testing.T) {
	tok := tiktoken(t)
	rec := summhay(t)[0]
	cut := 0
	for _, p := range rec.Passages[:30] {
		got, err := TruncateSentences(tok, p.Text, DefaultDocTokens)
		if err != nil {
			t.Fatal(err)
		}
		if n := tok.Count(got); n > DefaultDocTokens || !strings.HasPrefix(p.Text, got) {
			t.Fatalf("%s: %d tokens, prefix %v", p.ID, n, strings.HasPrefix(p.Text, got))
		}
		if got == p.Text {
			if tok.Count(p.Text) > DefaultDocTokens {
				t.Fatalf("%s: long document not cut", p.ID)
			}
			continue
		}
		cut++
		rest := p.Text[len(got):]
		if r := []rune(rest)[0]; !unicode.IsSpace(r) {
			t.Fatalf("%s: cut inside a sentence, before %q", p.ID, rest[:20])
		}
		if last := strings.TrimRight(got, `"'”’)`); !strings.ContainsAny(last[len(last)-1:], ".!?") && !strings.HasPrefix(rest, "\n") {
			t.Fatalf("%s: cut after %q, not a sentence end", p.ID, got[len(got)-30:])
		}
		// the next sentence would not have fitted
		sents := splitAfter(p.Text, len(got))
		if tok.Count(p.Text[:sents]) <= DefaultDocTokens {
			t.Fatalf("%s: the next sentence also fits (%d tokens)", p.ID, tok.Count(p.Text[:sents]))
		}
		if n := tok.Count(got); n < DefaultDocTokens-200 {
			t.Logf("%s: only %d tokens kept", p.ID, n)
		}
	}
	if cut < 10 {
		t.Fatalf("only %d of 30 SummHay documents were longer than %d tokens", cut, DefaultDocTokens)
	}
}

// splitAfter is the end of the sentence that starts after byte off.
func splitAfter(text string, off int) int {
	for _, s := range chunk.SplitSentences(text) {
		if s[0] >= off {
			return s[1]
		}
	}
	return len(text)
}

// TestPackSummHay retrieves with BM25 on a real SummHay example: the chosen
// documents are exactly the best-scoring ones until the first that does not
// fit, they come back in the original order, and the budget holds.
func TestPackSummHay(t *testing.T) {
	tok := tiktoken(t)
	rec := summhay(t)[1]
	docs := make([]string, len(rec.Passages))
	tokens := make([]int, len(docs))
	for i, p := range rec.Passages {
		d, err := TruncateSentences(tok, p.Text, DefaultDocTokens)
		if err != nil {
			t.Fatal(err)
		}
		docs[i], tokens[i] = d, tok.Count(d)
	}
	scores, err := score.NewBM25().Score(context.Background(), rec.Question, docs)
	if err != nil {
		t.Fatal(err)
	}
	byScore := ctxsel.Ranking(scores)
	for _, budget := range []int{8000, 16000, 40000} {
		chosen, total := Pack(scores, tokens, budget)
		if !slices.IsSorted(chosen) || total > budget {
			t.Fatalf("budget %d: chosen %v not in document order or %d tokens", budget, chosen, total)
		}
		top := slices.Sorted(slices.Values(byScore[:len(chosen)]))
		if !slices.Equal(top, chosen) {
			t.Fatalf("budget %d: chose %v, want the top %d by score %v", budget, chosen, len(chosen), top)
		}
		if next := byScore[len(chosen)]; total+tokens[next] <= budget {
			t.Fatalf("budget %d: next document %d (%d tokens) would have fitted", budget, next, tokens[next])
		}
		sum := 0
		for _, i := range chosen {
			sum += tokens[i]
		}
		if sum != total || len(chosen) < budget/DefaultDocTokens-1 {
			t.Fatalf("budget %d: %d documents, %d tokens (reported %d)", budget, len(chosen), sum, total)
		}
		// the prompt shows them in the original order
		shown := make([]string, len(chosen))
		for k, i := range chosen {
			shown[k] = docs[i]
		}
		prompt := RenderPrompt(shown, rec.Question, DefaultWords)
		last := -1
		for _, i := range chosen {
			at := strings.Index(prompt, docs[i])
			if at <= last {
				t.Fatalf("budget %d: document %d out of order in the prompt", budget, i)
			}
			last = at
		}
	}
}

func TestPackStopsAtFirstMisfit(t *testing.T) {
	// by score: 2 (500), 0 (600), 1 (100); budget 1000 takes 2, stops at 0
	// although 1 would fit after it
	chosen, total := Pack([]float64{.5, .1, .9}, []int{600, 100, 500}, 1000)
	if !slices.Equal(chosen, []int{2}) || total != 500 {
		t.Fatalf("Pack = %v, %d", chosen, total)
	}
	chosen, _ = Pack([]float64{.5, .5, .9}, []int{10, 10, 10}, 1000)
	if !slices.Equal(chosen, []int{0, 1, 2}) {
		t.Fatalf("Pack = %v", chosen)
	}
}

// TestFitWindowSummHay cuts a real SummHay input to a window: the longest
// documents are cut first, to one common length, and the rest are kept whole.
func TestFitWindowSummHay(t *testing.T) {
	tok := tiktoken(t)
	rec := summhay(t)[2]
	docs := make([]string, len(rec.Passages))
	full := 0
	for i, p := range rec.Passages {
		docs[i] = p.Text
		full += tok.Count(p.Text)
	}
	limit := full * 9 / 10
	out, n, err := FitWindow(tok, docs, limit)
	if err != nil {
		t.Fatal(err)
	}
	sum, longest, cut := 0, 0, 0
	for i := range out {
		sum += n[i]
		if n[i] != tok.Count(out[i]) || !strings.HasPrefix(docs[i], out[i]) {
			t.Fatalf("document %d: count or prefix wrong", i)
		}
		if out[i] != docs[i] {
			cut++
			longest = max(longest, n[i])
		}
	}
	if sum > limit || sum < limit-len(docs)-50 || cut == 0 {
		t.Fatalf("window %d: %d tokens, %d cut", limit, sum, cut)
	}
	for i := range out {
		// an uncut document is no longer than the cap the cut ones share
		if out[i] == docs[i] && n[i] > longest+1 {
			t.Fatalf("document %d (%d tokens) kept whole while shorter ones (cap %d) were cut", i, n[i], longest)
		}
	}
	if o, _, _ := FitWindow(tok, docs, full); !slices.Equal(o, docs) {
		t.Fatal("input that fits was changed")
	}
}
