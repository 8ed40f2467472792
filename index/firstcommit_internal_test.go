package index

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxsel/ctxsel/internal/flock"
)

// A writer's first commit writes its segments before the manifest: an
// index opened in between, while that writer holds the lock, is being
// created, not corrupt; segments without a manifest and without a writer
// are a crash's leftovers.
func TestOpenDirDuringFirstCommit(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "seg-000001"+segSuffix), []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if busy, err := flock.TryLock(lock); err != nil || busy {
		t.Fatalf("lock: busy %v, %v", busy, err)
	}
	if _, err := OpenDir(dir, DirOptions{Create: true}); err != nil {
		t.Errorf("create while a writer commits: %v", err)
	}
	if _, err := OpenDir(dir, DirOptions{}); !errors.Is(err, ErrNotFound) || errors.Is(err, ErrCorrupt) {
		t.Errorf("open while a writer commits: %v, want not found (being created)", err)
	}
	flock.Unlock(lock)
	if _, err := OpenDir(dir, DirOptions{Create: true}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("segments, no manifest, no writer: %v, want ErrCorrupt", err)
	}
}
