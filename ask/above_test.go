package ask_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/ask"
	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/index/indextest"
	"github.com/ctxsel/ctxsel/index/ingest"
	"github.com/ctxsel/ctxsel/token"
)

// manual writes a manual whose error table is longer than a chunk, under
// a section path: as Markdown (ext "md") or as HTML ("html"), which
// ingestion writes as the same Markdown.
func manual(t *testing.T, ext string) string {
	t.Helper()
	var b strings.Builder
	if ext == "html" {
		b.WriteString("<html><body><h1>Router Guide</h1><h2>1. Installation</h2><p>Unpack the router and connect the cable.</p><h2>2. Configuration</h2><h3>2.3 Error codes</h3>")
		b.WriteString("<table><thead><tr><th>Code</th><th>Meaning</th><th>Action</th></tr></thead><tbody>")
		for i := range 60 {
			fmt.Fprintf(&b, "<tr><td>E%d</td><td>fault %d of the watchdog</td><td>restart service %d</td></tr>", 100+i, i, i%7)
		}
		b.WriteString("</tbody></table><h2>3. Maintenance</h2><p>Clean the vents every six months.</p></body></html>")
	} else {
		b.WriteString("# Router Guide\n\n## 1. Installation\n\nUnpack the router and connect the cable.\n\n## 2. Configuration\n\n### 2.3 Error codes\n\n")
		b.WriteString("| Code | Meaning | Action |\n| --- | --- | --- |\n")
		for i := range 60 {
			fmt.Fprintf(&b, "| E%d | fault %d of the watchdog | restart service %d |\n", 100+i, i, i%7)
		}
		b.WriteString("\n## 3. Maintenance\n\nClean the vents every six months.\n")
	}
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "router."+ext), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return src
}

// TestAskSendsWhatIsAbove: a chunk an index cut inside a table is sent
// with the table's header row and its section path, under the document's
// title, however the chunker cut it, from a Markdown file or a web page.
func TestAskSendsWhatIsAbove(t *testing.T) {
	for _, ext := range []string{"md", "html"} {
		t.Run(ext, func(t *testing.T) { askSendsWhatIsAbove(t, ext) })
	}
}

// manualIndex is an embedded index holding the manual as a file of ext,
// cut into 120-token chunks sharing 20 (its table cut among them).
func manualIndex(t *testing.T, ext string) *index.Dir {
	t.Helper()
	s, err := index.OpenDir(filepath.Join(t.TempDir(), "idx"), index.DirOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	tk, _ := token.New("")
	c, _ := chunk.NewTokens(tk, 120, 20)
	in := &ingest.Ingester{Store: s, Embedder: indextest.HashEmbedder{}, Chunker: c, Encoding: tk.Encoding()}
	if _, err := in.Add(ctx, []string{manual(t, ext)}); err != nil {
		t.Fatal(err)
	}
	return s
}

func askSendsWhatIsAbove(t *testing.T, ext string) {
	s := manualIndex(t, ext)
	a, err := ask.Ask(ctx, s, indextest.HashEmbedder{}, "What does error code E141 mean, the fault of the watchdog?", ask.Options{Strategy: "evidence:budget=2000,floor=0,stop=0"})
	if err != nil {
		t.Fatal(err)
	}
	const header = "| Code | Meaning | Action |\n| --- | --- | --- |"
	rows, cut := 0, 0
	for i, ev := range a.Selection.Evidence {
		if !strings.Contains(ev.Text, "| E1") {
			continue
		}
		rows++
		first := strings.Index(ev.Text, "| E1")
		if h := strings.Index(ev.Text, header); h < 0 || h > first {
			t.Errorf("passage %s sends rows without their header:\n%s", a.Selection.IDs[i], ev.Text)
		}
		if !strings.Contains(ev.Text[:first], "### 2.3 Error codes") {
			t.Errorf("passage %s sends rows without their section:\n%s", a.Selection.IDs[i], ev.Text)
		}
		if ev.Above != "" {
			cut++
			if ev.Title != "router" {
				t.Errorf("passage %s: title %q: want the file's name, as without the lines above", a.Selection.IDs[i], ev.Title)
			}
			if !strings.HasPrefix(ev.Text, "router\n# Router Guide\n## 2. Configuration\n### 2.3 Error codes\n"+header+"\n") {
				t.Errorf("passage %s: sent text opens\n%s", a.Selection.IDs[i], ev.Text[:min(len(ev.Text), 200)])
			}
		}
	}
	if rows < 3 || cut < 2 {
		t.Fatalf("%d passages with rows, %d of them cut inside the table: want several", rows, cut)
	}
	// the prompt holds what is sent
	for _, ev := range a.Selection.Evidence {
		if ev.Above != "" && !strings.Contains(a.Prompt, ev.Above) {
			t.Errorf("the prompt lacks %q", ev.Above)
		}
	}
}

// shortAbove is an index whose AboveReader gives fewer strings than it
// was asked for (a store of the caller's, broken).
type shortAbove struct{ *index.Dir }

func (s shortAbove) Above(ctx context.Context, hits []index.Hit) ([]string, error) {
	out, err := s.Dir.Above(ctx, hits)
	return out[:len(out)-1], err
}

// TestAskAboveReaderShort: a store whose lines above are fewer than the
// chunks asked for fails the question with an error (as it did when ask
// read them for every candidate), never a panic, and one that says it is
// no fault of the question's.
func TestAskAboveReaderShort(t *testing.T) {
	s := manualIndex(t, "md")
	_, err := ask.Ask(ctx, shortAbove{s}, indextest.HashEmbedder{}, "What does error code E141 mean?", ask.Options{Strategy: "evidence:budget=2000,floor=0,stop=0"})
	if err == nil || !strings.Contains(err.Error(), "what lies above the chunks: the store gave ") {
		t.Fatalf("got %v, want the store's short answer as an error", err)
	}
	if errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Errorf("%v: the store's fault is no invalid input of the question's", err)
	}
}
