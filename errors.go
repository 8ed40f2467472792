package ctxsel

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
)

// ErrInvalidInput is wrapped by every validation error, so callers can tell bad
// input (a 4xx for a server, exit code 2 for a CLI) from a failure.
var ErrInvalidInput = errors.New("invalid input")

// The input errors below say what is wrong apart from where it was found,
// so a caller can name the place its own way (a server names a request
// field, "params.k" or "candidates[3].id"; a CLI names a flag or a line)
// without rewriting the text. Each wraps ErrInvalidInput.

// InputError is invalid input described in words: Msg is the description,
// Error puts ErrInvalidInput's text before it.
type InputError struct {
	Msg string
}

func (e *InputError) Error() string { return ErrInvalidInput.Error() + ": " + e.Msg }
func (e *InputError) Unwrap() error { return ErrInvalidInput }

// Invalidf is invalid input described in words: an *InputError, which
// wraps ErrInvalidInput. It is the module's one such constructor (each
// package's invalidf is it).
func Invalidf(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

var invalidf = Invalidf

// ParamError is a parameter that a spec's name does not take, or a value
// not of the parameter's kind or outside its range: the one error of every
// declared parameter (ParamDef), whatever it belongs to.
type ParamError struct {
	// Strategy is the name the parameter was given to (a strategy's, a
	// text selector's, a route's, a chunker's), Param the parameter's
	// (lowercased).
	Strategy, Param string
	// What says what Strategy names, for messages: "" for a strategy,
	// text selector or route (all "strategy" in a spec), "scorer",
	// "chunker".
	What string
	// Known lists the parameters the strategy takes, caps included, when
	// Param is not one of them; nil otherwise.
	Known []string
	// Msg says what is wrong with the parameter, naming it:
	// "k=0 out of range [1, 1099511627776]", `unknown parameter "kk"
	// (known: k, min_k, max_k, max_tokens)`.
	Msg string
}

// Detail is the error without ErrInvalidInput's text: "strategy topk: "
// (or What and the name) and Msg.
func (e *ParamError) Detail() string {
	return cmp.Or(e.What, "strategy") + " " + e.Strategy + ": " + e.Msg
}
func (e *ParamError) Error() string { return ErrInvalidInput.Error() + ": " + e.Detail() }
func (e *ParamError) Unwrap() error { return ErrInvalidInput }

// CandidateError is a candidate that cannot join a curve (NewCurve).
type CandidateError struct {
	// Index is the candidate's input position, from 0; ID its id.
	Index int
	ID    string
	// Field is the candidate's field at fault: "id", "score", "channels"
	// or "tokens".
	Field string
	// First, for a duplicate id, is the position of the first candidate
	// with that id; -1 otherwise.
	First int
	// Msg says what is wrong with the field: `duplicate id "a" (also
	// candidate 0)`, "negative token count -3".
	Msg string
}

// Detail is the error without ErrInvalidInput's text: the candidate, named
// by its position when its id is at fault and by its id otherwise, and Msg.
func (e *CandidateError) Detail() string {
	if e.Field == "id" {
		return "candidate " + strconv.Itoa(e.Index) + ": " + e.Msg
	}
	return "candidate " + strconv.Quote(e.ID) + ": " + e.Msg
}
func (e *CandidateError) Error() string { return ErrInvalidInput.Error() + ": " + e.Detail() }
func (e *CandidateError) Unwrap() error { return ErrInvalidInput }

// candidateErr is a CandidateError about candidate i of cands.
func candidateErr(cands []Candidate, i int, field, format string, args ...any) error {
	return &CandidateError{Index: i, ID: cands[i].ID, Field: field, First: -1, Msg: fmt.Sprintf(format, args...)}
}
