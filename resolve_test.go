package ctxsel_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/cutoff"
)

// markerPick is a test-only text selector kind, "testpick": it keeps the
// passages whose text contains a marker word, which the caller supplies as
// the dependency "marker" (as a picker gets its LLM). max=N keeps at most
// N of them. It reports one model call, so compositions must pass its
// usage on.
type markerPick struct {
	marker string
	max    int
}

func (m markerPick) Name() string   { return "testpick" }
func (m markerPick) String() string { return "testpick:max=" + strconv.Itoa(m.max) }

func (m markerPick) SelectTexts(ctx context.Context, q ctxsel.TextQuery) (ctxsel.Selection, error) {
	sel, _, err := m.SelectMetered(ctx, q)
	return sel, err
}

func (m markerPick) SelectMetered(_ context.Context, q ctxsel.TextQuery) (ctxsel.Selection, ctxsel.SelectorUsage, error) {
	if err := q.Validate(); err != nil {
		return ctxsel.Selection{}, ctxsel.SelectorUsage{}, err
	}
	var set []int
	for i, t := range q.Texts {
		if strings.Contains(t, m.marker) && (m.max == 0 || len(set) < m.max) {
			set = append(set, i)
		}
	}
	sel, err := ctxsel.SelectSet(q.Curve, set, q.Caps, q.Order, ctxsel.Explanation{Strategy: "testpick", Reason: fmt.Sprintf("%d passages hold %q", len(set), m.marker)})
	return sel, ctxsel.SelectorUsage{Calls: 1, PromptTokens: 7}, err
}

// twoStep is a test-only answering route, "teststep": the top k, then the
// long context when the reply is "no".
type twoStep struct{ k int }

func (r twoStep) Name() string   { return "teststep" }
func (r twoStep) String() string { return "teststep:k=" + strconv.Itoa(r.k) }
func (r twoStep) Plan(c *ctxsel.Curve, order ctxsel.Order) ([]ctxsel.RouteStep, error) {
	top, err := ctxsel.Select(c, cutoff.TopK(r.k), ctxsel.Caps{}, order)
	if err != nil {
		return nil, err
	}
	all, err := ctxsel.Select(c, cutoff.TopK(c.Len()), ctxsel.Caps{}, ctxsel.RankOrder)
	return []ctxsel.RouteStep{{Name: "top-k", Selection: top}, {Name: "long", Selection: all, Long: true}}, err
}
func (twoStep) Prompt(string) string       { return "{context} {question}" }
func (twoStep) Declines(reply string) bool { return reply == "no" }

func init() {
	ctxsel.RegisterSelector(ctxsel.SelectorDef{Name: "testpick", Doc: "test only",
		Params: []ctxsel.ParamDef{{Name: "max", Kind: ctxsel.IntegerParam, Max: 1000, Doc: "at most this many"}},
		New: func(sp ctxsel.Spec, deps ctxsel.Deps) (ctxsel.TextSelector, error) {
			m := markerPick{max: int(sp.Params["max"])}
			var err error
			m.marker, err = ctxsel.Dep[string](deps, "marker")
			return m, err
		}})
	ctxsel.RegisterRoute(ctxsel.RouteDef{Name: "teststep", Doc: "test only",
		Params: []ctxsel.ParamDef{{Name: "k", Kind: ctxsel.IntegerParam, Default: 2, Min: 1, Max: 100, Doc: "passages of the first step"}},
		New: func(sp ctxsel.Spec) (ctxsel.Route, error) {
			return twoStep{k: int(ctxsel.WithDefaults(sp, []ctxsel.ParamDef{{Name: "k", Default: 2}}).Params["k"])}, nil
		}})
}

func markerDeps(name string) (any, error) {
	if name == "marker" {
		return "gold", nil
	}
	return nil, fmt.Errorf("%w: no %s here", ctxsel.ErrInvalidInput, name)
}

