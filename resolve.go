package ctxsel

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Kind is the kind of thing a spec names.
type Kind uint8

const (
	// StrategyKind is a pure Strategy: a function of the scores.
	StrategyKind Kind = 1 << iota
	// SelectorKind is a TextSelector: it reads the question and the texts
	// and may call a model (the picker), or a composition that cuts with a
	// strategy first (topk:k=30+picker).
	SelectorKind
	// RouteKind is an answering route: the reader's reply decides the
	// context (Self-Route), so it needs the reader.
	RouteKind
)

func (k Kind) String() string {
	switch k {
	case StrategyKind:
		return "strategy"
	case SelectorKind:
		return "text selector"
	case RouteKind:
		return "answering route"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Resolved is a spec made runnable.
type Resolved struct {
	Kind Kind
	// Spec is the canonical spec: each part's parameters as parsed (a
	// strategy's or route's sorted, numbers written in full, "auto"
	// replaced by its value), parts joined by "+". It resolves back to the
	// same thing.
	Spec string
	// Strategy and Caps are a StrategyKind's: Select(curve, Strategy, Caps,
	// order).
	Strategy Strategy
	Caps     Caps
	// Selector is a SelectorKind's text selector. Runnable gives either
	// kind as one Selector, which is how callers run them.
	Selector TextSelector
	// Route is a RouteKind's route.
	Route Route

	spec Spec // a strategy's or a route's parsed spec
}

// AsSpec returns a strategy's or a route's parsed spec (eval.Options
// takes those); ok is false for a text selector.
func (r Resolved) AsSpec() (sp Spec, ok bool) {
	return r.spec, r.Kind == StrategyKind || r.Kind == RouteKind
}

// Deps gives a text selector's factory the runtime dependencies it asks
// for by name (DepLLM, DepEmbedder, or a name of the selector's own
// package): the caller of Resolve builds them, lazily if it likes, and
// says in the error what is missing and how to supply it.
type Deps func(name string) (any, error)

// Names of the dependencies text selectors commonly need.
const (
	// DepLLM is the LLM a text selector calls (an llm.Client): the picker's.
	DepLLM = "llm"
	// DepEmbedder embeds texts (an embed.Embedder): the evidence selector's.
	DepEmbedder = "embedder"
	// DepCounter counts tokens the way the caller counts its candidates'
	// (a token.Counter); optional where a selector has a default.
	DepCounter = "counter"
)

// DepsOf serves the dependencies in m by name; a name m lacks answers an
// error wrapping ErrNoDep.
func DepsOf(m map[string]any) Deps {
	return func(name string) (any, error) {
		if v, ok := m[name]; ok {
			return v, nil
		}
		return nil, fmt.Errorf("%w: %s", ErrNoDep, name)
	}
}

// ChainDeps serves each name from the first of ds that supplies it: a
// nil Deps, a nil value or an error wrapping ErrNoDep passes the name on
// to the next, any other error is the answer. It is nil when every one of
// ds is.
func ChainDeps(ds ...Deps) Deps {
	ds = slices.DeleteFunc(slices.Clone(ds), func(d Deps) bool { return d == nil })
	if len(ds) == 0 {
		return nil
	}
	return func(name string) (any, error) {
		for _, d := range ds {
			if v, err := d(name); err == nil && v != nil || err != nil && !errors.Is(err, ErrNoDep) {
				return v, err
			}
		}
		return nil, fmt.Errorf("%w: %s", ErrNoDep, name)
	}
}

// ErrNoDep is what a Deps wraps in its error for a name it does not
// supply, so that a selector can tell an optional dependency left out
// (OptionalDep: use its default) from one that failed to build.
var ErrNoDep = errors.New("dependency not supplied")

// OptionalDep fetches an optional dependency: ok is false, with no error,
// when d is nil, answers nil, or its error wraps ErrNoDep.
func OptionalDep[T any](d Deps, name string) (t T, ok bool, err error) {
	if d == nil {
		return t, false, nil
	}
	v, err := d(name)
	if errors.Is(err, ErrNoDep) || (err == nil && v == nil) {
		return t, false, nil
	}
	if err != nil {
		return t, false, fmt.Errorf("needs %s: %w", name, err)
	}
	t, ok = v.(T)
	if !ok {
		return t, false, fmt.Errorf("needs %s: got %T, want %T", name, v, t)
	}
	return t, true, nil
}

// Dep fetches the dependency name from d as a T; the error wraps
// ErrInvalidInput when d cannot supply it (that is the caller's
// configuration, not a failure).
func Dep[T any](d Deps, name string) (T, error) {
	var zero T
	if d == nil {
		return zero, invalidf("needs %s, which the caller did not supply", name)
	}
	v, err := d(name)
	if err != nil {
		return zero, fmt.Errorf("needs %s: %w", name, err)
	}
	t, ok := v.(T)
	if !ok {
		return zero, fmt.Errorf("needs %s: got %T, want %T", name, v, zero)
	}
	return t, nil
}

// SelectorDef describes a kind of text selector that specs may name.
type SelectorDef struct {
	Name string `json:"name"`
	Doc  string `json:"doc"`
	// Params declare the parameters: Resolve checks a spec's against them
	// (CheckParams) before New sees it.
	Params []ParamDef `json:"params"`
	// New builds the selector from the spec, its parameters checked but
	// their defaults not filled in (WithDefaults fills them), and the
	// caller's dependencies. Errors that are the spec's fault wrap
	// ErrInvalidInput.
	New func(sp Spec, deps Deps) (TextSelector, error) `json:"-"`
}

// RouteDef describes an answering route that specs may name.
type RouteDef struct {
	Name string `json:"name"`
	Doc  string `json:"doc"`
	// Params declare the parameters, numbers and words
	// (selfroute:prompt=adaptivek): Resolve checks a spec's against them
	// before New sees it.
	Params []ParamDef `json:"params"`
	// New builds the route from its spec, its parameters checked but their
	// defaults not filled in. Errors wrap ErrInvalidInput.
	New func(sp Spec) (Route, error) `json:"-"`
}

// RegisterSelector makes a kind of text selector available to Resolve by
// name. It panics on a duplicate name (of any kind) or a definition
// without name or constructor: a programming error at init.
func RegisterSelector(d SelectorDef) {
	registry.Lock()
	defer registry.Unlock()
	if d.Name == "" || d.New == nil || !isIdent(d.Name) {
		panic("ctxsel: RegisterSelector of a selector without a valid name or constructor")
	}
	registry.checkFree(d.Name)
	d.Params = NormalParams(d.Params)
	registry.selectors[d.Name] = d
}

// RegisterRoute makes an answering route available to Resolve by name.
// It panics like RegisterSelector.
func RegisterRoute(d RouteDef) {
	registry.Lock()
	defer registry.Unlock()
	if d.Name == "" || d.New == nil || !isIdent(d.Name) {
		panic("ctxsel: RegisterRoute of a route without a valid name or constructor")
	}
	registry.checkFree(d.Name)
	d.Params = NormalParams(d.Params)
	registry.routes[d.Name] = d
}

// SelectorDefs lists the registered text selector kinds by name (copies:
// changing one changes nothing registered).
func SelectorDefs() []SelectorDef {
	registry.RLock()
	defer registry.RUnlock()
	out := slices.SortedFunc(maps.Values(registry.selectors), func(a, b SelectorDef) int { return strings.Compare(a.Name, b.Name) })
	for i := range out {
		out[i].Params = cloneParams(out[i].Params)
	}
	return out
}

// RouteDefs lists the registered answering routes by name (copies).
func RouteDefs() []RouteDef {
	registry.RLock()
	defer registry.RUnlock()
	out := slices.SortedFunc(maps.Values(registry.routes), func(a, b RouteDef) int { return strings.Compare(a.Name, b.Name) })
	for i := range out {
		out[i].Params = cloneParams(out[i].Params)
	}
	return out
}

// Resolver turns spec strings into runnable things: the one place that
// tells a strategy from a text selector from an answering route, composes
// them and fills "auto" values. Its zero value resolves strategies and
// registered routes; a caller offers text selectors through Selectors or
// Deps.
type Resolver struct {
	// Default is what an empty spec stands for; "" makes an empty spec an
	// error. (The spec name "default" is DefaultStrategy either way.)
	Default string
	// Kinds are the kinds accepted (StrategyKind|SelectorKind, say); 0
	// accepts every kind. A spec of another kind is an error that says
	// what it is.
	Kinds Kind
	// Selectors are text selectors the caller built (a server's picker),
	// named by Name(): a spec naming one gets it as it is, without
	// parameters (its settings are the caller's). They hide a registered
	// kind of the same name.
	Selectors []TextSelector
	// Deps, when set, lets a spec build any registered text selector kind,
	// which asks it for what it needs (DepLLM, DepEmbedder). Without it
	// registered selector kinds are unknown names: a caller that cannot
	// supply dependencies does not offer them. Strategies built with
	// Def.NewFrom get it too (the band its policy, ldar.DepPolicy), nil or
	// not.
	Deps Deps
	// Params are parameters given apart from the spec (a request's
	// "params" object, --param flags), merged as values: each joins the
	// spec's last part as if written after its own parameters (so a
	// parameter the spec also gives is an error), and is checked, "auto"
	// included, as those are. ResolveList refuses them.
	Params []Param
	// Then, when set, is a text selector run after what the spec names:
	// a composition, the spec's strategy cutting first
	// (Then = evidence:budget=500 makes "topk:k=30" resolve as
	// "topk:k=30+evidence:budget=500"). ResolveList refuses it.
	Then *Spec
	// Auto supplies a parameter written "auto" (budget:tokens=auto): name
	// is the strategy, selector or route, param the key; errors are
	// returned wrapped, so a caller's own error type survives. Nil makes
	// "auto" an error.
	Auto func(name, param string) (float64, error)
}

// Resolve resolves one spec with the zero Resolver: strategies (the
// "default" name included) and registered answering routes.
func Resolve(spec string) (Resolved, error) { return Resolver{}.Resolve(spec) }

// Resolve resolves one spec: a strategy, a text selector, an answering
// route, or a composition (a strategy, then a text selector over the
// passages it kept: "topk:k=30+picker"). Errors wrap ErrInvalidInput (or
// carry the Auto hook's or a dependency's error) and name the offending
// part.
func (r Resolver) Resolve(spec string) (Resolved, error) {
	if strings.TrimSpace(spec) == "" {
		if r.Default == "" {
			return Resolved{}, invalidf("no strategy given")
		}
		spec = r.Default
	}
	parts, err := parseList(spec)
	if err != nil {
		return Resolved{}, err
	}
	if parts, err = r.extend(parts); err != nil {
		return Resolved{}, err
	}
	if len(parts) == 1 { // the common case, without grouping
		return r.resolveItem(parts)
	}
	its := items(parts)
	if len(its) != 1 {
		return Resolved{}, invalidf("%q names %d strategies, want one", spec, len(its))
	}
	return r.resolveItem(its[0])
}

// ResolveList resolves a comma-separated list of specs (eval's
// --strategies), where a bare key=value continues the part before it.
func (r Resolver) ResolveList(text string) ([]Resolved, error) {
	if len(r.Params) > 0 || r.Then != nil {
		return nil, invalidf("a list of specs takes no parameters or selector apart from them: write them in each spec")
	}
	parts, err := parseList(text)
	if err != nil {
		return nil, err
	}
	its := items(parts)
	out := make([]Resolved, len(its))
	for i, item := range its {
		if out[i], err = r.resolveItem(item); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// extend adds the resolver's Params to the last part and its Then as a
// part joined to it.
func (r Resolver) extend(parts []part) ([]part, error) {
	last := &parts[len(parts)-1]
	for _, q := range r.Params {
		if err := last.addParam(q.Key, q.Value); err != nil {
			return nil, err
		}
	}
	if r.Then == nil {
		return parts, nil
	}
	then := part{name: strings.ToLower(r.Then.Name), joined: true}
	if !isIdent(then.name) {
		return nil, invalidf("strategy spec %q: the name must be letters, digits and _", r.Then.Name)
	}
	for _, k := range slices.Sorted(maps.Keys(r.Then.Params)) {
		if err := then.addParam(k, strconv.FormatFloat(r.Then.Params[k], 'g', -1, 64)); err != nil {
			return nil, err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(r.Then.Words)) {
		if err := then.addParam(k, r.Then.Words[k]); err != nil {
			return nil, err
		}
	}
	return append(parts, then), nil
}

// ParamValue is a parameter given as a number (a request's params
// object), for Resolver.Params.
func ParamValue(key string, v float64) Param {
	return Param{Key: key, Value: strconv.FormatFloat(v, 'g', -1, 64)}
}

func joinParts(ps []part) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, "+")
}

func (r Resolver) resolveItem(item []part) (Resolved, error) {
	for i := range item {
		if err := r.fillAuto(&item[i]); err != nil {
			return Resolved{}, err
		}
	}
	if len(item) == 1 {
		res, err := r.resolvePart(&item[0])
		if err != nil {
			return Resolved{}, err
		}
		return res, r.accept(res, item[0].name)
	}
	if len(item) != 2 {
		return Resolved{}, invalidf("%q: a composition is a strategy, then a text selector (topk:k=30+picker); this one has %d parts", joinParts(item), len(item))
	}
	first, err := r.resolvePart(&item[0])
	if err != nil {
		return Resolved{}, err
	}
	if first.Kind != StrategyKind {
		return Resolved{}, invalidf("%q: the first part of a composition must be a strategy that cuts the passages; %s is %s", joinParts(item), item[0].name, kindPhrase(first.Kind))
	}
	then, err := r.resolvePart(&item[1])
	if err != nil {
		return Resolved{}, err
	}
	if then.Kind != SelectorKind {
		return Resolved{}, invalidf("%q: the second part of a composition must be a text selector (one that reads the passages the strategy kept); %s is %s", joinParts(item), item[1].name, kindPhrase(then.Kind))
	}
	spec := first.Spec + "+" + then.Spec
	res := Resolved{Kind: SelectorKind, Spec: spec, Selector: Compose(first.Strategy, first.Caps, then.Selector, spec)}
	return res, r.accept(res, spec)
}

// fillAuto replaces the values written "auto" by the Auto hook's.
func (r Resolver) fillAuto(p *part) error {
	for i, q := range p.params {
		if !strings.EqualFold(q.Value, "auto") {
			continue
		}
		if r.Auto == nil {
			return invalidf("strategy %s: %s=auto needs a value that only the caller can supply (such as a length estimate), and it supplies none", p.name, q.Key)
		}
		v, err := r.Auto(p.name, q.Key)
		if err != nil {
			return fmt.Errorf("strategy %s: %s=auto: %w", p.name, q.Key, err)
		}
		p.params[i].Value = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return nil
}

// accept checks a result against the kinds the caller takes.
func (r Resolver) accept(res Resolved, what string) error {
	if r.Kinds == 0 || r.Kinds&res.Kind != 0 {
		return nil
	}
	var why string
	switch res.Kind {
	case RouteKind:
		why = "it needs the reader's reply, so it only answers (ask, eval with a reader)"
	case SelectorKind:
		why = "it reads the question and the passages' texts, which are not given here"
	default:
		why = "only text selectors and routes are taken here"
	}
	return invalidf("%s is %s: %s", what, kindPhrase(res.Kind), why)
}

// kindPhrase names a kind with its article, for messages.
func kindPhrase(k Kind) string {
	if k == RouteKind {
		return "an " + k.String()
	}
	return "a " + k.String()
}

// resolvePart resolves one part by its name: the caller's selectors, the
// strategies ("default" included), the routes, the registered selectors.
func (r Resolver) resolvePart(p *part) (Resolved, error) {
	for _, s := range r.Selectors {
		if s == nil || s.Name() != p.name {
			continue
		}
		if len(p.params) > 0 {
			return Resolved{}, invalidf("strategy %s: its settings are fixed where it was configured, so it takes no parameters here: send %q", p.name, p.name)
		}
		return Resolved{Kind: SelectorKind, Spec: specOf(s, p), Selector: s}, nil
	}
	if p.name == DefaultName {
		return r.resolveDefault(p)
	}
	registry.RLock()
	_, isStrategy := registry.defs[p.name]
	route, isRoute := registry.routes[p.name]
	sel, isSelector := registry.selectors[p.name]
	registry.RUnlock()
	switch {
	case isStrategy:
		sp, err := p.spec()
		if err != nil {
			return Resolved{}, err
		}
		st, caps, err := NewWith(sp, r.Deps)
		if err != nil {
			return Resolved{}, err
		}
		return Resolved{Kind: StrategyKind, Spec: sp.String(), Strategy: st, Caps: caps, spec: sp}, nil
	case isRoute:
		sp, err := p.spec()
		if err != nil {
			return Resolved{}, err
		}
		if err := CheckParams(sp, route.Params); err != nil {
			return Resolved{}, err
		}
		rt, err := route.New(sp)
		if err != nil {
			return Resolved{}, fmt.Errorf("%s: %w", p.name, err)
		}
		return Resolved{Kind: RouteKind, Spec: sp.String(), Route: rt, spec: sp}, nil
	case isSelector && r.Deps != nil:
		sp, err := p.spec()
		if err != nil {
			return Resolved{}, err
		}
		if err := CheckParams(sp, sel.Params); err != nil {
			return Resolved{}, err
		}
		s, err := sel.New(sp, r.Deps)
		if err != nil {
			return Resolved{}, fmt.Errorf("strategy %s: %w", p.name, err)
		}
		return Resolved{Kind: SelectorKind, Spec: specOf(s, p), Selector: s}, nil
	}
	return Resolved{}, invalidf("unknown strategy %q (known: %s)", p.name, strings.Join(r.known(), ", "))
}

// resolveDefault resolves the name "default": DefaultStrategy, with the
// parameters written after the name winning over its own
// (default:budget=800). Its Spec is the spec as written ("default"), and
// a text selector answers to that name (an eval row named "default"),
// while its explanation names what ran.
func (r Resolver) resolveDefault(p *part) (Resolved, error) {
	parts, err := parseList(DefaultStrategy)
	if err != nil || len(parts) != 1 {
		return Resolved{}, fmt.Errorf("ctxsel: DefaultStrategy %q is not one part: %v", DefaultStrategy, err)
	}
	d := parts[0]
	for _, q := range p.params {
		i := slices.IndexFunc(d.params, func(x Param) bool { return x.Key == q.Key })
		if i >= 0 {
			d.params[i].Value = q.Value
		} else {
			d.params = append(d.params, q)
		}
	}
	res, err := r.resolvePart(&d)
	if err != nil {
		return Resolved{}, fmt.Errorf("default (%s): %w", d.String(), err)
	}
	res.Spec = p.String()
	if res.Kind == SelectorKind {
		res.Selector = renamed(res.Selector, res.Spec)
	}
	return res, nil
}

// renamed is s answering to name (Name and String), its metering kept.
func renamed(s TextSelector, name string) TextSelector {
	if m, ok := s.(MeteredSelector); ok {
		return renamedMetered{renamedSelector{s, name}, m}
	}
	return renamedSelector{s, name}
}

type renamedSelector struct {
	TextSelector
	name string
}

func (r renamedSelector) Name() string   { return r.name }
func (r renamedSelector) String() string { return r.name }

type renamedMetered struct {
	renamedSelector
	m MeteredSelector
}

func (r renamedMetered) SelectMetered(ctx context.Context, q TextQuery) (Selection, SelectorUsage, error) {
	return r.m.SelectMetered(ctx, q)
}

// specOf is a selector's canonical spec: its String() when it has one
// (the picker's settings in full), else the part as written.
func specOf(s TextSelector, p *part) string {
	if st, ok := s.(fmt.Stringer); ok {
		return st.String()
	}
	return p.String()
}

// known lists the names this resolver would accept, for messages.
func (r Resolver) known() []string {
	registry.RLock()
	names := slices.Collect(maps.Keys(registry.defs))
	names = append(names, DefaultName)
	for n := range registry.routes {
		names = append(names, n)
	}
	if r.Deps != nil {
		for n := range registry.selectors {
			names = append(names, n)
		}
	}
	registry.RUnlock()
	for _, s := range r.Selectors {
		if s != nil {
			names = append(names, s.Name())
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}
