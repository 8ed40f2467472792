package mine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/answer"
	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/llm/llmtest"
	"github.com/ctxsel/ctxsel/mine"
)

// records builds n two-hop questions: passages g1, g2 hold the evidence
// (both needed), d1..d4 are distractors sharing words with the question.
func records(n int) ([]dataset.Record, []llmtest.Question) {
	var recs []dataset.Record
	var table []llmtest.Question
	for i := range n {
		ans := fmt.Sprintf("answer%d", i)
		q := fmt.Sprintf("Which town did founder%d of company%d come from?", i, i)
		g1 := fmt.Sprintf("Company%d was founded by founder%d in 1900.", i, i)
		g2 := fmt.Sprintf("Founder%d was born in %s, a small town.", i, ans)
		ps := []dataset.Passage{
			{ID: "d1", Text: fmt.Sprintf("Company%d sells shoes in many countries.", i)},
			{ID: "g1", Text: g1, Gold: true},
			{ID: "d2", Text: "The weather in spring is mild."},
			{ID: "g2", Text: g2, Gold: true},
			{ID: "d3", Text: fmt.Sprintf("A town is a settlement; founder%d liked towns.", i)},
			{ID: "d4", Text: "Rivers flow to the sea."},
		}
		recs = append(recs, dataset.Record{ID: fmt.Sprint("q", i), Question: q, Answers: []string{ans}, Passages: ps})
		table = append(table, llmtest.Question{Question: q, Gold: []string{g1, g2}, Answer: ans})
	}
	return recs, table
}

