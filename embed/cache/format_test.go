package cache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ctxsel/ctxsel/internal/recordlog"
)

// headerLen and recordSize are the layout's sizes (format.go), as the tests
// cut and damage files by offset.
func headerLen(n ns) int { return len(fileMagic) + 1 + 4 + len(n.id) + 4 }
func recordSize(dim int) int {
	return 4 + recordlog.KeySize + 4 + 4*dim + 4
}

func TestVectorPayload(t *testing.T) {
	vec := []float32{0, -1.5, 3.25, math.MaxFloat32, math.SmallestNonzeroFloat32}
	p := encodeVector(vec)
	if !validVector(p) || !slices.Equal(decodeVector(p, nil), vec) {
		t.Fatalf("round trip: %v", decodeVector(p, nil))
	}
	for name, bad := range map[string][]byte{
		"empty":   nil,
		"partial": p[:7],
		"NaN":     encodeVector([]float32{1, float32(math.NaN())}),
		"Inf":     encodeVector([]float32{float32(math.Inf(-1))}),
		"too big": make([]byte, 4*(maxDim+1)),
	} {
		if validVector(bad) {
			t.Errorf("%s: accepted", name)
		}
	}
	if (ns{kindPassage, "a"}).fileName() == (ns{kindQuery, "a"}).fileName() {
		t.Fatal("passage and query files collide")
	}
}

// TestTodaysFilesRead: files written by the cache before it moved onto
// internal/recordlog (testdata/today, written by that code: model
// "fixture-model", dimension 4, passages alpha, beta, gamma and the query
// "what is alpha") are read as they are: every vector served, none
// recomputed, and appending keeps the file in its format, whole.
func TestTodaysFilesRead(t *testing.T) {
	dir := t.TempDir()
	fixtures, _ := filepath.Glob(filepath.Join("testdata", "today", "*"+fileExt))
	if len(fixtures) != 2 {
		t.Fatalf("fixtures %v", fixtures)
	}
	before := map[string][]byte{}
	for _, f := range fixtures {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.Base(f))
		before[p] = b
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var notes []string
	s, err := OpenWith(dir, Options{FailOnCorrupt: true, Note: func(m string) { notes = append(notes, m) }})
	if err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Models != 2 || st.Vectors != 4 || len(notes) != 0 {
		t.Fatalf("stats %+v, notes %q", st, notes)
	}
	want := func(text string, salt float32) []float32 { // the fixture writer's vectors
		v := make([]float32, 4)
		for i := range v {
			v[i] = float32(len(text)) + float32(i)*0.25 + salt
		}
		return v
	}
	f := &queryFake{fake{id: "fixture-model", dim: 4}}
	e := Wrap(f, s)
	ctx := context.Background()
	texts := []string{"alpha", "beta", "gamma"}
	got, err := e.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, tx := range texts {
		if !slices.Equal(got[i], want(tx, 0)) {
			t.Fatalf("%q: %v, want the stored %v", tx, got[i], want(tx, 0))
		}
	}
	q, err := e.(*cached).EmbedQuery(ctx, []string{"what is alpha"})
	if err != nil || !slices.Equal(q[0], want("what is alpha", -0.5)) {
		t.Fatalf("query: %v, %v", q, err)
	}
	if f.calls.Load() != 0 {
		t.Fatalf("%d texts recomputed, want none", f.calls.Load())
	}
	// A new vector is appended after the old bytes, in the same format.
	if _, err := e.Embed(ctx, []string{"delta"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	grown := 0
	for p, b := range before {
		now, _ := os.ReadFile(p)
		if !bytes.HasPrefix(now, b) {
			t.Fatalf("%s: the old bytes were rewritten", p)
		}
		if len(now) > len(b) {
			grown++
			if len(now)-len(b) != recordSize(4) {
				t.Fatalf("%s grew by %d bytes, want one record of %d", p, len(now)-len(b), recordSize(4))
			}
		}
	}
	s2, err := OpenWith(dir, Options{FailOnCorrupt: true})
	if err != nil || grown != 1 || s2.Stats().Vectors != 5 {
		t.Fatalf("reopen: %v, %d files grew, %+v", err, grown, s2.Stats())
	}
	s2.Close()
}

// FuzzCacheFile: any bytes in a cache file open without panicking, never
// yield a vector the cache did not store, and once opened (and repaired)
// the directory reopens cleanly.
func FuzzCacheFile(f *testing.F) {
	n := ns{kindPassage, "m"}
	fm := formatOf(kindPassage)
	good := []byte(fm.Magic)
	good = append(good, 1, 0, 0, 0, 'm')
	good = append(good, crcOf(good)...)
	rec := func(k byte, v []float32) []byte {
		r := []byte{0xD3, 0xA5, 0xE1, 0xC7}
		kk := sha256.Sum256([]byte{k})
		r = append(r, kk[:]...)
		r = append(r, byte(len(v)), 0, 0, 0)
		r = append(r, encodeVector(v)...)
		return append(r, crcOf(r)...)
	}
	whole := append(append(slices.Clone(good), rec(1, []float32{1, 2, 3})...), rec(2, []float32{4, 5, 6})...)
	f.Add(whole)
	f.Add(whole[:len(whole)-5])
	f.Add(append(slices.Clone(good), rec(1, []float32{1, 2})...))
	f.Add(append(slices.Clone(whole), rec(3, []float32{7})...))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, n.fileName()), data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := OpenWith(dir, Options{Note: func(string) {}})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		s.mu.RLock()
		for _, m := range s.models {
			for _, v := range m.vecs {
				if len(v) != m.dim || !validVector(encodeVector(v)) {
					t.Fatalf("vector %v in a file of dimension %d", v, m.dim)
				}
			}
		}
		s.mu.RUnlock()
		vectors := s.Stats().Vectors
		s.Close()
		s, err = OpenWith(dir, Options{FailOnCorrupt: true})
		if err != nil {
			t.Fatalf("reopen after repair: %v", err)
		}
		defer s.Close()
		if st := s.Stats(); st.RecoveredBytes != 0 || st.Vectors != vectors {
			t.Fatalf("second open: %+v, first held %d vectors", st, vectors)
		}
	})
}

func crcOf(b []byte) []byte {
	c := crc32c(b)
	return []byte{byte(c), byte(c >> 8), byte(c >> 16), byte(c >> 24)}
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }
