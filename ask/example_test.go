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

// The default pipeline: hybrid retrieval, then the evidence selector keeps
// the sentences that answer, each chunk under its document's title, within
// what the reader's window leaves (Window: 4096 here, as #window=4096
// would give it; with an LLM and no window, its server is asked). "…"
// marks sentences left out. (A test embedder scores the chunks here; the
// sentences are embedded with the embedded USE-lite model.)
func Example_evidence() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "idx")
	defer os.RemoveAll(dir)
	store, err := index.OpenDir(dir, index.DirOptions{Create: true})
	if err != nil {
		log.Fatal(err)
	}
	tk, _ := token.New("")
	chunker, _ := chunk.NewSentences(tk, 45)
	text := "Mount Etna is a stratovolcano on the east coast of Sicily. It is one of the most active volcanoes in the world. " +
		"Its summit has four craters. Farmers grow grapes and pistachios on its fertile slopes. " +
		"The volcano erupts several times a year, and lava flows sometimes reach the villages below. " +
		"Tourists climb it in summer."
	chunks, _ := chunker.Chunk(ctx, "guides/Mount Etna.md", text)
	doc := index.Document{ID: "guides/Mount Etna.md", Hash: index.Hash([]byte(text)), Text: text, Chunks: chunks}
	for _, c := range chunks {
		doc.Vectors = append(doc.Vectors, indextest.HashVector(c.Text))
	}
	cfg := index.Config{Model: indextest.HashEmbedder{}.ModelID(), Chunker: chunker.Spec(), Encoding: tk.Encoding()}
	if err := store.Add(ctx, cfg, []index.Document{doc}); err != nil {
		log.Fatal(err)
	}

	a, err := ask.Ask(ctx, store, indextest.HashEmbedder{}, "How often does Etna erupt?",
		ask.Options{Strategy: "default:budget=70", Window: 4096})
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range a.Passages {
		fmt.Printf("%s: %d of %d tokens sent\n%s\n", p.ID, p.Evidence.Tokens, p.Tokens, p.Evidence.Text)
	}
	fmt.Println("window", a.Window.Tokens, "leaves", a.Window.Passages, "tokens for passages")
	// Output:
	// guides/Mount Etna.md#0: 36 of 38 tokens sent
	// Mount Etna
	// Mount Etna is a stratovolcano on the east coast of Sicily. It is one of the most active volcanoes in the world.
	// guides/Mount Etna.md#1: 31 of 38 tokens sent
	// Mount Etna
	// … The volcano erupts several times a year, and lava flows sometimes reach the villages below. Tourists climb it in summer.
	// window 4096 leaves 3488 tokens for passages
}
