package wire

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ctxsel/ctxsel"
)

// The candidate on the wire: a JSON object with "id" (a non-empty string
// of valid UTF-8, or a number kept as written) and any of "score",
// "tokens", "text", "vector" and "above" (the lines of the candidate's
// document above it that a text selector sends with it: its heading path,
// the header of a table it starts inside; ctxsel.TextQuery.Above); other
// fields are the caller's metadata and
// pass unread. /v1/select reads an array of them, `ctxsel select` a stream
// of them, one a line, both with this reader, under the same rules and
// messages.

// Presence bits of a candidate's optional fields.
const (
	HasScore = 1 << iota
	HasTokens
	HasText
	HasVector
	HasAbove
)

// Candidates are decoded candidates: the form ctxsel takes, and what only
// some requests carry (texts, vectors) in side slices made on first use,
// so scored candidates allocate nothing for them. A Candidates is reused
// across requests (Reset), so a 1,000-candidate request does not allocate
// its slices afresh.
type Candidates struct {
	Cands   []ctxsel.Candidate
	Has     []uint8  // presence bits per candidate
	texts   []string // texts[i] of candidate i (shorter when the tail has none)
	aboves  []string // aboves[i] of candidate i, as texts
	vecSpan [][2]int // candidate i's vector is vecs[off : off+len]
	vecs    []float64
}

// Text is candidate i's text ("" when it has none). It is a slice of the
// input: copy it before keeping it past the input's life.
func (c *Candidates) Text(i int) string {
	if i < len(c.texts) {
		return c.texts[i]
	}
	return ""
}

// Above is the lines above candidate i ("" when it has none). It is a
// slice of the input, as Text.
func (c *Candidates) Above(i int) string {
	if i < len(c.aboves) {
		return c.aboves[i]
	}
	return ""
}

// AnyAbove reports whether a candidate gave lines above.
func (c *Candidates) AnyAbove() bool { return len(c.aboves) > 0 }

// Vector is candidate i's vector (nil when it has none).
func (c *Candidates) Vector(i int) []float64 {
	if i < len(c.vecSpan) {
		sp := c.vecSpan[i]
		return c.vecs[sp[0] : sp[0]+sp[1]]
	}
	return nil
}

// Oversized reports candidates grown too large to keep for reuse.
func (c *Candidates) Oversized() bool { return cap(c.Cands) > 1<<16 || cap(c.vecs) > 1<<20 }

// Reset empties c for reuse, keeping its memory; its strings, which point
// into an input that must not be kept alive, are cleared.
func (c *Candidates) Reset() {
	clear(c.Cands[:cap(c.Cands)])
	clear(c.texts[:cap(c.texts)])
	clear(c.aboves[:cap(c.aboves)])
	*c = Candidates{Cands: c.Cands[:0], Has: c.Has[:0], texts: c.texts[:0], aboves: c.aboves[:0], vecSpan: c.vecSpan[:0], vecs: c.vecs[:0]}
}

// Candidates reads the array of candidates under the top-level key
// "candidates".
func (d *Decoder) Candidates(c *Candidates, lim Limits) error {
	p := Field(candidatesKey)
	// Size the slices once instead of growing them through ten copies:
	// every candidate is an object (metadata objects only overestimate),
	// and counting one byte is a vectorised scan.
	if est := min(lim.MaxCandidates, strings.Count(d.s[d.pos:], "{")); cap(c.Cands) < est {
		c.Cands = make([]ctxsel.Candidate, 0, est)
		c.Has = make([]uint8, 0, est)
	}
	return d.Array(p, func(int) error {
		i := len(c.Cands)
		if i == lim.MaxCandidates {
			return MoreThan(p, lim.MaxCandidates, "candidates")
		}
		c.Cands = append(c.Cands, ctxsel.Candidate{})
		c.Has = append(c.Has, 0)
		return d.candidate(c, i, lim)
	})
}

