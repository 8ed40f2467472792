package ingest

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// Text files (.txt, .md) are indexed byte for byte: a chunk's offsets point
// into the file as it is on disk. That only holds for UTF-8, so other bytes are not
// guessed at: binary files (NUL bytes, mostly invalid UTF-8) and text in
// another charset (Latin-1, Windows-1252, UTF-16) are skipped with a note
// saying how to convert them, instead of being indexed as U+FFFD soup with
// offsets that point nowhere.

// Shares of bytes above which a file reads as binary rather than as text in
// another charset: control characters (other than whitespace) are rare in
// any text, bytes that are not UTF-8 are common in Latin-1 but not a third.
const (
	binaryControls = 0.01
	binaryInvalid  = 0.30
)

// textProblem says why raw cannot be indexed as text, or "" when it can.
// With utf8Only, text in another charset is a problem too (offsets into
// the decoded text would not point into the file).
func textProblem(raw []byte, utf8Only bool) string {
	if i := bytes.IndexByte(raw, 0); i >= 0 {
		if bytes.HasPrefix(raw, []byte{0xff, 0xfe}) || bytes.HasPrefix(raw, []byte{0xfe, 0xff}) {
			return "UTF-16 text; convert it to UTF-8 (iconv -f UTF-16 -t UTF-8)"
		}
		return fmt.Sprintf("binary (NUL byte at offset %d), not text", i)
	}
	ctrl, bad, first := 0, 0, -1
	for i := 0; i < len(raw); {
		r, n := utf8.DecodeRune(raw[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			if first < 0 {
				first = i
			}
			bad++
		case r < 0x20 && r != '\t' && r != '\n' && r != '\r' && r != '\f' || r == 0x7f:
			ctrl++
		}
		i += n
	}
	if float64(ctrl) > binaryControls*float64(len(raw)) || float64(bad) > binaryInvalid*float64(len(raw)) {
		return fmt.Sprintf("binary (%d control bytes, %d bytes not UTF-8 of %d), not text", ctrl, bad, len(raw))
	}
	if bad == 0 || !utf8Only {
		return ""
	}
	return fmt.Sprintf("not UTF-8 (first bad byte 0x%02x at offset %d; Latin-1 or Windows-1252?): chunk offsets would not point into the file; convert it (iconv -f WINDOWS-1252 -t UTF-8)", raw[first], first)
}
