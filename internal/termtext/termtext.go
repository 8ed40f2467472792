// Package termtext makes text from documents, LLMs and indexes safe to print
// on a terminal: every character a terminal may act on, instead of showing,
// is written as a visible escape.
//
// Escaped: the C0 controls (U+0000–U+001F: ESC starts CSI and OSC
// sequences, OSC 52 writes the clipboard, BEL ends them, CR overwrites a
// line), DEL, the C1 controls (U+0080–U+009F: U+009B is a one-character
// CSI on some terminals) and the bidirectional embeddings, overrides and
// isolates (U+202A–U+202E, U+2066–U+2069), which reorder what is shown
// ("Trojan Source"). The bidi marks U+200E, U+200F and U+061C are kept:
// right-to-left text needs them and they only move neutral characters next
// to them, as `go vet`'s bidi check also judges. Bytes that are not UTF-8
// are escaped one by one.
//
// Escapes are those of a JSON string where one exists — \n, \t, \r,
// \u001b, \u0085, \u202e — so that valid JSON stays valid and decodes to
// the same value; a byte that is not UTF-8 is written \xff. A backslash
// is left as it is: the escapes are for a reader, not a round trip, and
// text with nothing to escape (the common case) is returned unchanged.
package termtext

import (
	"io"
	"sync"
	"unicode/utf8"
)

// mode says which layout characters pass.
type mode uint8

const (
	oneLine mode = iota // nothing passes: one field on one line
	block               // \n, \t and the CR of a CRLF pass
)

// Line escapes s for a one-line field (a name, an id, a reason): line
// breaks and tabs are escaped too, so the field cannot break the layout.
func Line(s string) string { return escapeString(s, oneLine) }

// Text escapes s for a block of text (a passage, a prompt, an answer):
// newlines, tabs and the CR of a CRLF pass; everything else unsafe is
// escaped.
func Text(s string) string { return escapeString(s, block) }

func escapeString(s string, m mode) string {
	i := firstUnsafe(s, m)
	if i == len(s) {
		return s
	}
	b := make([]byte, 0, len(s)+16)
	b = append(b, s[:i]...)
	return string(appendEscaped(b, s[i:], m))
}

// firstUnsafe is the byte offset of the first character s needs escaped
// in mode m, len(s) when none.
func firstUnsafe(s string, m mode) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != 0x7f || m == block && keep(s, i) {
				i++
				continue
			}
			return i
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || unsafeRune(r) {
			return i
		}
		i += size
	}
	return len(s)
}

// keep reports whether the control byte s[i] passes in a block of text.
func keep(s string, i int) bool {
	switch s[i] {
	case '\n', '\t':
		return true
	case '\r':
		return i+1 < len(s) && s[i+1] == '\n'
	}
	return false
}

// unsafeRune reports whether r (not ASCII) is a C1 control or a bidi
// embedding, override or isolate.
func unsafeRune(r rune) bool {
	return r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

const hex = "0123456789abcdef"

// appendEscaped appends s to b with every unsafe character escaped.
func appendEscaped(b []byte, s string, m mode) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c >= 0x20 && c != 0x7f || m == block && keep(s, i-1):
				b = append(b, c)
			case c == '\n':
				b = append(b, `\n`...)
			case c == '\t':
				b = append(b, `\t`...)
			case c == '\r':
				b = append(b, `\r`...)
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, '\\', 'x', hex[c>>4], hex[c&0xf])
		case unsafeRune(r):
			b = append(b, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return b
}

// Writer passes what is written to it on with Text's escapes. A character
// split across two writes (as a bufio.Writer may split one) is held back
// until the rest arrives; Flush writes what is held, escaped, at the end.
// It is safe for concurrent use; each Write makes at most one write below.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	pending []byte // an incomplete UTF-8 sequence or a CR, from the last write
	buf     []byte
}

// NewWriter returns a Writer that escapes onto w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write escapes p onto the writer below. It reports len(p) when that write
// succeeds, whatever the escapes added.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	in := p
	if len(w.pending) > 0 {
		in = append(w.pending, p...)
		w.pending = nil
	}
	hold := heldTail(in)
	s := string(in[:len(in)-hold]) // one copy; appendEscaped reads a string
	w.buf = appendEscaped(w.buf[:0], s, block)
	w.pending = append(w.pending[:0], in[len(in)-hold:]...)
	if len(w.buf) == 0 {
		return len(p), nil
	}
	if _, err := w.w.Write(w.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what a last Write held back (an incomplete character, a
// final CR), escaped.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.pending) == 0 {
		return nil
	}
	w.buf = appendEscaped(w.buf[:0], string(w.pending), block)
	w.pending = w.pending[:0]
	_, err := w.w.Write(w.buf)
	return err
}

// heldTail is how many bytes at the end of p to hold for the next write: a
// CR (which a LF may follow) or the start of a UTF-8 sequence that the
// next write may complete.
func heldTail(p []byte) int {
	n := len(p)
	if n == 0 {
		return 0
	}
	if p[n-1] == '\r' {
		return 1
	}
	for i := n - 1; i >= 0 && i >= n-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(p[i]) {
			if p[i] >= utf8.RuneSelf && !utf8.FullRune(p[i:]) {
				return n - i
			}
			return 0
		}
	}
	return 0
}

// Underlying returns the writer below w when w is a Writer, else w: for
// what draws on the terminal itself (a progress bar) or needs the writer's
// own type.
func Underlying(w io.Writer) io.Writer {
	if t, ok := w.(*Writer); ok {
		return t.w
	}
	return w
}
