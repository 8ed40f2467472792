//go:build !(386 || arm || mips || mipsle)

package weaviate_test

import (
	"context"
	"errors"
	"regexp"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/index/weaviate"
)

func TestParseLocation(t *testing.T) {
	bad := []string{"weaviate://", "weaviate://host/", "weaviate://host:8080/lower", "weaviate://host:8080/A/B", "http://host/Docs",
		"weaviate://user:pw@host/Docs", "weaviate://host/Docs?x=1", "weaviate://host/Do-cs", "weaviate://:8080/Docs"}
	for _, loc := range bad {
		if _, _, _, err := weaviate.ParseLocation(loc); !errors.Is(err, ctxsel.ErrInvalidInput) {
			t.Errorf("%q: %v", loc, err)
		}
	}
	// index.Open routes the schemes here (and rejects bad ones before dialling)
	if _, err := index.Open(context.Background(), "weaviate://localhost:1/bad-name", index.OpenOptions{}); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Errorf("index.Open: %v", err)
	}
}

func TestUnreachable(t *testing.T) {
	_, err := weaviate.Open(context.Background(), "weaviate://127.0.0.1:1/Docs", weaviate.Options{})
	if err == nil || !regexp.MustCompile(`weaviate weaviate://127.0.0.1:1/Docs: server not ready`).MatchString(err.Error()) {
		t.Fatalf("unreachable server: %v", err)
	}
}

func TestChunkUUID(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for _, doc := range []string{"a", "b", "a#1", "ünïcode/path.txt"} {
		for i := range 3 {
			u := weaviate.ChunkUUID(doc, i)
			if !re.MatchString(u) || seen[u] {
				t.Fatalf("ChunkUUID(%q, %d) = %s", doc, i, u)
			}
			seen[u] = true
			if weaviate.ChunkUUID(doc, i) != u {
				t.Fatal("not deterministic")
			}
		}
	}
}
