package ctxsel_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	_ "github.com/ctxsel/ctxsel/cutoff"
	_ "github.com/ctxsel/ctxsel/ldar"
)

// Every integer parameter of every registered strategy, caps included, is
// bounded: a value that would overflow int (budget:tokens=2^63-1 once became a
// negative budget and k = 0) is rejected, the bound itself is accepted and
// listed.
func TestIntegerParamsBounded(t *testing.T) {
	huge := []float64{math.MaxInt64, 1e300, ctxsel.MaxIntParam + 1}
	checked := 0
	for _, d := range ctxsel.Defs() {
		params := append(append([]ctxsel.ParamDef(nil), d.Params...), ctxsel.CapParams()...)
		for _, p := range params {
			if !p.Integer {
				continue
			}
			checked++
			if p.Max > ctxsel.MaxIntParam {
				t.Errorf("%s: %s lists max %v over MaxIntParam", d.Name, p.Name, p.Max)
			}
			for _, v := range huge {
				spec := fmt.Sprintf("%s:%s=%.0f", d.Name, p.Name, v)
				if _, _, err := ctxsel.Parse(spec); !errors.Is(err, ctxsel.ErrInvalidInput) {
					t.Errorf("%s: err = %v, want invalid input", spec, err)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no integer parameters registered")
	}
}

func TestLargestBudgetSelectsAll(t *testing.T) {
	spec := fmt.Sprintf("budget:tokens=%d", int64(ctxsel.MaxIntParam))
	st, caps, err := ctxsel.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	curve, err := ctxsel.NewCurve([]ctxsel.Candidate{{ID: "a", Score: 0.9, Tokens: 100}, {ID: "b", Score: 0.5, Tokens: 1 << 30}})
	if err != nil {
		t.Fatal(err)
	}
	sel, err := ctxsel.Select(curve, st, caps, ctxsel.RankOrder)
	if err != nil {
		t.Fatal(err)
	}
	if len(sel.IDs) != 2 {
		t.Fatalf("%s selected %v, want both", spec, sel.IDs)
	}
}

// A definition's own bound above MaxIntParam is capped when registered.
func TestRegisterCapsIntegerMax(t *testing.T) {
	ctxsel.Register(ctxsel.Def{Name: "test_huge_int", Params: []ctxsel.ParamDef{{Name: "n", Default: 1, Max: math.MaxFloat64, Integer: true}},
		New: func(map[string]float64) (ctxsel.Strategy, error) { return nil, errors.New("not built") }})
	d, _ := ctxsel.Lookup("test_huge_int")
	if d.Params[0].Max != ctxsel.MaxIntParam {
		t.Fatalf("max = %v, want %v", d.Params[0].Max, float64(ctxsel.MaxIntParam))
	}
}

// A strategy built with NewFrom gets the caller's dependencies: none from
// New, a Resolver's Deps, NewWith's; a definition with both constructors
// or neither is refused.
func TestNewFromGetsDeps(t *testing.T) {
	var got []any
	ctxsel.Register(ctxsel.Def{Name: "test_deps", NewFrom: func(_ map[string]float64, deps ctxsel.Deps) (ctxsel.Strategy, error) {
		v, _, err := ctxsel.OptionalDep[string](deps, "thing")
		got = append(got, v)
		if err != nil {
			return nil, err
		}
		st, _, err := ctxsel.Parse("topk:k=1")
		return st, err
	}})
	thing := ctxsel.DepsOf(map[string]any{"thing": "given"})
	if _, _, err := ctxsel.Parse("test_deps"); err != nil {
		t.Fatal(err)
	}
	if _, err := (ctxsel.Resolver{Deps: thing}).Resolve("test_deps:max_k=2"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ctxsel.NewWith(ctxsel.Spec{Name: "test_deps"}, thing); err != nil {
		t.Fatal(err)
	}
	if want := []any{"", "given", "given"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the constructor got %q, want %q", got, want)
	}
	if _, _, err := ctxsel.NewWith(ctxsel.Spec{Name: "test_deps"}, ctxsel.DepsOf(map[string]any{"thing": 7})); err == nil {
		t.Error("a dependency of the wrong type was accepted")
	}
	build := func(map[string]float64) (ctxsel.Strategy, error) { return nil, errors.New("not built") }
	buildFrom := func(map[string]float64, ctxsel.Deps) (ctxsel.Strategy, error) { return nil, errors.New("not built") }
	for _, d := range []ctxsel.Def{{Name: "test_both", New: build, NewFrom: buildFrom}, {Name: "test_neither"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%s) did not panic", d.Name)
				}
			}()
			ctxsel.Register(d)
		}()
	}
}

// A strategy parameter named like a cap would silently replace the cap for
// that strategy (topp's own min_k once did): names stay apart.
func TestNoParamShadowsACap(t *testing.T) {
	for _, d := range ctxsel.Defs() {
		for _, p := range d.Params {
			for _, c := range ctxsel.CapParams() {
				if p.Name == c.Name {
					t.Errorf("strategy %s: parameter %s has the name of a cap", d.Name, p.Name)
				}
			}
		}
	}
}

// TestWordParams: a parameter may be a word (selfroute:prompt=adaptivek);
// it round-trips through String, and New refuses it for a strategy, whose
// parameters are all numbers.
func TestWordParams(t *testing.T) {
	sp, err := ctxsel.ParseSpec("selfroute:tokens=5000,prompt=AdaptiveK")
	if err != nil {
		t.Fatal(err)
	}
	if sp.Params["tokens"] != 5000 || sp.Words["prompt"] != "adaptivek" {
		t.Fatalf("parsed %+v", sp)
	}
	if got := sp.String(); got != "selfroute:prompt=adaptivek,tokens=5000" {
		t.Fatalf("String: %q", got)
	}
	back, err := ctxsel.ParseSpec(sp.String())
	if err != nil || back.String() != sp.String() {
		t.Fatalf("round trip %q: %v", back.String(), err)
	}
	for _, text := range []string{"selfroute:prompt=a,prompt=b", "selfroute:prompt=a,prompt=1", "selfroute:k=1,k=x", "topk:k=_x", "topk:k=1x2-", "topk:k=nan"} {
		if _, err := ctxsel.ParseSpec(text); !errors.Is(err, ctxsel.ErrInvalidInput) {
			t.Errorf("%s accepted (%v)", text, err)
		}
	}
	for _, text := range []string{"adaptivek:buffer=five"} {
		if _, _, err := ctxsel.Parse(text); !errors.Is(err, ctxsel.ErrInvalidInput) || !strings.Contains(err.Error(), "must be a number") {
			t.Errorf("%s: %v, want a strategy to refuse a word", text, err)
		}
	}
}
