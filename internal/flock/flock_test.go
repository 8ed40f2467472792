package flock

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Two files opened on one path exclude each other, as two processes do.
func TestTwoFilesExclude(t *testing.T) {
	switch runtime.GOOS {
	case "linux", "darwin", "freebsd", "netbsd", "openbsd", "dragonfly":
	default:
		t.Skip("no flock(2) here")
	}
	path := filepath.Join(t.TempDir(), "LOCK")
	open := func() *os.File {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	a, b := open(), open()
	if err := Lock(a); err != nil {
		t.Fatal(err)
	}
	if busy, err := TryLock(b); err != nil || !busy {
		t.Fatalf("second holder: busy %v, err %v; want busy", busy, err)
	}
	if err := Unlock(a); err != nil {
		t.Fatal(err)
	}
	if busy, err := TryLock(b); err != nil || busy {
		t.Fatalf("after unlock: busy %v, err %v", busy, err)
	}
	if err := Unlock(b); err != nil {
		t.Fatal(err)
	}
}
