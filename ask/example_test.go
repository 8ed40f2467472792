package ask_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/ctxsel/ctxsel/ask"
	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/index/indextest"
	"github.com/ctxsel/ctxsel/token"
)

// Ask a question over an embedded index: the passages Adaptive-k keeps from
// the hybrid (cosine + BM25, z-score fused) ranking, why, and the prompt. Set Options.LLM (llm.FromEnv) to also get an answer.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "idx")
	defer os.RemoveAll(dir)
	store, err := index.OpenDir(dir, index.DirOptions{Create: true})
	if err != nil {
		log.Fatal(err)
	}
	tk, _ := token.New("")
	chunker, _ := chunk.NewSentences(tk, 20)
	text := "Mount Etna is a volcano in Sicily. Etna erupts often. " +
		"Bread rises because of yeast. Jazz musicians improvise. The Moon has craters."
	chunks, _ := chunker.Chunk(ctx, "notes.txt", text)
	doc := index.Document{ID: "notes.txt", Hash: index.Hash([]byte(text)), Text: text, Chunks: chunks}
	for _, c := range chunks {
		doc.Vectors = append(doc.Vectors, indextest.HashVector(c.Text))
	}
	cfg := index.Config{Model: indextest.HashEmbedder{}.ModelID(), Chunker: chunker.Spec(), Encoding: tk.Encoding()}
	if err := store.Add(ctx, cfg, []index.Document{doc}); err != nil {
		log.Fatal(err)
	}

	a, err := ask.Ask(ctx, store, indextest.HashEmbedder{}, "Does Etna erupt?", ask.Options{Strategy: "adaptivek:buffer=0"})
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range a.Passages {
		fmt.Printf("%s %.3f %q\n", p.ID, p.Score, p.Text)
	}
	fmt.Println(a.Selection.Explanation.Decision.Kind, "cut after rank", a.Selection.Explanation.Decision.Rank)
	fmt.Println(a.PromptTokens > 0, len(a.Scores), "candidates by", a.Retriever, "retrieval")
	// Output:
	// notes.txt#0 0.500 "Mount Etna is a volcano in Sicily. Etna erupts often."
	// gap cut after rank 0
	// true 2 candidates by hybrid retrieval
}
