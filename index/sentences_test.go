package index_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/index/indextest"
	"github.com/ctxsel/ctxsel/internal/vecmath"
)

const sentenceModel = "test-hash-512"

func sentenceConfig(t testing.TB) index.Config {
	cfg := testConfig(testChunker(t))
	cfg.SentenceModel = sentenceModel
	return cfg
}

// storedOf asks s for the stored sentences of every live chunk, by the
// chunks' ids and texts.
func storedOf(t testing.TB, s *index.Dir, model string) (map[string]*ctxsel.StoredSentences, map[string]string) {
	t.Helper()
	live := indextest.LiveChunks(t, s)
	var ids, texts []string
	for id, h := range live {
		ids, texts = append(ids, id), append(texts, h.Text)
	}
	got, err := s.StoredSentences(ctx, model, ids, texts)
	if err != nil {
		t.Fatal(err)
	}
	out, byID := map[string]*ctxsel.StoredSentences{}, map[string]string{}
	for i, id := range ids {
		out[id], byID[id] = got[i], texts[i]
	}
	return out, byID
}

// checkStored asserts that every live chunk's stored sentences are the
// chunk's sentences with their vectors (within the format's precision).
func checkStored(t testing.TB, s *index.Dir, minCos float64) {
	t.Helper()
	got, texts := storedOf(t, s, sentenceModel)
	if len(got) == 0 {
		t.Fatal("no chunks")
	}
	for id, st := range got {
		if st == nil {
			t.Fatalf("%s: nothing stored", id)
		}
		text := texts[id]
		if len(st.Spans) != len(st.Vectors) || len(st.Spans) == 0 {
			t.Fatalf("%s: %d spans, %d vectors", id, len(st.Spans), len(st.Vectors))
		}
		for k, sp := range st.Spans {
			v := indextest.HashVector(text[sp[0]:sp[1]])
			if c := vecmath.Cosine32(v, st.Vectors[k]); c < minCos {
				t.Fatalf("%s sentence %d: cosine %.5f to its embedding, want at least %v", id, k, c, minCos)
			}
		}
	}
}

func TestSentencesStoredAndRead(t *testing.T) {
	for format, minCos := range map[string]float64{"f32": 0.999999, "f16": 0.9999, "i8": 0.999} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			s, err := index.OpenDir(dir, index.DirOptions{Create: true, Vectors: format})
			if err != nil {
				t.Fatal(err)
			}
			c := testChunker(t)
			var docs []index.Document
			for _, id := range []string{"animals", "space", "cooking"} {
				docs = append(docs, indextest.SentenceDoc(t, c, id, corpus[id]))
			}
			if err := s.Add(ctx, sentenceConfig(t), docs); err != nil {
				t.Fatal(err)
			}
			checkStored(t, s, minCos)
			// the spans are the ones given, exactly
			got, _ := storedOf(t, s, sentenceModel)
			for _, d := range docs {
				for i, cs := range d.Sentences {
					if st := got[fmt.Sprintf("%s#%d", d.ID, i)]; !slices.Equal(st.Spans, cs.Spans) {
						t.Fatalf("%s#%d: spans %v, stored %v", d.ID, i, cs.Spans, st.Spans)
					}
				}
			}
			st, _ := s.Stats(ctx)
			if st.SentenceBytes == 0 || st.SentenceBytes >= st.DiskBytes || st.Config.SentenceModel != sentenceModel {
				t.Fatalf("stats %+v", st)
			}
			snt, _ := filepath.Glob(filepath.Join(dir, "seg-*.ctxsnt"))
			if len(snt) != 1 {
				t.Fatalf("sentence files %v", snt)
			}
			if rep, err := s.Check(ctx, true); err != nil || !rep.OK() || rep.Files != 4 {
				t.Fatalf("check: %+v %v", rep, err)
			}
		})
	}
}