// candidate reads candidate i.
func (d *Decoder) candidate(r *Candidates, i int, lim Limits) error {
	p := Path{Name: candidatesKey, Idx: i}
	c := &r.Cands[i]
	if err := d.BeginObject(p); err != nil {
		return err
	}
	haveID := false
	for first := true; ; {
		key, ok, err := d.NextKey(p, &first)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		kp := Path{Name: candidatesKey, Idx: i, Sub: key}
		var bit uint8
		switch key {
		case "id":
			if haveID {
				return BadAt(kp, "given twice")
			}
			haveID = true
			d.Space()
			switch d.Peek() {
			case '"':
				d.replaced = false
				c.ID, err = d.Str(kp)
				// U+FFFD in place of invalid UTF-8 would come back as an
				// id the caller cannot match.
				if err == nil && d.replaced {
					err = BadAt(kp, "not valid UTF-8 (ids come back as they were sent, so they must be UTF-8 text)")
				}
			case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
				// Numeric ids are kept as written.
				c.ID, err = d.NumLiteral(kp)
			default:
				err = d.TypeErr(kp, "a string or a number")
			}
			if err != nil {
				return err
			}
			if c.ID == "" {
				return BadAt(kp, "empty id")
			}
			continue
		case "score":
			bit = HasScore
		case "tokens":
			bit = HasTokens
		case "text":
			bit = HasText
		case "vector":
			bit = HasVector
		case "above":
			bit = HasAbove
		default:
			// Callers pass their own metadata along (titles, urls, gold
			// labels): unknown candidate fields are ignored, unless they
			// look like a misspelt field of a candidate.
			if want, typo := MisspeltCandidateField(key); typo {
				return BadAt(kp, "unknown field: did you mean %q? (other fields are ignored as metadata: rename it if it is yours)", want)
			}
			if err := d.Skip(kp, 0); err != nil {
				return err
			}
			continue
		}
		if r.Has[i]&bit != 0 {
			return BadAt(kp, "given twice")
		}
		if d.Null() {
			continue
		}
		r.Has[i] |= bit
		switch bit {
		case HasScore:
			c.Score, err = d.Num(kp)
		case HasTokens:
			c.Tokens, err = d.Count(kp)
		case HasText:
			var text string
			text, err = d.Text(kp, lim)
			r.texts = putAt(r.texts, i, text, cap(r.Cands))
		case HasAbove:
			var above string
			above, err = d.Text(kp, lim)
			r.aboves = putAt(r.aboves, i, above, cap(r.Cands))
		case HasVector:
			off := len(r.vecs)
			r.vecs, err = d.Floats(kp, r.vecs, lim.MaxDim)
			if cap(r.vecSpan) == 0 {
				r.vecSpan = make([][2]int, 0, cap(r.Cands))
			}
			for len(r.vecSpan) <= i {
				r.vecSpan = append(r.vecSpan, [2]int{})
			}
			r.vecSpan[i] = [2]int{off, len(r.vecs) - off}
		}
		if err != nil {
			return err
		}
	}
	if !haveID {
		return BadAt(Path{Name: p.Name, Idx: p.Idx, Sub: "id"}, "missing")
	}
	return nil
}

// putAt is side slice s with s[i] = v, grown with "" up to i (made on
// first use with room for n: the candidates' count).
func putAt(s []string, i int, v string, n int) []string {
	if cap(s) == 0 {
		s = make([]string, 0, n)
	}
	for len(s) <= i {
		s = append(s, "")
	}
	s[i] = v
	return s
}

// candidatesKey names candidates in paths: "candidates[3].score" in a
// request; a stream's are renamed "candidate 4: score" (InStream).
const candidatesKey = "candidates"

// DecodeStream reads candidates given as a stream of JSON objects, one
// after another with any whitespace between (JSON lines): `ctxsel select`'s
// input. each, when set, checks candidate i as soon as it is read (a
// *FieldError it returns names the candidate's field with CandidatePath).
// Errors wrap ctxsel.ErrInvalidInput and name the candidate by its place in
// the stream, from 1 ("candidate 3: score: must be a number, got a
// string").
func DecodeStream(s string, c *Candidates, lim Limits, each func(i int) error) error {
	d := NewDecoder(s)
	for i := 0; ; i++ {
		d.Space()
		if d.pos == len(d.s) {
			return nil
		}
		if i == lim.MaxCandidates {
			return InStream(MoreThan(Field(candidatesKey), lim.MaxCandidates, "candidates"))
		}
		c.Cands = append(c.Cands, ctxsel.Candidate{})
		c.Has = append(c.Has, 0)
		err := d.candidate(c, i, lim)
		if err == nil && each != nil {
			err = each(i)
		}
		if err != nil {
			return InStream(err)
		}
	}
}

// CandidatePath names field sub of candidate i for DecodeStream's each.
func CandidatePath(i int, sub string) Path { return Path{Name: candidatesKey, Idx: i, Sub: sub} }

// InStream names a candidate in err (a *FieldError of DecodeStream's, or
// a *ctxsel.CandidateError of ctxsel.NewCurve over its candidates) by its
// place in the stream, from 1: "candidate 3: id: duplicate id "a" (also
// candidate 1)". Other errors are returned as they are.
func InStream(err error) error {
	var fe *FieldError
	var ce *ctxsel.CandidateError
	switch {
	case errors.As(err, &fe) && fe.Path.Name == candidatesKey && fe.Path.Idx >= 0:
		if fe.Path.Sub == "" {
			return fmt.Errorf("%w: candidate %d: %s", ctxsel.ErrInvalidInput, fe.Path.Idx+1, fe.Msg)
		}
		return fmt.Errorf("%w: candidate %d: %s: %s", ctxsel.ErrInvalidInput, fe.Path.Idx+1, fe.Path.Sub, fe.Msg)
	case errors.As(err, &fe):
		return fmt.Errorf("%w: %s", ctxsel.ErrInvalidInput, fe.Msg)
	case errors.As(err, &ce) && ce.First >= 0:
		return fmt.Errorf("%w: candidate %d: id: duplicate id %q (also candidate %d)", ctxsel.ErrInvalidInput, ce.Index+1, ce.ID, ce.First+1)
	case errors.As(err, &ce):
		return fmt.Errorf("%w: candidate %d: %s: %s", ctxsel.ErrInvalidInput, ce.Index+1, ce.Field, ce.Msg)
	}
	return err
}
