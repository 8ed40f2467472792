package index_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/index/indextest"
)

var ctx = context.Background()

// The shared helpers (indextest), under the names these tests use.
var (
	testChunker = indextest.Chunker
	testConfig  = indextest.Config
	makeDoc     = indextest.Doc
	search      = indextest.Search
	listIDs     = indextest.IDs
)

var corpus = map[string]string{
	"animals": "Cats purr when they are content. Dogs bark at strangers. Parrots can mimic human speech. " +
		"Elephants remember water holes for decades. Octopuses have three hearts.",
	"space": "The Moon orbits the Earth every 27 days. Mars has two small moons called Phobos and Deimos. " +
		"Jupiter is the largest planet. Saturn's rings are made of ice.",
	"cooking": "Bread rises because yeast produces carbon dioxide. Salt enhances sweetness in desserts. " +
		"Searing meat browns it through the Maillard reaction.",
}

func fill(t testing.TB, s index.Store, c chunk.Chunker) {
	t.Helper()
	var docs []index.Document
	for _, id := range []string{"animals", "space", "cooking"} {
		docs = append(docs, makeDoc(t, c, id, corpus[id]))
	}
	if err := s.Add(ctx, testConfig(c), docs); err != nil {
		t.Fatal(err)
	}
}

func TestDirAddSearchList(t *testing.T) {
	for _, format := range []string{"f32", "f16", "i8"} {
		t.Run(format, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "idx")
			s, err := index.OpenDir(dir, index.DirOptions{Create: true, Vectors: format})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			c := testChunker(t)
			fill(t, s, c)
			hits := search(t, s, "how many moons does Mars have", 100)
			if len(hits) == 0 || hits[0].Doc != "space" || !strings.Contains(hits[0].Text, "Phobos") {
				t.Fatalf("top hit %+v", hits)
			}
			for i, h := range hits {
				if corpus[h.Doc][h.Start:h.End] != h.Text || h.Source != "/src/"+h.Doc {
					t.Fatalf("hit %d provenance wrong: %+v", i, h)
				}
				if i > 0 && hits[i-1].Score < h.Score {
					t.Fatalf("hits not sorted")
				}
			}
			if len(search(t, s, "x", 2)) != 2 {
				t.Fatal("limit not applied")
			}
			list, err := s.List(ctx)
			if err != nil || len(list) != 3 || list[0].ID != "animals" || list[0].Chunks == 0 || list[0].Tokens == 0 || list[0].Hash == "" {
				t.Fatalf("list %+v %v", list, err)
			}
			st, err := s.Stats(ctx)
			if err != nil || st.Docs != 3 || st.Chunks != len(hits) || st.Vectors != format || st.Config.Dim != 512 || st.DiskBytes == 0 {
				t.Fatalf("stats %+v %v (hits %d)", st, err, len(hits))
			}
			// a second handle sees the same
			s2, err := index.OpenDir(dir, index.DirOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if h2 := search(t, s2, "how many moons does Mars have", 100); !sameHits(hits, h2) {
				t.Fatal("second handle differs")
			}
		})
	}
}

func sameHits(a, b []index.Hit) bool {
	return slices.EqualFunc(a, b, func(x, y index.Hit) bool { return x.ID() == y.ID() && x.Score == y.Score })
}

func TestDirReplaceRemoveCompact(t *testing.T) {
	dir := t.TempDir()
	s, err := index.OpenDir(dir, index.DirOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	c := testChunker(t)
	fill(t, s, c)
	// replace one document
	newText := "Mars is red because of iron oxide. It has the tallest volcano, Olympus Mons."
	if err := s.Add(ctx, testConfig(c), []index.Document{makeDoc(t, c, "space", newText)}); err != nil {
		t.Fatal(err)
	}
	hits := search(t, s, "Phobos Deimos moons", 100)
	for _, h := range hits {
		if strings.Contains(h.Text, "Phobos") {
			t.Fatalf("replaced text still found: %+v", h)
		}
	}
	if hits := search(t, s, "Olympus Mons volcano", 1); hits[0].Doc != "space" {
		t.Fatalf("new text not found: %+v", hits)
	}
	n, err := s.Remove(ctx, []string{"animals", "nope"})
	if err != nil || n != 1 {
		t.Fatalf("remove: %d %v", n, err)
	}
	for _, h := range search(t, s, "cats dogs parrots", 100) {
		if h.Doc == "animals" {
			t.Fatalf("removed doc found")
		}
	}
	st, _ := s.Stats(ctx)
	if st.Docs != 2 {
		t.Fatalf("stats after remove %+v", st)
	}
	// half-dead segments are compacted: no dead chunks may outnumber live
	if st.DeadChunks > st.Chunks {
		t.Fatalf("not compacted: %+v", st)
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "seg-*.ctxseg"))
	lex, _ := filepath.Glob(filepath.Join(dir, "seg-*.ctxlex"))
	if len(segs) != st.Segments || len(lex) != st.Segments {
		t.Fatalf("%d segment files, %d lexical files, manifest lists %d", len(segs), len(lex), st.Segments)
	}
	// removing everything empties the index (and frees its config)
	if _, err := s.Remove(ctx, []string{"space", "cooking"}); err != nil {
		t.Fatal(err)
	}
	st, _ = s.Stats(ctx)
	if st.Docs != 0 || st.Chunks != 0 || st.Config != (index.Config{}) {
		t.Fatalf("stats of an emptied index %+v", st)
	}
	if hits := search(t, s, "anything", 10); len(hits) != 0 {
		t.Fatalf("hits in an empty index")
	}
}

