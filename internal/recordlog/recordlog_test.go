package recordlog

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func rec(i int) Record {
	return Record{Key: sha256.Sum256([]byte(strconv.Itoa(i))), Payload: []byte(strings.Repeat(fmt.Sprint(i), i%7+1))}
}

// collect opens path and returns the records it delivers, keyed.
func collect(t *testing.T, path string, opts Options) (*Log, map[Key]string) {
	t.Helper()
	got := map[Key]string{}
	var mu sync.Mutex
	l, err := Open(path, "test-id", opts, func(r Record) { mu.Lock(); got[r.Key] = string(r.Payload); mu.Unlock() })
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l, got
}

func writeN(t *testing.T, path string, n int) (offsets []int64) {
	t.Helper()
	l, got := collect(t, path, Options{})
	for i := 0; i < n; i++ {
		fi, err := os.Stat(path)
		if err == nil {
			offsets = append(offsets, fi.Size())
		} else {
			offsets = append(offsets, int64(len(native.encodeHeader("test-id"))))
		}
		if w, err := l.Append([]Record{rec(i)}, func(k Key) bool { _, ok := got[k]; return ok }); err != nil || w != 1 {
			t.Fatalf("Append %d: %d, %v", i, w, err)
		}
	}
	l.Close()
	return offsets
}

func TestRoundTripAndSkip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "x.log")
	writeN(t, path, 5)
	l, got := collect(t, path, Options{})
	if len(got) != 5 || got[rec(3).Key] != string(rec(3).Payload) {
		t.Fatalf("reloaded %d records: %v", len(got), got)
	}
	has := func(k Key) bool { _, ok := got[k]; return ok }
	if w, err := l.Append([]Record{rec(1), rec(9), rec(9)}, has); err != nil || w != 1 {
		t.Fatalf("Append = %d, %v; want only rec 9 once", w, err)
	}
	if s := l.Stats(); s.Skipped != 2 {
		t.Fatalf("skipped %d, want 2", s.Skipped)
	}
}

func TestTornTailEveryOffset(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.log")
	offsets := writeN(t, src, 4)
	full, _ := os.ReadFile(src)
	for cut := 0; cut < len(full); cut++ {
		path := filepath.Join(dir, fmt.Sprintf("cut%d.log", cut))
		if err := os.WriteFile(path, full[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		l, got := collect(t, path, Options{FailOnCorrupt: true})
		want := 0 // records wholly before the cut
		for i := range offsets {
			end := int64(len(full))
			if i+1 < len(offsets) {
				end = offsets[i+1]
			}
			if end <= int64(cut) {
				want++
			}
		}
		if len(got) != want {
			t.Fatalf("cut %d: %d records, want %d", cut, len(got), want)
		}
		if fi, _ := os.Stat(path); cut > 0 && fi.Size() > int64(cut) {
			t.Fatalf("cut %d: file grew", cut)
		}
		// Appending after recovery yields a clean file.
		if _, err := l.Append([]Record{rec(100)}, nil); err != nil {
			t.Fatalf("cut %d: append: %v", cut, err)
		}
		l.Close()
		_, again := collect(t, path, Options{FailOnCorrupt: true})
		if len(again) != want+1 {
			t.Fatalf("cut %d: after append %d records, want %d", cut, len(again), want+1)
		}
	}
}

func TestMiddleCorruptionQuarantinedAndRebuilt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.log")
	offsets := writeN(t, path, 5)
	b, _ := os.ReadFile(path)
	b[offsets[2]+recHeadSize] ^= 0xFF // damage record 2's payload
	os.WriteFile(path, b, 0o644)

	if _, err := Open(path, "test-id", Options{FailOnCorrupt: true}, func(Record) {}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("FailOnCorrupt: err = %v, want ErrCorrupt", err)
	}
	var notes []string
	l, got := collect(t, path, Options{Note: func(m string) { notes = append(notes, m) }})
	if len(got) != 4 {
		t.Fatalf("salvaged %d records, want 4", len(got))
	}
	if _, ok := got[rec(2).Key]; ok {
		t.Fatal("damaged record delivered")
	}
	s := l.Stats()
	if len(s.Quarantined) != 1 || len(notes) != 1 || !strings.Contains(notes[0], "rebuilt") {
		t.Fatalf("quarantined %v, notes %v", s.Quarantined, notes)
	}
	if _, err := os.Stat(s.Quarantined[0]); err != nil {
		t.Fatalf("quarantined file: %v", err)
	}
	l.Close()
	_, again := collect(t, path, Options{FailOnCorrupt: true})
	if len(again) != 4 {
		t.Fatalf("rebuilt file holds %d records, want 4", len(again))
	}
}

func TestOtherIDQuarantined(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	writeN(t, path, 2)
	var got int
	l, err := Open(path, "another-id", Options{Note: func(string) {}}, func(Record) { got++ })
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if got != 0 || len(l.Stats().Quarantined) != 1 {
		t.Fatalf("records %d, quarantined %v", got, l.Stats().Quarantined)
	}
}

// TestHelperWriter is run as a child process by TestProcessesDoNotDuplicate.
func TestHelperWriter(t *testing.T) {
	path := os.Getenv("RECORDLOG_HELPER_PATH")
	if path == "" {
		t.Skip("helper process")
	}
	got := map[Key]bool{}
	l, err := Open(path, "test-id", Options{}, func(r Record) { got[r.Key] = true })
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := 0; i < 60; i++ { // every process writes the same 60 records
		if _, err := l.Append([]Record{rec(i)}, func(k Key) bool { return got[k] }); err != nil {
			t.Fatal(err)
		}
	}
}

func TestProcessesDoNotDuplicate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for p := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$")
			cmd.Env = append(os.Environ(), "RECORDLOG_HELPER_PATH="+path)
			out, err := cmd.CombinedOutput()
			if err != nil {
				errs[p] = fmt.Errorf("%v: %s", err, out)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	want := int64(len(native.encodeHeader("test-id")))
	for i := 0; i < 60; i++ {
		want += int64(len(native.appendRecord(nil, rec(i))))
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != want {
		t.Fatalf("file is %d bytes, want exactly %d (no duplicates)", fi.Size(), want)
	}
	_, got := collect(t, path, Options{FailOnCorrupt: true})
	if len(got) != 60 {
		t.Fatalf("%d records", len(got))
	}
}

// FuzzOpen: any file content opens without panicking, and once opened (and
// repaired) the file reopens cleanly holding the same records.
func FuzzOpen(f *testing.F) {
	good := native.encodeHeader("test-id")
	for i := 0; i < 3; i++ {
		good = native.appendRecord(good, rec(i))
	}
	f.Add(good)
	f.Add(good[:len(good)-3])
	f.Add([]byte("ctxselRL\x00\x00"))
	bad := append([]byte(nil), good...)
	bad[len(native.encodeHeader("test-id"))+5] ^= 1
	f.Add(bad)
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "x.log")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		n1 := 0
		l, err := Open(path, "test-id", Options{Note: func(string) {}}, func(Record) { n1++ })
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		l.Close()
		n2 := 0
		l, err = Open(path, "test-id", Options{FailOnCorrupt: true}, func(Record) { n2++ })
		if err != nil {
			t.Fatalf("reopen after repair: %v", err)
		}
		defer l.Close()
		if s := l.Stats(); s.RecoveredBytes != 0 || n1 != n2 {
			t.Fatalf("second open repaired %d bytes; records %d then %d", s.RecoveredBytes, n1, n2)
		}
	})
}

