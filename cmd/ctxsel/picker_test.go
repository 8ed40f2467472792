package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/eval/sample"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/llm/llmtest"
	"github.com/ctxsel/ctxsel/picker/pickertest"
)

// eval --strategies resolves its list once: strategies, and pickers built
// with the --picker LLM, each picker's settings in full.
func TestResolveStrategyList(t *testing.T) {
	srv := llmtest.New(pickertest.Garbage)
	defer srv.Close()
	opened := 0
	open := func() (func(string) (llm.Client, error), error) {
		opened++
		return func(spec string) (llm.Client, error) {
			c, _, err := llm.OpenSpec(spec, llm.Options{MaxRetries: -1})
			return c, err
		}, nil
	}
	list, err := specResolver(pickerSources(srv.OpenAISpec("p"), open), "").ResolveList("topk:k=5,max_k=3,picker:budget=300,fallback=topk,order=document,adaptivek,picker")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range list {
		got = append(got, r.Kind.String()+" "+r.Spec)
	}
	want := []string{"strategy topk:k=5,max_k=3", "text selector picker:budget=300,fallback=topk,order=document", "strategy adaptivek", "text selector picker:budget=4000,fallback=adaptivek,order=rank"}
	if !slices.Equal(got, want) || opened != 2 {
		t.Fatalf("got %q (opened %d)\nwant %q", got, opened, want)
	}
	for _, bad := range []string{"", "picker:budget=x", "topk:k=x", "topk:k=1x", "picker:fallback=nope"} {
		if _, err := specResolver(pickerSources(srv.OpenAISpec("p"), open), "").ResolveList(bad); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
	// A word where a strategy wants a number parses (Self-Route takes
	// prompt=adaptivek) and is refused before any work.
	if code, _, stderr := runCLI(t, "", "eval", "--strategies", "topk:k=x"); code != 2 || !strings.Contains(stderr, "k=x must be a number") {
		t.Fatalf("topk:k=x: exit %d, %s", code, stderr)
	}
	// Without --picker, a picker spec says how to give one; strategies
	// alone never open the LLM.
	opened = 0
	if _, err := specResolver(pickerSources("", open), "").ResolveList("picker"); err == nil || !strings.Contains(err.Error(), "--picker") {
		t.Fatalf("no --picker: %v", err)
	}
	if _, err := specResolver(pickerSources("", open), "").ResolveList("topk,adaptivek"); err != nil || opened != 0 {
		t.Fatalf("strategies opened the LLM %d times: %v", opened, err)
	}
}

func TestSelectPicker(t *testing.T) {
	t.Setenv("CTXSEL_LLM_CACHE", "off")
	srv := llmtest.New(pickertest.Gold(map[string][]string{"Who wrote it?": {"b 2", "7"}}))
	defer srv.Close()
	in := `{"id":"a","score":0.9,"text":"alpha"}
{"id":"b 2","score":0.5,"text":"beta"}
{"id":7,"score":0.7,"text":"gamma"}
`
	code, out, errs := runCLI(t, in, "select", "--strategy", "picker:budget=100", "--order", "document", "--question", "Who wrote it?", "--picker", srv.OpenAISpec("p"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var sel struct {
		IDs         []string
		Explanation struct{ Strategy, Reason string }
	}
	if err := json.Unmarshal([]byte(out), &sel); err != nil {
		t.Fatal(err)
	}
	if strings.Join(sel.IDs, "|") != "b 2|7" || sel.Explanation.Strategy != "picker" || !strings.Contains(sel.Explanation.Reason, "evidence") {
		t.Fatalf("%s", out)
	}
	// A permanent failure of the call (401) is not the model's output: the
	// fallback's selection is printed, and the command fails. Garbage from
	// the model is the picker's business: it falls back and exits 0.
	srv.Script(llmtest.Fault{Status: 401, Message: "bad key"})
	code, out, errs = runCLI(t, in, "select", "--strategy", "picker:budget=100", "--question", "Who wrote it?", "--picker", srv.OpenAISpec("p"), "--llm-retries=0")
	if code != 1 || !strings.Contains(errs, "401") || !strings.Contains(out, "fell back") {
		t.Fatalf("401: exit %d\n%s\n%s", code, out, errs)
	}
	srv.SetReplier(pickertest.Garbage)
	if code, out, errs := runCLI(t, in, "select", "--strategy", "picker:budget=100", "--question", "Who wrote it?", "--picker", srv.OpenAISpec("p")); code != 0 || !strings.Contains(out, "fell back") {
		t.Fatalf("garbage: exit %d\n%s\n%s", code, out, errs)
	}
	// Without an endpoint, or without texts, it is a usage error.
	if code, _, errs := runCLI(t, in, "select", "--strategy", "picker", "--question", "q"); code != 2 || !strings.Contains(errs, "--picker") {
		t.Fatalf("no endpoint: %d %s", code, errs)
	}
	if code, _, errs := runCLI(t, `{"id":"a","score":1,"tokens":3}`, "select", "--strategy", "picker", "--question", "q", "--picker", srv.OpenAISpec("p")); code != 2 || !strings.Contains(errs, "no \"text\"") {
		t.Fatalf("no text: %d %s", code, errs)
	}
}

func TestEvalPickerGarbageEndpoint(t *testing.T) {
	t.Setenv("CTXSEL_LLM_CACHE", "off")
	srv := llmtest.New(pickertest.Garbage)
	defer srv.Close()
	data := filepath.Join(t.TempDir(), "d.jsonl")
	recs := `{"id":"1","question":"q one?","answers":["x"],"passages":[{"id":"a","text":"alpha beta","gold":true},{"id":"b","text":"gamma delta"}]}
{"id":"2","question":"q two?","answers":["y"],"passages":[{"id":"a","text":"epsilon","gold":true},{"id":"b","text":"zeta eta"}]}
`
	if err := os.WriteFile(data, []byte(recs), 0o644); err != nil {
		t.Fatal(err)
	}
	jsonOut := filepath.Join(t.TempDir(), "r.json")
	code, out, errs := runCLI(t, "", "eval", "--data", data, "--pool", "0", "--scorer", "bm25", "--strategies", "adaptivek,picker:budget=1000", "--picker", srv.OpenAISpec("p"), "--json", jsonOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "invalid rate") || !strings.Contains(out, "picker:budget=1000,fallback=adaptivek,order=rank") {
		t.Fatalf("table:\n%s", out)
	}
	b, err := os.ReadFile(jsonOut)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Results []struct {
			Strategy string
			Recall   float64
			Selector *struct {
				InvalidRate float64 `json:"invalid_rate"`
			}
		}
	}
	if err := json.Unmarshal(b, &rep); err != nil || len(rep.Results) != 2 {
		t.Fatalf("%v %s", err, b)
	}
	if p := rep.Results[1]; p.Selector == nil || p.Selector.InvalidRate != 1 || p.Recall != rep.Results[0].Recall {
		t.Fatalf("picker row %+v vs %+v", p, rep.Results[0])
	}
	if srv.Requests() != 2 {
		t.Fatalf("%d requests", srv.Requests())
	}
}

// TestEvalPickerAnswered: eval --strategies topk:k=5,picker:budget=4000
// --picker P --reader R measures the picker like a strategy and answers from
// its selections. With the simulated reader (answers iff every gold passage
// is in the prompt: a plumbing check, not a model) every row's SubEM must
// equal its all-gold rate, the picker's included; the picker's own calls are
// reported apart from the reader's.
func TestEvalPickerAnswered(t *testing.T) {
	t.Setenv("CTXSEL_LLM_CACHE", t.TempDir())
	recs, err := sample.HotpotQA()
	if err != nil {
		t.Fatal(err)
	}
	recs = recs[:20]
	gold := map[string][]string{}
	for _, r := range recs {
		for _, p := range r.Passages {
			if p.Gold {
				gold[r.Question] = append(gold[r.Question], p.ID)
			}
		}
	}
	reader := llmtest.New(llmtest.Reader(simTable(recs), llmtest.ReaderOptions{}))
	defer reader.Close()
	pick := llmtest.New(pickertest.Gold(gold))
	defer pick.Close()
	jsonOut := filepath.Join(t.TempDir(), "r.json")
	code, out, errs := runCLI(t, "", "eval", "--limit=20", "--pool=40", "--scorer=bm25", "--strategies=topk:k=5,picker:budget=4000",
		"--picker="+pick.OpenAISpec("p"), "--reader="+reader.OpenAISpec("sim"), "--json="+jsonOut)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
	rep := readReport(t, jsonOut)
	if len(rep.Results) != 2 {
		t.Fatalf("%d rows", len(rep.Results))
	}
	for _, r := range rep.Results {
		if r.AnswerResult == nil || r.Answered != 20 {
			t.Fatalf("%s: answers %+v", r.Strategy, r.AnswerResult)
		}
		if math.Abs(r.SubEM-r.AllGold) > 1e-9 {
			t.Errorf("%s: subem %.3f != all-gold %.3f", r.Strategy, r.SubEM, r.AllGold)
		}
	}
	top, p := rep.Results[0], rep.Results[1]
	if p.Strategy != "picker:budget=4000,fallback=adaptivek,order=rank" || top.Selector != nil {
		t.Fatalf("rows %q (selector %+v), %q", top.Strategy, top.Selector, p.Strategy)
	}
	if p.AllGold == 0 || p.Selector == nil || p.Selector.InvalidRate != 0 || p.Selector.MeanPromptTokens <= 0 {
		t.Fatalf("picker row all-gold %.3f, calls %+v", p.AllGold, p.Selector)
	}
	// One picker call and one reader call per question and row; the reader's
	// totals count only the reader's calls.
	if pick.Requests() != 20 || reader.Requests() != 40 || rep.Answers.Calls != 40 {
		t.Fatalf("picker %d calls, reader %d, reported %d", pick.Requests(), reader.Requests(), rep.Answers.Calls)
	}
	if p.Selector.MeanPromptTokens == p.InputTokens {
		t.Errorf("picker prompt tokens %.0f reported as the reader's", p.Selector.MeanPromptTokens)
	}
	if !strings.Contains(out, "invalid rate") {
		t.Fatalf("table:\n%s", out)
	}
}
