package ldartrain_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/ctxsel/ctxsel/eval"
	"github.com/ctxsel/ctxsel/ldar"
	"github.com/ctxsel/ctxsel/ldar/ldartrain"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/llm/llmtest"
	"github.com/ctxsel/ctxsel/token"
)

// TestLLMRewardTrainsOnJudgedAnswers runs LDAR training with the LLM reward
// against the simulated reader: every reward the trainer sees equals the
// judged answer (1 iff the band holds all gold passages, the simulator's
// contract), and training completes.
func TestLLMRewardTrainsOnJudgedAnswers(t *testing.T) {
	var qs []ldar.Question
	var table []llmtest.Question
	for i := range 12 {
		q := ldar.Question{ID: fmt.Sprint("q", i), Question: fmt.Sprintf("where was person%d born", i), Answers: []string{fmt.Sprint("town", i)}}
		for j := range 10 {
			gold := j < 2
			text := fmt.Sprintf("filler %d of question %d", j, i)
			if gold {
				text = fmt.Sprintf("person%d fact %d: born in town%d", i, j, i)
			}
			q.Texts = append(q.Texts, text)
			q.Gold = append(q.Gold, gold)
			q.Scores = append(q.Scores, float64(10-j)+0.1*float64(i%3))
			q.Tokens = append(q.Tokens, 8)
		}
		qs = append(qs, q)
		table = append(table, llmtest.Question{Question: q.Question, Gold: q.Texts[:2], Answer: q.Answers[0]})
	}
	srv := llmtest.New(llmtest.Reader(table, llmtest.ReaderOptions{}))
	defer srv.Close()
	c, _, err := llm.OpenSpec(srv.OpenAISpec("sim"), llm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	counter, err := token.New("")
	if err != nil {
		t.Fatal(err)
	}
	rw := &ldartrain.LLMReward{Answering: &eval.Answering{Reader: c}, Counter: counter}
	var mu sync.Mutex
	seen, ones := 0, 0
	check := ldar.RewardFunc(func(ctx context.Context, q ldar.Question, b ldar.Band) (float64, error) {
		r, err := rw.Reward(ctx, q, b)
		if err != nil {
			return 0, err
		}
		hit := 0
		for _, i := range b.Indices {
			if q.Gold[i] {
				hit++
			}
		}
		want := 0.0
		if hit == 2 {
			want = 1
		}
		mu.Lock()
		defer mu.Unlock()
		seen++
		if r == 1 {
			ones++
		}
		if r != want {
			t.Errorf("question %s band %v: reward %v, judged answer %v", q.ID, b.Indices, r, want)
		}
		return r, nil
	})
	cfg := ldar.DefaultConfig
	cfg.Window, cfg.Dim, cfg.Hidden, cfg.FFN = 8, 8, 8, 16
	_, hist, err := ldar.Train(context.Background(), qs[:8], qs[8:], ldar.TrainOptions{Config: cfg, Epochs: 2, Batch: 4, Samples: 4, Workers: 2, Reward: check})
	if err != nil {
		t.Fatal(err)
	}
	st := rw.Stats()
	if len(hist) != 2 || seen == 0 || int64(srv.Requests()) != st.Calls || st.Tokens == 0 {
		t.Fatalf("history %d, rewards %d, server %d calls, stats %+v", len(hist), seen, srv.Requests(), st)
	}
	if ones == 0 || ones == seen {
		t.Logf("all rewards equal (%d of %d are 1): the check still held", ones, seen)
	}
	if !strings.Contains(srv.Calls()[0].Prompt(), "where was person") {
		t.Fatal("the reader did not get the question")
	}
	// A question without texts cannot be judged.
	bad := qs[0]
	bad.Texts = nil
	if _, err := rw.Reward(context.Background(), bad, ldar.Band{Indices: []int{0}}); err == nil {
		t.Fatal("question without texts accepted")
	}
}
