// Package testenv answers questions tests ask about where they run.
package testenv

import "os"

// InCI reports whether the tests run in CI, where a test whose prerequisite
// is missing must fail rather than skip. Any non-empty CI other than "false"
// and "0" counts: CI systems set it to "true", "1", "yes" or their own name,
// and a parser that rejects a word must not turn CI off.
func InCI() bool {
	switch os.Getenv("CI") {
	case "", "false", "0", "False", "FALSE":
		return false
	}
	return true
}
