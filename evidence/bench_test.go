package evidence_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/embed/cache"
	"github.com/ctxsel/ctxsel/embed/uselite"
	"github.com/ctxsel/ctxsel/evidence"
	"github.com/ctxsel/ctxsel/lexical"
	"github.com/ctxsel/ctxsel/token"
)

// benchPassages builds n distinct passages of about size tokens from real
// HotpotQA text (a paragraph's own "title\n" and sentences, then more
// paragraphs' sentences) and a real question, scored by BM25 (the curve
// the selector cuts). The titles are real, so the second hop finds links.
// With chat, every passage is that text as a chat export: two sentences a
// turn, each turn a "[date time] Speaker:" line (evidence.Turn units);
// with table, as a Markdown table (evidence.Row units, read with rows on).
func benchPassages(b *testing.B, n, size int, shape benchShape) (ctxsel.TextQuery, *token.Tiktoken) {
	b.Helper()
	recs, err := dataset.LoadFile("../../shared/data/hotpotqa_dev500.jsonl")
	if err != nil {
		b.Skipf("benchmark data: %v", err)
	}
	c := counter(b)
	var paras []string
	for _, r := range recs {
		for _, p := range r.Passages {
			paras = append(paras, p.Text)
		}
	}
	texts := make([]string, n)
	next := 0
	for i := range texts {
		var t strings.Builder
		t.WriteString(paras[next%len(paras)] + " ") // its title and body
		next++
		for c.Count(t.String()) < size {
			body := paras[next%len(paras)]
			if _, rest, ok := strings.Cut(body, "\n"); ok { // drop the next paragraphs' titles
				body = rest
			}
			t.WriteString(body + " ")
			next++
		}
		texts[i] = strings.TrimSpace(t.String())
		switch shape {
		case chatShape:
			texts[i] = asChat(texts[i], i)
		case tableShape:
			texts[i] = asTable(texts[i], i)
		}
	}
	question := recs[0].Question
	docs := make([][]string, n)
	for i, t := range texts {
		docs[i] = lexical.Terms(t)
	}
	scores := lexical.Default.Score(lexical.QueryTerms(question), docs)
	cands := make([]ctxsel.Candidate, n)
	for i := range cands {
		cands[i] = ctxsel.Candidate{ID: fmt.Sprint(i), Score: scores[i], Tokens: c.Count(texts[i])}
	}
	curve, err := ctxsel.NewCurve(cands)
	if err != nil {
		b.Fatal(err)
	}
	return ctxsel.TextQuery{Question: question, Curve: curve, Texts: texts}, c
}

