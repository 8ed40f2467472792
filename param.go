package ctxsel

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ParamKind is the kind of value a parameter takes. One schema (ParamDef)
// serves strategies, text selectors, answering routes and the other spec
// grammars of the module (the hybrid scorer's, the chunkers'), so that
// every parameter is declared with its range, default and doc, and every
// bad one is the same *ParamError.
type ParamKind string

const (
	// NumberParam is a finite number within [Min, Max] (Integer: a whole
	// one). It is the zero kind, so a strategy's definition need not name
	// it.
	NumberParam ParamKind = ""
	// IntegerParam is a whole number within [Min, Max]: NumberParam with
	// Integer set, which a definition may write either way.
	IntegerParam ParamKind = "integer"
	// BoolParam is 0 (off) or 1 (on).
	BoolParam ParamKind = "bool"
	// WordParam is one word of Words (any word when Words is empty): a
	// lower-case letter, then letters, digits, _ and -
	// (order=document, dense=use-lite).
	WordParam ParamKind = "word"
	// ListParam is one or more words of Words joined by "|"
	// (units=sentence|line).
	ListParam ParamKind = "list"
)

// ParamDef declares one parameter of a spec: its kind, its range or
// words, its default and what it means.
type ParamDef struct {
	Name string    `json:"name"`
	Kind ParamKind `json:"kind,omitempty"`
	// Default is a number's (a bool's: 0 or 1) value when it is not given.
	Default float64 `json:"default"`
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
	// MinExclusive makes Min an open bound (p > 0 rather than p >= 0);
	// MaxExclusive makes Max one.
	MinExclusive bool `json:"min_exclusive,omitempty"`
	MaxExclusive bool `json:"max_exclusive,omitempty"`
	Integer      bool `json:"integer,omitempty"`
	// Words are a word's or a list's allowed words; DefaultWord is its
	// value when it is not given.
	Words       []string `json:"words,omitempty"`
	DefaultWord string   `json:"-"`
	// Required marks a parameter without a default: a spec must give it.
	Required bool `json:"required,omitempty"`
	// DefaultDoc, when set, says what an absent parameter means when that
	// is no fixed value (the evidence model's setting, "none"); Default
	// and DefaultWord are then not filled in (WithDefaults).
	DefaultDoc string `json:"default_doc,omitempty"`
	Doc        string `json:"doc"`
}

