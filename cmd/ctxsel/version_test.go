package main

import (
	"runtime"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	for _, arg := range []string{"version", "--version", "-version"} {
		code, out, errs := runCLI(t, "", arg)
		if code != 0 || !strings.HasPrefix(out, "ctxsel ") || !strings.Contains(out, runtime.Version()) {
			t.Errorf("%s: exit %d, %q %q", arg, code, out, errs)
		}
	}
	if code, _, _ := runCLI(t, "", "version", "extra"); code != 2 {
		t.Errorf("version extra: exit %d, want 2", code)
	}
}
