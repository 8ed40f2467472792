package recordlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// floats is a format like embed/cache's: a longer magic, its own record
// magic, lengths counted in 4-byte units.
var floats = Format{Magic: "ctxselV1P", RecordMagic: 0xC7E1A5D3, LenUnit: 4}

// A log in another format writes exactly that layout and reads it back.
func TestFormatLayout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.log")
	got := map[Key]string{}
	l, err := Open(path, "model", Options{Format: floats}, func(r Record) { got[r.Key] = string(r.Payload) })
	if err != nil {
		t.Fatal(err)
	}
	payload := []byte("abcdefgh") // two units
	if _, err := l.Append([]Record{{Key: Key{7}, Payload: payload}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append([]Record{{Key: Key{8}, Payload: []byte("odd")}}, nil); err == nil {
		t.Fatal("a payload that is not whole units was accepted")
	}
	l.Close()
	b, _ := os.ReadFile(path)
	hdr := len("ctxselV1P") + 4 + len("model") + 4
	if string(b[:9]) != "ctxselV1P" || binary.LittleEndian.Uint32(b[9:]) != 5 || string(b[13:18]) != "model" {
		t.Fatalf("header %q", b[:hdr])
	}
	rec := b[hdr:]
	if len(rec) != recHeadSize+len(payload)+crcSize || binary.LittleEndian.Uint32(rec) != 0xC7E1A5D3 || binary.LittleEndian.Uint32(rec[4+KeySize:]) != 2 {
		t.Fatalf("record %x", rec)
	}
	// Read back in its format, and not in recordlog's own.
	got = map[Key]string{}
	l, err = Open(path, "model", Options{Format: floats, FailOnCorrupt: true}, func(r Record) { got[r.Key] = string(r.Payload) })
	if err != nil || got[Key{7}] != string(payload) {
		t.Fatalf("reopened: %v, %q", err, got)
	}
	l.Close()
	if _, err := Open(path, "model", Options{FailOnCorrupt: true}, nil); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("read in the wrong format: %v, want ErrCorrupt", err)
	}
}

// A new file is no damage: no note, no copy.
func TestNewFileQuiet(t *testing.T) {
	dir := t.TempDir()
	var notes []string
	l, err := Open(filepath.Join(dir, "x.log"), "id", Options{Note: func(m string) { notes = append(notes, m) }}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Append([]Record{rec(1)}, nil); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(notes) != 0 || len(ents) != 2 || len(l.Stats().Quarantined) != 0 {
		t.Fatalf("notes %q, %d files", notes, len(ents))
	}
}

// Spaced-out fsyncs still write every append at once (another reader sees
// it), and Close syncs the rest.
func TestSyncEverySharedLock(t *testing.T) {
	dir := t.TempDir()
	lock := filepath.Join(dir, "LOCK")
	a, _ := Open(filepath.Join(dir, "a.log"), "a", Options{SyncEvery: -1, LockPath: lock}, nil)
	b, _ := Open(filepath.Join(dir, "b.log"), "b", Options{SyncEvery: 100, LockPath: lock}, nil)
	for i := range 5 {
		if _, err := a.Append([]Record{rec(i)}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Append([]Record{rec(i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	r, err := Open(filepath.Join(dir, "a.log"), "a", Options{LockPath: lock, FailOnCorrupt: true}, func(Record) { n++ })
	if err != nil || n != 5 {
		t.Fatalf("another reader: %d records, %v", n, err)
	}
	r.Close()
	if err := a.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(a.Close(), b.Close()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.log.lock")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a lock file of its own beside the shared one")
	}
	if err := a.Sync(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Sync after Close: %v", err)
	}
}

func TestIdentify(t *testing.T) {
	formats := []Format{{}, floats}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fl := floats.resolved()
	whole := fl.appendRecord(fl.encodeHeader("m-id"), Record{Key: Key{1}, Payload: []byte("1234")})
	quiet := Options{Note: func(string) {}}

	if id, _, err := Identify(write("ok.log", whole), formats, quiet); err != nil || id == nil || *id != (Identity{Format: 1, ID: "m-id"}) {
		t.Fatalf("identify: %+v, %v", id, err)
	}
	if id, st, err := Identify(filepath.Join(dir, "missing.log"), formats, quiet); err != nil || id != nil || len(st.Quarantined) != 0 {
		t.Fatalf("missing: %+v %+v %v", id, st, err)
	}
	// A torn header is cut, counted and kept.
	torn := write("torn.log", whole[:12])
	id, st, err := Identify(torn, formats, quiet)
	if err != nil || id != nil || st.RecoveredBytes != 12 || len(st.Quarantined) != 1 {
		t.Fatalf("torn: %+v %+v %v", id, st, err)
	}
	if fi, _ := os.Stat(torn); fi.Size() != 0 {
		t.Fatal("torn header left in place")
	}
	if b, _ := os.ReadFile(st.Quarantined[0]); !bytes.Equal(b, whole[:12]) {
		t.Fatal("the copy does not hold the torn header")
	}
	// A damaged header before an intact record is corruption, not a tear.
	bad := bytes.Clone(whole)
	bad[10] ^= 1
	badPath := write("bad.log", bad)
	if _, _, err := Identify(badPath, formats, Options{FailOnCorrupt: true}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("FailOnCorrupt: %v", err)
	}
	var notes []string
	id, st, err = Identify(badPath, formats, Options{Note: func(m string) { notes = append(notes, m) }})
	if err != nil || id != nil || len(st.Quarantined) != 1 || len(notes) != 1 || !strings.HasPrefix(st.Quarantined[0], badPath+".corrupt-") {
		t.Fatalf("bad: %+v %+v %v %q", id, st, err, notes)
	}
	if _, err := os.Stat(badPath); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("damaged file left in place")
	}
	// Garbage is moved aside whole.
	garbage := write("garbage.log", []byte(strings.Repeat("garbage!", 10)))
	if id, st, err := Identify(garbage, formats, quiet); err != nil || id != nil || len(st.Quarantined) != 1 {
		t.Fatalf("garbage: %+v %+v %v", id, st, err)
	}
	// Quarantine moves a readable file that belongs elsewhere.
	other := write("other.log", whole)
	if _, err := Quarantine(other, "names another model", Options{FailOnCorrupt: true}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Quarantine with FailOnCorrupt: %v", err)
	}
	if st, err := Quarantine(other, "names another model", quiet); err != nil || len(st.Quarantined) != 1 {
		t.Fatalf("Quarantine: %+v %v", st, err)
	}
}

// FuzzIdentify: any content is identified or set aside without panicking;
// an identified file opens in its format, and a file set aside is gone.
func FuzzIdentify(f *testing.F) {
	fl := floats.resolved()
	whole := fl.appendRecord(fl.encodeHeader("m"), Record{Key: Key{1}, Payload: []byte("1234")})
	f.Add(whole)
	f.Add(whole[:7])
	f.Add(native.appendRecord(native.encodeHeader("x"), rec(1)))
	f.Add([]byte("ctxselV1Q\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "x.log")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		formats := []Format{{}, floats}
		id, _, err := Identify(path, formats, Options{Note: func(string) {}})
		if err != nil {
			t.Fatalf("Identify: %v", err)
		}
		if id == nil {
			if fi, err := os.Stat(path); err == nil && fi.Size() != 0 {
				t.Fatalf("unidentified file of %d bytes left in place", fi.Size())
			}
			return
		}
		l, err := Open(path, id.ID, Options{Format: formats[id.Format], Note: func(string) {}}, nil)
		if err != nil {
			t.Fatalf("Open after Identify: %v", err)
		}
		l.Close()
	})
}
