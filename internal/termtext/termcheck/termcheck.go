// Package termcheck finds what a terminal would act on in a command's
// output: the check the CLI's tests and the reliability probe apply to
// what ctxsel prints. It is written apart from termtext's printer on
// purpose, so that it checks the printer rather than repeat it.
package termcheck

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Hostile is text a document or a model may hold that a terminal acts on:
// an OSC 52 clipboard write, a screen clear and home, BEL, a C1 CSI that
// turns text red, a bidi override and isolate, DEL, a lone CR.
const Hostile = "\x1b]52;c;cHduZWQ=\x07\x1b[2J\x1b[H\x07\u009b31m\u202eevil\u2066x\u2069\x7f\rspoof"

// HostileJSON is Hostile as the inside of a JSON string: what --json
// output holds for it.
func HostileJSON() string {
	b, _ := json.Marshal(Hostile)
	return string(b[1 : len(b)-1])
}

// RawControl names the first byte or rune in out that a terminal could
// act on: a C0 control other than \n and \t (a CR only before a LF), DEL,
// a C1 control, a bidi embedding, override or isolate, or a byte that is
// not UTF-8, with its offset and the text around it. "" when there is
// none.
func RawControl(out string) string {
	for i := 0; i < len(out); {
		r, size := utf8.DecodeRuneInString(out[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return fmt.Sprintf("byte %#x (not UTF-8) at %d in %s", out[i], i, snippetAround(out, i))
		case r == '\n' || r == '\t' || r == '\r' && strings.HasPrefix(out[i+1:], "\n"):
		case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069:
			return fmt.Sprintf("raw %U at %d in %s", r, i, snippetAround(out, i))
		}
		i += size
	}
	return ""
}

// snippetAround is the text around byte i, with ESC spelled out and made
// valid UTF-8, to show where a raw control sits.
func snippetAround(s string, i int) string {
	return strings.ToValidUTF8(strings.NewReplacer("\x1b", "ESC").Replace(s[max(0, i-40):min(len(s), i+40)]), "?")
}
