package wire

import (
	"fmt"
	"strconv"

	"github.com/ctxsel/ctxsel"
)

// FieldError is a client error about one field of a request: what a server
// answers as {"error": {"field", "message"}} with Status, and `ctxsel
// select` as "candidate N: FIELD: MESSAGE".
type FieldError struct {
	Status int // HTTP status; 0 means 400
	Path   Path
	Msg    string
}

// Field names the field at fault as a request names it
// ("candidates[3].score"); "" for the request as a whole.
func (e *FieldError) Field() string { return e.Path.String() }

func (e *FieldError) Error() string {
	if f := e.Field(); f != "" {
		return f + ": " + e.Msg
	}
	return e.Msg
}

// Unwrap makes a client error (4xx) a ctxsel.ErrInvalidInput.
func (e *FieldError) Unwrap() error {
	if e.Status >= 500 {
		return nil
	}
	return ctxsel.ErrInvalidInput
}

// Bad is a 400 about the field named field.
func Bad(field, format string, args ...any) *FieldError {
	return &FieldError{Path: Field(field), Msg: fmt.Sprintf(format, args...)}
}

// BadAt is a 400 about the field at p.
func BadAt(p Path, format string, args ...any) *FieldError {
	return &FieldError{Path: p, Msg: fmt.Sprintf(format, args...)}
}

// Path names a field without building the string until an error needs it.
type Path struct {
	Name string // top-level key (or a dotted name given whole)
	Idx  int    // array index, or -1
	Sub  string // key inside the element or object, or ""
}

// Field is the path of a top-level key.
func Field(name string) Path { return Path{Name: name, Idx: -1} }

func (p Path) String() string {
	s := p.Name
	if p.Idx >= 0 {
		s += "[" + strconv.Itoa(p.Idx) + "]"
	}
	if p.Sub != "" {
		s += "." + p.Sub
	}
	return s
}
