package termtext

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLineAndText(t *testing.T) {
	for _, c := range []struct{ in, line, text string }{
		{"plain text, ünïcödé — ∞", "plain text, ünïcödé — ∞", "plain text, ünïcödé — ∞"},
		{"", "", ""},
		{"a\nb\tc", `a\nb\tc`, "a\nb\tc"},
		{"crlf\r\nend", `crlf\r\nend`, "crlf\r\nend"},
		{"over\rwrite", `over\rwrite`, `over\rwrite`},
		{"trailing\r", `trailing\r`, `trailing\r`},
		{"\x1b[2J\x1b[H", `\u001b[2J\u001b[H`, `\u001b[2J\u001b[H`},
		{"\x1b]52;c;aGk=\x07", `\u001b]52;c;aGk=\u0007`, `\u001b]52;c;aGk=\u0007`},
		{"nul\x00del\x7f", `nul\u0000del\u007f`, `nul\u0000del\u007f`},
		{"c1 \u009b31m \u0085", `c1 \u009b31m \u0085`, `c1 \u009b31m \u0085`},
		{"bidi \u202eevil\u202c \u2066x\u2069", `bidi \u202eevil\u202c \u2066x\u2069`, `bidi \u202eevil\u202c \u2066x\u2069`},
		{"marks \u200e\u200f\u061c kept", "marks \u200e\u200f\u061c kept", "marks \u200e\u200f\u061c kept"},
		{"bad \xff\xfe utf8 \xe2\x80", `bad \xff\xfe utf8 \xe2\x80`, `bad \xff\xfe utf8 \xe2\x80`},
		{`back\slash \u001b`, `back\slash \u001b`, `back\slash \u001b`},
	} {
		if got := Line(c.in); got != c.line {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.line)
		}
		if got := Text(c.in); got != c.text {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.text)
		}
	}
}

// The escapes are JSON's: a JSON document escaped as text is still JSON
// with the same value (encoding/json leaves DEL, C1 and bidi runes raw).
func TestJSONStaysJSON(t *testing.T) {
	v := map[string]string{"answer": "x\x7f\u0085\u009b\u202e\u2066y", "nl": "a\nb\x1b"}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	esc := Text(string(b))
	if esc == string(b) {
		t.Fatalf("nothing escaped in %q", b)
	}
	var back map[string]string
	if err := json.Unmarshal([]byte(esc), &back); err != nil {
		t.Fatalf("escaped JSON does not parse: %v\n%s", err, esc)
	}
	if back["answer"] != v["answer"] || back["nl"] != v["nl"] {
		t.Fatalf("value changed: %q", back)
	}
}

func TestWriterHoldsSplitCharacters(t *testing.T) {
	in := "é — \u202e ∞\r\nend\x1b" + strings.Repeat("ü", 3000)
	var out bytes.Buffer
	w := NewWriter(&out)
	bw := bufio.NewWriterSize(w, 17) // splits characters at every flush
	for i := 0; i < len(in); i += 5 {
		bw.WriteString(in[i:min(i+5, len(in))])
	}
	bw.Flush()
	w.Flush()
	if want := Text(in); out.String() != want {
		t.Fatalf("through the writer:\n%q\nwant\n%q", out.String(), want)
	}
	out.Reset()
	w.Write([]byte("cut \xe2\x80"))
	if out.String() != "cut " {
		t.Fatalf("before the rest arrives: %q", out.String())
	}
	w.Write([]byte("\xae\r"))
	w.Write([]byte("\n"))
	if out.String() != "cut \\u202e\r\n" {
		t.Fatalf("completed: %q", out.String())
	}
	out.Reset()
	w.Write([]byte("end \xf0\x9f"))
	w.Flush()
	if out.String() != `end \xf0\x9f` {
		t.Fatalf("flushed: %q", out.String())
	}
	if Underlying(w) != &out || Underlying(&out) != &out {
		t.Fatal("Underlying does not see through the writer")
	}
}

// checkSafe fails when out holds a byte or rune a terminal may act on.
func checkSafe(t *testing.T, out string, line bool) {
	t.Helper()
	for i := 0; i < len(out); {
		r, size := utf8.DecodeRuneInString(out[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			t.Fatalf("invalid UTF-8 at %d in %q", i, out)
		case r == '\n' || r == '\t':
			if line {
				t.Fatalf("line break or tab in a line: %q", out)
			}
		case r == '\r':
			if line || i+1 >= len(out) || out[i+1] != '\n' {
				t.Fatalf("lone CR at %d in %q", i, out)
			}
		case r < 0x20 || r == 0x7f || unsafeRune(r):
			t.Fatalf("raw %U at %d in %q", r, i, out)
		}
		i += size
	}
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "plain", "a\nb", "\x1b]52;c;aGk=\x07", "\u202e", "\xff", "\r", "\r\n", "\xe2\x80", "\u0085", `\u001b`} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, chunk int) {
		line, text := Line(s), Text(s)
		checkSafe(t, line, true)
		checkSafe(t, text, false)
		// Text with nothing to escape is unchanged; anything escaped
		// grows (each escape is longer than what it stands for).
		if firstUnsafe(s, block) == len(s) != (text == s) {
			t.Fatalf("Text(%q) = %q", s, text)
		}
		if Line(text) != line {
			t.Fatalf("Line(Text(%q)) = %q, want %q", s, Line(text), line)
		}
		if Text(text) != text || Line(line) != line {
			t.Fatalf("escaping twice changed %q", s)
		}
		// The writer, fed in pieces, writes what Text does.
		chunk = 1 + (chunk&0xff)%7
		var out bytes.Buffer
		w := NewWriter(&out)
		for i := 0; i < len(s); i += chunk {
			if n, err := w.Write([]byte(s[i:min(i+chunk, len(s))])); err != nil || n != min(chunk, len(s)-i) {
				t.Fatalf("Write: %d, %v", n, err)
			}
		}
		w.Flush()
		if out.String() != text {
			t.Fatalf("writer in pieces of %d: %q, want %q", chunk, out.String(), text)
		}
	})
}

func BenchmarkTextPlain(b *testing.B) {
	s := strings.Repeat("An ordinary passage of text, with ünïcödé. ", 100)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		Text(s)
	}
}
