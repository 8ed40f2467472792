package lengthest

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/llm/llmtest"
)

var factRE = regexp.MustCompile(`kiwi[0-9]+`)

// facts is the scripted summarizer: the facts its prompt shows, in
// numeric order, so its summary grows with the documents it is shown
// and stops growing once every fact is in.
func facts(c llmtest.Call) llmtest.Reply {
	found := slices.Compact(slices.Sorted(slices.Values(factRE.FindAllString(c.Prompt(), -1))))
	if len(found) == 0 {
		return llmtest.Reply{Content: "nothing relevant"}
	}
	return llmtest.Reply{Content: strings.Join(found, " ")}
}

func outlier(llmtest.Call) llmtest.Reply {
	return llmtest.Reply{Content: "bananas are yellow and sweet"}
}

// fixedRetriever scores documents by a fixed ranking.
type fixedRetriever map[int]float64

func (fixedRetriever) Name() string { return "fixed" }
func (f fixedRetriever) Score(_ context.Context, _ string, docs []string) ([]float64, error) {
	out := make([]float64, len(docs))
	for i := range docs {
		out[i] = f[i]
	}
	return out, nil
}

const filler = "The committee met again on Tuesday to review the quarterly figures. "

// scriptedDocs are 8 documents; the facts sit at the start of documents 5,
// 1 and 6, which the retriever ranks first, second and third.
func scriptedDocs() ([]string, fixedRetriever) {
	docs := make([]string, 8)
	factAt := map[int]string{5: "kiwi1", 1: "kiwi2", 6: "kiwi3"}
	for i := range docs {
		head := "Nothing new here."
		if f, ok := factAt[i]; ok {
			head = "Key point " + f + " was confirmed."
		}
		docs[i] = head + " " + strings.Repeat(filler, 20+i)
	}
	return docs, fixedRetriever{5: 0.9, 1: 0.8, 6: 0.7, 0: 0.6, 2: 0.5, 3: 0.4, 4: 0.3, 7: 0.2}
}

type scripted struct {
	cfg        Config
	exs        []Example
	panel      []*llmtest.Server
	summarizer *llmtest.Server
	budgets    []int // budgets[k] admits the top k documents exactly
}

func newScripted(t *testing.T, cache *llm.Cache, window int) *scripted {
	t.Helper()
	tok := tiktoken(t)
	docs, ret := scriptedDocs()
	s := &scripted{summarizer: llmtest.New(facts)}
	t.Cleanup(s.summarizer.Close)
	for _, r := range []llmtest.Replier{facts, facts, outlier} {
		srv := llmtest.New(r)
		t.Cleanup(srv.Close)
		s.panel = append(s.panel, srv)
	}
	open := llm.Opener(llm.Options{MaxRetries: -1}, cache)
	model := func(spec string) Model {
		sp, err := llm.ParseSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		c, err := open(spec)
		if err != nil {
			t.Fatal(err)
		}
		return Model{Name: spec, Client: c, Window: sp.Window}
	}
	var panel []Model
	for i, srv := range s.panel {
		spec := srv.OpenAISpec(fmt.Sprintf("panel%d", i))
		if i == 1 && window > 0 {
			spec += fmt.Sprintf("#window=%d", window)
		}
		panel = append(panel, model(spec))
	}
	// budgets: none, then exactly the top 1..8 documents, then more than all
	order := []int{5, 1, 6, 0, 2, 3, 4, 7}
	s.budgets = []int{10}
	sum := 0
	for _, i := range order {
		d, _ := TruncateSentences(tok, docs[i], DefaultDocTokens)
		sum += tok.Count(d)
		s.budgets = append(s.budgets, sum)
	}
	s.budgets = append(s.budgets, sum+5000)
	s.cfg = Config{Panel: panel, Summarizer: model(s.summarizer.OpenAISpec("summ")), Retriever: ret, Tokenizer: tok,
		Budgets: s.budgets, Temperature: DefaultTemperature, PerExample: true}
	for _, id := range []string{"a", "b"} {
		s.exs = append(s.exs, Example{ID: id, Question: "What was confirmed in " + id + "?", Docs: docs})
	}
	return s
}

