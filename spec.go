package ctxsel

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Spec names a strategy and its parameters, as written on a command line or in
// a request: "adaptivek:head=0.05,buffer=3,max_k=20". Caps (min_k, max_k,
// max_tokens) may appear among the parameters of any strategy.
type Spec struct {
	Name   string
	Params map[string]float64
	// Words are the parameters whose value is a word, not a number
	// ("selfroute:prompt=adaptivek"): a lower-case letter, then letters,
	// digits, _ and -, or such words joined by "|" (a ListParam). No
	// registered strategy takes one (New rejects them); answering routes
	// and text selectors declare theirs (WordParam, ListParam).
	Words map[string]string
}

func (s Spec) String() string {
	if len(s.Params)+len(s.Words) == 0 {
		return s.Name
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range s.Params {
			if !yield(k) {
				return
			}
		}
		for k := range s.Words {
			if _, dup := s.Params[k]; !dup && !yield(k) {
				return
			}
		}
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		if v, ok := s.Params[k]; ok {
			parts[i] = k + "=" + strconv.FormatFloat(v, 'g', -1, 64)
		} else {
			parts[i] = k + "=" + s.Words[k]
		}
	}
	return s.Name + ":" + strings.Join(parts, ",")
}

// ParseSpec parses one strategy spec: NAME or NAME:key=value,key=value.
func ParseSpec(text string) (Spec, error) {
	specs, err := ParseSpecList(text)
	if err != nil {
		return Spec{}, err
	}
	if len(specs) != 1 {
		return Spec{}, invalidf("%q names %d strategies, want one", text, len(specs))
	}
	return specs[0], nil
}

// ParseSpecList parses a comma-separated list of specs, where a bare
// key=value continues the strategy before it:
// "topk:k=10,adaptivek,adaptivek:head=0.05,tail=0.2,knee". Every value
// is a finite number or a word (Spec.Words); a composition
// (topk:k=30+picker) is not a strategy (Resolve takes those).
func ParseSpecList(text string) ([]Spec, error) {
	parts, err := parseList(text)
	if err != nil {
		return nil, err
	}
	specs := make([]Spec, len(parts))
	for i := range parts {
		if i+1 < len(parts) && parts[i+1].joined {
			return nil, invalidf("%q composes parts with \"+\": a strategy spec names one (Resolve takes compositions)", parts[i].String()+"+"+parts[i+1].String())
		}
		if specs[i], err = parts[i].spec(); err != nil {
			return nil, err
		}
	}
	return specs, nil
}

// isWord reports a word-valued parameter (one that is no number): a
// lower-case letter or a digit, then letters, digits, _ and -, not ending
// in - (fallback=2diff_spike, dense=use-lite), or several such words
// joined by "|" (a list: units=sentence|line).
func isWord(s string) bool {
	for _, w := range strings.Split(s, "|") {
		if w == "" || w[0] == '_' || w[0] == '-' || w[len(w)-1] == '-' || !isIdent(strings.ReplaceAll(w, "-", "_")) {
			return false
		}
	}
	return true
}

// Def describes a strategy: its name, what it does, its parameters and a
// constructor that receives every parameter, defaults filled in and checked.
type Def struct {
	Name   string                                            `json:"name"`
	Doc    string                                            `json:"doc"`
	Params []ParamDef                                        `json:"params"`
	New    func(params map[string]float64) (Strategy, error) `json:"-"`
	// NewFrom, when set, is used instead of New: it also receives the
	// caller's dependencies (NewWith's, a Resolver's Deps; nil when the
	// caller has none), for a strategy built from an input only the caller
	// can supply, such as the band's trained policy (ldar.DepPolicy). It
	// reads them when the strategy is built, never in Cut, so the strategy
	// stays a pure function of the scores.
	NewFrom func(params map[string]float64, deps Deps) (Strategy, error) `json:"-"`
	// AllowEmpty marks a strategy whose own parameters can ask for no
	// passage (a token budget below the best passage's count): its min_k cap
	// defaults to 0. Every other strategy's min_k defaults to 1, so a cut
	// never returns an empty context unless min_k=0 is given.
	AllowEmpty bool `json:"allow_empty,omitempty"`
}

// CheckParam checks one parameter of the strategy as New will: a parameter
// of its own or a cap (CapParams), within its range. The error is a
// *ParamError, so that a caller holding parameters from several places
// (a spec string and a request's params object) can say which one is at
// fault before New combines them.
func (d Def) CheckParam(name string, v float64) error {
	_, err := d.check(name, v)
	return err
}

// check checks parameter name=v and reports whether it is a cap. A
// strategy's own parameter wins over a cap of the same name;
// TestNoParamShadowsACap keeps the registered ones apart.
func (d Def) check(name string, v float64) (isCap bool, err error) {
	if i := slices.IndexFunc(d.Params, func(p ParamDef) bool { return p.Name == name }); i >= 0 {
		return false, d.Params[i].check(d.Name, v)
	}
	caps := CapParams()
	if i := slices.IndexFunc(caps, func(p ParamDef) bool { return p.Name == name }); i >= 0 {
		return true, caps[i].check(d.Name, v)
	}
	return false, unknownParam(d.Name, name, d.Params, caps)
}

