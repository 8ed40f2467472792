package selfroute

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/llm"
)

// TestTemplateMatchesPaper compares Template with ldar.txt Table 5, the
// line numbers of the paper's text removed and its lines joined.
func TestTemplateMatchesPaper(t *testing.T) {
	b, err := os.ReadFile("../../shared/papers/ldar.txt")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("paper text missing in CI: %v", err)
		}
		t.Skip("paper text not available")
	}
	text := string(b)
	start := strings.Index(text, "Here are some chunks retrieved from some {datatype}")
	end := strings.Index(text, "Table 5: Prompt we used for Self-Route baseline.")
	if start < 0 || end < start {
		t.Fatal("Table 5 not found")
	}
	lineNo := regexp.MustCompile(`(?m)^\s*\d+\s+`)
	want := strings.Join(strings.Fields(lineNo.ReplaceAllString(text[start:end], "")), " ")
	if got := string(Template); got != want {
		t.Fatalf("template differs from the paper\n got: %s\nwant: %s", got, want)
	}
	p := Prompt("novels")
	if err := p.Check(); err != nil || !strings.Contains(string(p), "from some novels.") || strings.Contains(string(p), "{datatype}") {
		t.Fatalf("Prompt: %v %q", err, p)
	}
}

// TestTemplateAdaptiveKIsOfficial pins TemplateAdaptiveK to the official
// file prompts/holobench_template_self_route.txt (megagonlabs/
// adaptive-k-retrieval, commit fc86f12): its SHA-256 and length, read from
// that file.
func TestTemplateAdaptiveKIsOfficial(t *testing.T) {
	sum := sha256.Sum256([]byte(TemplateAdaptiveK))
	if got := hex.EncodeToString(sum[:]); got != "a8391b1677f51f77695ad7c022e11acf5058edec0cf697955ad1b219e36e0d42" || len(TemplateAdaptiveK) != 959 {
		t.Fatalf("TemplateAdaptiveK differs from the official file: sha256 %s, %d bytes", got, len(TemplateAdaptiveK))
	}
	if err := TemplateAdaptiveK.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestParseSpec(t *testing.T) {
	for text, want := range map[string]Spec{
		"selfroute":                              {K: 5, Prompt: PromptLDAR},
		"selfroute:k=3":                          {K: 3, Prompt: PromptLDAR},
		"selfroute:k=10000":                      {K: 10000, Prompt: PromptLDAR},
		"selfroute:prompt=adaptivek":             {Tokens: 5000, Prompt: PromptAdaptiveK},
		"selfroute:tokens=5000,prompt=adaptivek": {Tokens: 5000, Prompt: PromptAdaptiveK},
		"selfroute:prompt=AdaptiveK,tokens=2000": {Tokens: 2000, Prompt: PromptAdaptiveK},
		"selfroute:tokens=5000":                  {Tokens: 5000, Prompt: PromptLDAR},
		"selfroute:k=5,prompt=adaptivek":         {K: 5, Prompt: PromptAdaptiveK},
		"selfroute:prompt=ldar":                  {K: 5, Prompt: PromptLDAR},
	} {
		sp, err := ctxsel.ParseSpec(text)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseSpec(sp)
		if err != nil || got != want {
			t.Fatalf("%s: %+v %v, want %+v", text, got, err, want)
		}
	}
	if Default.String() != "selfroute:k=5" {
		t.Fatalf("the default's spec is %q", Default.String())
	}
	for _, text := range []string{"selfroute:k=0", "selfroute:k=2.5", "selfroute:p=1", "topk:k=5", "selfroute:k=1e9",
		"selfroute:k=5,tokens=5000", "selfroute:prompt=holobench", "selfroute:mode=fast", "selfroute:tokens=0", "selfroute:prompt=1", "selfroute:tokens=1e12"} {
		sp, err := ctxsel.ParseSpec(text)
		if err != nil {
			continue
		}
		if _, err := ParseSpec(sp); !errors.Is(err, ctxsel.ErrInvalidInput) {
			t.Fatalf("%s accepted (%v)", text, err)
		}
	}
}

// TestDeclines pins the routing rule: the substring "unanswerable" anywhere
// in the reply (the official Adaptive-k eval.py); case matters there, not
// in LDAR's variant.
func TestDeclines(t *testing.T) {
	ak, ldar := Spec{Tokens: 5000, Prompt: PromptAdaptiveK}, Default
	for reply, want := range map[string][2]bool{ // {adaptivek, ldar}
		"unanswerable":                      {true, true},
		"The question is unanswerable.":     {true, true},
		"- **Answer:** unanswerable":        {true, true},
		"“unanswerable”":                    {true, true},
		"Unanswerable.":                     {false, true},
		"UNANSWERABLE":                      {false, true},
		"Paris":                             {false, false},
		"answerable":                        {false, false},
		"No answer.":                        {false, false},
		"":                                  {false, false},
		"It is not unanswerable: it's 1912": {true, true},
	} {
		if got := [2]bool{ak.Declines(reply), ldar.Declines(reply)}; got != want {
			t.Errorf("%q: declines %v, want %v", reply, got, want)
		}
	}
}

// TestFirst: LDAR's first step is the top k; Adaptive-k's keeps passages
// while their tokens stay below the budget (fixed_retrieve breaks when the
// running sum reaches it), and may keep none.
func TestFirst(t *testing.T) {
	curve := func(tokens ...int) *ctxsel.Curve {
		cands := make([]ctxsel.Candidate, len(tokens))
		for i, tk := range tokens {
			cands[i] = ctxsel.Candidate{ID: string(rune('a' + i)), Score: float64(10 - i), Tokens: tk}
		}
		c, err := ctxsel.NewCurve(cands)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, tc := range []struct {
		spec   Spec
		tokens []int
		k      int
	}{
		{Spec{Tokens: 5000, Prompt: PromptAdaptiveK}, []int{3000, 1500, 500, 10}, 2}, // 3000+1500+500 reaches 5000
		{Spec{Tokens: 5000, Prompt: PromptAdaptiveK}, []int{3000, 1500, 400, 10}, 4},
		{Spec{Tokens: 5000, Prompt: PromptAdaptiveK}, []int{3000, 1500, 499, 1}, 3}, // 5000 exactly: stop (budget:tokens=5000 would keep 4)
		{Spec{Tokens: 5000, Prompt: PromptAdaptiveK}, []int{6000, 10}, 0},
		{Default, []int{6000, 1, 1, 1, 1, 1, 1}, 5},
		{Spec{K: 2, Prompt: PromptLDAR}, []int{6000, 1, 1}, 2},
	} {
		sel, err := ctxsel.Select(curve(tc.tokens...), tc.spec.First(), ctxsel.Caps{}, ctxsel.RankOrder)
		if err != nil || sel.K != tc.k {
			t.Errorf("%s on %v: k=%d (%v), want %d; %s", tc.spec, tc.tokens, sel.K, err, tc.k, sel.Explanation.Reason)
		}
	}
}

func TestPrompts(t *testing.T) {
	p := Default.Prompts("novels", "")
	if p.First != Prompt("novels") || p.Long != llm.FactoidQA {
		t.Fatalf("LDAR's prompts: %+v", p)
	}
	p = Spec{Tokens: 5000, Prompt: PromptAdaptiveK}.Prompts("novels", llm.HoloBench)
	if p.First != TemplateAdaptiveK || p.Long != llm.HoloBench {
		t.Fatalf("Adaptive-k's prompts: %+v", p)
	}
}

// TestRoute: the first step is asked with the route's prompt, the second
// with the long-context prompt, and only a declining first reply routes; a
// second reply is final even when it declines.
func TestRoute(t *testing.T) {
	top := ctxsel.Selection{K: 2, Indices: []int{0, 1}}
	full := ctxsel.Selection{K: 5, Indices: []int{0, 1, 2, 3, 4}}
	prompts := Prompts{First: "first {question} {context}", Long: "long {question} {context}"}
	var asked []llm.Template
	reader := func(answers map[int]string) Reader {
		asked = nil
		return func(_ context.Context, sel ctxsel.Selection, p llm.Template) (llm.Response, error) {
			asked = append(asked, p)
			a, ok := answers[sel.K]
			if !ok {
				return llm.Response{}, errors.New("down")
			}
			return llm.Response{Content: a, PromptTokens: 10 * sel.K}, nil
		}
	}
	ctx := context.Background()
	res, err := Default.Route(ctx, top, full, prompts, reader(map[int]string{2: "Paris", 5: "Lyon"}))
	if err != nil || res.Routed() || res.Final().Reply.Content != "Paris" || len(res.Steps) != 1 || !slices.Equal(asked, []llm.Template{prompts.First}) {
		t.Fatalf("answerable first step: %+v %v %v", res, err, asked)
	}
	res, err = Default.Route(ctx, top, full, prompts, reader(map[int]string{2: "The question is unanswerable.", 5: "unanswerable"}))
	if err != nil || !res.Routed() || res.Final().Reply.Content != "unanswerable" || res.Final().Selection.K != 5 || res.Steps[0].Reply.PromptTokens != 20 ||
		!slices.Equal(asked, []llm.Template{prompts.First, prompts.Long}) {
		t.Fatalf("routed: %+v %v %v", res, err, asked)
	}
	res, err = Default.Route(ctx, top, full, prompts, reader(map[int]string{2: "unanswerable"}))
	if err == nil || len(res.Steps) != 1 {
		t.Fatalf("failed second step: %+v %v", res, err)
	}
}

func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"selfroute", "selfroute:k=5", "selfroute:k=0", "selfroute:k=1e400", "selfroute:x=1,k=2", "unanswerable",
		"selfroute:tokens=5000,prompt=adaptivek", "selfroute:prompt=ldar,k=3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = Default.Declines(s)
		sp, err := ctxsel.ParseSpec(s)
		if err != nil || sp.Name != Name {
			return
		}
		got, err := ParseSpec(sp)
		if err != nil {
			if !errors.Is(err, ctxsel.ErrInvalidInput) {
				t.Fatal(err)
			}
			return
		}
		if (got.K < 1) == (got.Tokens < 1) || got.K > 10000 || (got.Prompt != PromptLDAR && got.Prompt != PromptAdaptiveK) {
			t.Fatalf("%q → %+v", s, got)
		}
		back, err := ctxsel.ParseSpec(got.String())
		if err != nil {
			t.Fatal(err)
		}
		if again, err := ParseSpec(back); err != nil || again != got {
			t.Fatalf("%q does not round-trip: %v %v", got, again, err)
		}
	})
}