// Nothing is served for another model, another text, or an unknown chunk.
func TestSentencesKeyed(t *testing.T) {
	s, _ := index.OpenDir(t.TempDir(), index.DirOptions{Create: true})
	c := testChunker(t)
	if err := s.Add(ctx, sentenceConfig(t), []index.Document{indextest.SentenceDoc(t, c, "space", corpus["space"])}); err != nil {
		t.Fatal(err)
	}
	live := indextest.LiveChunks(t, s)
	h := live["space#0"]
	for name, q := range map[string]struct{ model, id, text string }{
		"other model":   {"another-model", "space#0", h.Text},
		"other text":    {sentenceModel, "space#0", h.Text + " more"},
		"unknown doc":   {sentenceModel, "nowhere#0", h.Text},
		"chunk past":    {sentenceModel, "space#99", h.Text},
		"no chunk part": {sentenceModel, "space", h.Text},
	} {
		got, err := s.StoredSentences(ctx, q.model, []string{q.id}, []string{q.text})
		if err != nil || len(got) != 1 || got[0] != nil {
			t.Fatalf("%s: %v, %v; want nothing stored", name, got, err)
		}
	}
	if got, err := s.StoredSentences(ctx, sentenceModel, []string{"space#0"}, []string{h.Text}); err != nil || got[0] == nil {
		t.Fatalf("the chunk itself: %v, %v", got, err)
	}
	// An index without sentence vectors stores none, and says so by nil.
	plain, _ := index.OpenDir(t.TempDir(), index.DirOptions{Create: true})
	fill(t, plain, c)
	if got, err := plain.StoredSentences(ctx, sentenceModel, []string{"space#0"}, []string{h.Text}); err != nil || got[0] != nil {
		t.Fatalf("plain index: %v, %v", got, err)
	}
}

// Sentence vectors are a per-index choice: a batch with them goes into an
// index with them only, and every chunk of it carries them.
func TestSentencesPerIndex(t *testing.T) {
	c := testChunker(t)
	s, _ := index.OpenDir(t.TempDir(), index.DirOptions{Create: true})
	fill(t, s, c) // without
	err := s.Add(ctx, sentenceConfig(t), []index.Document{indextest.SentenceDoc(t, c, "x", corpus["space"])})
	if !errors.Is(err, index.ErrMismatch) || !strings.Contains(err.Error(), "sentence") {
		t.Fatalf("sentences into a plain index: %v", err)
	}
	w, _ := index.OpenDir(t.TempDir(), index.DirOptions{Create: true})
	if err := w.Add(ctx, sentenceConfig(t), []index.Document{makeDoc(t, c, "x", corpus["space"])}); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("a document without sentence vectors into an index with them: %v", err)
	}
	bad := indextest.SentenceDoc(t, c, "x", corpus["space"])
	bad.Sentences[0].Spans[0] = [2]int{0, 1 << 20}
	if err := w.Add(ctx, sentenceConfig(t), []index.Document{bad}); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("a span outside its chunk: %v", err)
	}
}

