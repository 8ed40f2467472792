package ingest_test

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/evidence"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/index/indextest"
	"github.com/ctxsel/ctxsel/index/ingest"
	"github.com/ctxsel/ctxsel/internal/vecmath"
)

func writeFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func newIngester(t testing.TB, s index.Store, calls *atomic.Int64) *ingest.Ingester {
	return &ingest.Ingester{Store: s, Embedder: indextest.HashEmbedder{Calls: calls}, Chunker: testChunker(t), Encoding: "cl100k_base"}
}

func TestIngestFormats(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"notes/a.txt": "\ufeffPlain text about glaciers.\r\nThey move slowly.",
		"notes/b.md":  "# Title\n\nMarkdown about volcanoes. Lava is hot.",
		"web/page.html": `<html><head><title>Deserts</title><style>p{color:red}</style></head>
<body><h1>Sand dunes</h1><p>Dunes   form where
wind deposits sand.</p><script>var x = "hidden";</script><ul><li>Sahara</li><li>Gobi</li></ul></body></html>`,
		"data/docs.jsonl":    `{"id":"j1","text":"JSON line document about rivers."}` + "\n" + `{"id":2,"text":"Numbered id about lakes."}` + "\n",
		"data/eval.jsonl":    `{"id":"q1","question":"q?","answers":["a"],"passages":[{"id":"p0","text":"Passage about oceans."},{"id":"p1","text":"Passage about reefs."}]}` + "\n",
		"lara/query/x.jsonl": `{"type":"novel","level":"comp","file":"a.txt","question":"Who?","answer":"Me."}` + "\n",
		"skip/image.png":     "not text",
		".hidden/secret.txt": "never indexed",
	})
	gz := filepath.Join(root, "data", "more.jsonl.gz")
	f, _ := os.Create(gz)
	zw := gzip.NewWriter(f)
	zw.Write([]byte(`{"id":"g1","text":"Gzipped document about caves."}` + "\n"))
	zw.Close()
	f.Close()

	t.Chdir(root)
	s, _ := index.OpenDir(filepath.Join(root, ".ctxsel-index"), index.DirOptions{Create: true})
	in := newIngester(t, s, nil)
	rep, err := in.Add(ctx, []string{"."})
	if err != nil {
		t.Fatal(err)
	}
	list, _ := s.List(ctx)
	var ids []string
	for _, d := range list {
		ids = append(ids, d.ID)
	}
	want := "2,g1,j1,notes/a.txt,notes/b.md,q1/p0,q1/p1,web/page.html"
	if strings.Join(ids, ",") != want {
		t.Fatalf("ids %v, want %s", ids, want)
	}
	if rep.Added != 8 || rep.Files != 7 || len(rep.Notices) != 2 {
		t.Fatalf("report %+v", rep)
	}
	hits := search(t, s, "sand dunes wind", 1)
	if hits[0].Doc != "web/page.html" || strings.Contains(hits[0].Text, "hidden") || strings.Contains(hits[0].Text, "color") {
		t.Fatalf("html hit %+v", hits[0])
	}
	if !strings.HasPrefix(hits[0].Text, "Deserts\n\n# Sand dunes\n\nDunes form where wind deposits sand.\n\nSahara\nGobi") {
		t.Fatalf("html text %q", hits[0].Text)
	}
	// a text file's chunks are its bytes (offsets into the file), without
	// the byte-order mark; TestIngestOffsetsPointIntoFile checks the rest
	if h := search(t, s, "glaciers", 1)[0]; h.Text != "Plain text about glaciers.\r\nThey move slowly." || h.Start != 3 {
		t.Fatalf("text file chunk [%d, %d): %q", h.Start, h.End, h.Text)
	}
	// explicit unsupported file
	if _, err := in.Add(ctx, []string{"skip/image.png"}); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("unsupported file: %v", err)
	}
	if _, err := in.Add(ctx, []string{"no/such/path"}); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("missing path: %v", err)
	}
	// a bad jsonl is skipped, named with its line, and nothing of it stored
	writeFiles(t, root, map[string]string{"bad.jsonl": `{"id":"x","text":"ok"}` + "\n{not json\n"})
	rep, err = in.Add(ctx, []string{"bad.jsonl"})
	if err != nil || len(rep.Problems) != 1 || rep.Problems[0].Path != "bad.jsonl" || !strings.Contains(rep.Problems[0].Reason, "line 2") {
		t.Fatalf("bad jsonl: %+v, %v", rep.Problems, err)
	}
	if l, _ := s.List(ctx); len(l) != len(list) {
		t.Fatalf("bad jsonl stored something: %d documents, had %d", len(l), len(list))
	}
}

