package eval_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/answer"
	_ "github.com/ctxsel/ctxsel/cutoff"
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/eval"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/llm/llmtest"
	"github.com/ctxsel/ctxsel/score"
	"github.com/ctxsel/ctxsel/token"
)

// smallSet is n questions with one gold passage each and two fillers.
func smallSet(n int, gold bool) []dataset.Record {
	var recs []dataset.Record
	for i := range n {
		recs = append(recs, dataset.Record{ID: fmt.Sprint("q", i), Question: fmt.Sprintf("where was person%d born", i), Answers: []string{fmt.Sprint("town", i)},
			Passages: []dataset.Passage{
				{ID: "g", Text: fmt.Sprintf("person%d was born in town%d", i, i), Gold: gold},
				{ID: "f1", Text: fmt.Sprintf("weather report number %d", i)},
				{ID: "f2", Text: fmt.Sprintf("a recipe for bread, variant %d", i)},
			}})
	}
	return recs
}

func specs(t *testing.T, text string) []ctxsel.Resolved {
	t.Helper()
	sp, err := ctxsel.Resolver{}.ResolveList(text)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func openSpec(t *testing.T, spec string) llm.Client {
	t.Helper()
	c, _, err := llm.OpenSpec(spec, llm.Options{MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAnswersJudgeInvalidAndFailures: an LLM judge that rambles is counted
// as judge_invalid, never scored; a judge call that fails is an LLM failure
// and the run goes on and reports it.
func TestAnswersJudgeInvalidAndFailures(t *testing.T) {
	recs := smallSet(6, true)
	var table []llmtest.Question
	for _, r := range recs {
		table = append(table, llmtest.Question{Question: r.Question, Gold: []string{r.Passages[0].Text}, Answer: r.Answers[0]})
	}
	reader := llmtest.New(llmtest.Reader(table, llmtest.ReaderOptions{}))
	defer reader.Close()
	n := 0
	judgeSrv := llmtest.New(func(c llmtest.Call) llmtest.Reply {
		n++
		if strings.Contains(c.Prompt(), "person0 ") || strings.Contains(c.Prompt(), "person1 ") {
			return llmtest.Reply{Content: "Well, it depends on many things, and I would rather not say."}
		}
		return llmtest.Reply{Content: "Correct"}
	})
	defer judgeSrv.Close()
	judgeSrv.Script(llmtest.Fault{Status: 500})
	counter, _ := token.New("")
	a := &eval.Answering{Reader: openSpec(t, reader.OpenAISpec("r")), Judge: answer.NewBinaryJudge(openSpec(t, judgeSrv.OpenAISpec("j"))), MaxFailures: -1, Workers: 1}
	rep, err := eval.Run(context.Background(), recs, score.NewBM25(), eval.Options{Strategies: specs(t, "topk:k=1"), Counter: counter, Answer: a})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	if r.LLMFailures != 1 || rep.Answers.Failures != 1 || r.Answered != 5 {
		t.Fatalf("failures %d/%d, answered %d", r.LLMFailures, rep.Answers.Failures, r.Answered)
	}
	if r.JudgeInvalid == 0 || r.Judge == nil || *r.Judge != 1 || r.SubEM != 1 {
		t.Fatalf("judge %v invalid %d subem %v", r.Judge, r.JudgeInvalid, r.SubEM)
	}
	var buf bytes.Buffer
	if err := eval.WriteTable(&buf, rep); err != nil || !strings.Contains(buf.String(), "invalid") {
		t.Fatalf("table: %v\n%s", err, buf.String())
	}
}

// TestAnswersWithoutGold: records without gold passages (LaRA) are
// measured by their answers alone; the JSON leaves the recall fields out.
func TestAnswersWithoutGold(t *testing.T) {
	recs := smallSet(4, false)
	srv := llmtest.New(func(c llmtest.Call) llmtest.Reply {
		for i := range 4 {
			if strings.Contains(c.Prompt(), fmt.Sprintf("born in town%d", i)) {
				return llmtest.Reply{Content: fmt.Sprint("town", i)}
			}
		}
		return llmtest.Reply{Content: "unanswerable"}
	})
	defer srv.Close()
	counter, _ := token.New("")
	a := &eval.Answering{Reader: openSpec(t, srv.OpenAISpec("r"))}
	rep, err := eval.Run(context.Background(), recs, score.NewBM25(), eval.Options{Strategies: specs(t, "full,topk:k=1"), Counter: counter, Answer: a})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.NoGoldLabels || rep.Questions != 4 || rep.Results[0].SubEM != 1 {
		t.Fatalf("report %+v / %+v", rep, rep.Results[0].AnswerResult)
	}
	var buf bytes.Buffer
	if err := eval.WriteJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), `"recall"`) || !strings.Contains(buf.String(), `"subem"`) {
		t.Fatalf("json:\n%s", buf.String())
	}
	// without a reader, gold-less records are still refused
	if _, err := eval.Run(context.Background(), recs, score.NewBM25(), eval.Options{Strategies: specs(t, "full"), Counter: counter}); err == nil {
		t.Fatal("gold-less records measured without answers")
	}
	// a route without a reader is bad input
	if _, err := eval.Run(context.Background(), smallSet(2, true), score.NewBM25(), eval.Options{Strategies: specs(t, "selfroute"), Counter: counter}); err == nil {
		t.Fatal("selfroute without a reader accepted")
	}
}

// TestAnswersCancel: a cancelled run returns what it has, marked stopped.
func TestAnswersCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	srv := llmtest.New(func(c llmtest.Call) llmtest.Reply {
		cancel()
		return llmtest.Reply{Content: "x"}
	})
	defer srv.Close()
	counter, _ := token.New("")
	a := &eval.Answering{Reader: openSpec(t, srv.OpenAISpec("r")), Workers: 1}
	rep, err := eval.Run(ctx, smallSet(20, true), score.NewBM25(), eval.Options{Strategies: specs(t, "topk:k=1"), Counter: counter, Answer: a})
	if err == nil || rep == nil || rep.Answers.Stopped == "" || rep.Results[0].Answered >= 20 {
		t.Fatalf("err %v, report %+v", err, rep)
	}
}

// TestTextSelectorRows: a TextSelector is measured and answered like a
// strategy — wrapping topk:k=1 gives the same row.
func TestTextSelectorRows(t *testing.T) {
	recs := smallSet(5, true)
	srv := llmtest.New(func(c llmtest.Call) llmtest.Reply {
		for i := range 5 {
			if strings.Contains(c.Prompt(), fmt.Sprintf("born in town%d", i)) {
				return llmtest.Reply{Content: fmt.Sprint("town", i)}
			}
		}
		return llmtest.Reply{Content: "unanswerable"}
	})
	defer srv.Close()
	counter, _ := token.New("")
	st, _, err := ctxsel.Parse("topk:k=1")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []*eval.Answering{nil, {Reader: openSpec(t, srv.OpenAISpec("r"))}} {
		rep, err := eval.Run(context.Background(), recs, score.NewBM25(), eval.Options{Counter: counter, Answer: a,
			Strategies: append(specs(t, "topk:k=1"), eval.TextSelectors(ctxsel.StrategyTexts(st))...)})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Results) != 2 {
			t.Fatalf("%d rows", len(rep.Results))
		}
		x, y := rep.Results[0], rep.Results[1]
		if y.Strategy != "topk" || x.Recall != y.Recall || x.MeanTokens != y.MeanTokens || x.MeanK != y.MeanK {
			t.Fatalf("rows differ: %+v\n%+v", x, y)
		}
		if a != nil && (x.SubEM != y.SubEM || y.Answered != 5 || x.InputTokens != y.InputTokens) {
			t.Fatalf("answers differ: %+v\n%+v", x.AnswerResult, y.AnswerResult)
		}
	}
}

