package ingest_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/index/ingest"
)

// addGuarded runs Add, failing the test instead of hanging it when Add
// blocks (the bug a FIFO caused): the guard is a deadline far beyond
// what the work takes, not a timing assertion.
func addGuarded(t *testing.T, in *ingest.Ingester, paths ...string) (ingest.Report, error) {
	t.Helper()
	type result struct {
		rep ingest.Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := in.Add(ctx, paths)
		done <- result{rep, err}
	}()
	guard, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	select {
	case r := <-done:
		return r.rep, r.err
	case <-guard.Done():
		t.Fatal("index add blocked")
		return ingest.Report{}, nil
	}
}

// problemFor is the problem listed for the file named name, or fails.
func problemFor(t *testing.T, rep ingest.Report, name string) ingest.FileProblem {
	t.Helper()
	for _, p := range rep.Problems {
		if filepath.Base(p.Path) == name {
			return p
		}
	}
	t.Fatalf("no problem listed for %s: %+v", name, rep.Problems)
	return ingest.FileProblem{}
}

// gzipped compresses data.
func gzipped(t testing.TB, data []byte) []byte {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestIngestReadsOnlyRegularFiles: symlinks to a device and to a FIFO, and
// a FIFO itself, are skipped with a note naming what they are, without
// being read or waited on; the good files beside them are indexed.
func TestIngestReadsOnlyRegularFiles(t *testing.T) {
	if ingest.Mkfifo == nil {
		t.Skip("no FIFOs")
	}
	root := t.TempDir()
	src := filepath.Join(root, "src")
	writeFiles(t, src, map[string]string{"a.txt": "alpha words here", "z.md": "zulu words there"})
	fifo := filepath.Join(root, "pipe")
	if err := ingest.Mkfifo(fifo); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := ingest.Mkfifo(filepath.Join(src, "fifo.jsonl")); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{"fifo-link.txt": fifo}
	if _, err := os.Stat("/dev/zero"); err == nil {
		links["zero.txt"] = "/dev/zero"
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(src, name)); err != nil {
			t.Fatal(err)
		}
	}
	s, _ := index.OpenDir(filepath.Join(root, "idx"), index.DirOptions{Create: true})
	defer s.Close()
	rep, err := addGuarded(t, newIngester(t, s, nil), src)
	if err != nil {
		t.Fatal(err)
	}
	if ids := listIDs(t, s); len(ids) != 2 {
		t.Fatalf("indexed %q, want a.txt and z.md", ids)
	}
	want := map[string]string{
		"fifo.jsonl":    "a named pipe (FIFO), not a regular file",
		"fifo-link.txt": "a symlink to a named pipe (FIFO), not a regular file",
		"zero.txt":      "a symlink to a character device, not a regular file",
	}
	if len(rep.Problems) != len(links)+1 {
		t.Fatalf("problems %+v", rep.Problems)
	}
	for _, p := range rep.Problems {
		if w := want[filepath.Base(p.Path)]; p.Reason != w {
			t.Errorf("%s: reason %q, want %q", p.Path, p.Reason, w)
		}
	}

	// named on the command line, a link to a device is a note too, not an error
	if _, ok := links["zero.txt"]; ok {
		rep, err := addGuarded(t, newIngester(t, s, nil), filepath.Join(src, "zero.txt"), filepath.Join(src, "a.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if p := problemFor(t, rep, "zero.txt"); p.Reason != want["zero.txt"] {
			t.Errorf("named link to /dev/zero: %+v", p)
		}
	}
}

// TestIngestFileSizeLimit: a file over the per-file limit is skipped
// without being read (a 4 GiB sparse file costs nothing), names the limit,
// and the files beside it are indexed; at the limit a file is read.
func TestIngestFileSizeLimit(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "src")
	writeFiles(t, src, map[string]string{"a.txt": "alpha words here", "at-limit.txt": strings.Repeat("x", 1000)})
	huge := filepath.Join(src, "huge.txt")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(4 << 30); err != nil { // sparse: no disk used
		t.Skipf("sparse file: %v", err)
	}
	f.Close()
	writeFiles(t, src, map[string]string{"over.jsonl": `{"id":"o","text":"` + strings.Repeat("y", 1000) + `"}`})

	s, _ := index.OpenDir(filepath.Join(root, "idx"), index.DirOptions{Create: true})
	defer s.Close()
	in := newIngester(t, s, nil)
	rep, err := addGuarded(t, in, src) // default limits
	if err != nil {
		t.Fatal(err)
	}
	p := problemFor(t, rep, "huge.txt")
	if p.Limit != ingest.LimitFile || !strings.Contains(p.Reason, "4.0 GiB") || !strings.Contains(p.Reason, "256.0 MiB") {
		t.Errorf("huge.txt: %+v", p)
	}
	if len(rep.Problems) != 1 {
		t.Errorf("problems %+v", rep.Problems)
	}
	if ids := listIDs(t, s); len(ids) != 3 {
		t.Fatalf("indexed %q, want a.txt, at-limit.txt and o", ids)
	}

	// a lower limit: at it a file is read, one byte over it is skipped
	s2, _ := index.OpenDir(filepath.Join(root, "idx2"), index.DirOptions{Create: true})
	defer s2.Close()
	in = newIngester(t, s2, nil)
	in.Limits.File = 1000
	rep, err = addGuarded(t, in, src)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"huge.txt", "over.jsonl"} {
		if p := problemFor(t, rep, name); p.Limit != ingest.LimitFile {
			t.Errorf("%s: %+v", name, p)
		}
	}
	if ids := listIDs(t, s2); len(ids) != 2 {
		t.Fatalf("indexed %q, want a.txt and at-limit.txt", ids)
	}
}

