package answer

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/llm/llmtest"
)

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"The Eiffel Tower!":    "eiffel tower",
		"  a  Cat,  an apple ": "cat apple",
		"theatre Anthem":       "theatre anthem", // articles only as whole words
		"U.S.A.":               "usa",
		"rock-'n'-roll":        "rocknroll",
		"The the THE":          "",
		"Ça va? Très bien.":    "ça va très bien",
		"$1,000 (approx.)":     "1000 approx",
		"the_end":              "theend", // '_' is punctuation, removed first
		"x\t\ny":               "x y",
		"an-apple":             "anapple",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLexicalMetrics(t *testing.T) {
	cases := []struct {
		pred       string
		gold       []string
		em, sub, f float64
	}{
		{"The Eiffel Tower", []string{"Eiffel Tower"}, 1, 1, 1},
		{"It is the Eiffel Tower in Paris", []string{"Eiffel Tower"}, 0, 1, 2 * (2.0 / 6) * 1 / (2.0/6 + 1)},
		{"Paris", []string{"London", "paris."}, 1, 1, 1},
		{"New York City", []string{"York"}, 0, 1, 2 * (1.0 / 3) * 1 / (1.0/3 + 1)},
		{"cat cat", []string{"cat dog"}, 0, 0, 0.5}, // one shared token: p=1/2 r=1/2
		{"unanswerable", []string{"42"}, 0, 0, 0},
		{"anything", nil, 0, 0, 0},
		{"anything", []string{"the"}, 0, 0, 0}, // gold normalising to nothing never matches by substring
		{"", []string{"a"}, 1, 0, 1},           // both normalise to empty: SQuAD EM 1, F1 1
	}
	for _, c := range cases {
		if got := EM(c.pred, c.gold); got != c.em {
			t.Errorf("EM(%q, %q) = %v, want %v", c.pred, c.gold, got, c.em)
		}
		if got := SubEM(c.pred, c.gold); got != c.sub {
			t.Errorf("SubEM(%q, %q) = %v, want %v", c.pred, c.gold, got, c.sub)
		}
		if got := F1(c.pred, c.gold); math.Abs(got-c.f) > 1e-12 {
			t.Errorf("F1(%q, %q) = %v, want %v", c.pred, c.gold, got, c.f)
		}
	}
	v, _ := F1Judge.Judge(context.Background(), Item{Prediction: "Paris", Gold: []string{"Paris", "Los Angeles"}, AllRequired: true})
	if v.Score != 0.5 {
		t.Fatalf("AllRequired F1 = %v, want mean 0.5", v.Score)
	}
}

func TestParseA13(t *testing.T) {
	cases := []struct {
		out  string
		want int
		ok   bool
		got  []string
	}{
		{`[{"id": 1, "label": "Exact Match"}]`, 1, true, []string{"exact match"}},
		{"```json\n[{\"id\":1,\"label\":\"partial match\"},{\"id\":2,\"label\":\"No Match\"}]\n```", 2, true, []string{"partial match", "no match"}},
		{`[{"id": 1, "label": "Exact Match"}]`, 2, false, nil}, // wrong count
		{`[{"id": 1, "label": "Maybe"}]`, 1, false, nil},
		{"Exact Match.", 1, true, []string{"exact match"}},
		{"partial", 1, true, []string{"partial match"}},
		{"NO", 1, true, []string{"no match"}},
		{"**Exact Match** — the response names Shakespeare.", 1, true, []string{"exact match"}},
		{"Not an Exact Match; rather a Partial Match.", 1, false, nil}, // two verdicts
		{"Exact", 2, false, nil},
		{"I cannot decide.", 1, false, nil},
		{"", 1, false, nil},
	}
	for _, c := range cases {
		got, ok := ParseA13(c.out, c.want)
		if ok != c.ok || strings.Join(got, ",") != strings.Join(c.got, ",") {
			t.Errorf("ParseA13(%q, %d) = %v, %v; want %v, %v", c.out, c.want, got, ok, c.got, c.ok)
		}
	}
}

func TestParseBinary(t *testing.T) {
	cases := []struct {
		out         string
		correct, ok bool
	}{
		{"correct", true, true},
		{"Incorrect.", false, true},
		{"**CORRECT** - it names Paris", true, true},
		{"The answer is incorrect because it names Rome.", false, true},
		{"Correct or incorrect? Hard to say.", false, false},
		{"The reasoning mentions correct and incorrect parts.\nVerdict: incorrect", false, true},
		{"yes", false, false},
		{"incorrectly phrased", false, false},
	}
	for _, c := range cases {
		correct, ok := ParseBinary(c.out)
		if ok != c.ok || ok && correct != c.correct {
			t.Errorf("ParseBinary(%q) = %v, %v; want %v, %v", c.out, correct, ok, c.correct, c.ok)
		}
	}
}