func TestDirManySmallCommits(t *testing.T) {
	dir := t.TempDir()
	s, _ := index.OpenDir(dir, index.DirOptions{Create: true, Vectors: "i8"})
	c := testChunker(t)
	for i := range 30 {
		id := fmt.Sprintf("d%02d", i)
		if err := s.Add(ctx, testConfig(c), []index.Document{makeDoc(t, c, id, fmt.Sprintf("Document number %d talks about topic%d. It is short.", i, i))}); err != nil {
			t.Fatal(err)
		}
	}
	st, _ := s.Stats(ctx)
	if st.Docs != 30 || st.Segments > 9 {
		t.Fatalf("small segments not merged: %+v", st)
	}
	for i := range 30 {
		hits := search(t, s, fmt.Sprintf("topic%d", i), 1)
		if hits[0].Doc != fmt.Sprintf("d%02d", i) {
			t.Fatalf("topic%d: %+v", i, hits[0])
		}
	}
}

func TestDirErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := index.OpenDir(filepath.Join(dir, "missing"), index.DirOptions{}); !errors.Is(err, index.ErrNotFound) {
		t.Fatalf("missing index: %v", err)
	}
	if _, err := index.OpenDir(dir, index.DirOptions{Vectors: "f64"}); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("bad format: %v", err)
	}
	s, _ := index.OpenDir(dir, index.DirOptions{Create: true})
	c := testChunker(t)
	fill(t, s, c)
	other := testConfig(c)
	other.Model = "another-model"
	if err := s.Add(ctx, other, []index.Document{makeDoc(t, c, "x", "Some text.")}); !errors.Is(err, index.ErrMismatch) {
		t.Fatalf("model mismatch: %v", err)
	}
	bad := []index.Document{
		{ID: "", Text: "x"},
		{ID: "a", Text: "abc", Chunks: []chunk.Chunk{{Doc: "a", Start: 0, End: 2, Text: "ab"}}}, // no vector
		{ID: "a", Text: "abc", Chunks: []chunk.Chunk{{Doc: "a", Start: 0, End: 2, Text: "xx"}}, Vectors: [][]float32{make([]float32, 512)}},
	}
	for i, d := range bad {
		if err := s.Add(ctx, testConfig(c), []index.Document{d}); !errors.Is(err, ctxsel.ErrInvalidInput) {
			t.Errorf("bad doc %d: %v", i, err)
		}
	}
	if _, err := s.Search(ctx, []float32{1, 2}, 5); !errors.Is(err, index.ErrMismatch) {
		t.Fatalf("wrong dimension query: %v", err)
	}
	if _, err := s.Search(ctx, indextest.HashVector("x"), 0); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("limit 0: %v", err)
	}
}