func client(t *testing.T, srv *llmtest.Server) llm.Client {
	t.Helper()
	c, _, err := llm.OpenSpec(srv.OpenAISpec("gen"), llm.Options{MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// With the simulated reader as generator (it answers iff every gold text
// is in the prompt) and SubEM, leave-one-out recovers the original gold
// exactly when the top-k holds it, and drops the record when it does not.
func TestRecordRecoversGold(t *testing.T) {
	recs, table := records(3)
	srv := llmtest.New(llmtest.Reader(table, llmtest.ReaderOptions{}))
	defer srv.Close()
	opt := mine.Options{K: 6, Generator: client(t, srv), Judge: answer.SubEMJudge}
	p, err := mine.Record(context.Background(), recs[0], opt)
	if err != nil {
		t.Fatal(err)
	}
	if p.Dropped || !sameSet(p.Gold, []string{"g1", "g2"}) || len(p.Removed) != 4 || len(p.Candidates) != 6 {
		t.Fatalf("provenance %+v", p)
	}
	// Calls: 1 full + a first pass over 6 (4 removed) + a second pass over
	// the 2 left (none removed).
	if p.Calls != 1+6+2 || srv.Requests() != 9 || p.PromptTokens == 0 {
		t.Fatalf("calls %d, server %d, tokens %d", p.Calls, srv.Requests(), p.PromptTokens)
	}
	out, err := mine.Mined(recs[0], p)
	if err != nil {
		t.Fatal(err)
	}
	var meta struct{ Mined mine.Provenance }
	if err := json.Unmarshal(out.Meta, &meta); err != nil || !slices.Equal(meta.Mined.Removed, p.Removed) {
		t.Fatalf("meta %s: %v", out.Meta, err)
	}
	// k = 1 cannot hold both gold passages: dropped.
	opt.K = 1
	p, err = mine.Record(context.Background(), recs[1], opt)
	if err != nil || !p.Dropped || p.Calls != 1 || !strings.Contains(p.Reason, "judged wrong") {
		t.Fatalf("k=1: %+v %v", p, err)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// A run stopped by the token cap writes no partial record; a second run
// resumes from the checkpoint, calling the generator only for what is
// left, and both together equal an uninterrupted run.
func TestRunResumesFromCheckpoint(t *testing.T) {
	recs, table := records(6)
	srv := llmtest.New(llmtest.Reader(table, llmtest.ReaderOptions{}))
	defer srv.Close()
	ckpt := filepath.Join(t.TempDir(), "mine.ckpt")
	ro := mine.RunOptions{Options: mine.Options{K: 6, Generator: client(t, srv), Judge: answer.SubEMJudge}, Workers: 1, Checkpoint: ckpt, MaxLLMTokens: 1}
	out, sum, err := mine.Run(context.Background(), recs, ro)
	if !errors.Is(err, llm.ErrTokenCap) || !sum.StoppedAtCap || sum.Pending == 0 || len(out) != sum.Mined {
		t.Fatalf("capped run: %v %+v", err, sum)
	}
	first := srv.Requests()
	ro.MaxLLMTokens = 0
	out, sum, err = mine.Run(context.Background(), recs, ro)
	if err != nil || sum.Mined != 6 || sum.Pending != 0 {
		t.Fatalf("resumed run: %v %+v", err, sum)
	}
	if got := srv.Requests() - first; got != (6-sum.Resumed)*9 {
		t.Fatalf("resumed run made %d calls for %d records (resumed %d)", got, 6-sum.Resumed, sum.Resumed)
	}
	for _, r := range out {
		var gold []string
		for _, p := range r.Passages {
			if p.Gold {
				gold = append(gold, p.ID)
			}
		}
		if !sameSet(gold, []string{"g1", "g2"}) {
			t.Fatalf("%s: gold %v", r.ID, gold)
		}
	}
	// A third run is all checkpoint: no calls.
	n := srv.Requests()
	if _, sum, err := mine.Run(context.Background(), recs, ro); err != nil || sum.Resumed != 6 || srv.Requests() != n {
		t.Fatalf("warm run: %v %+v, %d calls", err, sum, srv.Requests()-n)
	}
}

func TestRewrites(t *testing.T) {
	recs, table := records(1)
	reader := llmtest.Reader(table, llmtest.ReaderOptions{})
	srv := llmtest.New(func(c llmtest.Call) llmtest.Reply {
		if strings.Contains(c.Prompt(), "Rewrite the question") {
			b, _ := json.Marshal(map[string][]string{"rewrites": {
				"From which town did the founder come?", recs[0].Question, "", "from which town did the founder come", "What is founder0's home town?", "Where was founder0 of company0 born?",
			}})
			return llmtest.Reply{Content: "```json\n" + string(b) + "\n```"}
		}
		return reader(c)
	})
	defer srv.Close()
	c := client(t, srv)
	out, sum, err := mine.Run(context.Background(), recs, mine.RunOptions{Options: mine.Options{K: 6, Generator: c, Judge: answer.SubEMJudge}, Rewriter: c, Rewrites: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 4 || sum.Rewrites != 3 || sum.RewritesRejected != 3 || out[1].ID != "q0#rw1" || out[3].Question != "Where was founder0 of company0 born?" {
		t.Fatalf("%+v %+v", sum, out)
	}
	var meta struct{ Mined mine.Provenance }
	if err := json.Unmarshal(out[2].Meta, &meta); err != nil || meta.Mined.Group != "q0" {
		t.Fatalf("rewrite meta %s", out[2].Meta)
	}
	if got, rej := mine.ValidRewrites("q?", "not json", 5); got != nil || rej != 5 {
		t.Fatalf("%v %d", got, rej)
	}
}

type words struct{}

func (words) Encoding() string   { return "words" }
func (words) Count(s string) int { return len(strings.Fields(s)) }

func TestEstimateCost(t *testing.T) {
	recs, _ := records(2)
	est, err := mine.EstimateCost(recs, 3, llm.Template("{question} {context}"), words{})
	if err != nil {
		t.Fatal(err)
	}
	// Per record: 1 + 3 calls at least; 1 + 3 + 2 at most.
	if est.Questions != 2 || est.MinCalls != 8 || est.MaxCalls != 12 || est.MinPromptTokens <= 0 || est.MaxPromptTokens <= est.MinPromptTokens {
		t.Fatalf("%+v", est)
	}
}

func TestRechunk(t *testing.T) {
	c, err := chunk.Parse("sentences:max_tokens=8", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := dataset.Record{ID: "r", Question: "q", Passages: []dataset.Passage{
		{ID: "a", Text: "First sentence about rivers. Second sentence about towns. Third one here.", Gold: true},
		{ID: "b", Text: "Short."},
	}}
	out, err := mine.Rechunk(context.Background(), rec, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Passages) < 3 || out.Passages[0].ID != "a#0" || !out.Passages[0].Gold || out.Passages[len(out.Passages)-1].ID != "b#0" || out.Passages[len(out.Passages)-1].Gold {
		t.Fatalf("%+v", out.Passages)
	}
}

// TestLLMJudgeNeedsAFullMatch: with an LLM judge the verdict must be a full
// match by default, so the A.1.3 judge's Partial Match (0.5) is not a
// correct answer and the record is dropped; --threshold 0.5 counts it.
func TestLLMJudgeNeedsAFullMatch(t *testing.T) {
	recs, table := records(1)
	gen := llmtest.New(llmtest.Reader(table, llmtest.ReaderOptions{}))
	defer gen.Close()
	judge := llmtest.New(func(c llmtest.Call) llmtest.Reply {
		if strings.HasPrefix(c.Prompt(), "You will be given a response that contains both the reasoning") {
			return llmtest.Reply{Content: `{"reasoning": "", "final_answer": "x"}`}
		}
		return llmtest.Reply{Content: `[{"id": 1, "label": "Partial Match"}]`}
	})
	defer judge.Close()
	j, err := answer.ParseJudge("llm:"+judge.OpenAISpec("j"), func(spec string) (llm.Client, error) {
		c, _, err := llm.OpenSpec(spec, llm.Options{MaxRetries: -1})
		return c, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := mine.DefaultThresholdFor(j); got != 1 {
		t.Fatalf("default threshold for an LLM judge %v", got)
	}
	if got := mine.DefaultThresholdFor(answer.SubEMJudge); got != 0.5 {
		t.Fatalf("default threshold for SubEM %v", got)
	}
	p, err := mine.Record(context.Background(), recs[0], mine.Options{K: 6, Generator: client(t, gen), Judge: j})
	if err != nil || !p.Dropped {
		t.Fatalf("partial match counted as correct by default: %+v %v", p, err)
	}
	p, err = mine.Record(context.Background(), recs[0], mine.Options{K: 6, Generator: client(t, gen), Judge: j, Threshold: 0.5})
	if err != nil || p.Dropped || len(p.Gold) != 1 {
		t.Fatalf("threshold 0.5: %+v %v", p, err)
	}
}
