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

func TestMCPFlags(t *testing.T) {
	if code, _, errs := runCLI(t, "", "mcp", "--bogus"); code != 2 || !strings.Contains(errs, "bogus") {
		t.Errorf("mcp --bogus: exit %d %q", code, errs)
	}
	if code, _, errs := runCLI(t, "", "mcp", "--embedder", "nope"); code != 2 || !strings.Contains(errs, "unknown embedder") {
		t.Errorf("mcp --embedder nope: exit %d %q", code, errs)
	}
}
