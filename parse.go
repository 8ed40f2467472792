package ctxsel

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Param is one parameter of a spec as written, key=value, its value not
// yet interpreted: a number for a strategy or a route, perhaps a name for a
// text selector (the picker's fallback=adaptivek).
type Param struct {
	Key, Value string
}

// part is one NAME[:key=value,...] of a spec, as written.
type part struct {
	name   string
	params []Param
	// joined marks a part joined to the one before it by "+": the two are
	// one item, a composition.
	joined bool
}

// parseList splits a spec list into parts; runs of joined parts are one
// item each (items splits them). Items are separated by commas; a bare
// key=value continues the part before it ("topk:k=10,max_k=3"). A "+"
// separates parts only before a name, so a number's exponent (1e+5)
// stays a number. Keys are lowercased; values are trimmed but otherwise
// kept.
func parseList(text string) ([]part, error) {
	var parts []part
	for rest := text; rest != ""; {
		var tok string
		tok, rest, _ = strings.Cut(rest, ",")
		tok = strings.TrimSpace(tok)
		if tok == "" {
			continue
		}
		for i := 0; tok != ""; i++ {
			var piece string
			piece, tok = cutPlus(tok)
			piece = strings.TrimSpace(piece)
			name, _, hasColon := strings.Cut(piece, ":")
			if i == 0 && !hasColon && strings.Contains(name, "=") {
				if len(parts) == 0 {
					return nil, invalidf("parameter %q comes before any strategy name", piece)
				}
				if err := parts[len(parts)-1].add(piece); err != nil {
					return nil, err
				}
				continue
			}
			p, err := parsePart(piece)
			if err != nil {
				return nil, err
			}
			p.joined = i > 0
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return nil, invalidf("no strategy given")
	}
	return parts, nil
}

// items groups parts into items: each a part and the parts joined to it.
func items(parts []part) [][]part {
	var out [][]part
	for i := 0; i < len(parts); {
		j := i + 1
		for j < len(parts) && parts[j].joined {
			j++
		}
		out = append(out, parts[i:j:j])
		i = j
	}
	return out
}

// cutPlus cuts s at its first "+" that is followed (after spaces) by a
// letter or "_" — the start of a name — returning the part before and the
// rest after it ("" when there is none).
func cutPlus(s string) (before, after string) {
	for i := strings.IndexByte(s, '+'); i >= 0; {
		j := i + 1
		for j < len(s) && s[j] == ' ' {
			j++
		}
		if j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] == '_') {
			return s[:i], s[i+1:]
		}
		k := strings.IndexByte(s[i+1:], '+')
		if k < 0 {
			break
		}
		i += 1 + k
	}
	return s, ""
}

// parsePart reads one NAME[:key=value] token (the parameters after the
// first come as bare key=value tokens).
func parsePart(tok string) (part, error) {
	name, kv, hasColon := strings.Cut(tok, ":")
	name = strings.ToLower(strings.TrimSpace(name))
	if !isIdent(name) {
		if tok == "" {
			return part{}, invalidf("empty strategy name (a \"+\" with nothing before it?)")
		}
		return part{}, invalidf("strategy spec %q: the name must be letters, digits and _", tok)
	}
	p := part{name: name}
	if hasColon && strings.TrimSpace(kv) != "" {
		if err := p.add(kv); err != nil {
			return part{}, err
		}
	}
	return p, nil
}

// ParsePart parses one NAME[:key=value,key=value] spec without
// interpreting its values: what a text selector kind's own parser starts
// from ("picker:budget=4000,fallback=adaptivek"). The name and keys are
// lowercased. Errors wrap ErrInvalidInput.
func ParsePart(text string) (name string, params []Param, err error) {
	parts, err := parseList(text)
	if err != nil {
		return "", nil, err
	}
	if len(parts) != 1 {
		return "", nil, invalidf("%q names more than one strategy", text)
	}
	return parts[0].name, parts[0].params, nil
}

func (p *part) add(kv string) error {
	k, v, ok := strings.Cut(kv, "=")
	if !ok || !isIdent(strings.ToLower(strings.TrimSpace(k))) {
		return invalidf("strategy %s: parameter %q is not key=value (keys are letters, digits and _)", p.name, kv)
	}
	return p.addParam(k, v)
}

// addParam adds parameter k=v, k lowercased and both trimmed.
func (p *part) addParam(k, v string) error {
	k = strings.ToLower(strings.TrimSpace(k))
	if !isIdent(k) {
		return invalidf("strategy %s: parameter %q is not key=value (keys are letters, digits and _)", p.name, k+"="+v)
	}
	for _, q := range p.params {
		if q.Key == k {
			return &ParamError{Strategy: p.name, Param: k, Msg: fmt.Sprintf("parameter %s given twice", k)}
		}
	}
	p.params = append(p.params, Param{Key: k, Value: strings.TrimSpace(v)})
	return nil
}

// spec reads the part's values as a strategy's or a route's spec: each a
// finite number (Params) or a word (Words, lowercased: a route's
// prompt=adaptivek; New refuses words for a strategy).
func (p *part) spec() (Spec, error) {
	sp := Spec{Name: p.name, Params: make(map[string]float64, len(p.params))}
	for _, q := range p.params {
		f, err := strconv.ParseFloat(q.Value, 64)
		if err != nil {
			if w := strings.ToLower(q.Value); isWord(w) {
				if sp.Words == nil {
					sp.Words = map[string]string{}
				}
				sp.Words[q.Key] = w
				continue
			}
		}
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return Spec{}, &ParamError{Strategy: p.name, Param: q.Key, Msg: fmt.Sprintf("parameter %s=%q is neither a finite number nor a word", q.Key, q.Value)}
		}
		sp.Params[q.Key] = f
	}
	return sp, nil
}

// String writes the part as given: name, then its parameters in order.
func (p *part) String() string {
	if len(p.params) == 0 {
		return p.name
	}
	var b strings.Builder
	b.WriteString(p.name)
	for i, q := range p.params {
		if i == 0 {
			b.WriteByte(':')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(q.Key + "=" + q.Value)
	}
	return b.String()
}