// MarshalJSON writes a word's or a list's default as its word; numbers
// are written as their fields are.
func (p ParamDef) MarshalJSON() ([]byte, error) {
	type plain ParamDef // without this method
	if p.Kind != WordParam && p.Kind != ListParam {
		return json.Marshal(plain(p))
	}
	return json.Marshal(struct {
		Name       string    `json:"name"`
		Kind       ParamKind `json:"kind"`
		Default    string    `json:"default"`
		Words      []string  `json:"words,omitempty"`
		Required   bool      `json:"required,omitempty"`
		DefaultDoc string    `json:"default_doc,omitempty"`
		Doc        string    `json:"doc"`
	}{p.Name, p.Kind, p.DefaultWord, p.Words, p.Required, p.DefaultDoc, p.Doc})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (p *ParamDef) UnmarshalJSON(b []byte) error {
	type plain ParamDef
	var v struct {
		plain
		Default json.RawMessage `json:"default"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*p = ParamDef(v.plain)
	if len(v.Default) > 0 && v.Default[0] == '"' {
		return json.Unmarshal(v.Default, &p.DefaultWord)
	}
	if len(v.Default) > 0 {
		return json.Unmarshal(v.Default, &p.Default)
	}
	return nil
}

// Type is the parameter's kind, IntegerParam for a number with Integer
// set.
func (p ParamDef) Type() ParamKind {
	if p.Kind == NumberParam && p.Integer {
		return IntegerParam
	}
	return p.Kind
}

// isNumeric reports a kind whose values are numbers (Spec.Params).
func (k ParamKind) isNumeric() bool {
	return k == NumberParam || k == IntegerParam || k == BoolParam
}

// MaxIntParam bounds every integer parameter, whatever its definition says,
// so that a value converts to int without overflow on any platform and sums
// of a few such values stay far from overflowing (a budget of 2^63 tokens
// once became a negative budget and k = 0).
const MaxIntParam = min(1<<40, math.MaxInt)

// normal returns the definition as it is enforced: an integer's or a
// bool's Integer set, a bool's range [0, 1], an integer's range capped at
// MaxIntParam.
func (p ParamDef) normal() ParamDef {
	switch p.Kind {
	case IntegerParam:
		p.Integer = true
	case BoolParam:
		p.Integer, p.Min, p.Max, p.MinExclusive, p.MaxExclusive = true, 0, 1, false, false
	}
	if p.Integer {
		p.Max = min(p.Max, MaxIntParam)
	}
	return p
}

// NormalParams returns defs as they are enforced (see ParamDef's kinds),
// for a package that declares its own grammar's parameters: a new copy,
// words included.
func NormalParams(defs []ParamDef) []ParamDef {
	out := cloneParams(defs)
	for i, p := range out {
		out[i] = p.normal()
	}
	return out
}

// cloneParams is a deep copy of defs (nil stays nil), so that a caller
// that changes what it was handed changes nothing registered.
func cloneParams(defs []ParamDef) []ParamDef {
	out := slices.Clone(defs)
	for i := range out {
		out[i].Words = slices.Clone(out[i].Words)
	}
	return out
}

// check checks a number given for p, a parameter of owner.
func (p ParamDef) check(owner string, v float64) error {
	p = p.normal()
	if !p.Type().isNumeric() {
		return &ParamError{Strategy: owner, Param: p.Name, Msg: fmt.Sprintf("parameter %s=%v must be a word: %s", p.Name, v, p.wordsPhrase())}
	}
	bad := v < p.Min || v > p.Max || (p.MinExclusive && v == p.Min) || (p.MaxExclusive && v == p.Max)
	if bad {
		lo, hi := "[", "]"
		if p.MinExclusive {
			lo = "("
		}
		if p.MaxExclusive {
			hi = ")"
		}
		return &ParamError{Strategy: owner, Param: p.Name, Msg: fmt.Sprintf("%s=%v out of range %s%v, %v%s", p.Name, v, lo, p.Min, p.Max, hi)}
	}
	if p.Integer && v != math.Trunc(v) {
		return &ParamError{Strategy: owner, Param: p.Name, Msg: fmt.Sprintf("%s=%v must be a whole number", p.Name, v)}
	}
	return nil
}

// checkWord checks a word (or "|"-joined words) given for p.
func (p ParamDef) checkWord(owner, w string) error {
	switch p.Type() {
	case WordParam:
		if strings.Contains(w, "|") {
			return &ParamError{Strategy: owner, Param: p.Name, Msg: fmt.Sprintf("%s=%s: want one word: %s", p.Name, w, p.wordsPhrase())}
		}
	case ListParam:
	default:
		return &ParamError{Strategy: owner, Param: p.Name, Msg: fmt.Sprintf("parameter %s=%s must be a number", p.Name, w)}
	}
	if len(p.Words) == 0 {
		return nil
	}
	for _, x := range strings.Split(w, "|") {
		if !slices.Contains(p.Words, x) {
			return &ParamError{Strategy: owner, Param: p.Name, Msg: fmt.Sprintf("%s=%s: want %s", p.Name, w, p.wordsPhrase())}
		}
	}
	return nil
}

// wordsPhrase lists p's words for a message: "rank or document",
// "words of a, b or c joined by |".
func (p ParamDef) wordsPhrase() string {
	if len(p.Words) == 0 {
		return "a word"
	}
	s := p.Words[0]
	if n := len(p.Words); n > 1 {
		s = strings.Join(p.Words[:n-1], ", ") + " or " + p.Words[n-1]
	}
	if p.Type() == ListParam {
		return "words of " + s + " joined by |"
	}
	return s
}

// CapParams are the parameters every strategy accepts, new on every call.
func CapParams() []ParamDef {
	return []ParamDef{
		{Name: "min_k", Default: 1, Min: 0, Max: math.MaxInt32, Integer: true, Doc: "select at least this many passages (default 1, or 0 for strategies that allow an empty selection such as budget; 0 = no minimum); max_tokens still wins"},
		{Name: "max_k", Min: 0, Max: math.MaxInt32, Integer: true, Doc: "select at most this many passages (0 = no maximum)"},
		{Name: "max_tokens", Min: 0, Max: math.MaxInt32, Integer: true, Doc: "stop before the passage that would push the total past this many tokens (0 = no limit)"},
	}
}

// CheckParams checks sp's parameters against defs: each one declared, of
// its kind (a number in sp.Params, a word or list in sp.Words) and within
// its range or words, and every Required one given. Parameters are
// checked in key order, so that of several bad ones the same is named.
// The error is a *ParamError naming sp.Name.
func CheckParams(sp Spec, defs []ParamDef) error {
	keys := slices.Sorted(maps.Keys(sp.Params))
	for k := range sp.Words {
		if _, dup := sp.Params[k]; !dup {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		i := slices.IndexFunc(defs, func(p ParamDef) bool { return p.Name == k })
		if i < 0 {
			return unknownParam(sp.Name, k, defs)
		}
		var err error
		if v, ok := sp.Params[k]; ok {
			err = defs[i].check(sp.Name, v)
		} else {
			err = defs[i].checkWord(sp.Name, sp.Words[k])
		}
		if err != nil {
			return err
		}
	}
	for _, p := range defs {
		_, num := sp.Params[p.Name]
		_, word := sp.Words[p.Name]
		if p.Required && !num && !word {
			return &ParamError{Strategy: sp.Name, Param: p.Name, Msg: fmt.Sprintf("missing %s: it has no default (%s)", p.Name, p.Doc)}
		}
	}
	return nil
}

// unknownParam is the error for parameter name, which owner does not take.
func unknownParam(owner, name string, defs ...[]ParamDef) error {
	var known []string
	for _, ds := range defs {
		for _, p := range ds {
			known = append(known, p.Name)
		}
	}
	if known == nil {
		known = []string{}
	}
	return &ParamError{Strategy: owner, Param: name, Known: known,
		Msg: fmt.Sprintf("unknown parameter %q (known: %s)", name, strings.Join(known, ", "))}
}

// WithDefaults returns sp with every parameter of defs it does not give
// and that has a fixed default filled in: numbers into Params, words into
// Words. A Required parameter, or one whose DefaultDoc says its default
// is no fixed value, stays absent, so that its reader can tell it was not
// given. sp's maps are not changed.
func WithDefaults(sp Spec, defs []ParamDef) Spec {
	out := Spec{Name: sp.Name, Params: maps.Clone(sp.Params), Words: maps.Clone(sp.Words)}
	if out.Params == nil {
		out.Params = map[string]float64{}
	}
	if out.Words == nil {
		out.Words = map[string]string{}
	}
	for _, p := range defs {
		_, num := out.Params[p.Name]
		_, word := out.Words[p.Name]
		if num || word || p.Required || p.DefaultDoc != "" {
			continue
		}
		if p.Type().isNumeric() {
			out.Params[p.Name] = p.Default
		} else if p.DefaultWord != "" {
			out.Words[p.Name] = p.DefaultWord
		}
	}
	return out
}

// ParseParams parses one NAME[:key=value,...] spec and checks its
// parameters against defs (CheckParams): the parser of a grammar that is
// not a registered name's (a hybrid scorer, a chunker), or of one
// registered name's spec alone. what is ParamError.What: what the name
// names, "" for a strategy. Errors wrap ErrInvalidInput; a bad parameter
// is a *ParamError.
func ParseParams(text, what string, defs []ParamDef) (sp Spec, err error) {
	defer func() {
		if pe, ok := err.(*ParamError); ok {
			pe.What = what
		}
	}()
	parts, err := parseList(text)
	if err != nil {
		return Spec{}, err
	}
	if len(parts) != 1 {
		return Spec{}, invalidf("%q names more than one strategy", text)
	}
	if sp, err = parts[0].spec(); err != nil {
		return Spec{}, err
	}
	return sp, CheckParams(sp, NormalParams(defs))
}

// DefaultText writes the parameter's default as listings show it: the
// number, the word, what DefaultDoc says, or "(required)".
func (p ParamDef) DefaultText() string {
	switch {
	case p.Required:
		return "(required)"
	case p.DefaultDoc != "":
		return p.DefaultDoc
	case !p.Type().isNumeric():
		return cmp.Or(p.DefaultWord, "none")
	}
	return fmt.Sprintf("%g", p.Default)
}

// Accepts writes the values the parameter accepts, as listings show them:
// "[0, 1]" ([ ] includes the bound, ( ) excludes it), "(0, ∞)",
// "[1, 2147483647] whole", "0 or 1", "rank, document or doc", "words of
// sentence or line joined by |".
func (p ParamDef) Accepts() string {
	p = p.normal()
	switch p.Type() {
	case BoolParam:
		return "0 or 1"
	case WordParam, ListParam:
		return p.wordsPhrase()
	}
	f := byte('g')
	if p.Integer {
		f = 'f'
	}
	lo, hi := strconv.FormatFloat(p.Min, f, -1, 64), strconv.FormatFloat(p.Max, f, -1, 64)
	if p.Min <= -math.MaxFloat64 {
		lo = "-∞"
	}
	if p.Max >= math.MaxFloat64 {
		hi = "∞"
	}
	open, closing := "[", "]"
	if p.MinExclusive || lo == "-∞" {
		open = "("
	}
	if p.MaxExclusive || hi == "∞" {
		closing = ")"
	}
	r := open + lo + ", " + hi + closing
	if p.Integer {
		r += " whole"
	}
	return r
}
