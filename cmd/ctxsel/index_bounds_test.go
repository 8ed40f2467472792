package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/embed/cache"
	"github.com/ctxsel/ctxsel/embed/embedders"
	"github.com/ctxsel/ctxsel/embed/ollama"
	"github.com/ctxsel/ctxsel/index/indextest"
)

// mkfifo makes a named pipe where the system has them
// (index_fifo_unix_test.go); nil elsewhere.
var mkfifo func(path string) error

// TestIndexAddBoundedReads: what is not a regular file, a file over
// --max-file-bytes and a .jsonl.gz over --max-decompressed-bytes are each
// named in a note with the flag that raises the limit; the files beside
// them are indexed, and the run exits 3 with a summary.
func TestIndexAddBoundedReads(t *testing.T) {
	useHashEmbedder(t)
	root := t.TempDir()
	docs := filepath.Join(root, "docs")
	os.MkdirAll(docs, 0o755)
	os.WriteFile(filepath.Join(docs, "good.txt"), []byte("Mount Etna is an active volcano on Sicily."), 0o644)
	os.WriteFile(filepath.Join(docs, "big.md"), bytes.Repeat([]byte("words "), 2000), 0o644)
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(make([]byte, 8<<20))
	zw.Close()
	os.WriteFile(filepath.Join(docs, "bomb.jsonl.gz"), z.Bytes(), 0o644)
	wantNotes := []string{
		"note: skipped " + filepath.Join(docs, "big.md") + ": 11.7 KiB (12000 bytes), over the per-file limit of 10.0 KiB (10240 bytes) (raise it with --max-file-bytes)",
		"note: skipped " + filepath.Join(docs, "bomb.jsonl.gz") + ": decompresses to more than 1.0 MiB (1048576 bytes), the limit (raise it with --max-decompressed-bytes)",
	}
	if mkfifo != nil && mkfifo(filepath.Join(root, "pipe")) == nil {
		os.Symlink(filepath.Join(root, "pipe"), filepath.Join(docs, "pipe.txt"))
		wantNotes = append(wantNotes, "note: skipped "+filepath.Join(docs, "pipe.txt")+": a symlink to a named pipe (FIFO), not a regular file")
	}
	idx := filepath.Join(root, "idx")
	code, out, errs := runCLI(t, "", "index", "add", "--index", idx, "--max-file-bytes", "10240", "--max-decompressed-bytes", "1048576", docs)
	if code != 3 || !strings.Contains(out, "1 documents added") {
		t.Fatalf("exit %d:\n%s\n%s", code, out, errs)
	}
	for _, n := range wantNotes {
		if !strings.Contains(errs, n+"\n") {
			t.Errorf("no note %q in:\n%s", n, errs)
		}
	}
	if want := fmt.Sprintf("%d files could not be indexed and were skipped", len(wantNotes)); !strings.Contains(errs, want) {
		t.Errorf("no summary %q in:\n%s", want, errs)
	}
	// the default limits read them
	code, out, errs = runCLI(t, "", "index", "add", "--index", idx, filepath.Join(docs, "big.md"))
	if code != 0 || !strings.Contains(out, "1 documents added") {
		t.Fatalf("default limits: exit %d:\n%s\n%s", code, out, errs)
	}
	if code, _, errs := runCLI(t, "", "index", "add", "--index", idx, "--max-file-bytes", "0", docs); code != 2 {
		t.Errorf("--max-file-bytes 0: exit %d %s", code, errs)
	}
}

// TestIndexAddFullCacheDisk: with the embedding cache's file on a full
// disk (/dev/full: every write fails with ENOSPC), index add indexes every
// document, and the cache says once that it is bypassed.
func TestIndexAddFullCacheDisk(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	useHashEmbedder(t)
	root := t.TempDir()
	cacheDir := filepath.Join(root, "cache")
	var mu sync.Mutex
	var notes []string
	openEmbedder = func(string, string) (embed.Embedder, func() error, error) {
		s, err := cache.OpenWith(cacheDir, cache.Options{Note: func(m string) { mu.Lock(); notes = append(notes, m); mu.Unlock() }})
		if err != nil {
			return nil, nil, err
		}
		return cache.Wrap(indextest.HashEmbedder{}, s), s.Close, nil
	}
	docs := filepath.Join(root, "docs")
	os.MkdirAll(docs, 0o755)
	const n = 60
	for i := range n {
		os.WriteFile(filepath.Join(docs, fmt.Sprintf("d%02d.txt", i)), []byte(strings.Repeat(fmt.Sprintf("Document %d is about topic %d. ", i, i), 30)), 0o644)
	}
	// a first run makes the cache's file; then its disk is full
	if code, _, errs := runCLI(t, "", "index", "add", "--index", filepath.Join(root, "idx0"), filepath.Join(docs, "d00.txt")); code != 0 {
		t.Fatalf("first add: %d %s", code, errs)
	}
	files, _ := filepath.Glob(filepath.Join(cacheDir, "*.log"))
	if len(files) != 1 {
		t.Fatalf("cache files %v", files)
	}
	os.Remove(files[0])
	if err := os.Symlink("/dev/full", files[0]); err != nil {
		t.Fatal(err)
	}
	idx := filepath.Join(root, "idx")
	code, out, errs := runCLI(t, "", "index", "add", "--index", idx, "--chunker", "tokens:size=30,overlap=0", docs)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("%d documents added", n)) || !strings.Contains(out, fmt.Sprintf("index %s: %d documents", idx, n)) {
		t.Fatalf("add with a full cache disk: exit %d\n%s\n%s", code, out, errs)
	}
	bypassed := 0
	for _, m := range notes {
		if strings.Contains(m, "cannot be written") && strings.Contains(m, "no space left on device") {
			bypassed++
		}
	}
	if bypassed != 1 {
		t.Errorf("%d bypass notes, want 1: %q", bypassed, notes)
	}
	if code, o, e := runCLI(t, "", "index", "verify", "--index", idx); code != 0 {
		t.Fatalf("verify: %d %s %s", code, o, e)
	}
}

// TestUnusableCacheBypassed: an embedding cache folder that cannot be made
// (its parent is a file) leaves the embedder uncached instead of failing.
func TestUnusableCacheBypassed(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	t.Setenv(embedders.EnvCache, filepath.Join(file, "cache"))
	t.Setenv(embedders.EnvModel, "m")
	e, closeEmb, err := embedders.OpenFromEnv("ollama", "")
	if err != nil {
		t.Fatal(err)
	}
	defer closeEmb()
	if _, bare := e.(*ollama.Client); !bare {
		t.Errorf("got %T, want the embedder uncached", e)
	}
}