func TestIngestSkipsUnchanged(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	for i := range 5 {
		files[fmt.Sprintf("f%d.txt", i)] = fmt.Sprintf("File %d is about subject%d. It has two sentences.", i, i)
	}
	files["c.jsonl"] = `{"id":"r1","text":"Record one."}` + "\n" + `{"id":"r2","text":"Record two."}` + "\n" + `{"id":"r3","text":"Record three."}` + "\n"
	writeFiles(t, root, files)
	s, _ := index.OpenDir(filepath.Join(t.TempDir(), "idx"), index.DirOptions{Create: true})
	var calls atomic.Int64
	in := newIngester(t, s, &calls)
	rep, err := in.Add(ctx, []string{root})
	if err != nil || rep.Added != 8 {
		t.Fatalf("%+v %v", rep, err)
	}
	first := calls.Load()
	st1, _ := s.Stats(ctx)

	// again: nothing embedded, nothing written
	rep, err = in.Add(ctx, []string{root})
	if err != nil || rep.Unchanged != 6 || rep.Added+rep.Replaced != 0 || calls.Load() != first || rep.Commits != 0 {
		t.Fatalf("re-add: %+v %v (embed calls %d → %d)", rep, err, first, calls.Load())
	}
	// the same files through another path spelling are still unchanged
	rep, _ = in.Add(ctx, []string{filepath.Join(root, ".", "f1.txt")})
	if rep.Unchanged != 1 {
		t.Fatalf("other spelling: %+v", rep)
	}

	// change one text file and one record; drop another record
	writeFiles(t, root, map[string]string{
		"f2.txt":  "File 2 now talks about something new entirely.",
		"c.jsonl": `{"id":"r1","text":"Record one."}` + "\n" + `{"id":"r2","text":"Record two, edited."}` + "\n",
	})
	rep, err = in.Add(ctx, []string{root})
	if err != nil || rep.Replaced != 2 || rep.Kept != 1 || rep.Removed != 1 || rep.Unchanged != 4 {
		t.Fatalf("changed: %+v %v", rep, err)
	}
	st2, _ := s.Stats(ctx)
	if st2.Docs != st1.Docs-1 {
		t.Fatalf("docs %d → %d", st1.Docs, st2.Docs)
	}
	if h := search(t, s, "something new entirely", 1)[0]; h.Doc != filepath.ToSlash(filepath.Join(root, "f2.txt")) {
		t.Fatalf("changed file not re-indexed: %+v", h)
	}
}

func TestIngestChunkerMismatch(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"a.txt": "Some text here."})
	s, _ := index.OpenDir(filepath.Join(t.TempDir(), "idx"), index.DirOptions{Create: true})
	if _, err := newIngester(t, s, nil).Add(ctx, []string{root}); err != nil {
		t.Fatal(err)
	}
	in := newIngester(t, s, nil)
	in.Chunker, _ = chunk.Parse("tokens:size=100,overlap=10", nil, nil)
	if _, err := in.Add(ctx, []string{root}); !errors.Is(err, index.ErrMismatch) {
		t.Fatalf("chunker mismatch: %v", err)
	}
}

// slowEmbedder makes a child ingestion slow enough to be killed mid-way.
type slowEmbedder struct{ indextest.HashEmbedder }

func (s slowEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	time.Sleep(3 * time.Millisecond)
	return s.HashEmbedder.Embed(ctx, texts)
}

// crashCorpus writes n documents of varied length.
func crashCorpus(t testing.TB, root string, n int) {
	files := map[string]string{}
	for i := range n {
		var b strings.Builder
		for k := range 3 + i%7 {
			fmt.Fprintf(&b, "Document %d sentence %d mentions keyword%d and shared words about crashes.%s ", i, k, i, strings.Repeat(" pad", 20))
		}
		files[fmt.Sprintf("doc%03d.txt", i)] = b.String()
	}
	writeFiles(t, root, files)
}

