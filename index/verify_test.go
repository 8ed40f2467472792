package index_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/index/indextest"
)

// TestDirCheckRepair damages one of three segments in each way and expects
// the full check to name it with the documents it holds (the cheap check
// too, where sizes or trailers differ), and Repair to drop exactly those
// documents and leave an index that checks clean and searches.
func TestDirCheckRepair(t *testing.T) {
	c := testChunker(t)
	flip := func(at func(n int64) int64) func(string) {
		return func(p string) {
			b, _ := os.ReadFile(p)
			b[at(int64(len(b)))] ^= 0x5a
			os.WriteFile(p, b, 0o644)
		}
	}
	damages := []struct {
		name  string
		cheap bool // the cheap check sees it
		do    func(seg string)
	}{
		{"vector byte", false, flip(func(int64) int64 { return 200 })},
		{"metadata byte", false, flip(func(n int64) int64 { return n - 20 })},
		{"header byte", true, flip(func(int64) int64 { return 13 })},
		{"header offset byte", true, flip(func(int64) int64 { return 50 })},
		{"checksum byte", true, flip(func(n int64) int64 { return n - 1 })},
		{"truncated", true, func(seg string) { os.Truncate(seg, 100) }},
		{"deleted", true, func(seg string) { os.Remove(seg) }},
	}
	for _, dm := range damages {
		t.Run(dm.name, func(t *testing.T) {
			dir := t.TempDir()
			s, _ := index.OpenDir(dir, index.DirOptions{Create: true})
			for _, id := range []string{"animals", "space", "cooking"} {
				if err := s.Add(ctx, testConfig(c), []index.Document{makeDoc(t, c, id, corpus[id])}); err != nil {
					t.Fatal(err)
				}
			}
			all, _ := filepath.Glob(filepath.Join(dir, "seg-*")) // segment files of every kind
			for _, full := range []bool{false, true} {
				if rep, err := s.Check(ctx, full); err != nil || !rep.OK() || rep.Files != 1+len(all) {
					t.Fatalf("sound index, full=%v: %+v, %v", full, rep, err)
				}
			}
			segs, _ := filepath.Glob(filepath.Join(dir, "seg-*.ctxseg")) // vector segment files
			slices.Sort(segs)
			if len(segs) != 3 {
				t.Fatalf("%d segments", len(segs))
			}
			dm.do(segs[1]) // holds "space"

			cheap, err := s.Check(ctx, false)
			if err != nil {
				t.Fatal(err)
			}
			if cheap.OK() == dm.cheap {
				t.Fatalf("cheap check: %+v", cheap)
			}
			full, err := s.Check(ctx, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(full.Damage) != 1 || full.Damage[0].File != filepath.Base(segs[1]) ||
				len(full.Damage[0].Docs) != 1 || full.Damage[0].Docs[0].ID != "space" {
				t.Fatalf("full check: %+v", full)
			}
			if err := full.Err(dir); !errors.Is(err, index.ErrCorrupt) || !strings.Contains(err.Error(), filepath.Base(segs[1])) {
				t.Fatalf("check error: %v", err)
			}

			rep, err := s.Repair(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Docs != 1 || len(rep.Dropped) != 1 || rep.Dropped[0].Docs[0].Source != "/src/space" {
				t.Fatalf("repair: %+v", rep)
			}
			if after, err := s.Check(ctx, true); err != nil || !after.OK() {
				t.Fatalf("after repair: %+v, %v", after, err)
			}
			if ids := listIDs(t, s); !slices.Equal(ids, []string{"animals", "cooking"}) {
				t.Fatalf("after repair: %v", ids)
			}
			// a fresh reader searches the repaired index
			s2, err := index.OpenDir(dir, index.DirOptions{})
			if err != nil {
				t.Fatal(err)
			}
			hits, err := s2.Search(ctx, indextest.HashVector("bread yeast"), 10)
			if err != nil || len(hits) == 0 || hits[0].Doc != "cooking" {
				t.Fatalf("search after repair: %v, %v", hits, err)
			}
			// and the dropped document can be added again
			if err := s2.Add(ctx, testConfig(c), []index.Document{makeDoc(t, c, "space", corpus["space"])}); err != nil {
				t.Fatal(err)
			}
			if rep, err := s2.Repair(ctx); err != nil || rep.Docs != 0 {
				t.Fatalf("second repair: %+v, %v", rep, err)
			}
		})
	}
}

// TestDirCheckDamagedManifest: a damaged manifest is reported, and Repair
// refuses (the manifest alone says what the index holds).
func TestDirCheckDamagedManifest(t *testing.T) {
	c := testChunker(t)
	dir := t.TempDir()
	s, _ := index.OpenDir(dir, index.DirOptions{Create: true})
	fill(t, s, c)
	p := filepath.Join(dir, "MANIFEST")
	st, _ := os.Stat(p)
	os.Truncate(p, st.Size()-10)
	rep, err := s.Check(ctx, false)
	if err != nil || len(rep.Damage) != 1 || rep.Damage[0].File != "MANIFEST" {
		t.Fatalf("check: %+v, %v", rep, err)
	}
	if _, err := s.Repair(ctx); !errors.Is(err, index.ErrCorrupt) || !strings.Contains(err.Error(), "cannot be repaired") {
		t.Fatalf("repair: %v", err)
	}
}

// TestDirCheckLexical: the BM25 postings file committed with a segment is
// checked like the segment itself; a flipped byte in it is damage, named
// with the segment's documents, and Repair drops that segment.
func TestDirCheckLexical(t *testing.T) {
	c := testChunker(t)
	dir := t.TempDir()
	s, _ := index.OpenDir(dir, index.DirOptions{Create: true})
	for _, id := range []string{"animals", "space", "cooking"} {
		if err := s.Add(ctx, testConfig(c), []index.Document{makeDoc(t, c, id, corpus[id])}); err != nil {
			t.Fatal(err)
		}
	}
	lex, _ := filepath.Glob(filepath.Join(dir, "seg-*.ctxlex"))
	slices.Sort(lex)
	if len(lex) != 3 {
		t.Fatalf("%d lexical files", len(lex))
	}
	b, _ := os.ReadFile(lex[1])
	b[len(b)/2] ^= 0x5a
	if err := os.WriteFile(lex[1], b, 0o644); err != nil {
		t.Fatal(err)
	}
	full, err := s.Check(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Damage) != 1 || full.Damage[0].File != filepath.Base(lex[1]) ||
		len(full.Damage[0].Docs) != 1 || full.Damage[0].Docs[0].ID != "space" {
		t.Fatalf("full check: %+v", full)
	}
	rep, err := s.Repair(ctx)
	if err != nil || rep.Docs != 1 {
		t.Fatalf("repair: %+v, %v", rep, err)
	}
	if after, err := s.Check(ctx, true); err != nil || !after.OK() {
		t.Fatalf("after repair: %+v, %v", after, err)
	}
}
