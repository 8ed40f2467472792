package picker

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxOutputBytes bounds a picker answer: a longer one is invalid (a model
// that rambles or loops has not followed the format).
const MaxOutputBytes = 32 << 10

// maxRationale bounds the rationale kept in an explanation.
const maxRationale = 2000

// ErrInvalidOutput is wrapped by every reason Parse rejects an answer.
var ErrInvalidOutput = errors.New("picker output invalid")

// Output is a valid picker answer: the rationale and the picked ids, in the
// order the model gave them, each one of the offered ids.
type Output struct {
	Rationale string   `json:"rationale"`
	IDs       []string `json:"ids"`
}

// Parse reads a picker answer {"rationale": "...", "ids": [...]} and checks
// it against the offered ids. Fenced JSON (```json ... ```) and surrounding
// whitespace are tolerated; ids given as JSON numbers are read as their
// literal text (a model writes 3 for the id "3"). Unknown ids, duplicates,
// an empty set, malformed or over-long output are invalid: the error wraps
// ErrInvalidOutput and says why, quoting at most a short piece of the
// output. Parse never panics.
func Parse(text string, offered map[string]int) (Output, error) {
	if len(text) > MaxOutputBytes {
		return Output{}, invalid("output of %d bytes exceeds %d", len(text), MaxOutputBytes)
	}
	body, err := unfence(text)
	if err != nil {
		return Output{}, err
	}
	var raw struct {
		Rationale *json.RawMessage `json:"rationale"`
		IDs       *json.RawMessage `json:"ids"`
	}
	dec := json.NewDecoder(strings.NewReader(body))
	if err := dec.Decode(&raw); err != nil {
		return Output{}, invalid("malformed JSON: %s", shortErr(err))
	}
	if rest := strings.TrimSpace(body[dec.InputOffset():]); rest != "" {
		return Output{}, invalid("text after the JSON object: %s", clip(rest, 40))
	}
	var out Output
	if raw.Rationale != nil && string(*raw.Rationale) != "null" {
		if err := json.Unmarshal(*raw.Rationale, &out.Rationale); err != nil {
			return Output{}, invalid("rationale is not a string")
		}
		out.Rationale = strings.TrimSpace(out.Rationale)
	}
	if raw.IDs == nil {
		return Output{}, invalid(`no "ids" field`)
	}
	var ids []json.RawMessage
	if err := json.Unmarshal(*raw.IDs, &ids); err != nil || ids == nil {
		return Output{}, invalid(`"ids" is not a list`)
	}
	if len(ids) == 0 {
		return Output{}, invalid("empty selection")
	}
	seen := make(map[string]bool, len(ids))
	out.IDs = make([]string, 0, len(ids))
	for _, r := range ids {
		id, ok := idText(r)
		if !ok {
			return Output{}, invalid("id %s is neither a string nor a number", clip(string(r), 40))
		}
		if _, known := offered[id]; !known {
			return Output{}, invalid("unknown id %s", quoteClip(id))
		}
		if seen[id] {
			return Output{}, invalid("duplicate id %s", quoteClip(id))
		}
		seen[id] = true
		out.IDs = append(out.IDs, id)
	}
	return out, nil
}

// unfence returns the JSON object of an answer: the whole text, or the body
// of its first ``` fence (with or without a language tag).
func unfence(text string) (string, error) {
	s := strings.TrimSpace(text)
	if s == "" {
		return "", invalid("empty output")
	}
	if i := strings.Index(s, "```"); i >= 0 {
		rest := s[i+3:]
		nl := strings.IndexByte(rest, '\n')
		if nl < 0 {
			return "", invalid("unterminated code fence")
		}
		if tag := strings.TrimSpace(rest[:nl]); tag != "" && !strings.EqualFold(tag, "json") {
			return "", invalid("code fence of %s, want json", clip(tag, 20))
		}
		rest = rest[nl+1:]
		end := strings.Index(rest, "```")
		if end < 0 {
			return "", invalid("unterminated code fence")
		}
		s = strings.TrimSpace(rest[:end])
	}
	if !strings.HasPrefix(s, "{") {
		return "", invalid("not a JSON object: %s", clip(s, 40))
	}
	return s, nil
}

// idText reads an id given as a JSON string or number.
func idText(r json.RawMessage) (string, bool) {
	r = bytes.TrimSpace(r)
	if len(r) == 0 {
		return "", false
	}
	if r[0] == '"' {
		var s string
		if json.Unmarshal(r, &s) != nil {
			return "", false
		}
		return s, true
	}
	if r[0] != '-' && (r[0] < '0' || r[0] > '9') {
		return "", false
	}
	var n json.Number
	if dec := json.NewDecoder(bytes.NewReader(r)); dec.Decode(&n) != nil {
		return "", false
	}
	return n.String(), true
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidOutput, fmt.Sprintf(format, args...))
}

// Reason is the part of a Parse error after "picker output invalid: ".
func Reason(err error) string {
	return strings.TrimPrefix(err.Error(), ErrInvalidOutput.Error()+": ")
}

func shortErr(err error) string { return clip(err.Error(), 80) }

// clip shortens s to at most n runes for an error message.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

func quoteClip(id string) string { return fmt.Sprintf("%q", clip(id, 40)) }
