package index_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/index"
)

// The embedded index says what lies above each found chunk in its document
// (chunk.Above), for every chunk of a document in one pass, and nothing
// for a hit that is not a chunk it holds now.
func TestDirAbove(t *testing.T) {
	s, err := index.OpenDir(filepath.Join(t.TempDir(), "idx"), index.DirOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := testChunker(t)
	var b strings.Builder
	b.WriteString("# Guide\n\n## Codes\n\n| Code | Meaning |\n| --- | --- |\n")
	for i := range 40 {
		b.WriteString("| E" + strings.Repeat("1", 1+i%3) + " | a fault of the watchdog number " + string(rune('a'+i%26)) + " |\n")
	}
	b.WriteString("\n## After\n\nThe end of the guide is here.\n")
	docs := []index.Document{makeDoc(t, c, "guide.md", b.String()), makeDoc(t, c, "animals", corpus["animals"])}
	if err := s.Add(ctx, testConfig(c), docs); err != nil {
		t.Fatal(err)
	}
	hits := search(t, s, "watchdog fault", 1000)
	if len(hits) < 4 {
		t.Fatalf("%d hits, want the guide's chunks", len(hits))
	}
	var ar index.AboveReader = s
	above, err := ar.Above(ctx, hits)
	if err != nil {
		t.Fatal(err)
	}
	text := docs[0].Text
	tables := 0
	for i, h := range hits {
		want := ""
		if h.Doc == "guide.md" {
			want = chunk.Above(text, h.Start)
		}
		if above[i] != want {
			t.Errorf("hit %s: above %q, want %q", h.ID(), above[i], want)
		}
		if strings.HasSuffix(above[i], "| Code | Meaning |\n| --- | --- |") {
			tables++
		}
	}
	if tables < 2 {
		t.Errorf("%d chunks start inside the table: want several", tables)
	}
	// a hit whose text is not the stored chunk's, or that names no chunk
	var stale []index.Hit
	for i, h := range hits {
		if above[i] != "" && len(stale) < 2 {
			stale = append(stale, h)
		}
	}
	stale[0].Text += " changed"
	stale[1].Index = 999
	above, err = ar.Above(ctx, stale)
	if err != nil {
		t.Fatal(err)
	}
	if above[0] != "" || above[1] != "" {
		t.Errorf("stale hits: %q", above)
	}
}
