package ingest

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

// FuzzTextProblem: any bytes are classified without a panic; what passes
// as UTF-8-only text is valid UTF-8 without NUL bytes, and the lenient
// check (for .jsonl) accepts everything the strict one does.
func FuzzTextProblem(f *testing.F) {
	f.Add([]byte("plain text\n"))
	f.Add([]byte("Caf\xe9 cr\xe8me"))
	f.Add([]byte("\xff\xfeH\x00i\x00"))
	f.Add([]byte("PK\x03\x04\x00\x00"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, raw []byte) {
		strict, lenient := textProblem(raw, true), textProblem(raw, false)
		if strict == "" && (!utf8.Valid(raw) || bytes.IndexByte(raw, 0) >= 0) {
			t.Fatalf("%q passed as UTF-8 text", raw)
		}
		if strict == "" && lenient != "" {
			t.Fatalf("%q: strict passes, lenient says %s", raw, lenient)
		}
	})
}

// FuzzParseJSONL: any .jsonl content gives documents with non-empty,
// valid UTF-8 ids and valid UTF-8 text, or an error; never a panic.
func FuzzParseJSONL(f *testing.F) {
	f.Add([]byte(`{"id":"a","text":"x"}` + "\n" + `{"id":2,"text":"y"}`))
	f.Add([]byte("{\"id\":\"a\xff\",\"text\":\"x\"}"))
	f.Add([]byte(`{"id":"q","passages":[{"id":"p","text":"t"}]}`))
	f.Add([]byte(`{"question":"q?"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, err := parseJSONL(SourceFile{Path: "f.jsonl"}, bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, d := range docs {
			if d.ID == "" || !utf8.ValidString(d.ID) || !utf8.ValidString(d.Text) {
				t.Fatalf("document %q: bad id or text", d.ID)
			}
		}
	})
}
