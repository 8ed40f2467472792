package ask_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/ask"
	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/embed/cache"
	"github.com/ctxsel/ctxsel/embed/uselite"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/index/ingest"
	"github.com/ctxsel/ctxsel/token"
)

// carolQuestions are asked in turn, one per iteration.
var carolQuestions = []string{
	"Who is Scrooge's clerk?",
	"What does Marley's ghost carry with him?",
	"Which spirit visits Scrooge first?",
	"What does Scrooge send to the Cratchits on Christmas morning?",
	"Who is Scrooge's nephew?",
	"What is Tiny Tim's illness?",
}

// carolIndexes are LaRA's "A Christmas Carol" indexed as ctxsel index add
// does (tokens:size=600,overlap=100, use-lite int8), without sentence
// vectors and with them in f32 and i8: built once per benchmark process.
var carolIndexes = sync.OnceValues(func() (map[string]*index.Dir, error) {
	const book = "../../shared/data/lara/datasets/32k/book/A Christmas Carol.txt"
	if _, err := os.Stat(book); err != nil {
		return nil, err
	}
	m, err := uselite.New(uselite.Options{})
	if err != nil {
		return nil, err
	}
	tk, err := token.New("")
	if err != nil {
		return nil, err
	}
	c, err := chunk.Parse(chunk.DefaultSpec, tk, m)
	if err != nil {
		return nil, err
	}
	root, err := os.MkdirTemp("", "carol")
	if err != nil {
		return nil, err
	}
	// one embedding cache for the three builds: the book is embedded once
	store, err := cache.Open(filepath.Join(root, "cache"))
	if err != nil {
		return nil, err
	}
	defer store.Close()
	e := cache.Wrap(m, store)
	out := map[string]*index.Dir{}
	for name, how := range map[string]struct {
		vectors   string
		sentences embed.Embedder
	}{"plain": {"f32", nil}, "f32": {"f32", e}, "i8": {"i8", e}} {
		d, err := index.OpenDir(filepath.Join(root, name), index.DirOptions{Create: true, Vectors: how.vectors})
		if err != nil {
			return nil, err
		}
		in := &ingest.Ingester{Store: d, Embedder: e, Chunker: c, Encoding: tk.Encoding(), Sentences: how.sentences}
		if _, err := in.Add(ctx, []string{book}); err != nil {
			return nil, err
		}
		out[name] = d
	}
	return out, nil
})

// BenchmarkAskEvidence is ask's evidence step (the default selector over
// the 20 best of 1,000 hybrid candidates, fitted to the window) per
// question on LaRA's "A Christmas Carol", warm index:
//
//   - stored/f32, stored/i8: sentence vectors read from the index (index
//     add --sentences); only the question is embedded;
//   - embedded/cold: every sentence embedded at query time (no cache);
//   - embedded/warm: every sentence looked up in a warm embedding cache.
//
// It reports select-ms/question (Answer.Timings.Select) and
// embedded-texts/question (what the sentence embedder was handed).
//
//	go test ./ask -run '^$' -bench BenchmarkAskEvidence -benchtime 10x -cpu 2
func BenchmarkAskEvidence(b *testing.B) {
	idx, err := carolIndexes()
	if err != nil {
		b.Skipf("LaRA's A Christmas Carol (../shared/data): %v", err)
	}
	m, err := uselite.New(uselite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	warmStore, err := cache.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer warmStore.Close()
	warm := cache.Wrap(m, warmStore)
	for _, bc := range []struct {
		name  string
		index string
		embed embed.Embedder
	}{
		{"stored/f32", "f32", m},
		{"stored/i8", "i8", m},
		{"embedded/cold", "plain", m},
		{"embedded/warm", "plain", warm},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := idx[bc.index]
			counted := &counting{Embedder: bc.embed}
			opts := ask.Options{Deps: ctxsel.DepsOf(map[string]any{ctxsel.DepEmbedder: counted})}
			for _, q := range carolQuestions { // warm the index (and, for warm, the cache)
				if _, err := ask.Ask(ctx, s, m, q, opts); err != nil {
					b.Fatal(err)
				}
			}
			counted.reset()
			var selectNs, texts int64
			b.ResetTimer()
			for i := range b.N {
				a, err := ask.Ask(ctx, s, m, carolQuestions[i%len(carolQuestions)], opts)
				if err != nil {
					b.Fatal(err)
				}
				selectNs += a.Timings.Select.Nanoseconds()
			}
			texts = counted.n()
			b.ReportMetric(float64(selectNs)/1e6/float64(b.N), "select-ms/question")
			b.ReportMetric(float64(texts)/float64(b.N), "embedded-texts/question")
		})
	}
}

// counting counts the texts its embedder is handed.
type counting struct {
	embed.Embedder
	mu    sync.Mutex
	texts int64
}

func (c *counting) Embed(ctx2 context.Context, texts []string) ([][]float32, error) {
	c.mu.Lock()
	c.texts += int64(len(texts))
	c.mu.Unlock()
	return c.Embedder.Embed(ctx2, texts)
}

func (c *counting) reset() { c.mu.Lock(); c.texts = 0; c.mu.Unlock() }
func (c *counting) n() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.texts
}
