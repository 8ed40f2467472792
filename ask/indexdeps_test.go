package ask_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/ask"
	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/index/indextest"
	"github.com/ctxsel/ctxsel/index/ingest"
	"github.com/ctxsel/ctxsel/token"
)

// TestIndexDepsResolveBeforeIndex: a spec resolved once, before the index
// is open, with IndexDeps' stand-ins, runs as the same spec resolved by
// Ask with the index at hand — over an index with stored sentence vectors
// (only the question is embedded) and one without — and the sentence
// embedder is chosen from the question's embedder as the caller says.
func TestIndexDepsResolveBeforeIndex(t *testing.T) {
	model := indextest.HashEmbedder{}.ModelID()
	src := cyrillicCorpus(t)
	const question = "какие части есть у вулкана item05"
	for _, withSentences := range []bool{false, true} {
		var sentences embed.Embedder
		if withSentences {
			sentences = indextest.HashEmbedder{}
		}
		// o200k_base, not token.Default: the counter bound is the index's
		s := encodedIndex(t, src, sentences, "o200k_base")
		want, err := ask.Ask(ctx, s, indextest.HashEmbedder{}, question, ask.Options{
			Strategy: "evidence:budget=120", Deps: ctxsel.DepsOf(map[string]any{ctxsel.DepEmbedder: &recorder{id: model}})})
		if err != nil {
			t.Fatal(err)
		}

		r := &recorder{id: model}
		var chosenFrom embed.Embedder
		late := &ask.IndexDeps{SentenceEmbedder: func(e embed.Embedder) (embed.Embedder, error) { chosenFrom = e; return r, nil }}
		how, err := ctxsel.Resolver{Deps: late.Deps}.Resolve("evidence:budget=120")
		if err != nil {
			t.Fatal(err)
		}
		if len(r.seen()) != 0 || chosenFrom != nil {
			t.Fatal("resolving used the sentence embedder")
		}
		q := indextest.HashEmbedder{}
		got, err := ask.Ask(ctx, s, q, question, ask.Options{Resolved: how, IndexDeps: late})
		if err != nil {
			t.Fatal(err)
		}
		if chosenFrom != q {
			t.Errorf("sentence embedder chosen from %v, want the question's embedder", chosenFrom)
		}
		if got.Prompt != want.Prompt || !reflect.DeepEqual(got.Selection, want.Selection) || !reflect.DeepEqual(got.Passages, want.Passages) {
			t.Errorf("sentences stored %v: resolved before the index\n%+v\nresolved by Ask\n%+v", withSentences, got.Selection, want.Selection)
		}
		if seen := r.seen(); withSentences && (len(seen) != 1 || seen[0] != question) {
			t.Errorf("with stored vectors the selector embedded %d texts, want only the question", len(seen))
		} else if !withSentences && len(seen) < 20 {
			t.Errorf("without stored vectors only %d texts were embedded", len(seen))
		}
	}
}

// cyrillicCorpus writes a few many-sentence files in Russian, whose
// tokens o200k_base and cl100k_base count differently.
func cyrillicCorpus(t *testing.T) string {
	t.Helper()
	src := t.TempDir()
	for i, topic := range []string{"вулкане", "хлебе", "луне", "джазе"} {
		text := fmt.Sprintf("# О %s\n\n", topic)
		for k := range 12 {
			text += fmt.Sprintf("Факт %d о %s: item%d%d — одна из его частей. ", k, topic, i, k)
		}
		if err := os.WriteFile(filepath.Join(src, fmt.Sprint(i)+".md"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return src
}

// encodedIndex ingests src into a new index counting tokens in encoding,
// with sentence vectors by sentences (nil: none).
func encodedIndex(t *testing.T, src string, sentences embed.Embedder, encoding string) *index.Dir {
	t.Helper()
	s, err := index.OpenDir(filepath.Join(t.TempDir(), "idx"), index.DirOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	tk, err := token.New(encoding)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := chunk.NewTokens(tk, 80, 10)
	in := &ingest.Ingester{Store: s, Embedder: indextest.HashEmbedder{}, Chunker: c, Encoding: tk.Encoding(), Sentences: sentences}
	if _, err := in.Add(ctx, []string{src}); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestIndexDepsUnbound: before Ask binds them, the stand-ins are the
// dependencies left out: the sentence embedder fails, the counter is
// token.Default's, and the names they do not serve pass on.
func TestIndexDepsUnbound(t *testing.T) {
	late := &ask.IndexDeps{}
	v, err := late.Deps(ctxsel.DepEmbedder)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.(embed.Embedder).Embed(ctx, []string{"x"}); err == nil {
		t.Error("the unbound sentence embedder embedded")
	}
	v, err = late.Deps(ctxsel.DepCounter)
	if err != nil {
		t.Fatal(err)
	}
	if c := v.(token.Counter); c.Encoding() != token.Default || c.Count("two words") != 2 {
		t.Errorf("unbound counter: %s, %d tokens", c.Encoding(), c.Count("two words"))
	}
	v, err = late.Deps(ctxsel.DepSentences)
	if err != nil {
		t.Fatal(err)
	}
	got, err := v.(ctxsel.SentenceStore).StoredSentences(ctx, "m", []string{"a#0", "b#0"}, []string{"a", "b"})
	if err != nil || len(got) != 2 || got[0] != nil || got[1] != nil {
		t.Errorf("unbound sentence store: %v, %v", got, err)
	}
	if _, err := late.Deps(ctxsel.DepLLM); !errors.Is(err, ctxsel.ErrNoDep) {
		t.Errorf("DepLLM: %v, want ErrNoDep", err)
	}
}