// TestCrashChild is the child process of TestCrashDuringAdd: an `index add`
// of the corpus, committing every document.
func TestCrashChild(t *testing.T) {
	dir, src := os.Getenv("CTXSEL_CRASH_INDEX"), os.Getenv("CTXSEL_CRASH_SRC")
	if dir == "" {
		t.Skip("child process of TestCrashDuringAdd")
	}
	s, err := index.OpenDir(dir, index.DirOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	in := &ingest.Ingester{Store: s, Embedder: slowEmbedder{}, Chunker: testChunker(t), Encoding: "cl100k_base",
		EmbedBatch: 2, CommitChunks: 1}
	if os.Getenv("CTXSEL_CRASH_SENTENCES") != "" {
		in.Sentences = slowEmbedder{}
	}
	if _, err := in.Add(ctx, []string{src}); err != nil {
		t.Fatal(err)
	}
}

// TestCrashDuringAdd runs `index add` in a child process, SIGKILLs it at
// varying points, and checks after each kill that the index opens, searches
// and holds whole documents only: everything it held before, plus complete
// documents. The last round lets the child finish and checks everything.
func TestCrashDuringAdd(t *testing.T) { crashDuringAdd(t, false) }

// TestCrashDuringAddSentences is TestCrashDuringAdd for an index that
// keeps sentence vectors: after every kill each whole document's chunks
// have their sentence vectors too, readable and right.
func TestCrashDuringAddSentences(t *testing.T) { crashDuringAdd(t, true) }

func crashDuringAdd(t *testing.T, sentences bool) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	root := t.TempDir()
	src := filepath.Join(root, "src")
	dir := filepath.Join(root, "idx")
	const nDocs = 60
	crashCorpus(t, src, nDocs)
	c := testChunker(t)
	wantChunks := map[string]int{}
	for i := range nDocs {
		p := filepath.Join(src, fmt.Sprintf("doc%03d.txt", i))
		b, _ := os.ReadFile(p)
		cs, _ := c.Chunk(ctx, filepath.ToSlash(p), string(b))
		wantChunks[filepath.ToSlash(p)] = len(cs)
	}
	prev := map[string]bool{}
	kills := 0
	for round := 0; round < 6; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "CTXSEL_CRASH_INDEX="+dir, "CTXSEL_CRASH_SRC="+src)
		if sentences {
			cmd.Env = append(cmd.Env, "CTXSEL_CRASH_SENTENCES=1")
		}
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		last := round == 5
		if !last {
			// kill after the child has committed a few more documents, at a
			// varying moment inside its next commit cycle
			target := len(prev) + 3 + round
			deadline := time.Now().Add(60 * time.Second)
			for countDocs(dir) < target && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(time.Duration(round*700) * time.Microsecond)
			cmd.Process.Signal(syscall.SIGKILL)
			if err := <-done; err == nil {
				t.Logf("round %d: child finished before the kill", round)
			} else {
				kills++
			}
		} else if err := <-done; err != nil {
			t.Fatalf("final child: %v\n%s", err, out)
		}
		// verify
		s, err := index.OpenDir(dir, index.DirOptions{})
		if err != nil {
			t.Fatalf("round %d: reopen: %v", round, err)
		}
		if chk, err := s.Check(ctx, true); err != nil || !chk.OK() {
			t.Fatalf("round %d: full check after the kill: %+v, %v", round, chk, err)
		}
		list, err := s.List(ctx)
		if err != nil {
			t.Fatalf("round %d: list: %v", round, err)
		}
		hits, err := s.Search(ctx, indextest.HashVector("shared words about crashes"), 100000)
		if err != nil {
			t.Fatalf("round %d: search: %v", round, err)
		}
		// the lexical postings are whole too: BM25 over the index equals
		// lexical.Default.Score over every surviving chunk's text
		lexHits := checkBM25(t, s, "shared words about crashes keyword7 keyword30")
		lexPer := map[string]int{}
		for _, h := range lexHits {
			lexPer[h.Doc]++
		}
		per := map[string]int{}
		for _, h := range hits {
			per[h.Doc]++
		}
		now := map[string]bool{}
		for _, d := range list {
			now[d.ID] = true
			if d.Chunks != wantChunks[d.ID] || per[d.ID] != d.Chunks {
				t.Fatalf("round %d: document %s torn: listed %d chunks, searchable %d, want %d", round, d.ID, d.Chunks, per[d.ID], wantChunks[d.ID])
			}
			if lexPer[d.ID] == 0 {
				t.Fatalf("round %d: document %s: no chunk found by BM25", round, d.ID)
			}
		}
		for id := range prev {
			if !now[id] {
				t.Fatalf("round %d: document %s lost", round, id)
			}
		}
		if len(per) != len(list) {
			t.Fatalf("round %d: %d documents searchable, %d listed", round, len(per), len(list))
		}
		if sentences {
			checkSentences(t, s, len(list) > 0)
		}
		t.Logf("round %d: %d documents whole", round, len(list))
		prev = now
	}
	if len(prev) != nDocs {
		t.Fatalf("after the final run: %d documents, want %d", len(prev), nDocs)
	}
	if kills == 0 {
		t.Fatal("no child was killed mid-way")
	}
	// the last writer removed the killed writers' orphans
	segs, _ := filepath.Glob(filepath.Join(dir, "seg-*.ctxseg"))
	lex, _ := filepath.Glob(filepath.Join(dir, "seg-*.ctxlex"))
	s, _ := index.OpenDir(dir, index.DirOptions{})
	st, _ := s.Stats(ctx)
	if len(segs) != st.Segments || len(lex) != st.Segments {
		t.Fatalf("%d segment files, %d lexical files, %d in the manifest", len(segs), len(lex), st.Segments)
	}
	if snt, _ := filepath.Glob(filepath.Join(dir, "seg-*.ctxsnt")); sentences && len(snt) != st.Segments || !sentences && len(snt) != 0 {
		t.Fatalf("%d sentence files, %d segments", len(snt), st.Segments)
	}
}

