package wire

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Decoder is a small hand-written JSON reader for the request shapes the
// service accepts and the candidate lines `ctxsel select` reads. It exists
// for two reasons: encoding/json's reflection would cost more than the
// selection itself on a 1,000-candidate request, and its errors do not say
// which field was wrong, while every 4xx must name one
// ("candidates[3].score"). It reads the whole input as one string and
// slices ids and texts out of it, so a candidate costs no allocation of its
// own. Its methods read one value each (after any whitespace) and name the
// value's place, Path, in their errors (*FieldError).

// maxDepth bounds the nesting of values the decoder skips (unknown fields),
// so a body of a million '[' cannot exhaust the stack.
const maxDepth = 64

// Decoder reads JSON values from a string; see NewDecoder.
type Decoder struct {
	s   string
	pos int
	// replaced is set when a string read put U+FFFD in place of invalid
	// UTF-8 (or a lone surrogate escape): ids must not be altered.
	replaced bool
}

// NewDecoder reads s from its start.
func NewDecoder(s string) Decoder { return Decoder{s: s} }

// Pos is the byte offset of the next unread byte.
func (d *Decoder) Pos() int { return d.pos }

// Since is the input from offset start to the next unread byte: the text
// of the values read since Pos was start.
func (d *Decoder) Since(start int) string { return d.s[start:d.pos] }