// textCurve: 6 passages, scores falling; "gold" in passages 1, 3 and 5.
func textCurve(t testing.TB) (*ctxsel.Curve, []string) {
	t.Helper()
	var cands []ctxsel.Candidate
	var texts []string
	for i := range 6 {
		cands = append(cands, ctxsel.Candidate{ID: "p" + strconv.Itoa(i), Score: 1 - float64(i)/10, Tokens: 10})
		text := "plain"
		if i%2 == 1 {
			text = "gold"
		}
		texts = append(texts, text)
	}
	c, err := ctxsel.NewCurve(cands)
	if err != nil {
		t.Fatal(err)
	}
	return c, texts
}

func TestResolveStrategy(t *testing.T) {
	res, err := ctxsel.Resolve(" adaptivek:head=0.05,max_k=3 ")
	if err != nil || res.Kind != ctxsel.StrategyKind || res.Spec != "adaptivek:head=0.05,max_k=3" || res.Strategy.Name() != "adaptivek" || res.Caps.MaxK != 3 || res.Caps.MinK != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	sp, ok := res.AsSpec()
	if !ok || sp.String() != res.Spec {
		t.Fatalf("AsSpec %v %v", sp, ok)
	}
	// Run, it selects as Select does, the spec's caps kept, without texts.
	c, _ := textCurve(t)
	run := res.Runnable()
	if run == nil || run.ReadsTexts() || run.Name() != "adaptivek" {
		t.Fatalf("runnable %v", run)
	}
	want, _ := ctxsel.Select(c, res.Strategy, res.Caps, ctxsel.DocumentOrder)
	got, u, err := run.Select(context.Background(), ctxsel.TextQuery{Curve: c, Order: ctxsel.DocumentOrder})
	if err != nil || !slices.Equal(got.IDs, want.IDs) || u != (ctxsel.SelectorUsage{}) {
		t.Fatalf("selector %v %v %v, want %v", got.IDs, u, err, want.IDs)
	}
	// The query's caps tighten the spec's.
	got, _, _ = run.Select(context.Background(), ctxsel.TextQuery{Curve: c, Caps: ctxsel.Caps{MaxK: 1}})
	if got.K != 1 {
		t.Fatalf("query max_k ignored: %v", got.IDs)
	}
	for spec, want := range map[string]string{
		"budget:tokens=1e+3":              "budget:tokens=1000", // an exponent's "+" is no composition
		"TOPK : k = 5":                    "topk:k=5",
		"topk:max_k=2,k=3":                "topk:k=3,max_k=2",
		"teststep":                        "teststep",
		"teststep:k=4":                    "teststep:k=4",
		"testpick:max=1":                  "testpick:max=1", // String() of the built selector
		"topk:k=4+testpick":               "topk:k=4+testpick:max=0",
		"topk:k=4,max_k=3+testpick:max=2": "topk:k=4,max_k=3+testpick:max=2",
	} {
		res, err := ctxsel.Resolver{Deps: markerDeps}.Resolve(spec)
		if err != nil || res.Spec != want {
			t.Errorf("%q: %q %v, want %q", spec, res.Spec, err, want)
			continue
		}
		// The canonical spec resolves to itself.
		again, err := ctxsel.Resolver{Deps: markerDeps}.Resolve(res.Spec)
		if err != nil || again.Spec != res.Spec || again.Kind != res.Kind {
			t.Errorf("%q: %q resolves to %q %v", spec, res.Spec, again.Spec, err)
		}
	}
	if res, err := (ctxsel.Resolver{Default: ctxsel.DefaultSelectStrategy}).Resolve("  "); err != nil || res.Spec != "adaptivek" {
		t.Fatalf("empty spec with a default: %+v %v", res, err)
	}
}

