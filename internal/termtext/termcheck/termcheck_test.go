package termcheck

import (
	"strings"
	"testing"
)

func TestRawControl(t *testing.T) {
	for _, ok := range []string{"", "plain text\nwith lines\tand tabs\r\n", "a CR before a LF\r\n", "RTL marks \u200e\u200f\u061c stay", "ünïcödé 你好"} {
		if got := RawControl(ok); got != "" {
			t.Errorf("%q: %s, want none", ok, got)
		}
	}
	for _, bad := range []string{"\x1b[31m", "\x07", "\rcr", "\x7f", "\u009b", "\u202e", "\u2066", "\xff"} {
		if got := RawControl("ok " + bad + " end"); got == "" || !strings.Contains(got, " at 3 in ") {
			t.Errorf("%q: %q, want it named at offset 3", bad, got)
		}
	}
	if RawControl(Hostile) == "" {
		t.Error("Hostile passes the check")
	}
}
