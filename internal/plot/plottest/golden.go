// Package plottest compares charts with saved ones (golden files), so a
// change to the plotting code that moves one byte of a chart is seen.
package plottest

import (
	"bytes"
	"os"
	"testing"
)

// Golden compares got with the file path, a chart saved when its code was
// last known right, and rewrites the file instead when the environment
// variable CTXSEL_UPDATE_PLOTS is set (then look at the chart).
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if os.Getenv("CTXSEL_UPDATE_PLOTS") != "" {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: the chart differs from the saved one (%d bytes, want %d); CTXSEL_UPDATE_PLOTS=1 rewrites it", path, len(got), len(want))
	}
}
