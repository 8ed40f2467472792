package eval

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/ldar"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/llm/llmtest"
	"github.com/ctxsel/ctxsel/picker"
	"github.com/ctxsel/ctxsel/picker/pickertest"
)

// meteredPicker is a picker (a ctxsel.MeteredSelector) with its row named
// by its spec.
type meteredPicker struct{ *picker.Picker }

func (m meteredPicker) Name() string { return m.Config().String() }

func pickerRun(t *testing.T, srv *llmtest.Server, spec string) ctxsel.MeteredSelector {
	t.Helper()
	c, _, err := llm.OpenSpec(srv.OpenAISpec("p"), llm.Options{MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := picker.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	p, err := picker.New(c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return meteredPicker{p}
}

// A picker that returns the gold ids among those offered (a scripted
// oracle behind a real endpoint) gets recall 1 and precision 1 where the
// budget offers every gold passage; a garbage endpoint is invalid on every
// question and reports the fallback's figures.
func TestRunTextSelectors(t *testing.T) {
	p := func(id, text string, gold bool) dataset.Passage {
		return dataset.Passage{ID: id, Text: text, Gold: gold}
	}
	recs := []dataset.Record{
		{ID: "q1", Question: "first?", Passages: []dataset.Passage{p("a", "0.9 10", true), p("b", "0.8 20", false), p("c", "0.5 30", true), p("d", "0.1 40", false)}},
		{ID: "q2", Question: "second?", Passages: []dataset.Passage{p("a", "0.7 10", true), p("b", "0.6 10", false), p("c", "0.2 10", false)}},
	}
	gold := map[string][]string{"first?": {"a", "c"}, "second?": {"a"}}
	oracle := llmtest.New(pickertest.Gold(gold))
	defer oracle.Close()
	garbage := llmtest.New(pickertest.Garbage)
	defer garbage.Close()
	specs, err := ctxsel.Resolver{}.ResolveList("topk")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), recs, fakeScorer{}, Options{
		Strategies: append(specs, TextSelectors(pickerRun(t, oracle, "picker:budget=100"), pickerRun(t, garbage, "picker:fallback=topk"))...), Counter: fakeCounter{},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 3 {
		t.Fatalf("%d rows", len(rep.Results))
	}
	pick, bad, topk := rep.Results[1], rep.Results[2], rep.Results[0]
	if pick.Recall != 1 || pick.Precision != 1 || pick.MeanK != 1.5 || pick.MeanTokens != 25 || pick.Selector == nil || pick.Selector.InvalidRate != 0 || pick.Selector.MeanPromptTokens <= 0 {
		t.Fatalf("oracle picker row %+v %+v", pick, pick.Selector)
	}
	if bad.Selector == nil || bad.Selector.InvalidRate != 1 || bad.Recall != topk.Recall || bad.MeanK != topk.MeanK {
		t.Fatalf("garbage row %+v, topk %+v", bad, topk)
	}
	if oracle.Requests() != 2 || garbage.Requests() != 2 {
		t.Fatalf("requests %d %d", oracle.Requests(), garbage.Requests())
	}
	var table bytes.Buffer
	if err := WriteTable(&table, rep); err != nil || !strings.Contains(table.String(), "invalid rate") {
		t.Fatalf("table %v\n%s", err, table.String())
	}
}

// channelScorer is fakeScorer with two score channels: the score and its
// negation.
type channelScorer struct{ fakeScorer }

func (channelScorer) Channels() []string { return []string{"fake", "negated"} }
func (c channelScorer) ScoreChannels(ctx context.Context, q string, texts []string) ([]float64, [][]float64, error) {
	s, err := c.Score(ctx, q, texts)
	neg := make([]float64, len(s))
	for i, v := range s {
		neg[i] = -v
	}
	return s, [][]float64{s, neg}, err
}

// TestTextSelectorsSeeChannels: a text selector reads the score channels
// a strategy reads: a band policy that reads them selects as a text
// selector (what band+picker runs first) what it selects as a strategy.
func TestTextSelectorsSeeChannels(t *testing.T) {
	m, err := ldar.NewModel(ldar.Config{Window: 4, Freqs: 2, FreqSigma: 0.1, Dim: 8, Heads: 2, Layers: 1, FFN: 8, Hidden: 8, Head: "exp", Pool: "attention", Channels: 2}, 3)
	if err != nil {
		t.Fatal(err)
	}
	deps := ctxsel.DepsOf(map[string]any{ldar.DepPolicy: ldar.NewPolicy(m, nil)})
	band, err := ctxsel.Resolver{Deps: deps}.Resolve("band")
	if err != nil {
		t.Fatal(err)
	}
	// The band as a strategy, and as a selector that reads texts.
	rep, err := Run(context.Background(), handRecords(), channelScorer{}, Options{Counter: fakeCounter{},
		Strategies: append([]ctxsel.Resolved{band}, TextSelectors(runnableTexts{band.Runnable()})...)})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2 {
		t.Fatalf("%d rows", len(rep.Results))
	}
	asStrategy, asSelector := rep.Results[0], rep.Results[1]
	if asSelector.Recall != asStrategy.Recall || asSelector.MeanK != asStrategy.MeanK || asSelector.MeanTokens != asStrategy.MeanTokens {
		t.Fatalf("as a text selector %+v\nas a strategy %+v", asSelector, asStrategy)
	}
}

// runnableTexts serves a resolved selector as a TextSelector, its own caps
// kept: a strategy measured as a selector that reads texts.
type runnableTexts struct{ run ctxsel.Selector }

func (r runnableTexts) Name() string { return r.run.Name() }
func (r runnableTexts) SelectTexts(ctx context.Context, q ctxsel.TextQuery) (ctxsel.Selection, error) {
	sel, _, err := r.run.Select(ctx, q)
	return sel, err
}

// resolveList resolves a list of specs for Options.Strategies.
func resolveList(t *testing.T, text string) []ctxsel.Resolved {
	t.Helper()
	list, err := ctxsel.Resolver{}.ResolveList(text)
	if err != nil {
		t.Fatal(err)
	}
	return list
}