func TestResolveErrors(t *testing.T) {
	for spec, want := range map[string]string{
		"":                     "no strategy given",
		"nope":                 `unknown strategy "nope"`,
		"testpick":             `unknown strategy "testpick"`, // no Deps: not offered
		"topk:k=0":             "k=0 out of range",
		"topk:k=x":             `k=x must be a number`,  // a word: a route's or a text selector's value
		"topk:k=1x":            `k=1x must be a number`, // a word such as 2diff_spike
		"topk:k=1x-":           `k="1x-" is neither a finite number nor a word`,
		"topk:k=1,k=2":         "given twice",
		"k=3":                  "comes before any strategy name",
		"topk,knee":            "names 2 strategies",
		"+topk":                "empty strategy name",
		"topk:k=3+knee":        "knee is a strategy",
		"teststep+topk":        "teststep is an answering route",
		"topk+teststep":        "teststep is an answering route",
		"topk+topk+knee":       "3 parts",
		"budget:tokens=auto":   "tokens=auto needs a value",
		"teststep:k=0":         "k=0 out of range [1, 100]",
		"teststep:k=1,max_k=2": `unknown parameter "max_k" (known: k)`,
	} {
		_, err := ctxsel.Resolve(spec)
		if !errors.Is(err, ctxsel.ErrInvalidInput) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an invalid-input error containing %q", spec, err, want)
		}
	}
	r := ctxsel.Resolver{Deps: func(string) (any, error) {
		return nil, fmt.Errorf("%w: start it with --marker", ctxsel.ErrInvalidInput)
	}}
	if _, err := r.Resolve("testpick"); !errors.Is(err, ctxsel.ErrInvalidInput) || !strings.Contains(err.Error(), "--marker") || !strings.Contains(err.Error(), "testpick") {
		t.Fatalf("missing dependency: %v", err)
	}
	if _, err := (ctxsel.Resolver{Deps: func(string) (any, error) { return 42, nil }}).Resolve("testpick"); err == nil || !strings.Contains(err.Error(), "int") {
		t.Fatalf("dependency of the wrong type: %v", err)
	}
	if _, err := (ctxsel.Resolver{Deps: markerDeps}).Resolve("testpick:max=-1"); !errors.Is(err, ctxsel.ErrInvalidInput) || !strings.Contains(err.Error(), "testpick") {
		t.Fatalf("factory error: %v", err)
	}
}

// Kinds restricts what a caller accepts, and says what a refused spec is.
func TestResolveKinds(t *testing.T) {
	r := ctxsel.Resolver{Kinds: ctxsel.StrategyKind, Deps: markerDeps}
	if _, err := r.Resolve("topk"); err != nil {
		t.Fatal(err)
	}
	for spec, want := range map[string]string{"teststep": "answering route", "testpick": "text selector", "topk+testpick": "text selector"} {
		if _, err := r.Resolve(spec); !errors.Is(err, ctxsel.ErrInvalidInput) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", spec, err)
		}
	}
}

// A selector the caller built is offered under its name, without
// parameters, and hides a registered kind of the same name.
func TestResolveCallerSelectors(t *testing.T) {
	mine := markerPick{marker: "plain", max: 9}
	r := ctxsel.Resolver{Selectors: []ctxsel.TextSelector{mine}}
	res, err := r.Resolve("testpick")
	if err != nil || res.Selector != ctxsel.TextSelector(mine) || res.Kind != ctxsel.SelectorKind {
		t.Fatalf("%+v %v", res, err)
	}
	if _, err := r.Resolve("testpick:max=1"); !errors.Is(err, ctxsel.ErrInvalidInput) || !strings.Contains(err.Error(), "no parameters") {
		t.Fatalf("parameters for a caller's selector: %v", err)
	}
	if _, err := (ctxsel.Resolver{}).Resolve("topk+testpick"); err == nil {
		t.Fatal("composition with an unoffered selector resolved")
	}
	if res, err := r.Resolve("topk:k=2+testpick"); err != nil || res.Kind != ctxsel.SelectorKind {
		t.Fatalf("composition with a caller's selector: %v", err)
	}
}