// registry holds every name a spec may use: strategies, answering routes
// and text selector kinds share one namespace, so a name means one thing.
var registry = &names{defs: map[string]Def{}, routes: map[string]RouteDef{}, selectors: map[string]SelectorDef{}}

type names struct {
	sync.RWMutex
	defs      map[string]Def
	routes    map[string]RouteDef
	selectors map[string]SelectorDef
}

// checkFree panics when name is taken (the lock is held).
func (r *names) checkFree(name string) {
	_, a := r.defs[name]
	_, b := r.routes[name]
	_, c := r.selectors[name]
	if a || b || c || name == DefaultName {
		panic("ctxsel: " + name + " registered twice")
	}
}

// Register makes a strategy available to New by name. It panics on a
// duplicate or malformed definition: that is a programming error at init.
func Register(d Def) {
	registry.Lock()
	defer registry.Unlock()
	if d.Name == "" || (d.New == nil) == (d.NewFrom == nil) {
		panic("ctxsel: Register of a strategy without name or with not exactly one constructor (New or NewFrom)")
	}
	registry.checkFree(d.Name)
	// Listed ranges are the enforced ones.
	d.Params = NormalParams(d.Params)
	registry.defs[d.Name] = d
}

// Defs lists the registered strategies by name (copies: changing one
// changes nothing registered).
func Defs() []Def {
	registry.RLock()
	defer registry.RUnlock()
	out := slices.Collect(maps.Values(registry.defs))
	slices.SortFunc(out, func(a, b Def) int { return strings.Compare(a.Name, b.Name) })
	for i := range out {
		out[i].Params = cloneParams(out[i].Params)
	}
	return out
}

// Lookup returns (a copy of) the definition of a registered strategy.
func Lookup(name string) (Def, bool) {
	d, ok := lookup(name)
	d.Params = cloneParams(d.Params)
	return d, ok
}

// lookup is Lookup without the copy, for the package's own reading.
func lookup(name string) (Def, bool) {
	registry.RLock()
	defer registry.RUnlock()
	d, ok := registry.defs[name]
	return d, ok
}

// New builds the strategy and caps a spec names, checking every parameter
// against its definition and filling in defaults; a strategy that takes
// dependencies (Def.NewFrom) gets none, so it runs its defaults (the band:
// its embedded policy).
//
// The name "default" stands for DefaultStrategy.
func New(sp Spec) (Strategy, Caps, error) { return NewWith(sp, nil) }

// NewWith is New with the caller's dependencies, which a strategy's
// Def.NewFrom receives (nil: none).
func NewWith(sp Spec, deps Deps) (Strategy, Caps, error) {
	sp, err := resolveDefault(sp)
	if err != nil {
		return nil, Caps{}, err
	}
	if len(sp.Words) > 0 {
		k := slices.Min(slices.Collect(maps.Keys(sp.Words)))
		return nil, Caps{}, &ParamError{Strategy: sp.Name, Param: k, Msg: fmt.Sprintf("parameter %s=%s must be a number", k, sp.Words[k])}
	}
	def, ok := lookup(sp.Name)
	if !ok {
		names := make([]string, 0)
		for _, d := range Defs() {
			names = append(names, d.Name)
		}
		return nil, Caps{}, invalidf("unknown strategy %q (known: %s)", sp.Name, strings.Join(names, ", "))
	}
	params := make(map[string]float64, len(def.Params))
	for _, p := range def.Params {
		params[p.Name] = p.Default
	}
	var caps Caps
	if _, given := sp.Params["min_k"]; !given && !def.AllowEmpty {
		caps.MinK = 1 // the minimum-k fallback: no empty context unless asked for
	}
	// In key order, so that of several bad parameters the same one is named.
	var buf [8]string
	keys := buf[:0]
	for k := range sp.Params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := sp.Params[k]
		isCap, err := def.check(k, v)
		if err != nil {
			return nil, Caps{}, err
		}
		if !isCap {
			params[k] = v
			continue
		}
		switch k {
		case "min_k":
			caps.MinK = int(v)
		case "max_k":
			caps.MaxK = int(v)
		case "max_tokens":
			caps.MaxTokens = int(v)
		}
	}
	if err := caps.Validate(); err != nil {
		return nil, Caps{}, fmt.Errorf("strategy %s: %w", sp.Name, err)
	}
	var s Strategy
	if def.NewFrom != nil {
		s, err = def.NewFrom(params, deps)
	} else {
		s, err = def.New(params)
	}
	if err != nil {
		return nil, Caps{}, fmt.Errorf("strategy %s: %w", sp.Name, err)
	}
	return s, caps, nil
}

// Parse is ParseSpec followed by New.
func Parse(text string) (Strategy, Caps, error) {
	sp, err := ParseSpec(text)
	if err != nil {
		return nil, Caps{}, err
	}
	return New(sp)
}

func isIdent(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return s != ""
}
