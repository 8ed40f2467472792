package eval_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/eval"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/token"
)

// instant is an in-process reader that answers at once: the benchmarks
// measure the harness around a call, not a server.
type instant struct{ usage bool }

func (c instant) Describe() string { return "instant" }
func (c instant) Chat(_ context.Context, req llm.Request) (llm.Response, error) {
	r := llm.Response{Content: "town7"}
	if c.usage {
		r.PromptTokens, r.CompletionTokens = len(req.Messages[0].Content)/4, 2
	}
	return r, nil
}

// benchQuestion is a question with k passages of about 100 tokens each,
// all selected.
func benchQuestion(k int) (dataset.Record, ctxsel.Selection) {
	rec := dataset.Record{ID: "q", Question: "where was person7 born", Answers: []string{"town7", "Town Seven"}}
	sel := ctxsel.Selection{}
	for i := range k {
		rec.Passages = append(rec.Passages, dataset.Passage{ID: fmt.Sprint(i), Text: strings.Repeat(fmt.Sprintf("passage %d says something about person%d. ", i, i), 10)})
		sel.Indices = append(sel.Indices, i)
	}
	sel.K = k
	return rec, sel
}

func benchAnswer(b *testing.B, c llm.Client, k int) {
	counter, err := token.New("")
	if err != nil {
		b.Fatal(err)
	}
	a := &eval.Answering{Reader: c}
	rec, sel := benchQuestion(k)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := a.Answer(ctx, counter, rec, sel); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAnswerHarness is the harness's cost per reader call, server
// excluded: render the prompt, pass the shared limiter, read the usage,
// score SubEM/EM/F1. Target ≤ 0.5 ms per call.
func BenchmarkAnswerHarness(b *testing.B) {
	for _, k := range []int{5, 50, 250} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			benchAnswer(b, llm.NewLimiter(8).Wrap(instant{usage: true}), k)
		})
	}
}

// BenchmarkAnswerCountedTokens: a server that reports no usage makes the
// harness count the prompt itself (tiktoken), the slow path.
func BenchmarkAnswerCountedTokens(b *testing.B) {
	benchAnswer(b, llm.NewLimiter(8).Wrap(instant{}), 5)
}

// BenchmarkAnswerCacheHit: a warm re-run, every reply from the call cache.
func BenchmarkAnswerCacheHit(b *testing.B) {
	cache, err := llm.OpenCache(b.TempDir(), llm.CacheOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer cache.Close()
	benchAnswer(b, llm.Cached(llm.NewLimiter(8).Wrap(instant{usage: true}), cache), 5)
}

// BenchmarkRenderBaseline is the floor: rendering the same prompt alone.
func BenchmarkRenderBaseline(b *testing.B) {
	rec, sel := benchQuestion(5)
	b.ReportAllocs()
	for b.Loop() {
		ps := make([]llm.Passage, len(sel.Indices))
		for i, idx := range sel.Indices {
			ps[i] = llm.Passage{Text: rec.Passages[idx].Text}
		}
		if _, err := llm.FactoidQA.Render(rec.Question, llm.FormatContext(ps)); err != nil {
			b.Fatal(err)
		}
	}
}