// checkSentences asserts that every live chunk of s has its sentence
// vectors stored: the spans evidence.Split gives its text, each sentence's
// vector its embedding.
func checkSentences(t *testing.T, s *index.Dir, any bool) {
	t.Helper()
	live := indextest.LiveChunks(t, s)
	var ids, texts []string
	for id, h := range live {
		ids, texts = append(ids, id), append(texts, h.Text)
	}
	got, err := s.StoredSentences(ctx, indextest.HashEmbedder{}.ModelID(), ids, texts)
	if err != nil {
		t.Fatal(err)
	}
	if any && len(ids) == 0 {
		t.Fatal("no chunks")
	}
	for i, st := range got {
		if st == nil || !slices.Equal(st.Spans, evidence.Split(texts[i]).Sentences) {
			t.Fatalf("chunk %s: stored %v, want the spans of evidence.Split", ids[i], st)
		}
		for k, sp := range st.Spans {
			if c := vecmath.Cosine32(st.Vectors[k], indextest.HashVector(texts[i][sp[0]:sp[1]])); c < 0.99999 {
				t.Fatalf("chunk %s sentence %d: cosine %v to its embedding", ids[i], k, c)
			}
		}
	}
}

// countDocs reads the document count from the manifest without the index
// package (a reader racing the writer; errors count as zero).
func countDocs(dir string) int {
	s, err := index.OpenDir(dir, index.DirOptions{})
	if err != nil {
		return 0
	}
	st, err := s.Stats(ctx)
	if err != nil {
		return 0
	}
	return st.Docs
}

