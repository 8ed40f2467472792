package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.json")
	if err := Write(path, func(w io.Writer) error { _, err := io.WriteString(w, "old"); return err }); err != nil {
		t.Fatal(err)
	}
	// A failing writer leaves the old content and no temporary file.
	boom := errors.New("boom")
	err := Write(path, func(w io.Writer) error { io.WriteString(w, "half"); return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	b, _ := os.ReadFile(path)
	st, _ := os.Stat(path)
	entries, _ := os.ReadDir(dir)
	if string(b) != "old" || st.Mode().Perm() != 0o644 || len(entries) != 1 {
		t.Fatalf("content %q, mode %v, %d entries", b, st.Mode().Perm(), len(entries))
	}
	if err := Write(filepath.Join(dir, "missing", "x"), func(io.Writer) error { return nil }); err == nil {
		t.Fatal("no error for a missing directory")
	}
}

func TestWriteNew(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "seg")
	if err := WriteNew(path, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := WriteNew(path, []byte("two")); !errors.Is(err, os.ErrExist) {
		t.Fatalf("second WriteNew: %v, want ErrExist", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "one" {
		t.Fatalf("content %q: an existing file was touched", b)
	}
	if err := SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	if err := SyncDir(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("no error for a missing directory")
	}
}

func TestIsTemp(t *testing.T) {
	for name, want := range map[string]bool{".MANIFEST.123": true, ".MANIFEST.": false, "MANIFEST": false, ".MANIFESTX.1": false} {
		if got := IsTemp(name, "MANIFEST"); got != want {
			t.Errorf("IsTemp(%q) = %v", name, got)
		}
	}
}
