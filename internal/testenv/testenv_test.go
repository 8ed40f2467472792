package testenv

import "testing"

func TestInCI(t *testing.T) {
	for v, want := range map[string]bool{
		"": false, "false": false, "0": false, "FALSE": false,
		"true": true, "1": true, "yes": true, "on": true, "github-actions": true, "TRUE": true,
	} {
		t.Setenv("CI", v)
		if got := InCI(); got != want {
			t.Errorf("CI=%q: InCI() = %v, want %v", v, got, want)
		}
	}
}
