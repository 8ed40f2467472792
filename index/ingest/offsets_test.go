package ingest_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/index/indextest"
	"github.com/ctxsel/ctxsel/index/ingest"
)

// recordingEmbedder is HashEmbedder keeping every text it was given.
type recordingEmbedder struct {
	indextest.HashEmbedder
	mu    sync.Mutex
	texts []string
}

func (r *recordingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	r.mu.Lock()
	r.texts = append(r.texts, texts...)
	r.mu.Unlock()
	return r.HashEmbedder.Embed(ctx, texts)
}

// allHits returns every chunk of the store, by document id.
func allHits(t *testing.T, s index.Store) map[string][]index.Hit {
	t.Helper()
	list, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range list {
		n += d.Chunks
	}
	hits, err := s.Search(ctx, indextest.HashVector("glaciers valleys moraines café"), n+10)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != n {
		t.Fatalf("search gave %d chunks, the index holds %d", len(hits), n)
	}
	out := map[string][]index.Hit{}
	for _, h := range hits {
		out[h.Doc] = append(out[h.Doc], h)
	}
	return out
}

// TestIngestOffsetsPointIntoFile: a byte-order mark and CRLF (or lone CR)
// line ends do not move offsets: the bytes at [Start, End) of the file on
// disk are the chunk's text, character offsets count the file's code
// points, and only what is embedded is normalised ("\n" line ends, no
// byte-order mark). HTML offsets point into the extracted visible text
// (what HTMLText returns), as documented.
func TestIngestOffsetsPointIntoFile(t *testing.T) {
	root := t.TempDir()
	para := func(n int, eol string) string {
		var b strings.Builder
		for i := range n {
			b.WriteString("Glaciers carve valleys number " + string(rune('A'+i)) + ". Ice moves slowly downhill, café by café." + eol)
			b.WriteString("Moraines mark where glaciers stopped; crème brûlée is sold nearby." + eol + eol)
		}
		return b.String()
	}
	files := map[string]string{
		"bom.txt":   "\ufeff" + para(6, "\n"),
		"crlf.md":   "# Glaciers\r\n\r\n" + para(6, "\r\n"),
		"mixed.txt": "\ufeff" + para(2, "\r\n") + para(2, "\n") + para(2, "\r") + "Last line without an end, glaciers.",
		"lf.txt":    para(3, "\n"),
		"page.html": "\ufeff<html><head><title>Glaciers</title></head>\r\n<body><p>Glaciers carve valleys.\r\nIce moves slowly.</p>\r\n<p>Moraines mark where glaciers stopped.</p></body></html>\r\n",
	}
	writeFiles(t, root, files)
	t.Chdir(root)
	s, _ := index.OpenDir(filepath.Join(root, "idx"), index.DirOptions{Create: true})
	rec := &recordingEmbedder{}
	in := &ingest.Ingester{Store: s, Embedder: rec, Chunker: testChunker(t), Encoding: "cl100k_base"}
	rep, err := in.Add(ctx, []string{"."})
	if err != nil || len(rep.Problems) > 0 {
		t.Fatalf("add: %v, problems %+v", err, rep.Problems)
	}
	byDoc := allHits(t, s)
	for name := range files {
		hits := byDoc[name]
		if len(hits) == 0 {
			t.Fatalf("%s: no chunks", name)
		}
		disk, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		ref := disk
		if strings.HasSuffix(name, ".html") {
			text, err := ingest.HTMLText(strings.NewReader(string(disk)))
			if err != nil {
				t.Fatal(err)
			}
			ref = []byte(ingest.CleanText(text))
		}
		if name != "page.html" && len(hits) < 2 {
			t.Fatalf("%s: %d chunk, want several to test offsets past the first", name, len(hits))
		}
		for _, h := range hits {
			if h.Start < 0 || h.End > len(ref) || h.Start > h.End {
				t.Fatalf("%s: chunk %s offsets [%d, %d) outside the %d bytes", name, h.ID(), h.Start, h.End, len(ref))
			}
			if got := string(ref[h.Start:h.End]); got != h.Text {
				t.Errorf("%s: chunk %s: bytes [%d, %d) are %q, the chunk is %q", name, h.ID(), h.Start, h.End, got, h.Text)
			}
			if cs, ce := utf8.RuneCount(ref[:h.Start]), utf8.RuneCount(ref[:h.End]); h.CharStart != cs || h.CharEnd != ce {
				t.Errorf("%s: chunk %s: characters [%d, %d), want [%d, %d)", name, h.ID(), h.CharStart, h.CharEnd, cs, ce)
			}
			if strings.ContainsRune(h.Text, '\ufeff') {
				t.Errorf("%s: chunk %s holds the byte-order mark: %q", name, h.ID(), h.Text)
			}
		}
	}
	// the file's text is all there: chunks of a BOM file start after the mark
	if h := firstChunk(byDoc["bom.txt"]); h.Start != 3 || h.CharStart != 1 || !strings.HasPrefix(h.Text, "Glaciers carve valleys number A.") {
		t.Errorf("bom.txt: first chunk [%d, %d) chars from %d: %q", h.Start, h.End, h.CharStart, h.Text)
	}
	for _, tx := range rec.texts {
		if strings.ContainsAny(tx, "\r\ufeff") {
			t.Fatalf("embedded text not normalised: %q", tx)
		}
	}
}

func firstChunk(hits []index.Hit) index.Hit {
	best := hits[0]
	for _, h := range hits {
		if h.Index < best.Index {
			best = h
		}
	}
	return best
}