// topk:k=4+testpick: the selector reads only the four best passages, and
// the result is over the whole curve.
func TestComposition(t *testing.T) {
	c, texts := textCurve(t)
	res, err := ctxsel.Resolver{Deps: markerDeps}.Resolve("topk:k=4+testpick")
	if err != nil {
		t.Fatal(err)
	}
	q := ctxsel.TextQuery{Question: "?", Curve: c, Texts: texts, Order: ctxsel.DocumentOrder}
	sel, err := res.Selector.SelectTexts(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	// gold is in 1, 3 and 5; topk:k=4 keeps 0..3.
	if !slices.Equal(sel.Indices, []int{1, 3}) || !slices.Equal(sel.IDs, []string{"p1", "p3"}) || sel.Tokens != 20 {
		t.Fatalf("selection %v %v %d", sel.Indices, sel.IDs, sel.Tokens)
	}
	e := sel.Explanation
	if e.N != 6 || e.TotalTokens != 60 || !strings.HasPrefix(e.Reason, "topk kept 4 of 6 passages") || !strings.Contains(e.Reason, `2 passages hold "gold"`) {
		t.Fatalf("explanation %+v", e)
	}
	m, ok := res.Selector.(ctxsel.MeteredSelector)
	if !ok {
		t.Fatal("composition hides the selector's usage")
	}
	sel2, u, err := m.SelectMetered(context.Background(), q)
	if err != nil || u.Calls != 1 || u.PromptTokens != 7 || !slices.Equal(sel2.Indices, sel.Indices) {
		t.Fatalf("metered %v %+v %v", sel2.Indices, u, err)
	}
	// Rank order, and the query's caps, apply to the final selection.
	q.Order, q.Caps = ctxsel.RankOrder, ctxsel.Caps{MaxK: 1}
	if sel, err = res.Selector.SelectTexts(context.Background(), q); err != nil || !slices.Equal(sel.IDs, []string{"p1"}) {
		t.Fatalf("capped %v %v", sel.IDs, err)
	}
	// A strategy that keeps nothing leaves nothing to read: an error.
	none, err := ctxsel.Resolver{Deps: markerDeps}.Resolve("budget:tokens=1+testpick")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := none.Selector.SelectTexts(context.Background(), q); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("empty first stage: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := res.Selector.SelectTexts(ctx, q); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

func TestResolveAuto(t *testing.T) {
	var asked []string
	errNoEstimate := errors.New("no estimate")
	r := ctxsel.Resolver{Auto: func(name, param string) (float64, error) {
		asked = append(asked, name+"."+param)
		if param != "tokens" {
			return 0, errNoEstimate
		}
		return 2400, nil
	}}
	res, err := r.Resolve("budget:tokens=AUTO,max_k=5")
	if err != nil || res.Spec != "budget:max_k=5,tokens=2400" || !slices.Equal(asked, []string{"budget.tokens"}) {
		t.Fatalf("%q %v asked %v", res.Spec, err, asked)
	}
	if _, err := r.Resolve("budget:tokens=5,max_tokens=auto"); !errors.Is(err, errNoEstimate) || !strings.Contains(err.Error(), "max_tokens=auto") {
		t.Fatalf("hook error: %v", err)
	}
}

func TestResolveList(t *testing.T) {
	list, err := ctxsel.Resolver{Deps: markerDeps}.ResolveList("topk:k=10,max_k=3, teststep:k=3,topk:k=30+testpick,max=2,knee")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range list {
		got = append(got, r.Kind.String()+" "+r.Spec)
	}
	want := []string{"strategy topk:k=10,max_k=3", "answering route teststep:k=3", "text selector topk:k=30+testpick:max=2", "strategy knee"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestRunRoute(t *testing.T) {
	c, _ := textCurve(t)
	res, err := ctxsel.Resolve("teststep:k=2")
	if err != nil || res.Kind != ctxsel.RouteKind {
		t.Fatalf("%+v %v", res, err)
	}
	steps, err := res.Route.Plan(c, ctxsel.RankOrder)
	if err != nil || len(steps) != 2 || steps[0].Selection.K != 2 || !steps[1].Long {
		t.Fatalf("plan %+v %v", steps, err)
	}
	// The route's own step is asked with its prompt, the long one with the
	// caller's long-context prompt.
	if p0, p1 := steps[0].Prompt(res.Route, "", "long {context} {question}"), steps[1].Prompt(res.Route, "", "long {context} {question}"); p0 != "{context} {question}" || p1 != "long {context} {question}" {
		t.Fatalf("step prompts %q, %q", p0, p1)
	}
	replies := map[int]string{2: "no", 6: "yes"}
	ask := func(_ context.Context, st ctxsel.RouteStep) (string, error) {
		r, ok := replies[st.Selection.K]
		if !ok {
			return "", errors.New("reader down")
		}
		return r, nil
	}
	if n, err := ctxsel.RunRoute(context.Background(), res.Route, steps, ask); n != 2 || err != nil {
		t.Fatalf("declined top-k: %d steps, %v", n, err)
	}
	replies[2] = "yes"
	if n, err := ctxsel.RunRoute(context.Background(), res.Route, steps, ask); n != 1 || err != nil {
		t.Fatalf("kept top-k: %d steps, %v", n, err)
	}
	replies[2] = "no"
	delete(replies, 6)
	if n, err := ctxsel.RunRoute(context.Background(), res.Route, steps, ask); n != 2 || err == nil || !strings.Contains(err.Error(), "teststep, long step") {
		t.Fatalf("failed second step: %d steps, %v", n, err)
	}
}

// Resolve takes user input: it never panics, its errors wrap
// ErrInvalidInput, and what it accepts has a canonical spec that resolves
// to the same thing.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"topk:k=10", "adaptivek:head=0.05,max_k=3", "default", "budget:tokens=1e+3", "teststep:k=3",
		"topk:k=30+testpick:max=2", "testpick+topk", "topk+", "+", "a:b=c,,d", "budget:tokens=auto", "topk:k=5,knee+testpick", "x:=", "TOPK:K=1"} {
		f.Add(s)
	}
	r := ctxsel.Resolver{Deps: markerDeps, Auto: func(string, string) (float64, error) { return 100, nil }}
	c, texts := textCurve(f)
	f.Fuzz(func(t *testing.T, s string) {
		list, err := r.ResolveList(s)
		if err != nil {
			if !errors.Is(err, ctxsel.ErrInvalidInput) {
				t.Fatalf("%q: error not wrapping ErrInvalidInput: %v", s, err)
			}
			return
		}
		for _, res := range list {
			again, err := r.Resolve(res.Spec)
			if err != nil || again.Spec != res.Spec || again.Kind != res.Kind {
				t.Fatalf("%q: canonical %q resolves to %q %v (%v)", s, res.Spec, again.Spec, again.Kind, err)
			}
			if (res.Kind == ctxsel.StrategyKind) != (res.Strategy != nil) || (res.Kind == ctxsel.RouteKind) != (res.Route != nil) || (res.Kind == ctxsel.SelectorKind) != (res.Selector != nil) || (res.Kind != ctxsel.RouteKind) != (res.Runnable() != nil) {
				t.Fatalf("%q: %+v", s, res)
			}
			// What runs, runs without panicking, under a query's caps too,
			// and keeps within them.
			if run := res.Runnable(); run != nil {
				sel, _, err := run.Select(context.Background(), ctxsel.TextQuery{Question: "q", Curve: c, Texts: texts, Caps: ctxsel.Caps{MaxK: 2}})
				if err == nil && sel.K > 2 {
					t.Fatalf("%q: %d passages under max_k=2", s, sel.K)
				}
			}
		}
	})
}

// spyQuery records the query a composition hands its text selector.
type spyQuery struct{ got *ctxsel.TextQuery }

func (s spyQuery) Name() string { return "spy" }
func (s spyQuery) SelectTexts(ctx context.Context, q ctxsel.TextQuery) (ctxsel.Selection, error) {
	*s.got = q
	return ctxsel.StrategyTexts(cutoff.TopK(1)).SelectTexts(ctx, q)
}

// A composition hands its selector the kept passages' texts, headers and
// lines above, and the whole curve as the pool, with each kept passage's index in it,
// also when compositions nest.
func TestCompositionCarriesPoolAndHeaders(t *testing.T) {
	cands := make([]ctxsel.Candidate, 6)
	texts, headers, above := make([]string, 6), make([]string, 6), make([]string, 6)
	for i := range cands {
		cands[i] = ctxsel.Candidate{ID: fmt.Sprint("p", i), Score: float64(i % 4), Tokens: 10}
		texts[i], headers[i], above[i] = fmt.Sprint("text ", i), fmt.Sprint("title ", i), fmt.Sprint("## section ", i)
	}
	curve, err := ctxsel.NewCurve(cands)
	if err != nil {
		t.Fatal(err)
	}
	var got ctxsel.TextQuery
	inner := ctxsel.Compose(cutoff.TopK(2), ctxsel.Caps{}, spyQuery{&got}, "topk:k=2+spy")
	outer := ctxsel.Compose(cutoff.TopK(4), ctxsel.Caps{}, inner, "topk:k=4+topk:k=2+spy")
	if _, err := outer.SelectTexts(context.Background(), ctxsel.TextQuery{Question: "q", Curve: curve, Texts: texts, Headers: headers, Above: above}); err != nil {
		t.Fatal(err)
	}
	// scores 0 1 2 3 0 1: the top 4 are p3, p2, p1, p5; their top 2 p3, p2.
	if got.Pool != curve || !slices.Equal(got.PoolIndex, []int{2, 3}) {
		t.Fatalf("pool %p (whole %p), indices %v", got.Pool, curve, got.PoolIndex)
	}
	if !slices.Equal(got.Texts, []string{"text 2", "text 3"}) || !slices.Equal(got.Headers, []string{"title 2", "title 3"}) || !slices.Equal(got.Above, []string{"## section 2", "## section 3"}) {
		t.Fatalf("texts %q headers %q above %q", got.Texts, got.Headers, got.Above)
	}
	// Headers and Above must be one per candidate; a pool index must lie in the pool.
	bad := ctxsel.TextQuery{Question: "q", Curve: curve, Texts: texts, Headers: headers[:2]}
	if err := bad.Validate(); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("2 headers for 6: %v", err)
	}
	bad = ctxsel.TextQuery{Question: "q", Curve: curve, Texts: texts, Above: above[:5]}
	if err := bad.Validate(); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("5 above texts for 6: %v", err)
	}
	bad = ctxsel.TextQuery{Question: "q", Curve: curve, Texts: texts, Pool: curve, PoolIndex: []int{0, 1, 2, 3, 4, 6}}
	if err := bad.Validate(); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("index 6 of 6: %v", err)
	}
}

