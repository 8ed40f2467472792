package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// versionInfo describes the running binary from its build info: the module
// version (a tag for `go install ...@v1.2.3`, "(devel)" for a checkout), the
// VCS revision and time stamped by `go build`, and the Go version.
func versionInfo() string {
	version, rev, when, dirty := "(unknown)", "", "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	out := "ctxsel " + version
	if rev != "" {
		out += " revision " + rev
		if dirty {
			out += " (modified)"
		}
	}
	if when != "" {
		out += " " + when
	}
	return fmt.Sprintf("%s %s %s/%s", out, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func cmdVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("version", "Usage: ctxsel version\n\nPrints the module version, VCS revision and Go version.", stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	fmt.Fprintln(stdout, versionInfo())
	return nil
}
