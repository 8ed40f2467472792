package wire

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Limits are the size bounds a decoder enforces as it reads, so an
// over-long input fails at its first offending element: the number of
// candidates (or documents, inputs, ids), a text's bytes (which must also
// be valid UTF-8: replacing bytes would score a text the caller did not
// send) and a vector's dimension.
type Limits struct {
	MaxCandidates int
	MaxText       int
	MaxDim        int
}

// Unlimited bounds nothing but what an int holds: for input the caller
// owns (a file on the command line).
var Unlimited = Limits{MaxCandidates: int(^uint(0) >> 1), MaxText: int(^uint(0) >> 1), MaxDim: int(^uint(0) >> 1)}

// tooLongAt is the error for a text over the bound.
func (l Limits) tooLongAt(p Path, n int) error {
	return &FieldError{Status: http.StatusRequestEntityTooLarge, Path: p,
		Msg: fmt.Sprintf("%d bytes, over the limit of %d (max_text_bytes)", n, l.MaxText)}
}

// MoreThan is the error for a list of more than n elements, what they are
// named ("candidates", "components").
func MoreThan(p Path, n int, what string) *FieldError {
	return &FieldError{Status: http.StatusRequestEntityTooLarge, Path: p, Msg: fmt.Sprintf("more than %d %s", n, what)}
}

// TooMany is the error for a count over MaxCandidates.
func (l Limits) TooMany(field string, n int, what string) error {
	return &FieldError{Status: http.StatusRequestEntityTooLarge, Path: Field(field),
		Msg: fmt.Sprintf("%d %s, over the limit of %d (max_candidates)", n, what, l.MaxCandidates)}
}

// CheckTopN refuses a retrieval depth over MaxCandidates: it is the number
// of candidates the request makes the server retrieve and score.
func (l Limits) CheckTopN(field string, n int) error {
	if n > l.MaxCandidates {
		return Bad(field, "%d: must be at most %d (max_candidates)", n, l.MaxCandidates)
	}
	return nil
}

// Text reads a string value under the text policy: valid UTF-8 (a
// replaced byte would change what is scored or embedded) and at most
// MaxText bytes.
func (d *Decoder) Text(p Path, l Limits) (string, error) {
	d.replaced = false
	s, err := d.Str(p)
	if err != nil {
		return "", err
	}
	if d.replaced {
		return "", BadAt(p, "not valid UTF-8: send text as UTF-8")
	}
	if len(s) > l.MaxText {
		return "", l.tooLongAt(p, len(s))
	}
	return s, nil
}

// Object reads a request body's top-level object, handing each key to
// field, which reads its value, then checks nothing follows the object.
func (d *Decoder) Object(field func(key string) error) error {
	if err := d.BeginObject(Path{Idx: -1}); err != nil {
		return requestNotObject(err)
	}
	for first := true; ; {
		key, ok, err := d.NextKey(Path{Idx: -1}, &first)
		if err != nil {
			return err
		}
		if !ok {
			return d.End()
		}
		if err := field(key); err != nil {
			return err
		}
	}
}

// Given records key (its bit in *seen), refusing it a second time, and
// reports whether a value follows to be read: null means not given.
func (d *Decoder) Given(seen *uint16, bit uint16, key string) (bool, error) {
	if *seen&bit != 0 {
		return false, Bad(key, "given twice")
	}
	*seen |= bit
	return !d.Null(), nil
}

func requestNotObject(err error) error {
	var fe *FieldError
	if errors.As(err, &fe) && fe.Field() == "" && !strings.HasPrefix(fe.Msg, "malformed") {
		fe.Msg = "the request body " + fe.Msg
	}
	return err
}

// Floats reads an array of finite numbers, appending to dst.
func (d *Decoder) Floats(p Path, dst []float64, maxLen int) ([]float64, error) {
	if err := d.BeginArray(p); err != nil {
		return dst, err
	}
	n := 0
	for first := true; ; {
		ok, err := d.NextElem(p, &first)
		if err != nil || !ok {
			return dst, err
		}
		if n == maxLen {
			return dst, MoreThan(p, maxLen, "components")
		}
		v, err := d.Num(p)
		if err != nil {
			var fe *FieldError
			if errors.As(err, &fe) {
				fe.Msg = fmt.Sprintf("component %d: %s", n, fe.Msg)
			}
			return dst, err
		}
		dst = append(dst, v)
		n++
	}
}

// Bool reads true or false.
func (d *Decoder) Bool(p Path) (bool, error) {
	d.Space()
	switch d.Peek() {
	case 't':
		return true, d.Literal(p, "true")
	case 'f':
		return false, d.Literal(p, "false")
	}
	return false, d.TypeErr(p, "a boolean")
}

// Strings reads an array of at most 64 strings (names), appending to *dst.
func (d *Decoder) Strings(p Path, dst *[]string) error {
	return d.Array(p, func(int) error {
		if len(*dst) == 64 {
			return BadAt(p, "more than 64 names")
		}
		s, err := d.Str(Path{Name: p.Name, Idx: len(*dst)})
		if err != nil {
			return err
		}
		*dst = append(*dst, s)
		return nil
	})
}