// Degenerate replies are answers flagged as such: counted per strategy and
// in total as llm_truncated / llm_empty, shown in the table, scored as they
// are, and not failures.
func TestAnswersCountDegenerateReplies(t *testing.T) {
	recs := smallSet(5, true)
	reader := llmtest.New(func(c llmtest.Call) llmtest.Reply {
		switch {
		case strings.Contains(c.Prompt(), "person0 "):
			return llmtest.Reply{Content: ""}
		case strings.Contains(c.Prompt(), "person1 "), strings.Contains(c.Prompt(), "person2 "):
			return llmtest.Reply{Content: "tow", FinishReason: "length"}
		}
		return llmtest.Reply{Content: "town"}
	})
	defer reader.Close()
	counter, _ := token.New("")
	var qas []eval.QuestionAnswer
	a := &eval.Answering{Reader: openSpec(t, reader.OpenAISpec("r")), MaxFailures: 0, Workers: 1,
		OnQuestion: func(q eval.QuestionAnswer) { qas = append(qas, q) }}
	rep, err := eval.Run(context.Background(), recs, score.NewBM25(), eval.Options{Strategies: specs(t, "topk:k=1"), Counter: counter, Answer: a})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0].AnswerResult
	if r.LLMEmpty != 1 || r.LLMTruncated != 2 || r.LLMFailures != 0 || r.Answered != 5 || rep.Answers.Empty != 1 || rep.Answers.Truncated != 2 {
		t.Fatalf("result %+v, totals %+v", r, rep.Answers)
	}
	flagged := 0
	for _, q := range qas {
		if q.Defect != "" {
			flagged++
		}
	}
	if flagged != 3 {
		t.Fatalf("%d records flagged, want 3", flagged)
	}
	var buf bytes.Buffer
	if err := eval.WriteTable(&buf, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "2 truncated") || !strings.Contains(buf.String(), "1 empty") {
		t.Fatalf("table:\n%s", buf.String())
	}
}

// TestLaRAPrompt pins LaRA's reader prompts to LDAR's evaluation/prompt.py
// (rag_templates, ku-dmlab/LDAR commit 9d55489) by SHA-256, and the way a
// LaRA record is asked: system message, "chunk i: TEXT." blocks.
func TestLaRAPrompt(t *testing.T) {
	for kind, want := range map[string]string{
		"paper":     "41feaf79682772f6236d35df640d651e8bbd305120d5d8b0f2712f565a88f05b",
		"financial": "8e90bae73a453d76886bdbf6ce5019cc42a53d0571e4b5a4dc9f9af9c049f66d",
		"book":      "baadb129901e258d7f6cb2796a274ab2ce426ac305b0686c1bedc2b37db4d6d2",
	} {
		tmpl, ok := eval.LaRATemplate(kind)
		sum := sha256.Sum256([]byte(tmpl))
		if got := hex.EncodeToString(sum[:]); !ok || got != want {
			t.Errorf("LaRA %s template: sha256 %s, want LDAR's %s", kind, got, want)
		}
	}
	p := eval.LaRAPrompt(dataset.Record{ID: "32k/financial/location/3"})
	if p.System != "You are a helpful assistant" || p.Template == "" || !p.Verbatim ||
		p.Context([]llm.Passage{{Text: "a"}, {Text: "b"}}) != "chunk 0: a.\n\nchunk 1: b.\n\n" {
		t.Fatalf("LaRA prompt %+v", p)
	}
	if eval.LaRAPrompt(dataset.Record{ID: "q1"}).Template != "" || eval.LaRAPrompt(dataset.Record{ID: "32k/novel/x/1"}).Template != "" {
		t.Fatal("a LaRA prompt for a record that is not LaRA's")
	}
}
