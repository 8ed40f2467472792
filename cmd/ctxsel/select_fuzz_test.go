package main

import (
	"bytes"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/token"
)

// FuzzReadCandidates: select's input parser never panics, fails only with
// invalid input, and what it accepts is a valid curve with ids and texts of
// valid UTF-8.
func FuzzReadCandidates(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","score":0.9,"tokens":3}` + "\n" + `{"id":2,"score":0.1,"text":"x y"}`,
		`{"id":"a","score":1,"meta":{"x":[1,2]}}`,
		"{\"id\":\"a\xff\",\"score\":1}",
		`{"id":"a","score":1,"vector":[1]}`,
		`{"id":"","score":1}`, `{"id":"a","score":1e999}`, `[1]`, `{"id":"a","score":1,"tokens":null}`,
		`{"id":"a","score":1,"text":"x","above":"# T\n## S"}` + "\n" + `{"id":"b","score":0.5,"above":null}`,
		"{\"id\":\"a\",\"score\":1,\"above\":\"\xff\"}", `{"id":"a","score":1,"above":"x","above":"y"}`, `{"id":"a","score":1,"abov":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		curve, texts, above, err := readCandidates(bytes.NewReader(in), token.Default)
		if err != nil {
			if !errors.Is(err, ctxsel.ErrInvalidInput) {
				t.Fatalf("error does not wrap ErrInvalidInput: %v", err)
			}
			return
		}
		if len(texts) != curve.Len() || (above != nil && len(above) != curve.Len()) {
			t.Fatalf("%d texts and %d lines above for %d candidates", len(texts), len(above), curve.Len())
		}
		for i := range curve.Len() {
			if c := curve.Candidate(i); !utf8.ValidString(c.ID) || !utf8.ValidString(texts[i]) {
				t.Fatalf("id %q or text %q is not valid UTF-8", c.ID, texts[i])
			}
			if above != nil && !utf8.ValidString(above[i]) {
				t.Fatalf("lines above %q are not valid UTF-8", above[i])
			}
		}
	})
}