func FuzzParseA13(f *testing.F) {
	for _, s := range []string{`[{"id":1,"label":"Exact Match"}]`, "partial", "No Match. Exact Match.", `"label": ""`} {
		f.Add(s, 1)
	}
	f.Fuzz(func(t *testing.T, out string, want int) {
		want = want%4 + 1
		if want < 1 {
			want += 4
		}
		labels, ok := ParseA13(out, want)
		if !ok {
			return
		}
		if len(labels) != want {
			t.Fatalf("%d labels, want %d", len(labels), want)
		}
		for _, l := range labels {
			if _, known := labelScore[l]; !known {
				t.Fatalf("label %q", l)
			}
		}
	})
}

func FuzzParseBinary(f *testing.F) {
	for _, s := range []string{"correct", "incorrect", "Verdict: correct\nincorrect", "in correct"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, out string) {
		correct, ok := ParseBinary(out)
		lo := strings.ToLower(out)
		if ok && correct && !strings.Contains(lo, "correct") {
			t.Fatalf("correct without the word: %q", out)
		}
		if ok && !correct && !strings.Contains(lo, "incorrect") {
			t.Fatalf("incorrect without the word: %q", out)
		}
	})
}

// TestLLMJudgesThroughServer runs every LLM judge against a scripted server
// speaking the real wire formats.
func TestLLMJudgesThroughServer(t *testing.T) {
	var extract, reply string
	var finish string
	srv := llmtest.New(func(c llmtest.Call) llmtest.Reply {
		if strings.HasPrefix(c.Prompt(), "You will be given a response that contains both the reasoning") {
			return llmtest.Reply{Content: extract, FinishReason: finish}
		}
		return llmtest.Reply{Content: reply}
	})
	defer srv.Close()
	open := func(spec string) (llm.Client, error) { c, _, err := llm.OpenSpec(spec, llm.Options{}); return c, err }
	ctx := context.Background()

	// The official A.1.3 judge: extraction, then one label per entry, and
	// the mean over the entries whatever AllRequired says.
	j, err := ParseJudge("llm:"+srv.OpenAISpec("judge"), open)
	if err != nil {
		t.Fatal(err)
	}
	it := Item{Question: "Which cities?", Prediction: "Reasoning: the text names Paris.\n- **Answer:** Paris", Gold: []string{"Paris", "Los Angeles"}}
	extract = "```json\n{\"reasoning\": \"the text names Paris\", \"final_answer\": \"Paris\"}\n```"
	reply = `[{"id": 1, "label": "Exact Match"}, {"id": 2, "label": "No Match"}]`
	v, err := j.Judge(ctx, it)
	if err != nil || v.Invalid || v.Score != 0.5 || v.Raw != reply || v.Extracted != "Paris" || len(srv.Calls()) != 2 || v.Calls != 2 || v.CachedCalls != 0 {
		t.Fatalf("verdict %+v, %v", v, err)
	}
	ex, judge := srv.Calls()[0], srv.Calls()[1]
	if !ex.JSON || !strings.Contains(ex.Prompt(), "```\nReasoning: the text names Paris.\n- **Answer:** Paris\n```") {
		t.Fatalf("extraction call %+v", ex)
	}
	for _, s := range []string{"**Question:**\n```\nWhich cities?\n```", "**Assistant’s Response:**\n```\nParis\n```",
		"[{'id': 1, 'answer': 'Paris'}, {'id': 2, 'answer': 'Los Angeles'}]", "[{'id': 1, 'label': '...'}, {'id': 2, 'label': '...'}]",
		"**Example 8: Assistant Provides No Answer but Ground Truth Has Instances**", "====== Your task starts here ======"} {
		if !strings.Contains(judge.Prompt(), s) {
			t.Fatalf("judge prompt lacks %q", s)
		}
	}
	// An unreadable extraction is invalid (no second call); one cut at the
	// length limit scores 0, the official code's placeholder "No Match".
	n := len(srv.Calls())
	extract = "I cannot format this."
	if v, err := j.Judge(ctx, it); err != nil || !v.Invalid || len(srv.Calls()) != n+1 {
		t.Fatalf("unreadable extraction: %+v %v", v, err)
	}
	extract, finish = `{"reasoning": "…`, "length"
	if v, err := j.Judge(ctx, it); err != nil || v.Invalid || v.Score != 0 || len(v.Labels) != 1 || v.Labels[0] != "no match" {
		t.Fatalf("extraction at the length limit: %+v %v", v, err)
	}
	extract, finish = `{"reasoning": "", "final_answer": "p"}`, ""
	reply = "Hmm, hard to say: Exact Match or No Match."
	if v, err := j.Judge(ctx, Item{Question: "q", Prediction: "p", Gold: []string{"g"}}); err != nil || !v.Invalid || v.Score != 0 || v.Raw != reply {
		t.Fatalf("ambiguous verdict %+v, %v", v, err)
	}

	// llm-any: the paper's printed prompt, one call, the best entry (or the
	// mean with AllRequired).
	a, err := ParseJudge("llm-any:"+srv.OpenAISpec("judge"), open)
	if err != nil || a.Name() != "llm-any:"+srv.OpenAISpec("judge") {
		t.Fatal(a, err)
	}
	reply = `[{"id": 1, "label": "Exact Match"}, {"id": 2, "label": "No Match"}]`
	n = len(srv.Calls())
	if v, _ := a.Judge(ctx, it); v.Score != 1 || len(srv.Calls()) != n+1 || !strings.Contains(srv.Calls()[n].Prompt(), `"answer":"Los Angeles"`) {
		t.Fatalf("llm-any alternatives: %+v", v)
	}
	it.AllRequired = true
	if v, _ := a.Judge(ctx, it); v.Score != 0.5 {
		t.Fatalf("llm-any all required: %v", v.Score)
	}

	b, err := ParseJudge("llm-binary:"+srv.OllamaSpec("judge"), open)
	if err != nil {
		t.Fatal(err)
	}
	reply = "Verdict: correct"
	if v, err := b.Judge(ctx, Item{Question: "q", Prediction: "p", Gold: []string{"g"}}); err != nil || v.Score != 1 || v.Invalid {
		t.Fatalf("binary %+v, %v", v, err)
	}

	// LDAR's judge: its system message and prompt; 'true' in the reply.
	l, err := ParseJudge("llm-ldar:"+srv.OpenAISpec("judge"), open)
	if err != nil {
		t.Fatal(err)
	}
	for r, want := range map[string]float64{"True": 1, "False.": 0, "true — it matches": 1, "FALSE": 0} {
		reply = r
		if v, err := l.Judge(ctx, Item{Question: "q", Prediction: "p", Gold: []string{"g"}}); err != nil || v.Invalid || v.Score != want {
			t.Fatalf("ldar %q: %+v %v", r, v, err)
		}
	}
	c := srv.Calls()[len(srv.Calls())-1]
	if len(c.Messages) != 2 || c.Messages[0].Role != "system" || c.Messages[0].Content != JudgeSystemLDAR ||
		c.Messages[1].Content != strings.NewReplacer("{query}", "q", "{label}", "g", "{pred}", "p").Replace(JudgePromptLDAR) {
		t.Fatalf("ldar call %+v", c.Messages)
	}
	reply = "I am not sure."
	if v, _ := l.Judge(ctx, Item{Question: "q", Prediction: "p", Gold: []string{"g"}, Task: "hallu"}); !v.Invalid {
		t.Fatalf("ldar without a verdict: %+v", v)
	}
	if p := srv.Calls()[len(srv.Calls())-1].Messages[1].Content; !strings.HasPrefix(p, "You need to help me determine whether an AI model is hallucinating.") {
		t.Fatalf("hallu prompt %q", p)
	}

	srv.Script(llmtest.Fault{Status: 401})
	if _, err := b.Judge(ctx, Item{Question: "q"}); err == nil {
		t.Fatal("a failed call must be an error, not a verdict")
	}
}

func TestParseJudge(t *testing.T) {
	for spec, want := range map[string]string{"em": "em", "subem": "subem", "f1": "f1"} {
		j, err := ParseJudge(spec, nil)
		if err != nil || j.Name() != want {
			t.Fatalf("%s: %v %v", spec, j, err)
		}
	}
	for _, bad := range []string{"", "bleu", "llm:", "llm:foo:bar", "llm-ternary:openai:m", "ldar:openai:m"} {
		if _, err := ParseJudge(bad, nil); !errors.Is(err, ctxsel.ErrInvalidInput) {
			t.Errorf("ParseJudge(%q) = %v, want ErrInvalidInput", bad, err)
		}
	}
	if _, err := ParseJudge("llm:openai:m", nil); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("llm judge without an opener: %v", err)
	}
}

func TestSummarize(t *testing.T) {
	s := Summarize([]Verdict{{Score: 1}, {Score: 0.5}, {Invalid: true, Raw: "??"}, {Score: 0}})
	if s != (Summary{N: 4, Valid: 3, Invalid: 1, Mean: 0.5}) {
		t.Fatalf("%+v", s)
	}
	if Summarize(nil) != (Summary{}) {
		t.Fatal("empty")
	}
}