// A file overwritten with garbage is not a torn write: it is moved aside
// whole (noted once), not truncated to nothing.
func TestGarbageFileQuarantined(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.log")
	garbage := []byte(strings.Repeat("not a record log at all ", 100))
	os.WriteFile(path, garbage, 0o644)
	if _, err := Open(path, "test-id", Options{FailOnCorrupt: true}, nil); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("FailOnCorrupt: %v", err)
	}
	var notes []string
	l, got := collect(t, path, Options{Note: func(m string) { notes = append(notes, m) }})
	s := l.Stats()
	if len(got) != 0 || len(notes) != 1 || len(s.Quarantined) != 1 {
		t.Fatalf("records %d, notes %q, quarantined %v", len(got), notes, s.Quarantined)
	}
	if b, err := os.ReadFile(s.Quarantined[0]); err != nil || string(b) != string(garbage) {
		t.Fatalf("the quarantined copy does not hold the file: %v", err)
	}
	l.Close()
	notes = nil
	collect(t, path, Options{Note: func(m string) { notes = append(notes, m) }})
	if len(notes) != 0 {
		t.Fatalf("noted again on reopening: %q", notes)
	}
}

// Damage to the last record looks like a torn tail: it is cut, but said
// once, with a copy of what was cut.
func TestDamagedLastRecordCutWithCopy(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.log")
	offsets := writeN(t, path, 3)
	b, _ := os.ReadFile(path)
	b[offsets[2]+recHeadSize] ^= 0xFF
	os.WriteFile(path, b, 0o644)
	var notes []string
	l, got := collect(t, path, Options{Note: func(m string) { notes = append(notes, m) }, FailOnCorrupt: true})
	s := l.Stats()
	if len(got) != 2 || len(notes) != 1 || !strings.Contains(notes[0], "cut") || len(s.Quarantined) != 1 {
		t.Fatalf("records %d, notes %q, quarantined %v", len(got), notes, s.Quarantined)
	}
	if cut, err := os.ReadFile(s.Quarantined[0]); err != nil || string(cut) != string(b[offsets[2]:]) {
		t.Fatalf("the copy does not hold the cut bytes: %v", err)
	}
	l.Close()
	notes = nil
	collect(t, path, Options{Note: func(m string) { notes = append(notes, m) }})
	if len(notes) != 0 {
		t.Fatalf("noted again on reopening: %q", notes)
	}
	// A torn header (an interrupted first append) is cut and noted too.
	torn := filepath.Join(dir, "torn.log")
	os.WriteFile(torn, native.encodeHeader("test-id")[:5], 0o644)
	notes = nil
	if l, got := collect(t, torn, Options{Note: func(m string) { notes = append(notes, m) }, FailOnCorrupt: true}); len(got) != 0 || len(notes) != 1 || len(l.Stats().Quarantined) != 1 {
		t.Fatalf("torn header: notes %q", notes)
	}
}

// native is recordlog's own format, as the tests write it.
var native = Format{}.resolved()