// A source that gives the lines above as asked (TextQuery.AboveOf) is asked,
// through nested compositions, for the passages the selector reads, by
// their indices in the source's candidates; AboveFor reads either form.
func TestCompositionAsksAboveOf(t *testing.T) {
	cands := make([]ctxsel.Candidate, 6)
	texts, above := make([]string, 6), make([]string, 6)
	for i := range cands {
		cands[i] = ctxsel.Candidate{ID: fmt.Sprint("p", i), Score: float64(i % 4), Tokens: 10}
		texts[i], above[i] = fmt.Sprint("text ", i), fmt.Sprint("## section ", i)
	}
	curve, err := ctxsel.NewCurve(cands)
	if err != nil {
		t.Fatal(err)
	}
	var asked [][]int
	of := func(_ context.Context, indices []int) ([]string, error) {
		asked = append(asked, slices.Clone(indices))
		out := make([]string, len(indices))
		for i, j := range indices {
			out[i] = above[j]
		}
		return out, nil
	}
	var got ctxsel.TextQuery
	inner := ctxsel.Compose(cutoff.TopK(2), ctxsel.Caps{}, spyQuery{&got}, "topk:k=2+spy")
	outer := ctxsel.Compose(cutoff.TopK(4), ctxsel.Caps{}, inner, "topk:k=4+topk:k=2+spy")
	if _, err := outer.SelectTexts(context.Background(), ctxsel.TextQuery{Question: "q", Curve: curve, Texts: texts, AboveOf: of}); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 0 || got.Above != nil || got.AboveOf == nil {
		t.Fatalf("asked %v before the selector read any; above %q", asked, got.Above)
	}
	// the selector's passages 1 and 0 are the source's 3 and 2
	lines, err := got.AboveFor(context.Background(), []int{1, 0})
	if err != nil || !slices.Equal(lines, []string{"## section 3", "## section 2"}) || !slices.Equal(asked[0], []int{3, 2}) {
		t.Fatalf("AboveFor: %q, %v; the source asked %v", lines, err, asked)
	}
	if _, err := got.AboveFor(context.Background(), []int{2}); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("a passage outside the 2 kept: %v", err)
	}
	// Above read the same way; neither: nil
	q := ctxsel.TextQuery{Question: "q", Curve: curve, Texts: texts, Above: above}
	if lines, err := q.AboveFor(context.Background(), []int{5, 0}); err != nil || !slices.Equal(lines, []string{"## section 5", "## section 0"}) {
		t.Fatalf("AboveFor over Above: %q, %v", lines, err)
	}
	if lines, err := (ctxsel.TextQuery{Curve: curve, Texts: texts}).AboveFor(context.Background(), []int{1}); lines != nil || err != nil {
		t.Fatalf("no lines above: %q, %v", lines, err)
	}
	// both forms, a source that fails, one that answers short
	q.AboveOf = of
	if err := q.Validate(); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("Above and AboveOf: %v", err)
	}
	q.Above = nil
	q.AboveOf = func(context.Context, []int) ([]string, error) { return nil, errors.New("segment unreadable") }
	if _, err := q.AboveFor(context.Background(), []int{1}); err == nil || !strings.Contains(err.Error(), "segment unreadable") {
		t.Fatalf("a failing source: %v", err)
	}
	q.AboveOf = func(context.Context, []int) ([]string, error) { return []string{"x"}, nil }
	if _, err := q.AboveFor(context.Background(), []int{1, 2}); err == nil {
		t.Fatal("one line for two passages accepted")
	}
}

func TestOptionalDep(t *testing.T) {
	deps := ctxsel.DepsOf(map[string]any{"n": 3, "s": "x"})
	if v, ok, err := ctxsel.OptionalDep[int](deps, "n"); v != 3 || !ok || err != nil {
		t.Fatalf("n: %v %v %v", v, ok, err)
	}
	if _, ok, err := ctxsel.OptionalDep[int](deps, "missing"); ok || err != nil {
		t.Fatalf("missing: %v %v", ok, err)
	}
	if _, ok, err := ctxsel.OptionalDep[int](nil, "n"); ok || err != nil {
		t.Fatalf("nil deps: %v %v", ok, err)
	}
	if _, _, err := ctxsel.OptionalDep[int](deps, "s"); err == nil {
		t.Fatal("a string served as an int")
	}
	failing := func(string) (any, error) { return nil, errors.New("cannot open the model") }
	if _, _, err := ctxsel.OptionalDep[int](failing, "n"); err == nil || !strings.Contains(err.Error(), "cannot open") {
		t.Fatalf("a failing dependency: %v", err)
	}
	if _, err := ctxsel.Dep[int](deps, "missing"); !errors.Is(err, ctxsel.ErrNoDep) {
		t.Fatalf("required and missing: %v", err)
	}
}

// TestChainDeps: each name comes from the first Deps that supplies it; a
// failure other than "not supplied" is the answer, not passed on.
func TestChainDeps(t *testing.T) {
	if ctxsel.ChainDeps(nil, nil) != nil {
		t.Fatal("a chain of nothing is not nil")
	}
	first := ctxsel.DepsOf(map[string]any{"a": 1, "nil": nil})
	failing := func(name string) (any, error) {
		if name == "b" {
			return nil, errors.New("cannot open b")
		}
		return nil, fmt.Errorf("%w: %s", ctxsel.ErrNoDep, name)
	}
	last := ctxsel.DepsOf(map[string]any{"a": 2, "b": 2, "c": 2, "nil": 2})
	d := ctxsel.ChainDeps(nil, first, failing, last)
	for name, want := range map[string]any{"a": 1, "c": 2, "nil": 2} {
		if v, err := d(name); v != want || err != nil {
			t.Errorf("%s: %v %v, want %v", name, v, err, want)
		}
	}
	if _, err := d("b"); err == nil || !strings.Contains(err.Error(), "cannot open b") {
		t.Errorf("b: %v, want the failure", err)
	}
	if _, err := d("none"); !errors.Is(err, ctxsel.ErrNoDep) {
		t.Errorf("none: %v, want ErrNoDep", err)
	}
}

