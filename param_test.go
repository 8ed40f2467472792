package ctxsel_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	_ "github.com/ctxsel/ctxsel/all" // every registered name (TestAllLinksEveryRegistrant)
	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/score"
)

// schemaOwner is a name whose parameters are declared with ctxsel.ParamDef,
// and how a spec naming it is parsed.
type schemaOwner struct {
	name  string
	defs  []ctxsel.ParamDef
	parse func(spec string) error
}

// schemaOwners lists every registered name (strategies with their caps,
// text selectors, routes) and the module's other spec grammars (the hybrid
// scorer, the chunkers).
func schemaOwners() []schemaOwner {
	var out []schemaOwner
	resolve := func(spec string) error {
		// Deps that supply nothing: parameters are checked before any
		// dependency is asked for.
		_, err := ctxsel.Resolver{Deps: ctxsel.DepsOf(nil)}.Resolve(spec)
		return err
	}
	for _, d := range ctxsel.Defs() {
		out = append(out, schemaOwner{d.Name, append(slices.Clone(d.Params), ctxsel.CapParams()...), resolve})
	}
	for _, d := range ctxsel.SelectorDefs() {
		out = append(out, schemaOwner{d.Name, d.Params, resolve})
	}
	for _, d := range ctxsel.RouteDefs() {
		out = append(out, schemaOwner{d.Name, d.Params, resolve})
	}
	out = append(out, schemaOwner{"hybrid", ctxsel.NormalParams(score.HybridParams()), func(spec string) error {
		_, _, err := score.ParseHybrid(spec)
		return err
	}})
	for name, defs := range chunk.Chunkers() {
		out = append(out, schemaOwner{name, ctxsel.NormalParams(defs), func(spec string) error {
			_, err := chunk.Parse(spec, nil, nil)
			return err
		}})
	}
	return out
}

// TestSchemasAreCopies: the schemas a package hands out are new on every
// call, so a caller that changes one (a range, a word) changes nobody
// else's and not what a spec is checked against.
func TestSchemasAreCopies(t *testing.T) {
	caps := ctxsel.CapParams()
	caps[0].Max = 1
	if ctxsel.CapParams()[0].Max == 1 {
		t.Error("a change to CapParams' result reached the next call")
	}
	hyb := score.HybridParams()
	i := slices.IndexFunc(hyb, func(p ctxsel.ParamDef) bool { return p.Name == "fusion" })
	hyb[i].Words[0] = "changed"
	if slices.Contains(score.HybridParams()[i].Words, "changed") {
		t.Error("a change to HybridParams' words reached the next call")
	}
	if _, _, err := score.ParseHybrid("hybrid:fusion=zscore"); err != nil {
		t.Errorf("after a caller's change: %v", err)
	}
	ch := chunk.Chunkers()
	ch["tokens"][0].Max = 1
	delete(ch, "semantic")
	if again := chunk.Chunkers(); again["tokens"][0].Max == 1 || again["semantic"] == nil {
		t.Error("a change to Chunkers' map reached the next call")
	}
	if _, err := chunk.Parse("tokens:size=600", nil, nil); err != nil {
		t.Errorf("after a caller's change: %v", err)
	}
	names := chunk.Names()
	names[0] = "changed"
	if chunk.Names()[0] == "changed" {
		t.Error("a change to Names' result reached the next call")
	}
	// The registry hands out copies too.
	registered := func() [][]ctxsel.ParamDef {
		var out [][]ctxsel.ParamDef
		for _, d := range ctxsel.Defs() {
			out = append(out, d.Params)
		}
		for _, d := range ctxsel.SelectorDefs() {
			out = append(out, d.Params)
		}
		for _, d := range ctxsel.RouteDefs() {
			out = append(out, d.Params)
		}
		return out
	}
	before := fmt.Sprintf("%#v", registered())
	handed := registered()
	if d, ok := ctxsel.Lookup("topk"); ok {
		handed = append(handed, d.Params)
	}
	for _, defs := range handed {
		for i := range defs {
			defs[i].Max, defs[i].Doc = 1, "changed"
			if len(defs[i].Words) > 0 {
				defs[i].Words[0] = "changed"
			}
		}
	}
	if fmt.Sprintf("%#v", registered()) != before {
		t.Error("a change to what Defs, SelectorDefs, RouteDefs or Lookup returned reached the registry")
	}
	if d, _ := ctxsel.Lookup("topk"); d.Params[0].Doc == "changed" {
		t.Error("a change to Lookup's result reached the registry")
	}
	if _, err := (ctxsel.Resolver{}).Resolve("topk:k=5"); err != nil {
		t.Errorf("after a caller's change: %v", err)
	}
}

