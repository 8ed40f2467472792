package cache

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// noteRecorder collects a store's notes.
type noteRecorder struct {
	mu    sync.Mutex
	notes []string
}

func (r *noteRecorder) note(msg string) {
	r.mu.Lock()
	r.notes = append(r.notes, msg)
	r.mu.Unlock()
}

func (r *noteRecorder) bypassNotes() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, m := range r.notes {
		if strings.Contains(m, "cannot be written") {
			n++
		}
	}
	return n
}

// TestFullDiskBypassed: with the cache's file on a full disk (/dev/full:
// every write fails with ENOSPC), every call still answers with the
// embedder's vectors; the failure is noted once and writing stops.
func TestFullDiskBypassed(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	dir := t.TempDir()
	f := &fake{id: "m", dim: 8}
	s := mustOpen(t, dir)
	if _, err := Wrap(f, s).Embed(context.Background(), []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	files := logFiles(t, dir)
	if len(files) != 1 {
		t.Fatalf("cache files %v", files)
	}
	os.Remove(files[0])
	if err := os.Symlink("/dev/full", files[0]); err != nil {
		t.Fatal(err)
	}

	var rec noteRecorder
	s, err := OpenWith(dir, Options{Note: rec.note})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	e := Wrap(f, s)
	for _, texts := range [][]string{{"a", "c", "d"}, {"e"}, {"c", "f"}} {
		got, err := e.Embed(context.Background(), texts)
		if err != nil {
			t.Fatalf("embed %q on a full disk: %v", texts, err)
		}
		checkVecs(t, "m", texts, got)
	}
	if n := rec.bypassNotes(); n != 1 {
		t.Errorf("%d notes of the bypass, want 1: %q", n, rec.notes)
	}
	if werr := s.Stats().WriteError; !errors.Is(werr, syscall.ENOSPC) {
		t.Errorf("WriteError %v, want ENOSPC", werr)
	}
	// what it embedded meanwhile stays in memory: asked again, not recomputed
	calls := f.calls.Load()
	if _, err := e.Embed(context.Background(), []string{"c", "e"}); err != nil || f.calls.Load() != calls {
		t.Errorf("in-memory vectors not answered: %v, %d calls", err, f.calls.Load()-calls)
	}
}

// TestVanishedDirBypassed: a cache directory replaced by a file under a
// running store (no file for a new model can be made) is bypassed with
// one note, for passages and queries alike.
func TestVanishedDirBypassed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	var rec noteRecorder
	s, err := OpenWith(dir, Options{Note: rec.note})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	os.RemoveAll(dir)
	if err := os.WriteFile(dir, []byte("not a folder"), 0o644); err != nil {
		t.Fatal(err)
	}
	q := &queryFake{fake{id: "q", dim: 4}}
	e := Wrap(q, s).(*cached)
	if got, err := e.Embed(context.Background(), []string{"x", "y"}); err != nil {
		t.Fatal(err)
	} else {
		checkVecs(t, "q", []string{"x", "y"}, got)
	}
	if got, err := e.EmbedQuery(context.Background(), []string{"x"}); err != nil || len(got) != 1 {
		t.Fatalf("query: %v %v", got, err)
	}
	if n := rec.bypassNotes(); n != 1 {
		t.Errorf("%d notes of the bypass, want 1: %q", n, rec.notes)
	}
	if s.Stats().WriteError == nil {
		t.Error("no WriteError")
	}
}