// TestIngestDecompressedLimit: a small .jsonl.gz that decompresses past the
// limit (a gzip bomb) is skipped, naming the limit, after reading no more
// than the limit; one just within it is read; the files beside are indexed.
func TestIngestDecompressedLimit(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "src")
	writeFiles(t, src, map[string]string{"a.txt": "alpha words here"})
	const limit = 1 << 20
	good := []byte(`{"id":"g","text":"` + strings.Repeat("w ", (limit-40)/2) + `"}` + "\n")
	if len(good) > limit {
		t.Fatal("good record too long")
	}
	bombs := map[string][]byte{
		"zeros.jsonl.gz": make([]byte, 64<<20),                                      // one line of NULs, no newline
		"lines.jsonl.gz": bytes.Repeat([]byte(`{"question":"q?"}`+"\n"), 64<<20/18), // many short valid lines
		"tail.jsonl.gz":  append(append([]byte{}, good...), `{"id":"h","text":"past the limit"}`+"\n"...),
	}
	for name, data := range bombs {
		z := gzipped(t, data)
		if len(z) > 1<<20 {
			t.Fatalf("%s: %d bytes compressed, not a bomb", name, len(z))
		}
		if err := os.WriteFile(filepath.Join(src, name), z, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(src, "good.jsonl.gz"), gzipped(t, good), 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ := index.OpenDir(filepath.Join(root, "idx"), index.DirOptions{Create: true})
	defer s.Close()
	in := newIngester(t, s, nil)
	in.Limits.Decompressed = limit
	rep, err := addGuarded(t, in, src)
	if err != nil {
		t.Fatal(err)
	}
	for name := range bombs {
		p := problemFor(t, rep, name)
		if p.Limit != ingest.LimitDecompressed || p.Reason != "decompresses to more than 1.0 MiB (1048576 bytes), the limit" {
			t.Errorf("%s: %+v", name, p)
		}
	}
	if len(rep.Problems) != len(bombs) {
		t.Errorf("problems %+v", rep.Problems)
	}
	if ids := listIDs(t, s); len(ids) != 2 {
		t.Fatalf("indexed %q, want a.txt and g", ids)
	}
}

// TestReadFileWithin: the exported reader keeps the same bounds.
func TestReadFileWithin(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"a.txt": "twelve bytes"})
	f := ingest.SourceFile{Path: filepath.Join(root, "a.txt"), ID: "a.txt"}
	if docs, err := ingest.ReadFileWithin(f, ingest.Limits{File: 12}); err != nil || len(docs) != 1 || docs[0].Text != "twelve bytes" {
		t.Fatalf("at the limit: %v %v", docs, err)
	}
	_, err := ingest.ReadFileWithin(f, ingest.Limits{File: 11})
	var le *ingest.LimitError
	if !errors.As(err, &le) || le.Limit != ingest.LimitFile || le.Size != 12 || le.Max != 11 {
		t.Fatalf("over the limit: %v", err)
	}
}

// TestIngestSymlinkedFolder: a folder named through a symlink is walked
// (it used to be counted as one file of an unsupported type), its
// documents named by the path as given.
func TestIngestSymlinkedFolder(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"real/a.txt": "alpha words here", "real/sub/b.md": "beta words there"})
	if err := os.Symlink("real", filepath.Join(root, "link")); err != nil {
		t.Skipf("symlink: %v", err)
	}
	t.Chdir(root)
	s, _ := index.OpenDir(filepath.Join(root, "idx"), index.DirOptions{Create: true})
	defer s.Close()
	rep, err := addGuarded(t, newIngester(t, s, nil), "link")
	if err != nil || len(rep.Problems) != 0 || len(rep.Notices) != 0 {
		t.Fatalf("%v %+v", err, rep)
	}
	if ids := listIDs(t, s); strings.Join(ids, " ") != "link/a.txt link/sub/b.md" {
		t.Fatalf("indexed %q", ids)
	}
}
