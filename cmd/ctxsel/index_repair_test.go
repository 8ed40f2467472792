package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/index/indextest"
	"github.com/ctxsel/ctxsel/token"
)

// TestIndexVerifyRepair: stats, ls and verify exit 1 and name the damaged
// file; repair drops it, names the documents to add again, and the index
// checks clean afterwards.
func TestIndexVerifyRepair(t *testing.T) {
	useHashEmbedder(t)
	root := t.TempDir()
	docs := filepath.Join(root, "docs")
	os.MkdirAll(docs, 0o755)
	idx := filepath.Join(root, "idx")
	for _, f := range []struct{ name, text string }{
		{"volcano.txt", "Mount Etna is an active volcano on Sicily."},
		{"bread.txt", "Bread rises because yeast makes gas."},
	} {
		os.WriteFile(filepath.Join(docs, f.name), []byte(f.text), 0o644)
		if code, _, errs := runCLI(t, "", "index", "add", "--index", idx, filepath.Join(docs, f.name)); code != 0 {
			t.Fatalf("add: %d %s", code, errs)
		}
	}
	all, _ := filepath.Glob(filepath.Join(idx, "seg-*")) // segment files of every kind
	if code, out, _ := runCLI(t, "", "index", "verify", "--index", idx); code != 0 || !strings.HasPrefix(out, fmt.Sprintf("ok: %d files", 1+len(all))) {
		t.Fatalf("verify of a sound index: %d %s", code, out)
	}
	segs, _ := filepath.Glob(filepath.Join(idx, "seg-*.ctxseg")) // vector segment files
	slices.Sort(segs)
	if len(segs) != 2 {
		t.Fatalf("%d segments", len(segs))
	}
	bad := filepath.Base(segs[1]) // bread.txt
	b, _ := os.ReadFile(segs[1])
	os.WriteFile(segs[1], b[:len(b)-1], 0o644)

	for _, args := range [][]string{{"stats"}, {"ls"}, {"stats", "--json"}, {"ls", "--verify"}} {
		code, _, errs := runCLI(t, "", append([]string{"index"}, append(args, "--index", idx)...)...)
		if code != 1 || !strings.Contains(errs, bad) || !strings.Contains(errs, "index repair") {
			t.Fatalf("%v on a damaged index: exit %d, %s", args, code, errs)
		}
	}
	code, out, _ := runCLI(t, "", "index", "verify", "--index", idx)
	if code != 1 || !strings.Contains(out, "damaged  "+bad) || !strings.Contains(out, "bread.txt") {
		t.Fatalf("verify: %d %s", code, out)
	}
	code, out, errs := runCLI(t, "", "index", "repair", "--index", idx)
	if code != 0 || !strings.Contains(out, "1 documents dropped") || !strings.Contains(out, "ctxsel index add --index "+idx+" "+filepath.Join(docs, "bread.txt")) {
		t.Fatalf("repair: %d %s %s", code, out, errs)
	}
	if code, out, _ := runCLI(t, "", "index", "verify", "--index", idx); code != 0 {
		t.Fatalf("verify after repair: %d %s", code, out)
	}
	if code, out, _ := runCLI(t, "", "index", "ls", "--index", idx); code != 0 || strings.Contains(out, "bread") || !strings.Contains(out, "volcano") {
		t.Fatalf("ls after repair: %d %s", code, out)
	}
}

// A damaged header of a lexical file (.ctxlex), its checksum trailer
// intact, is caught by stats and ls as by verify: they check every segment
// file's header.
func TestIndexStatsChecksLexicalHeader(t *testing.T) {
	useHashEmbedder(t)
	root := t.TempDir()
	idx := filepath.Join(root, "idx")
	doc := filepath.Join(root, "volcano.txt")
	os.WriteFile(doc, []byte("Mount Etna is an active volcano on Sicily."), 0o644)
	if code, _, errs := runCLI(t, "", "index", "add", "--index", idx, doc); code != 0 {
		t.Fatalf("add: %d %s", code, errs)
	}
	lex, _ := filepath.Glob(filepath.Join(idx, "seg-*.ctxlex"))
	if len(lex) != 1 {
		t.Fatalf("lexical files %v", lex)
	}
	b, _ := os.ReadFile(lex[0])
	b[0] ^= 0xFF // the magic; the trailer still matches the manifest
	os.WriteFile(lex[0], b, 0o644)
	for _, args := range [][]string{{"stats"}, {"ls"}, {"verify"}} {
		code, out, errs := runCLI(t, "", append([]string{"index"}, append(args, "--index", idx)...)...)
		if code != 1 || !strings.Contains(out+errs, filepath.Base(lex[0])) {
			t.Errorf("%v with a damaged .ctxlex header: exit %d, %s %s", args, code, out, errs)
		}
	}
}

