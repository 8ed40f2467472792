package ctxsel_test

import (
	"errors"
	"testing"

	"github.com/ctxsel/ctxsel"
	_ "github.com/ctxsel/ctxsel/cutoff"
)

// TestParamError: a bad parameter is a *ParamError naming the strategy and
// the parameter (and, when unknown, what is known), with the text it has
// always had, from New and from Def.CheckParam alike.
func TestParamError(t *testing.T) {
	for _, tc := range []struct {
		spec, param, text string
		unknown           bool
	}{
		{"topk:k=0", "k", "invalid input: strategy topk: k=0 out of range [1, 2.147483647e+09]", false},
		{"topk:k=1.5", "k", "invalid input: strategy topk: k=1.5 must be a whole number", false},
		{"topk:max_k=-1", "max_k", "invalid input: strategy topk: max_k=-1 out of range [0, 2.147483647e+09]", false},
		{"topk:kk=1", "kk", `invalid input: strategy topk: unknown parameter "kk" (known: k, min_k, max_k, max_tokens)`, true},
	} {
		_, _, err := ctxsel.Parse(tc.spec)
		var pe *ctxsel.ParamError
		if !errors.As(err, &pe) || !errors.Is(err, ctxsel.ErrInvalidInput) || pe.Strategy != "topk" || pe.Param != tc.param || (pe.Known != nil) != tc.unknown {
			t.Fatalf("%s: %#v", tc.spec, err)
		}
		if err.Error() != tc.text {
			t.Errorf("%s: %q, want %q", tc.spec, err.Error(), tc.text)
		}
		sp, _ := ctxsel.ParseSpec(tc.spec)
		def, _ := ctxsel.Lookup("topk")
		if err2 := def.CheckParam(tc.param, sp.Params[tc.param]); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("%s: CheckParam %v, New %v", tc.spec, err2, err)
		}
	}
	def, _ := ctxsel.Lookup("topk")
	if err := def.CheckParam("max_tokens", 100); err != nil {
		t.Errorf("a valid cap: %v", err)
	}
}

// TestCandidateError: NewCurve names the candidate and its field, and for a
// duplicate id the first candidate with it.
func TestCandidateError(t *testing.T) {
	for _, tc := range []struct {
		cands        []ctxsel.Candidate
		index, first int
		field, text  string
	}{
		{[]ctxsel.Candidate{{ID: "a"}, {ID: "b"}, {ID: "a"}}, 2, 0, "id", `invalid input: candidate 2: duplicate id "a" (also candidate 0)`},
		{[]ctxsel.Candidate{{ID: "a"}, {ID: ""}}, 1, -1, "id", "invalid input: candidate 1: empty id"},
		{[]ctxsel.Candidate{{ID: "a", Tokens: -3}}, 0, -1, "tokens", `invalid input: candidate "a": negative token count -3`},
		{[]ctxsel.Candidate{{ID: "a", Channels: []float64{1}}, {ID: "b"}}, 1, -1, "channels", `invalid input: candidate "b": 0 score channels, candidate 0 has 1`},
	} {
		_, err := ctxsel.NewCurve(tc.cands)
		var ce *ctxsel.CandidateError
		if !errors.As(err, &ce) || !errors.Is(err, ctxsel.ErrInvalidInput) || ce.Index != tc.index || ce.First != tc.first || ce.Field != tc.field {
			t.Fatalf("%v: %#v", tc.cands, err)
		}
		if err.Error() != tc.text || ce.ID != tc.cands[tc.index].ID {
			t.Errorf("%q, want %q", err.Error(), tc.text)
		}
	}
}

// TestInputError: the other validation errors are *InputError, their
// description apart.
func TestInputError(t *testing.T) {
	_, err := ctxsel.ParseOrder("sideways")
	var ie *ctxsel.InputError
	if !errors.As(err, &ie) || ie.Msg != `order "sideways": want rank, document or edges` || err.Error() != "invalid input: "+ie.Msg {
		t.Fatalf("%#v", err)
	}
}
