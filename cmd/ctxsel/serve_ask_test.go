package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/server"
)

func TestServeAskerAnswersFromIndex(t *testing.T) {
	useHashEmbedder(t)
	root := t.TempDir()
	doc := filepath.Join(root, "etna.txt")
	os.WriteFile(doc, []byte("Mount Etna is an active volcano on Sicily. Bread rises because yeast makes gas. The Moon has no air."), 0o644)
	idx := filepath.Join(root, "idx")
	if code, _, errs := runCLI(t, "", "index", "add", "--index", idx, "--chunker", "sentences:max_tokens=12", doc); code != 0 {
		t.Fatalf("index add: %s", errs)
	}
	asker, closeAsker, err := newIndexAsker(context.Background(), idx)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAsker()
	st, caps, err := ctxsel.Parse("topk:k=2")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := asker.Ask(context.Background(), server.AskRequest{Query: "volcano on Sicily", Strategy: st, Caps: caps, Spec: "topk:k=2"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Selection.K != 2 || len(resp.Passages) < 2 || resp.Answer != "" || len(resp.Scores) != 3 {
		t.Fatalf("response %+v", resp)
	}
	var ids []string
	for _, p := range resp.Passages {
		ids = append(ids, p.ID)
	}
	for _, id := range resp.Selection.IDs {
		if !slices.Contains(ids, id) {
			t.Fatalf("selected %s is not among the passages %v", id, ids)
		}
	}
	// the request's retriever reaches the index: BM25 scores only the
	// chunk holding the query's words; an unknown retriever is bad input
	resp, err = asker.Ask(context.Background(), server.AskRequest{Query: "volcano Sicily", Strategy: st, Caps: caps, Spec: "topk:k=2", Retriever: "bm25"})
	if err != nil || len(resp.Scores) != 1 || !strings.HasSuffix(resp.Passages[0].ID, "etna.txt#0") {
		t.Fatalf("bm25: %+v %v", resp, err)
	}
	if _, err := asker.Ask(context.Background(), server.AskRequest{Query: "q", Strategy: st, Caps: caps, Spec: "topk:k=2", Retriever: "sparse"}); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("unknown retriever: %v", err)
	}
	if _, _, err := newIndexAsker(context.Background(), filepath.Join(root, "missing")); err == nil {
		t.Fatal("a missing index was accepted")
	}
}