// TestRunScripted: the summary grows with the documents shown, F1 against
// the silver reference "kiwi1 kiwi2 kiwi3" is 2k/(3+k) with k facts shown,
// and stops growing once the third-ranked document is in: the estimate is
// the budget that admits exactly the top 3 documents.
func TestRunScripted(t *testing.T) {
	cache, err := llm.OpenCache(t.TempDir(), llm.CacheOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	s := newScripted(t, cache, 0)
	var phases []string
	s.cfg.Progress = func(p Progress) {
		if len(phases) == 0 || phases[len(phases)-1] != p.Phase {
			phases = append(phases, p.Phase)
		}
	}
	rep, err := Run(context.Background(), s.cfg, s.exs)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Estimate != s.budgets[3] {
		t.Fatalf("estimate %d, want %d (top 3 documents); table %+v", rep.Estimate, s.budgets[3], rep.Table)
	}
	want := []float64{0, 0.5, 0.8, 1, 1, 1, 1, 1, 1, 1}
	for i, r := range rep.Table {
		if r.Budget != s.budgets[i] || math.Abs(r.Mean-want[i]) > 1e-12 || r.Std > 1e-12 || r.N != 2 {
			t.Fatalf("row %d = %+v, want budget %d mean %v", i, r, s.budgets[i], want[i])
		}
	}
	// MBR drops the outlier model: every silver reference is a facts model's
	for _, sv := range rep.Silver {
		if strings.Contains(sv.Model, "panel2") || sv.Text != "kiwi1 kiwi2 kiwi3" {
			t.Fatalf("silver reference %+v", sv)
		}
	}
	if len(rep.Silver) != 6 || rep.SilverModels[s.cfg.Panel[2].Name] != 0 {
		t.Fatalf("silver %d, by model %v", len(rep.Silver), rep.SilverModels)
	}
	// calls: 3 panel models × 3 samples × 2 examples; the summarizer once per
	// distinct packing (the last two budgets admit every document) × 3 samples
	for i, srv := range s.panel {
		if srv.Requests() != 6 {
			t.Fatalf("panel %d: %d requests, want 6", i, srv.Requests())
		}
	}
	if got := s.summarizer.Requests(); got != 2*9*3 {
		t.Fatalf("summarizer: %d requests, want %d", got, 2*9*3)
	}
	if rep.Spend.Calls != 18+54 || rep.Spend.CachedCalls != 0 || rep.Spend.PromptTokens == 0 {
		t.Fatalf("spend %+v", rep.Spend)
	}
	// the calls carry τ = 0.5 and one seed per sample; documents in their
	// original order, each cut at 1,024 tokens
	seeds := map[int]bool{}
	for _, c := range s.summarizer.Calls() {
		if c.Temperature == nil || *c.Temperature != 0.5 || c.Seed == nil {
			t.Fatalf("call without τ=0.5 and a seed: %+v", c)
		}
		seeds[*c.Seed] = true
		p := c.Prompt()
		if i1, i2, i3 := strings.Index(p, "kiwi2"), strings.Index(p, "kiwi1"), strings.Index(p, "kiwi3"); i1 >= 0 && i2 >= 0 && i3 >= 0 && !(i1 < i2 && i2 < i3) {
			t.Fatalf("documents not in original order:\n%s", p[:200])
		}
	}
	if len(seeds) != 3 {
		t.Fatalf("seeds %v, want 3 distinct", seeds)
	}
	if !slices.Equal(phases, []string{"silver references", "retrieval", "search"}) {
		t.Fatalf("phases %v", phases)
	}
	pe := rep.PerExample
	if pe == nil || len(pe.Examples) != 2 || pe.Examples[0].Best != s.budgets[3] || pe.Gain != 0 {
		t.Fatalf("per example %+v", pe)
	}

	// a re-run is answered from the call cache: no request reaches a server
	before := s.summarizer.Requests()
	again, err := Run(context.Background(), s.cfg, s.exs)
	if err != nil {
		t.Fatal(err)
	}
	if s.summarizer.Requests() != before || again.Spend.CachedCalls != again.Spend.Calls || again.Estimate != rep.Estimate {
		t.Fatalf("warm re-run: %d new requests, spend %+v", s.summarizer.Requests()-before, again.Spend)
	}
	if again.Spend.FreshPromptTokens != 0 || again.Spend.PromptTokens != rep.Spend.PromptTokens {
		t.Fatalf("warm spend %+v vs cold %+v", again.Spend, rep.Spend)
	}

	// the plan counts the same calls before any is made
	plan, err := MakePlan(s.cfg, s.exs)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Calls != rep.Spend.Calls || plan.PanelCalls != 18 || plan.PromptTokens < rep.Spend.PromptTokens/2 {
		t.Fatalf("plan %+v vs spend %+v", plan, rep.Spend)
	}
}

// TestRunWindow: a panel model with a small window gets its input cut,
// longest documents first, to fit; the facts at the documents' starts
// survive, so the estimate is unchanged.
func TestRunWindow(t *testing.T) {
	s := newScripted(t, nil, 1500)
	rep, err := Run(context.Background(), s.cfg, s.exs)
	if err != nil {
		t.Fatal(err)
	}
	tok := tiktoken(t)
	reserve := int(math.Ceil(DefaultWords * 4.0 / 3))
	for _, c := range s.panel[1].Calls() {
		if n := tok.Count(c.Prompt()); n > 1500-reserve {
			t.Fatalf("prompt of %d tokens for a 1500-token window", n)
		}
		if !strings.Contains(c.Prompt(), "kiwi3") {
			t.Fatal("a fact at a document's start was cut")
		}
	}
	for _, c := range s.panel[0].Calls() {
		if tok.Count(c.Prompt()) < 1500 {
			t.Fatal("the model without a window had its input cut")
		}
	}
	if rep.Estimate != s.budgets[3] {
		t.Fatalf("estimate %d", rep.Estimate)
	}
}

func TestRunErrors(t *testing.T) {
	s := newScripted(t, nil, 0)
	s.summarizer.Script(llmtest.Fault{Status: 500}, llmtest.Fault{Status: 500}, llmtest.Fault{Status: 500})
	cfg := s.cfg
	cfg.Workers = 1
	if _, err := Run(context.Background(), cfg, s.exs); err == nil || !strings.Contains(err.Error(), "summary of") {
		t.Fatalf("server failure: %v", err)
	}
	cfg.Samples = 0
	cfg.Budgets = nil
	if _, err := Run(context.Background(), cfg, s.exs); err == nil {
		t.Fatal("no budgets accepted")
	}
}

// recordingRetriever keeps the documents it was asked to score.
type recordingRetriever struct {
	fixedRetriever
	mu   sync.Mutex
	seen [][]string
}

func (r *recordingRetriever) Score(ctx context.Context, q string, docs []string) ([]float64, error) {
	r.mu.Lock()
	r.seen = append(r.seen, slices.Clone(docs))
	r.mu.Unlock()
	return r.fixedRetriever.Score(ctx, q, docs)
}

// TestRetrieverScoresTruncatedDocs: documents are cut to DocTokens first and
// the retriever ranks the cut texts, as the official code retrieves over the
// truncated documents.
func TestRetrieverScoresTruncatedDocs(t *testing.T) {
	s := newScripted(t, nil, 0)
	rec := &recordingRetriever{fixedRetriever: s.cfg.Retriever.(fixedRetriever)}
	s.cfg.Retriever, s.cfg.DocTokens = rec, 40
	if _, err := Run(context.Background(), s.cfg, s.exs); err != nil {
		t.Fatal(err)
	}
	if len(rec.seen) != len(s.exs) {
		t.Fatalf("%d scoring calls for %d examples", len(rec.seen), len(s.exs))
	}
	docs, _ := scriptedDocs()
	for _, seen := range rec.seen {
		for i, d := range seen {
			want, err := TruncateSentences(s.cfg.Tokenizer, docs[i], 40)
			if err != nil || d != want || d == docs[i] {
				t.Fatalf("document %d scored as %q, want its first 40 tokens %q (%v)", i, d, want, err)
			}
		}
	}
}