// Space skips whitespace.
func (d *Decoder) Space() {
	// Every JSON whitespace byte is <= ' ': one comparison in the common
	// case of none.
	for d.pos < len(d.s) && d.s[d.pos] <= ' ' {
		switch d.s[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// Syntax is a malformed-JSON error at the current offset.
func (d *Decoder) Syntax(p Path, format string, args ...any) error {
	return &FieldError{Path: p, Msg: fmt.Sprintf("malformed JSON at byte %d: %s", d.pos, fmt.Sprintf(format, args...))}
}

// What describes the next value for error messages.
func (d *Decoder) What() string {
	if d.pos >= len(d.s) {
		return "end of input"
	}
	switch c := d.s[d.pos]; {
	case c == '"':
		return "a string"
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	case c == '-' || c >= '0' && c <= '9':
		return "a number"
	default:
		return strconv.QuoteRune(rune(c))
	}
}

// TypeErr is the error for a next value that is not the wanted one (or
// not a JSON value at all).
func (d *Decoder) TypeErr(p Path, want string) error {
	if d.pos >= len(d.s) || strings.IndexByte(`"{[tfn-0123456789`, d.s[d.pos]) < 0 {
		return d.Syntax(p, "unexpected %s", d.What())
	}
	return BadAt(p, "must be %s, got %s", want, d.What())
}

// Null consumes a null literal if one is next.
func (d *Decoder) Null() bool {
	if strings.HasPrefix(d.s[d.pos:], "null") {
		d.pos += 4
		return true
	}
	return false
}

// Peek is the next byte, 0 at the end.
func (d *Decoder) Peek() byte {
	if d.pos < len(d.s) {
		return d.s[d.pos]
	}
	return 0
}

// BeginObject consumes '{' (after whitespace).
func (d *Decoder) BeginObject(p Path) error {
	d.Space()
	if d.Peek() != '{' {
		return d.TypeErr(p, "an object")
	}
	d.pos++
	return nil
}

// NextKey reads the next key of an object and its ':' and reports false at
// the closing '}'. first must start true.
func (d *Decoder) NextKey(p Path, first *bool) (string, bool, error) {
	d.Space()
	if d.Peek() == '}' && *first {
		d.pos++
		return "", false, nil
	}
	if !*first {
		switch d.Peek() {
		case '}':
			d.pos++
			return "", false, nil
		case ',':
			d.pos++
			d.Space()
		default:
			return "", false, d.Syntax(p, "expected ',' or '}' after an object member, got %s", d.What())
		}
	}
	*first = false
	if d.Peek() != '"' {
		return "", false, d.Syntax(p, "expected a quoted key, got %s", d.What())
	}
	key, err := d.Str(p)
	if err != nil {
		return "", false, err
	}
	d.Space()
	if d.Peek() != ':' {
		return "", false, d.Syntax(p, "expected ':' after key %q, got %s", key, d.What())
	}
	d.pos++
	d.Space()
	return key, true, nil
}

// BeginArray consumes '['.
func (d *Decoder) BeginArray(p Path) error {
	d.Space()
	if d.Peek() != '[' {
		return d.TypeErr(p, "an array")
	}
	d.pos++
	return nil
}

// Array reads an array, elem reading element i (the decoder positioned
// at it): each caller's bound on the count is elem's first check.
func (d *Decoder) Array(p Path, elem func(i int) error) error {
	if err := d.BeginArray(p); err != nil {
		return err
	}
	for i, first := 0, true; ; i++ {
		ok, err := d.NextElem(p, &first)
		if err != nil || !ok {
			return err
		}
		if err := elem(i); err != nil {
			return err
		}
	}
}

// NextElem positions at the next array element and reports false at ']'.
func (d *Decoder) NextElem(p Path, first *bool) (bool, error) {
	d.Space()
	if d.Peek() == ']' && *first {
		d.pos++
		return false, nil
	}
	if !*first {
		switch d.Peek() {
		case ']':
			d.pos++
			return false, nil
		case ',':
			d.pos++
			d.Space()
		default:
			return false, d.Syntax(p, "expected ',' or ']' after an array element, got %s", d.What())
		}
	}
	*first = false
	return true, nil
}

// plain marks the bytes a string can hold with no further thought: ASCII
// other than controls, '"' and '\\'.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// Str reads a string value. Strings without escapes are slices of the body.
// Invalid UTF-8 becomes U+FFFD, as encoding/json does.
func (d *Decoder) Str(p Path) (string, error) {
	d.Space()
	if d.Peek() != '"' {
		return "", d.TypeErr(p, "a string")
	}
	start := d.pos + 1
	ascii := true
	for i := start; i < len(d.s); i++ {
		c := d.s[i]
		if plain[c] {
			continue
		}
		switch {
		case c == '"':
			d.pos = i + 1
			v := d.s[start:i]
			if !ascii && !utf8.ValidString(v) {
				v = strings.ToValidUTF8(v, "\uFFFD")
				d.replaced = true
			}
			return v, nil
		case c == '\\':
			return d.strSlow(p, start, i)
		case c < 0x20:
			d.pos = i
			return "", d.Syntax(p, "control character %#02x in a string", c)
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	d.pos = len(d.s)
	return "", d.Syntax(p, "unterminated string")
}

// strSlow decodes a string with escapes; i is the first backslash.
func (d *Decoder) strSlow(p Path, start, i int) (string, error) {
	var b strings.Builder
	b.WriteString(d.s[start:i])
	for i < len(d.s) {
		c := d.s[i]
		switch {
		case c == '"':
			d.pos = i + 1
			v := b.String()
			if !utf8.ValidString(v) {
				v = strings.ToValidUTF8(v, "\uFFFD")
				d.replaced = true
			}
			return v, nil
		case c < 0x20:
			d.pos = i
			return "", d.Syntax(p, "control character %#02x in a string", c)
		case c != '\\':
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(d.s) {
			break
		}
		esc := d.s[i+1]
		i += 2
		switch esc {
		case '"', '\\', '/':
			b.WriteByte(esc)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := hex4(d.s, i)
			if !ok {
				d.pos = i
				return "", d.Syntax(p, `invalid \u escape`)
			}
			i += 4
			if utf16.IsSurrogate(r) {
				r2, ok := rune(-1), false
				if i+6 <= len(d.s) && d.s[i] == '\\' && d.s[i+1] == 'u' {
					r2, ok = hex4(d.s, i+2)
				}
				if ok {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						i += 6
						r = dec
					} else {
						r, d.replaced = utf8.RuneError, true
					}
				} else {
					r, d.replaced = utf8.RuneError, true
				}
			}
			b.WriteRune(r)
		default:
			d.pos = i - 1
			return "", d.Syntax(p, "invalid escape \\%c", esc)
		}
	}
	d.pos = len(d.s)
	return "", d.Syntax(p, "unterminated string")
}

func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// NumLiteral scans a JSON number and returns its text.
func (d *Decoder) NumLiteral(p Path) (string, error) {
	d.Space()
	s, start := d.s, d.pos
	i := start
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - j
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		if i == start {
			return "", d.TypeErr(p, "a number")
		}
		d.pos = i
		return "", d.Syntax(p, "invalid number")
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			d.pos = i
			return "", d.Syntax(p, "invalid number: no digits after '.'")
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			d.pos = i
			return "", d.Syntax(p, "invalid number: no digits in the exponent")
		}
	}
	d.pos = i
	return s[start:i], nil
}

// pow10 holds the powers of ten that float64 represents exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// fastNum reads the common literal shapes, -?(0|[1-9][0-9]*)(.[0-9]+)? with
// at most 15 significant digits, in the same pass that scans them, and
// converts them exactly: the digits form an integer below 2^53 and the
// division by an exact power of ten rounds once, correctly (the Clinger
// fast path that strconv also takes, after a second scan). Anything else
// (an exponent, more digits, a syntax error) reports false and leaves the
// position unchanged for the general path.
func (d *Decoder) fastNum() (float64, bool) {
	s, i := d.s, d.pos
	neg := i < len(s) && s[i] == '-'
	if neg {
		i++
	}
	var m uint64
	sig := 0
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			m = m*10 + uint64(s[i]-'0')
			if sig++; sig > 15 {
				return 0, false
			}
		}
	default:
		return 0, false
	}
	frac := 0
	if i < len(s) && s[i] == '.' {
		i++
		j := i
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			m = m*10 + uint64(s[i]-'0')
			if m != 0 {
				if sig++; sig > 15 {
					return 0, false
				}
			}
		}
		if frac = i - j; frac == 0 || frac >= len(pow10) {
			return 0, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		return 0, false
	}
	f := float64(m) / pow10[frac]
	if neg {
		f = -f
	}
	d.pos = i
	return f, true
}

// Num reads a finite number. JSON has no NaN or Infinity, but an exponent
// such as 1e999 overflows float64; that is refused here, by name, rather
// than turned into +Inf.
func (d *Decoder) Num(p Path) (float64, error) {
	d.Space()
	if f, ok := d.fastNum(); ok {
		return f, nil
	}
	lit, err := d.NumLiteral(p)
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && (math.IsInf(f, 0) || !errors.Is(err, strconv.ErrRange)) {
		return 0, BadAt(p, "number %s is out of range: it must be finite", clip(lit))
	}
	return f, nil
}

// Count reads a whole number in [0, math.MaxInt32].
func (d *Decoder) Count(p Path) (int, error) {
	f, err := d.Num(p)
	if err != nil {
		return 0, err
	}
	if f < 0 || f > math.MaxInt32 || f != math.Trunc(f) {
		return 0, BadAt(p, "must be a whole number in [0, %d], got %v", math.MaxInt32, f)
	}
	return int(f), nil
}

// Skip skips one value of any type.
func (d *Decoder) Skip(p Path, depth int) error {
	d.Space()
	if depth > maxDepth {
		return d.Syntax(p, "nested deeper than %d levels", maxDepth)
	}
	switch c := d.Peek(); {
	case c == '"':
		_, err := d.Str(p)
		return err
	case c == '{':
		d.pos++
		first := true
		for {
			_, ok, err := d.NextKey(p, &first)
			if err != nil || !ok {
				return err
			}
			if err := d.Skip(p, depth+1); err != nil {
				return err
			}
		}
	case c == '[':
		d.pos++
		first := true
		for {
			ok, err := d.NextElem(p, &first)
			if err != nil || !ok {
				return err
			}
			if err := d.Skip(p, depth+1); err != nil {
				return err
			}
		}
	case c == 't':
		return d.Literal(p, "true")
	case c == 'f':
		return d.Literal(p, "false")
	case c == 'n':
		return d.Literal(p, "null")
	default:
		_, err := d.NumLiteral(p)
		return err
	}
}

// Literal consumes lit (true, false, null), which must be next.
func (d *Decoder) Literal(p Path, lit string) error {
	if !strings.HasPrefix(d.s[d.pos:], lit) {
		return d.Syntax(p, "invalid literal")
	}
	d.pos += len(lit)
	return nil
}

// End checks that only whitespace follows the top-level value.
func (d *Decoder) End() error {
	d.Space()
	if d.pos != len(d.s) {
		return d.Syntax(Path{Idx: -1}, "unexpected %s after the top-level object", d.What())
	}
	return nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
