package ingest_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/index/indextest"
	"github.com/ctxsel/ctxsel/index/ingest"
)

func problemPaths(rep ingest.Report) []string {
	var out []string
	for _, p := range rep.Problems {
		out = append(out, filepath.ToSlash(p.Path))
	}
	slices.Sort(out)
	return out
}

// TestIngestSkipsNonText: binary files and text that is not UTF-8 are
// skipped with a problem naming them; UTF-8 text is indexed with offsets
// that slice the file as it is on disk.
func TestIngestSkipsNonText(t *testing.T) {
	root := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 4096)
	for i := range random {
		random[i] = byte(rng.UintN(256))
	}
	noNUL := slices.Clone(random)
	for i, b := range noNUL {
		if b == 0 {
			noNUL[i] = 1
		}
	}
	// "Café crème, déjà vu" and more, in ISO 8859-1: é is the single byte 0xE9
	latin1 := []byte("Caf\xe9 cr\xe8me, d\xe9j\xe0 vu. Le gar\xe7on appr\xe9cie l'\xe9t\xe9 \xe0 Montr\xe9al.\n")
	utf8Text := "Glaciers carve valleys. Ice moves slowly downhill.\nMoraines mark where glaciers stopped; café owners nearby sell crème brûlée.\n"
	writeFiles(t, root, map[string]string{
		"random.txt":  string(random),
		"random.md":   string(noNUL), // no NUL: caught by its share of invalid UTF-8
		"random.html": string(random),
		"latin1.txt":  string(latin1),
		"utf16.txt":   "\xff\xfeH\x00i\x00",
		"good.txt":    utf8Text,
	})
	t.Chdir(root)
	s, _ := index.OpenDir(filepath.Join(root, "idx"), index.DirOptions{Create: true})
	in := newIngester(t, s, nil)
	rep, err := in.Add(ctx, []string{"."})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(listIDs(t, s), ","); got != "good.txt" {
		t.Fatalf("indexed %s, want only good.txt", got)
	}
	if got, want := problemPaths(rep), []string{"latin1.txt", "random.html", "random.md", "random.txt", "utf16.txt"}; !slices.Equal(got, want) {
		t.Fatalf("problems %v, want %v", rep.Problems, want)
	}
	for _, p := range rep.Problems {
		want := "binary"
		switch p.Path {
		case "latin1.txt":
			want = "not UTF-8 (first bad byte 0xe9 at offset 3"
		case "utf16.txt":
			want = "UTF-16"
		}
		if !strings.Contains(p.Reason, want) {
			t.Errorf("%s: reason %q lacks %q", p.Path, p.Reason, want)
		}
	}
	// the offsets of what was indexed point into the file on disk
	disk, _ := os.ReadFile(filepath.Join(root, "good.txt"))
	hits, _ := s.Search(ctx, indextest.HashVector("glaciers café"), 100)
	if len(hits) == 0 {
		t.Fatal("no hits")
	}
	for _, h := range hits {
		if string(disk[h.Start:h.End]) != h.Text {
			t.Fatalf("chunk %s: bytes [%d, %d) of the file are %q, the chunk is %q", h.ID(), h.Start, h.End, disk[h.Start:h.End], h.Text)
		}
	}
}

// TestIngestInvalidUTF8IDs: an id that is not UTF-8 is refused clearly,
// never stored as U+FFFD.
func TestIngestInvalidUTF8IDs(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"ids.jsonl": `{"id":"ok","text":"fine"}` + "\n" + "{\"id\":\"a\xff\",\"text\":\"bad id\"}\n",
	})
	t.Chdir(root)
	s, _ := index.OpenDir(filepath.Join(root, "idx"), index.DirOptions{Create: true})
	rep, err := newIngester(t, s, nil).Add(ctx, []string{"ids.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0].Reason, "line 2") || !strings.Contains(rep.Problems[0].Reason, "not valid UTF-8") {
		t.Fatalf("problems %+v", rep.Problems)
	}
	if ids := listIDs(t, s); len(ids) != 0 {
		t.Fatalf("stored %q", ids)
	}
	c := testChunker(t)
	err = s.Add(ctx, testConfig(c), []index.Document{makeDoc(t, c, "a\xff", "text")})
	if !errors.Is(err, ctxsel.ErrInvalidInput) || !strings.Contains(err.Error(), "not valid UTF-8") {
		t.Fatalf("Add with a bad id: %v", err)
	}
}

// TestIngestUnreadableFiles: a file that cannot be read is skipped and
// named; the others are indexed.
func TestIngestUnreadableFiles(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"a.txt": "alpha words", "z.txt": "zulu words"})
	src := filepath.Join(root, "src")
	os.Mkdir(src, 0o755)
	os.Rename(filepath.Join(root, "a.txt"), filepath.Join(src, "a.txt"))
	os.Rename(filepath.Join(root, "z.txt"), filepath.Join(src, "z.txt"))
	if err := os.Symlink(filepath.Join(root, "nowhere.txt"), filepath.Join(src, "dangling.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(root, filepath.Join(src, "folder.txt")); err != nil {
		t.Fatal(err)
	}
	s, _ := index.OpenDir(filepath.Join(root, "idx"), index.DirOptions{Create: true})
	rep, err := newIngester(t, s, nil).Add(ctx, []string{src})
	if err != nil {
		t.Fatal(err)
	}
	if ids := listIDs(t, s); len(ids) != 2 {
		t.Fatalf("indexed %q, want a.txt and z.txt", ids)
	}
	got := problemPaths(rep)
	if len(got) != 2 || !strings.HasSuffix(got[0], "dangling.txt") || !strings.HasSuffix(got[1], "folder.txt") {
		t.Fatalf("problems %+v", rep.Problems)
	}
	if r := rep.Problems[0].Reason; r != "stat: no such file or directory" {
		t.Errorf("dangling link: reason %q", r)
	}
	if r := rep.Problems[1].Reason; r != "a symlink to a folder, not a regular file" {
		t.Errorf("link to a folder: reason %q", r)
	}
}

