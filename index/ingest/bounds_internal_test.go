package ingest

import (
	"bytes"
	"compress/gzip"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// Mkfifo makes a named pipe where the system has them (fifo_unix_test.go),
// for this package's tests and ingest_test's; nil elsewhere.
var Mkfifo func(path string) error

// TestReadRegularFIFO: a FIFO swapped in for a file after Walk looked is
// refused at open, without waiting for a writer (a blocking open would
// hang this test, not fail it; go test's -timeout ends it).
func TestReadRegularFIFO(t *testing.T) {
	if Mkfifo == nil {
		t.Skip("no FIFOs")
	}
	p := filepath.Join(t.TempDir(), "a.txt")
	if err := Mkfifo(p); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	_, err := readRegular(p, 1<<20)
	var nr *notRegularError
	if !errors.As(err, &nr) || nr.link || nr.Error() != "a named pipe (FIFO), not a regular file" {
		t.Fatalf("got %v", err)
	}
}

// TestReadRegularGrows: a file longer than its size when opened is cut
// at the limit, not read on.
func TestReadRegularGrows(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.txt")
	if err := os.WriteFile(p, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := readRegular(p, 10); err != nil || string(b) != "0123456789" {
		t.Fatalf("at the limit: %q %v", b, err)
	}
	_, err := readRegular(p, 9)
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitFile || le.Size != 10 {
		t.Fatalf("over the limit: %v", err)
	}
}

// TestNoLimitLimit: the largest limit a flag can give reads normally.
func TestNoLimitLimit(t *testing.T) {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(`{"id":"a","text":"x"}`))
	zw.Close()
	lim := Limits{File: math.MaxInt64, Decompressed: math.MaxInt64}
	if docs, err := parse(SourceFile{Path: "f.jsonl.gz"}, b.Bytes(), lim); err != nil || len(docs) != 1 {
		t.Fatalf("%v %v", docs, err)
	}
}

// FuzzParseJSONLGz: a .jsonl.gz gives exactly the documents of its
// decompressed .jsonl when that fits the limit, and no documents when it
// does not; never a panic.
func FuzzParseJSONLGz(f *testing.F) {
	f.Add([]byte(`{"id":"a","text":"x"}`+"\n"+`{"id":2,"text":"y"}`), int64(64))
	f.Add([]byte(`{"id":"a","text":"x"}`), int64(5))
	f.Add(make([]byte, 4096), int64(100))
	f.Add([]byte(`{"id":"q","passages":[{"id":"p","text":"t"}]}`+"\n\n"), int64(1))
	f.Fuzz(func(t *testing.T, data []byte, limit int64) {
		if limit <= 0 || limit > 1<<20 {
			return
		}
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(data)
		zw.Close()
		lim := Limits{File: 1 << 30, Decompressed: limit}
		got, err := parse(SourceFile{Path: "f.jsonl.gz", ID: "f.jsonl.gz"}, b.Bytes(), lim)
		want, werr := parse(SourceFile{Path: "f.jsonl", ID: "f.jsonl"}, data, lim)
		var le *LimitError
		if int64(len(data)) > limit {
			// the limit, or a fault in the lines before it (which the
			// plain file has too)
			if errors.As(err, &le) {
				if le.Limit != LimitDecompressed || le.Max != limit {
					t.Fatalf("%d bytes over a limit of %d: %v", len(data), limit, err)
				}
			} else if err == nil || werr == nil {
				t.Fatalf("%d bytes over a limit of %d: %v", len(data), limit, err)
			}
			return
		}
		if errors.As(err, &le) {
			t.Fatalf("%d bytes within a limit of %d: %v", len(data), limit, err)
		}
		if (err == nil) != (werr == nil) || !reflect.DeepEqual(got, want) {
			t.Fatalf("gzipped: %v %v; plain: %v %v", got, err, want, werr)
		}
	})
}