// TestDirCorruption damages every kind of file in every way and expects a
// clear ErrCorrupt naming the file, never a panic or silently wrong results.
func TestDirCorruption(t *testing.T) {
	c := testChunker(t)
	type damage struct {
		name string
		do   func(t *testing.T, dir, seg string)
		// where: reopening fails (manifest) or searching fails (segment)
	}
	flip := func(path string, at func(size int64) int64) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		b[at(int64(len(b)))] ^= 0x5a
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	damages := []damage{
		{"segment header byte", func(t *testing.T, dir, seg string) { flip(seg, func(int64) int64 { return 13 }) }},
		{"segment vector byte", func(t *testing.T, dir, seg string) { flip(seg, func(int64) int64 { return 200 }) }},
		{"segment metadata byte", func(t *testing.T, dir, seg string) { flip(seg, func(n int64) int64 { return n - 20 }) }},
		{"segment checksum byte", func(t *testing.T, dir, seg string) { flip(seg, func(n int64) int64 { return n - 1 }) }},
		{"segment truncated", func(t *testing.T, dir, seg string) { os.Truncate(seg, 100) }},
		{"segment emptied", func(t *testing.T, dir, seg string) { os.Truncate(seg, 0) }},
		{"segment deleted", func(t *testing.T, dir, seg string) { os.Remove(seg) }},
		{"manifest body byte", func(t *testing.T, dir, seg string) {
			flip(filepath.Join(dir, "MANIFEST"), func(n int64) int64 { return n / 2 })
		}},
		{"manifest header byte", func(t *testing.T, dir, seg string) {
			flip(filepath.Join(dir, "MANIFEST"), func(n int64) int64 { return 3 })
		}},
		{"manifest truncated", func(t *testing.T, dir, seg string) {
			p := filepath.Join(dir, "MANIFEST")
			st, _ := os.Stat(p)
			os.Truncate(p, st.Size()-10)
		}},
		{"manifest emptied", func(t *testing.T, dir, seg string) { os.Truncate(filepath.Join(dir, "MANIFEST"), 0) }},
		{"manifest deleted", func(t *testing.T, dir, seg string) { os.Remove(filepath.Join(dir, "MANIFEST")) }},
	}
	for _, dm := range damages {
		t.Run(dm.name, func(t *testing.T) {
			dir := t.TempDir()
			s, _ := index.OpenDir(dir, index.DirOptions{Create: true})
			fill(t, s, c)
			segs, _ := filepath.Glob(filepath.Join(dir, "seg-*.ctxseg"))
			if len(segs) != 1 {
				t.Fatalf("%d segments", len(segs))
			}
			dm.do(t, dir, segs[0])
			s2, err := index.OpenDir(dir, index.DirOptions{})
			if err == nil {
				_, err = s2.Search(ctx, indextest.HashVector("moons"), 10)
			}
			if !errors.Is(err, index.ErrCorrupt) {
				t.Fatalf("want ErrCorrupt, got %v", err)
			}
			if !strings.Contains(err.Error(), dir) {
				t.Fatalf("error does not name the index: %v", err)
			}
			t.Logf("%v", err)
		})
	}
}

// TestDirConcurrentReaders runs readers (through their own handles) while a
// writer adds and removes documents: every search must succeed and see
// whole documents only.
func TestDirConcurrentReaders(t *testing.T) {
	dir := t.TempDir()
	w, _ := index.OpenDir(dir, index.DirOptions{Create: true})
	c := testChunker(t)
	const perDoc = 5
	mk := func(i int) index.Document {
		var parts []string
		for k := range perDoc {
			parts = append(parts, fmt.Sprintf("Batch%d item%d mentions common word zebra%s.", i, k, strings.Repeat(" filler", 30)))
		}
		return makeDoc(t, c, fmt.Sprintf("doc%03d", i), strings.Join(parts, " "))
	}
	if err := w.Add(ctx, testConfig(c), []index.Document{mk(0)}); err != nil {
		t.Fatal(err)
	}
	if got := len(mk(0).Chunks); got != perDoc {
		t.Fatalf("test doc has %d chunks, want %d", got, perDoc)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var searches atomic.Int64
	errs := make(chan error, 8)
	for r := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rd, err := index.OpenDir(dir, index.DirOptions{Workers: 1 + r%2})
			if err != nil {
				errs <- err
				return
			}
			for !stop.Load() {
				hits, err := rd.Search(ctx, indextest.HashVector("zebra"), 10000)
				if err != nil {
					errs <- err
					return
				}
				per := map[string]int{}
				for _, h := range hits {
					per[h.Doc]++
				}
				for d, n := range per {
					if n != perDoc {
						errs <- fmt.Errorf("document %s seen with %d of %d chunks", d, n, perDoc)
						return
					}
				}
				searches.Add(1)
			}
		}()
	}
	for i := 1; i <= 40; i++ {
		if err := w.Add(ctx, testConfig(c), []index.Document{mk(i)}); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			if _, err := w.Remove(ctx, []string{fmt.Sprintf("doc%03d", i-2)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d concurrent searches", searches.Load())
}

// Two writers (separate handles, as two processes would be) never lose each
// other's documents: the flock serialises their read-modify-write.
func TestDirConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	c := testChunker(t)
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := index.OpenDir(dir, index.DirOptions{Create: true})
			if err != nil {
				t.Error(err)
				return
			}
			for i := range 10 {
				id := fmt.Sprintf("w%d-%d", w, i)
				if err := s.Add(ctx, testConfig(c), []index.Document{makeDoc(t, c, id, "Writer "+id+" was here.")}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	s, _ := index.OpenDir(dir, index.DirOptions{})
	list, _ := s.List(ctx)
	if len(list) != 20 {
		t.Fatalf("%d documents, want 20", len(list))
	}
}