// BenchmarkEvidence times the evidence step of one query (split, embed,
// score, the second hop, pack, count) on n candidate passages of about
// size tokens, budget 500, with the embedded model on one worker: cold
// (every sentence embedded) and warm (every vector in the embedding
// cache), with the model's second hop and without (hop=0), beside the
// passage-level selection of the same candidates (ctxsel.Select with
// budget:tokens=500; the curve's ranking, cached, is shared by both). Run
// on one core: go test -bench Evidence -cpu 1.
func BenchmarkEvidence(b *testing.B) {
	model, err := uselite.New(uselite.Options{Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{20, 100} {
		for _, size := range []int{150, 600} {
			q, c := benchPassages(b, n, size, proseShape)
			for _, hop := range []int{0, evidence.HopOff} {
				name := fmt.Sprintf("passages=%d/tokens=%d", n, size)
				if hop == evidence.HopOff {
					name += "/hop=0"
				}
				run := func(b *testing.B, e embed.Embedder) {
					s, err := evidence.New(evidence.Options{Budget: 500, Passages: n, Hop: hop, Embedder: e, Counter: c})
					if err != nil {
						b.Fatal(err)
					}
					b.ReportAllocs()
					for b.Loop() {
						sel, err := s.SelectTexts(context.Background(), q)
						if err != nil || sel.Tokens > 500 {
							b.Fatal(sel.Tokens, err)
						}
					}
				}
				b.Run(name+"/cold", func(b *testing.B) { run(b, model) })
				b.Run(name+"/warm", func(b *testing.B) {
					store, err := cache.Open(b.TempDir())
					if err != nil {
						b.Fatal(err)
					}
					defer store.Close()
					e := cache.Wrap(model, store)
					s, err := evidence.New(evidence.Options{Budget: 500, Passages: n, Hop: hop, Embedder: e, Counter: c})
					if err != nil {
						b.Fatal(err)
					}
					if _, err := s.SelectTexts(context.Background(), q); err != nil { // fill the cache
						b.Fatal(err)
					}
					b.ResetTimer()
					run(b, e)
				})
			}
			b.Run(fmt.Sprintf("passages=%d/tokens=%d/passages", n, size), func(b *testing.B) {
				st, caps, err := ctxsel.Parse("budget:tokens=500")
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := ctxsel.Select(q.Curve, st, caps, ctxsel.RankOrder); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// benchShape is how a benchmark writes its passages' text.
type benchShape int

const (
	proseShape benchShape = iota
	chatShape
	tableShape
)

// asTable writes a passage's sentences as a Markdown table's rows, two
// sentences a row under a header row and rule.
func asTable(text string, seed int) string {
	var b strings.Builder
	b.WriteString("| Entry | Date | First | Second |\n|---|---|---|---|\n")
	sents := chunk.SplitSentences(text)
	for j := 0; j < len(sents); j += 2 {
		cell := func(k int) string {
			if k >= len(sents) {
				return ""
			}
			return strings.NewReplacer("\n", " ", "|", "/").Replace(text[sents[k][0]:sents[k][1]])
		}
		fmt.Fprintf(&b, "| %d | 2024-03-%02d | %s | %s |\n", j/2+1, 1+(seed+j)%28, cell(j), cell(j+1))
	}
	return b.String()
}

// asChat writes a passage's sentences as a chat export's turns.
func asChat(text string, seed int) string {
	speakers := []string{"Ana", "Ben", "Chidi", "Dana"}
	var b strings.Builder
	sents := chunk.SplitSentences(text)
	for j := 0; j < len(sents); j += 2 {
		end := sents[min(j+1, len(sents)-1)][1]
		fmt.Fprintf(&b, "[2024-03-%02d %02d:%02d] %s: %s\n", 1+seed%28, 9+j/120, (j/2)%60, speakers[(seed+j/2)%len(speakers)],
			strings.ReplaceAll(text[sents[j][0]:end], "\n", " "))
	}
	return b.String()
}

// BenchmarkEvidenceChat is BenchmarkEvidence's warm step on 20 passages
// of about 600 tokens written as chat exports (turns with their
// "[time] Speaker:" prefixes: context lines beside the sentences), the
// chat packed sentence by sentence (whole=none), and as Markdown tables
// (rows under their header, read with every structure on), and the chat
// without runs of turns (run=0) and without the prose model's blend
// (blend=0), and the chat for a broad question (Broad: its turns packed
// with broad_run and the neighbourhood prior), beside the same text as
// prose in the same run. Run on one core: go test -bench EvidenceChat -cpu 1.
func BenchmarkEvidenceChat(b *testing.B) {
	model, err := uselite.New(uselite.Options{Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	for _, run := range []struct {
		name  string
		shape benchShape
		units evidence.Structures // 0: the model's
		whole evidence.Structures // 0: DefaultWhole (whole turns)
		run   float64             // 0: DefaultRun
		blend float64             // 0: the model's
		broad bool                // the question asks for a summary
	}{
		{"prose/warm", proseShape, 0, 0, 0, 0, false},
		{"chat/warm", chatShape, 0, 0, 0, 0, false},
		{"chat-broad/warm", chatShape, 0, 0, 0, 0, true},
		{"chat-no-runs/warm", chatShape, 0, 0, evidence.RunOff, 0, false},
		{"chat-no-blend/warm", chatShape, 0, 0, 0, evidence.BlendOff, false},
		{"chat-sentences/warm", chatShape, 0, evidence.SentenceUnits, 0, 0, false},
		{"table/warm", tableShape, evidence.AllUnits, 0, 0, 0, false},
	} {
		q, c := benchPassages(b, 20, 600, run.shape)
		if run.broad {
			q.Question = "Summarize the discussion: " + q.Question
			if !evidence.Broad(q.Question) {
				b.Fatalf("%q is not broad", q.Question)
			}
		}
		name := run.name
		b.Run(name, func(b *testing.B) {
			store, err := cache.Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer store.Close()
			e := cache.Wrap(model, store)
			s, err := evidence.New(evidence.Options{Budget: 500, Passages: 20, Embedder: e, Counter: c, Units: run.units, Whole: run.whole, Run: run.run, Blend: run.blend})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.SelectTexts(context.Background(), q); err != nil { // fill the cache
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				sel, err := s.SelectTexts(context.Background(), q)
				if err != nil || sel.Tokens > 500 {
					b.Fatal(sel.Tokens, err)
				}
			}
		})
	}
}
