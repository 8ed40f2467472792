package dataset_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/token"
)

// TestLaRA reads the LaRA benchmark from ../shared: 32k books chunked
// 600/100 tokens give about 64 passages per document (ldar.txt App. C.3).
func TestLaRA(t *testing.T) {
	const root = "../../shared/data/lara"
	if _, err := os.Stat(root); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("LaRA missing in CI: %v", err)
		}
		t.Skip("LaRA not available")
	}
	tok, err := token.New("")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := chunk.NewTokens(tok, 600, 100)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := dataset.LoadLaRA(context.Background(), root, "32k/book/location", ch)
	if err != nil {
		t.Fatal(err)
	}
	docs := map[int]bool{}
	total := 0
	for _, r := range recs {
		if r.Task != "location" || len(r.Answers) != 1 || r.GoldCount() != 0 || !strings.HasPrefix(r.ID, "32k/book/location/") {
			t.Fatalf("record %+v", r.ID)
		}
		docs[len(r.Passages)] = true
		total += len(r.Passages)
	}
	mean := float64(total) / float64(len(recs))
	if len(recs) < 50 || mean < 40 || mean > 90 {
		t.Fatalf("%d records, %.1f passages each", len(recs), mean)
	}
	for _, bad := range []string{"32k", "64k/book", "32k/poems", "32k/book/../x", "32k/book/nosuchlevel"} {
		if _, err := dataset.LoadLaRA(context.Background(), root, bad, ch); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzParseLaRA(f *testing.F) {
	for _, s := range []string{"32k/book", "128k/paper/location", "", "/", "32k/book/a/b", "32k/book/.."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		length, kind, level, err := dataset.ParseLaRA(s)
		if err != nil {
			return
		}
		if length == "" || kind == "" || strings.ContainsAny(level, "/\\.") {
			t.Fatalf("%q → %q %q %q", s, length, kind, level)
		}
	})
}