// Self-Route registers itself: Resolve gives the route, whose plan is the
// top k in the order asked and then the whole curve in rank order, marked
// long; its prompt is Table 5's and it declines on "unanswerable".
func TestResolvedRoute(t *testing.T) {
	res, err := ctxsel.Resolve("selfroute:k=2")
	if err != nil || res.Kind != ctxsel.RouteKind || res.Spec != "selfroute:k=2" || res.Route.String() != "selfroute:k=2" {
		t.Fatalf("%+v %v", res, err)
	}
	if _, err := ctxsel.Resolve("selfroute:k=0"); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("k=0: %v", err)
	}
	if _, err := (ctxsel.Resolver{Kinds: ctxsel.StrategyKind}).Resolve("selfroute"); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("route where only strategies go: %v", err)
	}
	c, err := ctxsel.NewCurve([]ctxsel.Candidate{{ID: "a", Score: 0.1, Tokens: 1}, {ID: "b", Score: 0.9, Tokens: 1}, {ID: "c", Score: 0.5, Tokens: 1}})
	if err != nil {
		t.Fatal(err)
	}
	steps, err := res.Route.Plan(c, ctxsel.DocumentOrder)
	if err != nil || len(steps) != 2 || !slices.Equal(steps[0].Selection.IDs, []string{"b", "c"}) || steps[0].Long ||
		!steps[1].Long || !slices.Equal(steps[1].Selection.IDs, []string{"b", "c", "a"}) {
		t.Fatalf("plan %+v %v", steps, err)
	}
	if res.Route.Prompt("novels") != string(Prompt("novels")) || !res.Route.Declines("Unanswerable.") || res.Route.Declines("Paris") {
		t.Fatal("prompt or declines")
	}
}

