package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// parsePython decodes the subset of Python literals some public copies of
// HotpotQA store context and supporting facts in (str() of a list): lists,
// tuples, strings in single or double quotes with backslash escapes, and
// integers. Numbers come back as float64 and lists as []any, as
// encoding/json gives them.
func parsePython(s string) (any, error) {
	p := &pyParser{s: s}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.s) {
		return nil, fmt.Errorf("python literal: trailing text at byte %d", p.i)
	}
	return v, nil
}

type pyParser struct {
	s     string
	i     int
	depth int
}

func (p *pyParser) space() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *pyParser) value() (any, error) {
	p.space()
	if p.i >= len(p.s) {
		return nil, errors.New("python literal: unexpected end")
	}
	switch c := p.s[p.i]; {
	case c == '[' || c == '(':
		return p.list(map[byte]byte{'[': ']', '(': ')'}[c])
	case c == '\'' || c == '"':
		return p.str(c)
	case c == '-' || c >= '0' && c <= '9':
		j := p.i + 1
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		n, err := strconv.Atoi(p.s[p.i:j])
		if err != nil {
			return nil, fmt.Errorf("python literal: number at byte %d: %w", p.i, err)
		}
		p.i = j
		return float64(n), nil
	}
	return nil, fmt.Errorf("python literal: unexpected %q at byte %d", p.s[p.i], p.i)
}

func (p *pyParser) list(close byte) (any, error) {
	if p.depth++; p.depth > 64 {
		return nil, errors.New("python literal: nested too deep")
	}
	defer func() { p.depth-- }()
	p.i++ // the opening bracket
	out := []any{}
	for {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == close {
			p.i++
			return out, nil
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		p.space()
		if p.i >= len(p.s) {
			return nil, errors.New("python literal: unclosed list")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case close:
		default:
			return nil, fmt.Errorf("python literal: want , or %q at byte %d", close, p.i)
		}
	}
}

func (p *pyParser) str(quote byte) (any, error) {
	start := p.i
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == quote:
			p.i++
			return b.String(), nil
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return nil, errors.New("python literal: backslash at the end")
			}
			e := p.s[p.i+1]
			p.i += 2
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '\\', '\'', '"':
				b.WriteByte(e)
			case 'x', 'u', 'U':
				n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
				if p.i+n > len(p.s) {
					return nil, errors.New("python literal: short escape")
				}
				v, err := strconv.ParseUint(p.s[p.i:p.i+n], 16, 32)
				if err != nil || !utf8.ValidRune(rune(v)) {
					return nil, fmt.Errorf("python literal: bad escape at byte %d", p.i)
				}
				b.WriteRune(rune(v))
				p.i += n
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return nil, fmt.Errorf("python literal: string from byte %d is not closed", start)
}