// Compaction carries sentence vectors over, and garbage collection removes
// the files of segments gone.
func TestSentencesCompaction(t *testing.T) {
	dir := t.TempDir()
	s, _ := index.OpenDir(dir, index.DirOptions{Create: true, Vectors: "i8"})
	c := testChunker(t)
	for i := range 12 { // more small segments than compaction lets stand
		id := fmt.Sprintf("doc%02d", i)
		text := corpus[[]string{"animals", "space", "cooking"}[i%3]] + fmt.Sprintf(" Number %d is here.", i)
		if err := s.Add(ctx, sentenceConfig(t), []index.Document{indextest.SentenceDoc(t, c, id, text)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Remove(ctx, []string{"doc03", "doc07"}); err != nil {
		t.Fatal(err)
	}
	st, _ := s.Stats(ctx)
	snt, _ := filepath.Glob(filepath.Join(dir, "seg-*.ctxsnt"))
	segs, _ := filepath.Glob(filepath.Join(dir, "seg-*.ctxseg"))
	if st.Segments >= 12 || len(snt) != st.Segments || len(segs) != st.Segments {
		t.Fatalf("%d segments, %d segment files, %d sentence files", st.Segments, len(segs), len(snt))
	}
	checkStored(t, s, 0.999)
	if got, _ := storedOf(t, s, sentenceModel); len(got) != st.Chunks {
		t.Fatalf("%d chunks answered, %d live", len(got), st.Chunks)
	}
	if rep, err := s.Check(ctx, true); err != nil || !rep.OK() {
		t.Fatalf("check: %+v %v", rep, err)
	}
}

// A damaged sentence file is found by verify, dropped by repair, and fails
// a read of a damaged row with ErrCorrupt — never a wrong vector.
func TestSentencesDamage(t *testing.T) {
	c := testChunker(t)
	damages := []struct {
		name  string
		cheap bool
		do    func(p string)
	}{
		{"vector byte", false, func(p string) { flipAt(p, func(n int64) int64 { return n - 40 }) }},
		{"header byte", true, func(p string) { flipAt(p, func(int64) int64 { return 17 }) }},
		{"checksum byte", true, func(p string) { flipAt(p, func(n int64) int64 { return n - 1 }) }},
		{"truncated", true, func(p string) { os.Truncate(p, 100) }},
		{"deleted", true, func(p string) { os.Remove(p) }},
	}
	for _, dm := range damages {
		t.Run(dm.name, func(t *testing.T) {
			dir := t.TempDir()
			s, _ := index.OpenDir(dir, index.DirOptions{Create: true})
			for _, id := range []string{"animals", "space"} {
				if err := s.Add(ctx, sentenceConfig(t), []index.Document{indextest.SentenceDoc(t, c, id, corpus[id])}); err != nil {
					t.Fatal(err)
				}
			}
			snt, _ := filepath.Glob(filepath.Join(dir, "seg-*.ctxsnt"))
			slices.Sort(snt)
			if len(snt) != 2 {
				t.Fatalf("sentence files %v", snt)
			}
			dm.do(snt[1]) // space's
			if rep, err := s.Check(ctx, false); err != nil || rep.OK() != !dm.cheap {
				t.Fatalf("cheap check: %+v %v", rep, err)
			}
			rep, err := s.Check(ctx, true)
			if err != nil || rep.OK() || rep.Damage[0].File != filepath.Base(snt[1]) || len(rep.Damage[0].Docs) != 1 || rep.Damage[0].Docs[0].ID != "space" {
				t.Fatalf("full check: %+v %v", rep, err)
			}
			// reading the damaged file fails, naming the damage
			s2, _ := index.OpenDir(dir, index.DirOptions{})
			live := indextest.LiveChunks(t, s2)
			var ids, texts []string
			for id, h := range live {
				if strings.HasPrefix(id, "space#") {
					ids, texts = append(ids, id), append(texts, h.Text)
				}
			}
			if _, err := s2.StoredSentences(ctx, sentenceModel, ids, texts); !errors.Is(err, index.ErrCorrupt) {
				t.Fatalf("reading a damaged sentence file: %v, want ErrCorrupt", err)
			}
			// the other segment's are still read
			if got, err := s2.StoredSentences(ctx, sentenceModel, []string{"animals#0"}, []string{live["animals#0"].Text}); err != nil || got[0] == nil {
				t.Fatalf("the sound file: %v, %v", got, err)
			}
			rr, err := s2.Repair(ctx)
			if err != nil || rr.Docs != 1 {
				t.Fatalf("repair: %+v %v", rr, err)
			}
			if ids := listIDs(t, s2); !slices.Equal(ids, []string{"animals"}) {
				t.Fatalf("after repair: %v", ids)
			}
			checkStored(t, s2, 0.999999)
			if rep, err := s2.Check(ctx, true); err != nil || !rep.OK() {
				t.Fatalf("after repair: %+v %v", rep, err)
			}
		})
	}
}

func flipAt(p string, at func(n int64) int64) {
	b, _ := os.ReadFile(p)
	b[at(int64(len(b)))] ^= 0x5a
	os.WriteFile(p, b, 0o644)
}