// TestIndexAddSkipsAndSyncs: binary and unreadable files are named and
// skipped with exit 3 while the rest is indexed; sync removes the
// documents of deleted files.
func TestIndexAddSkipsAndSyncs(t *testing.T) {
	useHashEmbedder(t)
	root := t.TempDir()
	docs := filepath.Join(root, "docs")
	os.MkdirAll(docs, 0o755)
	idx := filepath.Join(root, "idx")
	os.WriteFile(filepath.Join(docs, "a.txt"), []byte("Alpha text about rivers."), 0o644)
	os.WriteFile(filepath.Join(docs, "b.txt"), []byte("Bravo text about lakes."), 0o644)
	os.WriteFile(filepath.Join(docs, "blob.md"), []byte("PK\x03\x04\x00\x00binary"), 0o644)
	os.Symlink(filepath.Join(root, "gone.txt"), filepath.Join(docs, "dangling.txt"))
	code, out, errs := runCLI(t, "", "index", "add", "--index", idx, docs)
	if code != 3 || !strings.Contains(out, "2 documents added") ||
		!strings.Contains(errs, "note: skipped "+filepath.Join(docs, "blob.md")+": binary") ||
		!strings.Contains(errs, "note: skipped "+filepath.Join(docs, "dangling.txt")) || !strings.Contains(errs, "2 files could not be indexed") {
		t.Fatalf("add: exit %d\n%s\n%s", code, out, errs)
	}
	os.Remove(filepath.Join(docs, "blob.md"))
	os.Remove(filepath.Join(docs, "dangling.txt"))
	os.Remove(filepath.Join(docs, "b.txt"))
	code, out, errs = runCLI(t, "", "index", "sync", "--index", idx, docs)
	if code != 0 || !strings.Contains(out, "1 removed") || !strings.Contains(out, "sync: 1 of the removed documents were of deleted files") || !strings.Contains(out, "1 documents, ") {
		t.Fatalf("sync: exit %d\n%s\n%s", code, out, errs)
	}
	if code, _, errs := runCLI(t, "", "index", "add", "--sync", "--index", idx, docs); code != 0 {
		t.Fatalf("add --sync: %d %s", code, errs)
	}
}

// downEmbedder fails on every call after the first.
type downEmbedder struct {
	indextest.HashEmbedder
	calls *int
}

func (d downEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if *d.calls++; *d.calls > 1 {
		return nil, errors.New("embedder down")
	}
	return d.HashEmbedder.Embed(ctx, texts)
}

// TestIndexAddFailureSaysWhatWasCommitted: a failed run names what it
// left in the index.
func TestIndexAddFailureSaysWhatWasCommitted(t *testing.T) {
	useHashEmbedder(t)
	calls := 0
	openEmbedder = func(string, string) (embed.Embedder, func() error, error) {
		return downEmbedder{calls: &calls}, func() error { return nil }, nil
	}
	root := t.TempDir()
	docs := filepath.Join(root, "docs")
	os.MkdirAll(docs, 0o755)
	// a.txt fills the first embedding batch (32 chunks) exactly, so it is
	// whole when the second call fails
	const spec = "tokens:size=8,overlap=0"
	text := strings.Repeat(" a", 8*32)
	tk, _ := token.New("")
	ch, err := chunk.Parse(spec, tk, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cs, _ := ch.Chunk(context.Background(), "a", text); len(cs) != 32 {
		t.Fatalf("a.txt gives %d chunks, want 32", len(cs))
	}
	os.WriteFile(filepath.Join(docs, "a.txt"), []byte(text), 0o644)
	os.WriteFile(filepath.Join(docs, "b.txt"), []byte("Bravo."), 0o644)
	code, _, errs := runCLI(t, "", "index", "add", "--chunker", spec, "--index", filepath.Join(root, "idx"), docs)
	if code != 1 || !strings.Contains(errs, "1 documents from this run were committed and stay in the index ("+filepath.ToSlash(filepath.Join(docs, "a.txt"))+")") {
		t.Fatalf("exit %d\n%s", code, errs)
	}
}