// Parameters and a selector given apart from the spec are merged as values:
// the result is what the spec with them written in resolves to, and a
// parameter given twice is refused.
func TestResolverParamsAndThen(t *testing.T) {
	for _, c := range []struct {
		spec   string
		params []ctxsel.Param
		then   *ctxsel.Spec
		same   string
	}{
		{"adaptivek", []ctxsel.Param{{Key: "buffer", Value: "0"}}, nil, "adaptivek:buffer=0"},
		{"topk:k=3", []ctxsel.Param{ctxsel.ParamValue("max_k", 2), {Key: "MIN_K", Value: " 1 "}}, nil, "topk:k=3,max_k=2,min_k=1"},
		{"topk:k=4", nil, &ctxsel.Spec{Name: "testpick", Params: map[string]float64{"max": 1}}, "topk:k=4+testpick:max=1"},
		{"topk:k=4+testpick", []ctxsel.Param{ctxsel.ParamValue("max", 2)}, nil, "topk:k=4+testpick:max=2"},
		{"teststep", []ctxsel.Param{ctxsel.ParamValue("k", 3)}, nil, "teststep:k=3"},
	} {
		r := ctxsel.Resolver{Deps: markerDeps}
		want, err := r.Resolve(c.same)
		if err != nil {
			t.Fatal(err)
		}
		r.Params, r.Then = c.params, c.then
		got, err := r.Resolve(c.spec)
		if err != nil || got.Spec != want.Spec || got.Kind != want.Kind {
			t.Errorf("%s with %v then %v: %q, %v; want %q as %s", c.spec, c.params, c.then, got.Spec, err, want.Spec, c.same)
		}
	}
	r := ctxsel.Resolver{Params: []ctxsel.Param{ctxsel.ParamValue("k", 2)}}
	var pe *ctxsel.ParamError
	if _, err := r.Resolve("topk:k=3"); !errors.As(err, &pe) || pe.Param != "k" || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("a parameter given twice: %v", err)
	}
	if _, err := r.Resolve("topk"); err != nil {
		t.Errorf("topk with k=2: %v", err)
	}
	r.Params = []ctxsel.Param{{Key: "k", Value: "0"}}
	if _, err := r.Resolve("topk"); !errors.As(err, &pe) || pe.Param != "k" {
		t.Errorf("k=0 given apart: %v", err)
	}
	if _, err := r.ResolveList("topk,knee"); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Errorf("ResolveList with params: %v", err)
	}
}
