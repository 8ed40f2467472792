package wire

import "strings"

// candidateFields are the fields of a candidate on the wire (/v1/select, and
// the lines `ctxsel select` reads).
var candidateFields = []string{"id", "score", "tokens", "text", "vector", "above"}

// MisspeltCandidateField reports whether key, a field a candidate carries
// that is not one of its own, looks like a misspelling of one (another case,
// or one letter off: "Score", "tokns", "scroe") and which. Other unknown
// fields are the caller's metadata and pass unread; a misspelt one would
// pass silently too (tokens 0, a missing score) and is refused instead.
func MisspeltCandidateField(key string) (string, bool) {
	for _, f := range candidateFields {
		if strings.EqualFold(key, f) || (len(f) >= 4 && editDistance1(key, f)) {
			return f, true
		}
	}
	return "", false
}

// editDistance1 reports whether a becomes b by one insertion, deletion,
// substitution or swap of neighbours.
func editDistance1(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(b)-len(a) > 1 {
		return false
	}
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	if i == len(a) {
		return len(b)-len(a) == 1 // equal strings are no misspelling
	}
	if len(a) == len(b) {
		if a[i+1:] == b[i+1:] { // substitution
			return true
		}
		return i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:] // swap
	}
	return a[i:] == b[i+1:] // insertion into a
}