// TestIngestMovedRecord: a record whose id moves to another file, read in
// the same run as the file it left, stays in the index with its new
// file's content, whichever file is read first; the stale-removal pass of
// the file it left must not delete it.
func TestIngestMovedRecord(t *testing.T) {
	for _, tc := range []struct{ name, from, to, text string }{
		{"left-file-first", "a.jsonl", "b.jsonl", "Record x about lighthouses, moved and edited."},
		{"new-file-first", "b.jsonl", "a.jsonl", "Record x about lighthouses, moved and edited."},
		{"unchanged-text", "a.jsonl", "b.jsonl", "Record x about lighthouses."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			line := func(id, text string) string { return fmt.Sprintf("{\"id\":%q,\"text\":%q}\n", id, text) }
			writeFiles(t, root, map[string]string{
				tc.from: line("x", "Record x about lighthouses.") + line("y", "Record y about harbours."),
				tc.to:   line("z", "Record z about ferries."),
			})
			s, _ := index.OpenDir(filepath.Join(t.TempDir(), "idx"), index.DirOptions{Create: true})
			in := newIngester(t, s, nil)
			if rep, err := in.Add(ctx, []string{root}); err != nil || rep.Added != 3 {
				t.Fatalf("first add: %+v %v", rep, err)
			}
			// x moves; the file it left changes too
			writeFiles(t, root, map[string]string{
				tc.from: line("y", "Record y about harbours."),
				tc.to:   line("z", "Record z about ferries.") + line("x", tc.text),
			})
			rep, err := in.Add(ctx, []string{root})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(listIDs(t, s), ","); got != "x,y,z" {
				t.Fatalf("after the move the index holds %s, want x,y,z (report %+v)", got, rep)
			}
			if rep.Removed != 0 {
				t.Errorf("report says %d removed", rep.Removed)
			}
			list, _ := s.List(ctx)
			for _, d := range list {
				if d.ID == "x" && d.Source != filepath.Join(root, tc.to) {
					t.Errorf("x's source %s, want %s", d.Source, filepath.Join(root, tc.to))
				}
			}
			if h := search(t, s, tc.text, 1)[0]; h.Doc != "x" || h.Text != tc.text {
				t.Errorf("x is %q (%s), want %q", h.Text, h.Doc, tc.text)
			}
			// and again: nothing embedded, nothing lost
			rep, err = in.Add(ctx, []string{root})
			if err != nil || rep.Added+rep.Replaced != 0 || rep.Removed != 0 || strings.Join(listIDs(t, s), ",") != "x,y,z" {
				t.Fatalf("re-add: %+v %v, ids %v", rep, err, listIDs(t, s))
			}
		})
	}
}

// TestIngestDuplicateIDAcrossFiles: one id in two files read in one run
// keeps the first file's document and names the other as a problem; it
// neither fails the batch (which held everything else too) nor lets the
// second copy overwrite the first when they land in different commits.
func TestIngestDuplicateIDAcrossFiles(t *testing.T) {
	for _, commitChunks := range []int{1, 1000} {
		t.Run(fmt.Sprint("commit=", commitChunks), func(t *testing.T) {
			root := t.TempDir()
			writeFiles(t, root, map[string]string{
				"a.jsonl": `{"id":"x","text":"Copy in a about lighthouses."}` + "\n" + `{"id":"y","text":"Record y about harbours."}` + "\n",
				"b.jsonl": `{"id":"z","text":"Record z about ferries."}` + "\n" + `{"id":"x","text":"Copy in b about lighthouses."}` + "\n",
			})
			t.Chdir(root)
			s, _ := index.OpenDir(filepath.Join(t.TempDir(), "idx"), index.DirOptions{Create: true})
			in := newIngester(t, s, nil)
			in.CommitChunks = commitChunks
			rep, err := in.Add(ctx, []string{"."})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(listIDs(t, s), ","); got != "x,y,z" {
				t.Fatalf("index holds %s, want x,y,z", got)
			}
			if len(rep.Problems) != 1 || rep.Problems[0].Path != "b.jsonl" || !strings.Contains(rep.Problems[0].Reason, `"x"`) || !strings.Contains(rep.Problems[0].Reason, "a.jsonl") {
				t.Fatalf("problems %+v", rep.Problems)
			}
			if h := search(t, s, "lighthouses", 1)[0]; h.Doc != "x" || h.Text != "Copy in a about lighthouses." {
				t.Fatalf("x is %q", h.Text)
			}
		})
	}
}

// A store that cannot serve sentence vectors is not given them.
func TestIngestSentencesNeedASentenceStore(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"a.txt": "One sentence. Another one."})
	d, _ := index.OpenDir(t.TempDir(), index.DirOptions{Create: true})
	in := &ingest.Ingester{Store: struct{ index.Store }{d}, Embedder: indextest.HashEmbedder{}, Chunker: testChunker(t),
		Encoding: "cl100k_base", Sentences: indextest.HashEmbedder{}}
	if _, err := in.Add(ctx, []string{root}); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("err = %v, want ErrInvalidInput", err)
	}
	if ids := listIDs(t, d); len(ids) != 0 {
		t.Fatalf("stored %v", ids)
	}
}