// validValue is a value p accepts, written as in a spec.
func validValue(p ctxsel.ParamDef) string {
	switch p.Type() {
	case ctxsel.WordParam, ctxsel.ListParam:
		if len(p.Words) > 0 {
			return p.Words[0]
		}
		return cmpOr(p.DefaultWord, "word")
	}
	v := p.Default
	if v < p.Min || v > p.Max || (p.MinExclusive && v == p.Min) || (p.MaxExclusive && v == p.Max) {
		v = p.Min
		if p.MinExclusive {
			v = p.Min + math.Min(1, (p.Max-p.Min)/2)
		}
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// badValues are values of p's kind outside its range or words, and a value
// of the wrong kind.
func badValues(p ctxsel.ParamDef) []string {
	var out []string
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	switch p.Type() {
	case ctxsel.WordParam, ctxsel.ListParam:
		if len(p.Words) > 0 {
			out = append(out, "zz_not_one")
		}
		if p.Type() == ctxsel.WordParam && len(p.Words) > 0 {
			out = append(out, p.Words[0]+"|"+p.Words[0])
		}
		return append(out, "3") // a number
	}
	if p.Min > -math.MaxFloat64 {
		if p.MinExclusive {
			out = append(out, f(p.Min))
		} else {
			out = append(out, f(p.Min-1))
		}
	}
	if p.Max < math.MaxFloat64 {
		if p.MaxExclusive {
			out = append(out, f(p.Max))
		} else {
			out = append(out, f(p.Max+1))
		}
	}
	if p.Integer && p.Min+0.5 < p.Max {
		out = append(out, f(math.Max(p.Min, 0)+0.5))
	}
	return append(out, "wrong_kind") // a word
}

// TestEveryParamRefusesTheSameWay: every parameter of every registered
// name (strategies with their caps, text selectors, routes) and of the
// hybrid scorer and the chunkers refuses a value out of its range or
// words and a value of the wrong kind, and every name refuses an unknown
// parameter, with the same *ctxsel.ParamError naming the name and the
// parameter; a spec giving every parameter a valid value resolves past
// the parameter check.
func TestEveryParamRefusesTheSameWay(t *testing.T) {
	owners := schemaOwners()
	if len(owners) < 15 {
		t.Fatalf("only %d names with parameters", len(owners))
	}
	checked := 0
	for _, o := range owners {
		// The parameters every spec must give, with valid values.
		var base []string
		for _, p := range o.defs {
			if p.Required {
				base = append(base, p.Name+"="+validValue(p))
			}
		}
		spec := func(extra string) string {
			ps := slices.DeleteFunc(slices.Clone(base), func(kv string) bool {
				return strings.HasPrefix(kv, strings.SplitN(extra, "=", 2)[0]+"=")
			})
			return o.name + ":" + strings.Join(append(ps, extra), ",")
		}
		expect := func(text, param string, unknown bool) {
			t.Helper()
			checked++
			err := o.parse(text)
			var pe *ctxsel.ParamError
			if !errors.As(err, &pe) || !errors.Is(err, ctxsel.ErrInvalidInput) {
				t.Errorf("%s: %v, want a *ctxsel.ParamError", text, err)
				return
			}
			if pe.Strategy != o.name || pe.Param != param || (pe.Known != nil) != unknown {
				t.Errorf("%s: ParamError{Strategy: %q, Param: %q, Known: %v}, want %s's %s (unknown: %v)", text, pe.Strategy, pe.Param, pe.Known, o.name, param, unknown)
			}
			if !strings.Contains(pe.Detail(), o.name+": ") || !strings.HasSuffix(err.Error(), pe.Detail()) {
				t.Errorf("%s: message %q does not name %s", text, err, o.name)
			}
		}
		expect(spec("zz_unknown=1"), "zz_unknown", true)
		for _, p := range o.defs {
			for _, v := range badValues(p) {
				expect(spec(p.Name+"="+v), p.Name, false)
			}
			// A valid value passes the check (whatever the factory then
			// says about missing dependencies).
			var pe *ctxsel.ParamError
			if text := spec(p.Name + "=" + validValue(p)); errors.As(o.parse(text), &pe) {
				t.Errorf("%s: refused: %v", text, pe)
			}
		}
	}
	t.Logf("%d refusals over %d names", checked, len(owners))
}

// TestWithDefaults fills what a spec leaves out, except parameters without
// a fixed default, and keeps what it gives.
func TestWithDefaults(t *testing.T) {
	defs := []ctxsel.ParamDef{
		{Name: "n", Default: 3},
		{Name: "w", Kind: ctxsel.WordParam, Words: []string{"a", "b"}, DefaultWord: "a"},
		{Name: "r", Required: true},
		{Name: "m", DefaultDoc: "the model's"},
	}
	sp := ctxsel.WithDefaults(ctxsel.Spec{Name: "x", Params: map[string]float64{"r": 1}, Words: map[string]string{"w": "b"}}, defs)
	want := "x:n=3,r=1,w=b"
	if got := sp.String(); got != want {
		t.Fatalf("WithDefaults = %s, want %s", got, want)
	}
	if err := ctxsel.CheckParams(ctxsel.Spec{Name: "x"}, defs); err == nil || !strings.Contains(err.Error(), "missing r") {
		t.Fatalf("a required parameter left out: %v", err)
	}
}

// A list parameter takes words joined by "|", each one of its words.
func TestListParam(t *testing.T) {
	defs := []ctxsel.ParamDef{{Name: "units", Kind: ctxsel.ListParam, Words: []string{"sentence", "line"}}}
	sp, err := ctxsel.ParseParams("x:units=sentence|line", "", defs)
	if err != nil || sp.Words["units"] != "sentence|line" {
		t.Fatalf("%+v, %v", sp, err)
	}
	for _, bad := range []string{"x:units=sentence|word", "x:units=2", "x:units=sentence||line"} {
		if _, err := ctxsel.ParseParams(bad, "", defs); !errors.Is(err, ctxsel.ErrInvalidInput) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// The schema's JSON: a number's fields as they always were (the
// /v1/strategies goldens), a word's default as its word.
func TestParamDefJSON(t *testing.T) {
	for _, c := range []struct {
		p    ctxsel.ParamDef
		want string
	}{
		{ctxsel.ParamDef{Name: "k", Default: 10, Min: 1, Max: 5, Integer: true, Doc: "d"}, `{"name":"k","default":10,"min":1,"max":5,"integer":true,"doc":"d"}`},
		{ctxsel.ParamDef{Name: "order", Kind: ctxsel.WordParam, Words: []string{"rank", "document"}, DefaultWord: "rank", Doc: "d"}, `{"name":"order","kind":"word","default":"rank","words":["rank","document"],"doc":"d"}`},
	} {
		b, err := json.Marshal(c.p)
		if err != nil || string(b) != c.want {
			t.Errorf("%s: %s, %v; want %s", c.p.Name, b, err, c.want)
		}
		var back ctxsel.ParamDef
		if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, c.p) {
			t.Errorf("%s: read back %+v, %v", c.p.Name, back, err)
		}
	}
}

// FuzzParseParams: any text either fails with an invalid-input error or
// gives a spec that passes its check and reads back the same from its
// String.
func FuzzParseParams(f *testing.F) {
	defs := []ctxsel.ParamDef{
		{Name: "n", Min: -1, Max: 1, MaxExclusive: true},
		{Name: "i", Kind: ctxsel.IntegerParam, Min: 1, Max: 1e6, Required: true},
		{Name: "b", Kind: ctxsel.BoolParam, Default: 1},
		{Name: "w", Kind: ctxsel.WordParam, Words: []string{"rank", "document"}, DefaultWord: "rank"},
		{Name: "any", Kind: ctxsel.WordParam},
		{Name: "l", Kind: ctxsel.ListParam, Words: []string{"sentence", "line", "use-lite"}},
	}
	for _, s := range []string{"x:i=3", "x:i=3,n=0.5,b=0,w=document,any=2diff_spike,l=sentence|line", "x:i=1e+3", "x:i=3,l=use-lite|", "x:i=3,w=rank|rank", "x:,,i=2", "X:I=2,N=-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sp, err := ctxsel.ParseParams(s, "", defs)
		if err != nil {
			if !errors.Is(err, ctxsel.ErrInvalidInput) {
				t.Fatalf("%q: %v does not wrap ErrInvalidInput", s, err)
			}
			return
		}
		if err := ctxsel.CheckParams(sp, defs); err != nil {
			t.Fatalf("%q parsed but fails its check: %v", s, err)
		}
		back, err := ctxsel.ParseParams(sp.String(), "", defs)
		if err != nil || back.String() != sp.String() {
			t.Fatalf("%q → %q → %q, %v", s, sp.String(), back.String(), err)
		}
	})
}