// failingEmbedder fails from its n-th call on.
type failingEmbedder struct {
	indextest.HashEmbedder
	calls *atomic.Int64
	n     int64
}

func (f failingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if f.calls.Add(1) >= f.n {
		return nil, errors.New("embedder down")
	}
	return f.HashEmbedder.Embed(ctx, texts)
}

// TestIngestFailureSaysWhatWasCommitted: a run that fails names the
// documents its commits stored.
func TestIngestFailureSaysWhatWasCommitted(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	for i := range 6 {
		files[fmt.Sprintf("d%d.txt", i)] = fmt.Sprintf("document %d about topic %d.", i, i)
	}
	writeFiles(t, root, files)
	t.Chdir(root)
	// committed as they come, or all by the final commit after the failure
	for _, every := range []int{1, 1000} {
		idx := filepath.Join(root, fmt.Sprint("idx", every))
		s, _ := index.OpenDir(idx, index.DirOptions{Create: true})
		in := newIngester(t, s, nil)
		in.Embedder = failingEmbedder{calls: new(atomic.Int64), n: 4}
		in.EmbedBatch, in.CommitChunks = 1, every
		rep, err := in.Add(ctx, []string{"d0.txt", "d1.txt", "d2.txt", "d3.txt", "d4.txt", "d5.txt"})
		if err == nil || !strings.Contains(err.Error(), "embedder down") {
			t.Fatalf("err %v", err)
		}
		stored := listIDs(t, s)
		if rep.Committed != 3 || !slices.Equal(rep.CommittedIDs, stored) {
			t.Fatalf("commit every %d: report says %d committed (%v), the index holds %v", every, rep.Committed, rep.CommittedIDs, stored)
		}
	}
}

// TestIngestSync: with Sync the documents of deleted files go; without,
// they stay.
func TestIngestSync(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "src")
	writeFiles(t, src, map[string]string{"a.txt": "alpha", "b.txt": "bravo", "sub/c.md": "charlie", "d.jsonl": `{"id":"d1","text":"delta"}` + "\n"})
	other := filepath.Join(root, "other")
	writeFiles(t, other, map[string]string{"o.txt": "oscar"})
	s, _ := index.OpenDir(filepath.Join(root, "idx"), index.DirOptions{Create: true})
	in := newIngester(t, s, nil)
	if _, err := in.Add(ctx, []string{src, other}); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(src, "b.txt"))
	os.RemoveAll(filepath.Join(src, "sub"))
	os.Remove(filepath.Join(src, "d.jsonl"))
	os.Remove(filepath.Join(other, "o.txt")) // outside the synced folder: stays
	rep, err := in.Add(ctx, []string{src})
	if err != nil || rep.Gone != 0 || len(listIDs(t, s)) != 5 {
		t.Fatalf("without sync: gone %d, %d documents, %v", rep.Gone, len(listIDs(t, s)), err)
	}
	in.Sync = true
	rep, err = in.Add(ctx, []string{src})
	if err != nil {
		t.Fatal(err)
	}
	ids := listIDs(t, s)
	slices.SortFunc(ids, func(a, b string) int { return strings.Compare(filepath.Base(a), filepath.Base(b)) })
	if rep.Gone != 3 || len(ids) != 2 || !strings.HasSuffix(ids[0], "src/a.txt") || !strings.HasSuffix(ids[1], "other/o.txt") {
		t.Fatalf("with sync: gone %d, left %v", rep.Gone, ids)
	}
	// a synced folder deleted as a whole
	os.RemoveAll(src)
	rep, err = in.Add(ctx, []string{src})
	if ids := listIDs(t, s); err != nil || rep.Gone != 1 || len(ids) != 1 || !strings.HasSuffix(ids[0], "other/o.txt") {
		t.Fatalf("deleted folder: gone %d, left %v, %v", rep.Gone, ids, err)
	}
}

// TestIngestCommitsSmallBatches: the default commit size keeps a run of a
// few hundred chunks from being one all-or-nothing commit.
func TestIngestCommitsSmallBatches(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	for i := range 40 {
		var b strings.Builder
		for k := range 30 {
			fmt.Fprintf(&b, "Document %d sentence %d talks about subject %d at some length. ", i, k, k*i)
		}
		files[fmt.Sprintf("d%02d.txt", i)] = b.String()
	}
	writeFiles(t, root, files)
	s, _ := index.OpenDir(filepath.Join(root, "idx"), index.DirOptions{Create: true})
	rep, err := newIngester(t, s, nil).Add(ctx, []string{root})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Chunks < 2*ingest.DefaultCommitChunks || rep.Chunks >= 2048 {
		t.Fatalf("corpus of %d chunks does not test the batch size", rep.Chunks)
	}
	if min := rep.Chunks / (ingest.DefaultCommitChunks + 100); rep.Commits < min {
		t.Fatalf("%d chunks in %d commits, want at least %d", rep.Chunks, rep.Commits, min)
	}
}
