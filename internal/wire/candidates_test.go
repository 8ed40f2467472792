package wire

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel"
)

// TestDecodeStream: a stream of candidate objects, one a line or run
// together, read by the candidate reader /v1/select uses, with errors that
// number the candidate from 1 and name its field.
func TestDecodeStream(t *testing.T) {
	var c Candidates
	in := "{\"id\":\"a\",\"score\":0.9,\"tokens\":3}\n{\"id\":7,\"score\":1.5e2,\"text\":\"x y\",\"meta\":[1]}{\"id\":\"c\",\"score\":-1}\n\n"
	if err := DecodeStream(in, &c, Unlimited, nil); err != nil {
		t.Fatal(err)
	}
	ids := []string{c.Cands[0].ID, c.Cands[1].ID, c.Cands[2].ID}
	if !slices.Equal(ids, []string{"a", "7", "c"}) || c.Cands[1].Score != 150 || c.Text(1) != "x y" || c.Has[0] != HasScore|HasTokens || c.Text(2) != "" {
		t.Fatalf("%+v", c)
	}
	for _, tc := range []struct{ in, want string }{
		{`{"id":"a","score":1}` + "\n" + `{"id":"b","score":"x"}`, "candidate 2: score: must be a number, got a string"},
		{`{"id":"a","Score":1}`, `candidate 1: Score: unknown field: did you mean "score"?`},
		{`{"score":1}`, "candidate 1: id: missing"},
		{`[1]`, "candidate 1: must be an object, got an array"},
		{`{"id":"a","score":1} x`, "candidate 2: malformed JSON at byte 21"},
		{"{\"id\":\"a\",\"score\":1,\"text\":\"\xff\"}", "candidate 1: text: not valid UTF-8"},
		{`{"id":"a","score":1,"vector":[1]}`, "candidate 1: vector: no vectors here"},
	} {
		var c Candidates
		err := DecodeStream(tc.in, &c, Unlimited, func(i int) error {
			if c.Has[i]&HasVector != 0 {
				return &FieldError{Path: CandidatePath(i, "vector"), Msg: "no vectors here"}
			}
			return nil
		})
		if !errors.Is(err, ctxsel.ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		}
	}
	// A duplicate id, which NewCurve finds, in the stream's numbering.
	c = Candidates{}
	if err := DecodeStream(`{"id":"a","score":1}{"id":"b","score":1}{"id":"a","score":1}`, &c, Unlimited, nil); err != nil {
		t.Fatal(err)
	}
	_, err := ctxsel.NewCurve(c.Cands)
	if err = InStream(err); err == nil || err.Error() != `invalid input: candidate 3: id: duplicate id "a" (also candidate 1)` {
		t.Fatal(err)
	}
	if err := DecodeStream(`{"id":"a","score":1}{"id":"b","score":1}`, &Candidates{}, Limits{MaxCandidates: 1, MaxText: 9, MaxDim: 9}, nil); err == nil || !strings.Contains(err.Error(), "more than 1 candidates") {
		t.Fatal(err)
	}
}

// TestDecodeAbove: a candidate's lines above are read where given, "" for
// the others, bounded and refused as a text is, and a reused Candidates
// keeps none from its last input.
func TestDecodeAbove(t *testing.T) {
	var c Candidates
	if err := DecodeStream(`{"id":"a","score":1}{"id":"b","score":1,"above":"# T\n## S"}{"id":"c","score":1,"above":null}`, &c, Unlimited, nil); err != nil {
		t.Fatal(err)
	}
	if !c.AnyAbove() || c.Above(0) != "" || c.Above(1) != "# T\n## S" || c.Above(2) != "" || c.Has[1] != HasScore|HasAbove || c.Has[2] != HasScore {
		t.Fatalf("%+v", c)
	}
	c.Reset()
	if err := DecodeStream(`{"id":"a","score":1}{"id":"b","score":1}`, &c, Unlimited, nil); err != nil {
		t.Fatal(err)
	}
	if c.AnyAbove() || c.Above(1) != "" {
		t.Fatalf("after Reset: %+v", c)
	}
	for _, tc := range []struct{ in, want string }{
		{"{\"id\":\"a\",\"score\":1,\"above\":\"\xff\"}", "candidate 1: above: not valid UTF-8"},
		{`{"id":"a","score":1,"above":"0123456789"}`, "candidate 1: above: "},
		{`{"id":"a","score":1,"above":"x","above":"y"}`, "candidate 1: above: given twice"},
		{`{"id":"a","score":1,"Above":"x"}`, `candidate 1: Above: unknown field: did you mean "above"?`},
		{`{"id":"a","score":1,"above":["x"]}`, "candidate 1: above: must be a string"},
	} {
		err := DecodeStream(tc.in, &Candidates{}, Limits{MaxCandidates: 9, MaxText: 9, MaxDim: 9}, nil)
		if !errors.Is(err, ctxsel.ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		}
	}
}

// FuzzDecodeStream: the stream reader never panics, fails only with invalid
// input, and what it accepts has ids and texts of valid UTF-8.
func FuzzDecodeStream(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","score":0.9,"tokens":3}` + "\n" + `{"id":2,"score":0.1,"text":"x y"}`,
		`{"id":"a","score":1,"meta":{"x":[1,2]}}`, "{\"id\":\"a\xff\",\"score\":1}", `{"id":"a","score":1,"vector":[1]}`,
		`{"id":"","score":1}`, `{"id":"a","score":1e999}`, `[1]`, `{"id":"a","score":1,"tokens":null}`, `{"id":"\ud800"}`,
		`{"id":"a","score":1,"text":"x","above":"# T\n| a |\n| - |"}{"id":"b","score":1,"above":null}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var c Candidates
		if err := DecodeStream(in, &c, Limits{MaxCandidates: 50, MaxText: 1 << 10, MaxDim: 16}, nil); err != nil {
			if !errors.Is(err, ctxsel.ErrInvalidInput) {
				t.Fatalf("error does not wrap ErrInvalidInput: %v", err)
			}
			return
		}
		if len(c.Has) != len(c.Cands) {
			t.Fatalf("%d presence sets for %d candidates", len(c.Has), len(c.Cands))
		}
		for i, cd := range c.Cands {
			if cd.ID == "" || !utf8.ValidString(cd.ID) || !utf8.ValidString(c.Text(i)) || !utf8.ValidString(c.Above(i)) || len(c.Above(i)) > 1<<10 {
				t.Fatalf("candidate %d: id %q text %q above %q", i, cd.ID, c.Text(i), c.Above(i))
			}
			if len(c.Vector(i)) > 16 {
				t.Fatalf("a vector over the bound: %d", len(c.Vector(i)))
			}
		}
	})
}
