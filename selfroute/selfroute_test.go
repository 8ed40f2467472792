package selfroute

import (
	"context"
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

func TestParseSpec(t *testing.T) {
	for text, want := range map[string]int{"selfroute": DefaultK, "selfroute:k=3": 3, "selfroute:k=10000": 10000} {
		sp, err := ctxsel.ParseSpec(text)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseSpec(sp)
		if err != nil || got.K != want {
			t.Fatalf("%s: %+v %v", text, got, err)
		}
	}
	for _, text := range []string{"selfroute:k=0", "selfroute:k=2.5", "selfroute:p=1", "topk:k=5", "selfroute:k=1e9"} {
		sp, err := ctxsel.ParseSpec(text)
		if err != nil {
			continue
		}
		if _, err := ParseSpec(sp); !errors.Is(err, ctxsel.ErrInvalidInput) {
			t.Fatalf("%s accepted (%v)", text, err)
		}
	}
}

func TestUnanswerable(t *testing.T) {
	for s, want := range map[string]bool{"unanswerable": true, "“Unanswerable”.": true, " UNANSWERABLE ": true,
		"Unanswerable: the text does not say": true, "Paris": false, "answerable": false, "": false, "It is unanswerable": false} {
		if got := Unanswerable(s); got != want {
			t.Errorf("%q: %v", s, got)
		}
	}
}

func TestRoute(t *testing.T) {
	top := ctxsel.Selection{K: 2, Indices: []int{0, 1}}
	full := ctxsel.Selection{K: 5, Indices: []int{0, 1, 2, 3, 4}}
	reader := func(answers map[int]string) Reader {
		return func(_ context.Context, sel ctxsel.Selection) (llm.Response, error) {
			a, ok := answers[sel.K]
			if !ok {
				return llm.Response{}, errors.New("down")
			}
			return llm.Response{Content: a, PromptTokens: 10 * sel.K}, nil
		}
	}
	res, err := Route(context.Background(), top, full, reader(map[int]string{2: "Paris", 5: "Lyon"}))
	if err != nil || res.Routed() || res.Final().Reply.Content != "Paris" || len(res.Steps) != 1 {
		t.Fatalf("answerable top-k: %+v %v", res, err)
	}
	res, err = Route(context.Background(), top, full, reader(map[int]string{2: "unanswerable", 5: "Lyon"}))
	if err != nil || !res.Routed() || res.Final().Reply.Content != "Lyon" || res.Final().Selection.K != 5 || res.Steps[0].Reply.PromptTokens != 20 {
		t.Fatalf("routed: %+v %v", res, err)
	}
	res, err = Route(context.Background(), top, full, reader(map[int]string{2: "unanswerable"}))
	if err == nil || len(res.Steps) != 1 {
		t.Fatalf("failed second step: %+v %v", res, err)
	}
}

func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"selfroute", "selfroute:k=5", "selfroute:k=0", "selfroute:k=1e400", "selfroute:x=1,k=2", "unanswerable"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = Unanswerable(s)
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
		if got.K < 1 || got.K > 10000 {
			t.Fatalf("%q → k=%d", s, got.K)
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