// The Adaptive-k variant keeps its prompt, its token-budgeted first step
// and its case-sensitive routing through Resolve: the spec's word
// (prompt=adaptivek) is carried to the route, and a Long step is asked
// with the caller's long-context prompt.
func TestResolvedAdaptiveKRoute(t *testing.T) {
	for _, spec := range []string{"selfroute:tokens=5000,prompt=adaptivek", "selfroute:prompt=AdaptiveK"} {
		res, err := ctxsel.Resolve(spec)
		if err != nil || res.Kind != ctxsel.RouteKind || res.Route.String() != "selfroute:prompt=adaptivek,tokens=5000" {
			t.Fatalf("%s: %+v %v", spec, res, err)
		}
		again, err := ctxsel.Resolve(res.Spec)
		if err != nil || again.Spec != res.Spec || again.Route.String() != res.Route.String() {
			t.Fatalf("%s: canonical %q resolves to %+v %v", spec, res.Spec, again, err)
		}
		if sp, ok := res.AsSpec(); !ok || sp.Words["prompt"] != PromptAdaptiveK {
			t.Fatalf("%s: AsSpec %+v %v", spec, sp, ok)
		}
		if res.Route.Prompt("") != string(TemplateAdaptiveK) || res.Route.Prompt("novels") != string(TemplateAdaptiveK) {
			t.Fatalf("%s: first prompt %q", spec, res.Route.Prompt(""))
		}
		if !res.Route.Declines("- **Answer:** unanswerable") || res.Route.Declines("Unanswerable.") {
			t.Fatalf("%s: routing rule", spec)
		}
		c, err := ctxsel.NewCurve([]ctxsel.Candidate{{ID: "a", Score: 0.9, Tokens: 3000}, {ID: "b", Score: 0.8, Tokens: 1500}, {ID: "c", Score: 0.7, Tokens: 500}, {ID: "d", Score: 0.1, Tokens: 10}})
		if err != nil {
			t.Fatal(err)
		}
		steps, err := res.Route.Plan(c, ctxsel.RankOrder)
		if err != nil || len(steps) != 2 || !slices.Equal(steps[0].Selection.IDs, []string{"a", "b"}) || steps[1].Selection.K != 4 {
			t.Fatalf("%s: plan %+v %v", spec, steps, err)
		}
		if steps[0].Prompt(res.Route, "", string(llm.HoloBench)) != string(TemplateAdaptiveK) || steps[1].Prompt(res.Route, "", string(llm.HoloBench)) != string(llm.HoloBench) {
			t.Fatalf("%s: step prompts", spec)
		}
	}
	if _, err := ctxsel.Resolve("selfroute:prompt=holobench"); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("unknown prompt: %v", err)
	}
	if _, err := ctxsel.Resolve("topk:k=5,prompt=adaptivek"); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("a strategy took a word: %v", err)
	}
}
