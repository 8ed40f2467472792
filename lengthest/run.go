package lengthest

import (
	"context"
	"fmt"
	"math"
	"slices"
)

// Report is the result of one estimation run.
type Report struct {
	// Estimate is the chosen retrieval length in tokens.
	Estimate int   `json:"estimate"`
	Best     Row   `json:"best"`
	Table    []Row `json:"table"`
	// Silver holds each example's kept silver references, with the panel
	// model that wrote each; SilverModels counts them per model (the
	// paper's Table 5).
	Silver       []Silver       `json:"silver"`
	SilverModels map[string]int `json:"silver_models"`
	Config       Settings       `json:"config"`
	Spend        Spend          `json:"spend"`
	PerExample   *PerExample    `json:"per_example,omitempty"`
}

// Silver is one kept silver reference.
type Silver struct {
	Example string  `json:"example"`
	Model   string  `json:"model"`
	Sample  int     `json:"sample"`
	Utility float64 `json:"utility"`
	Text    string  `json:"text"`
}

// Settings record the configuration of a run. Data, Examples,
// SampleFraction and SampleSeed are the caller's to fill in.
type Settings struct {
	Data           string   `json:"data,omitempty"`
	Examples       int      `json:"examples,omitempty"`
	SampleFraction float64  `json:"sample_fraction,omitempty"`
	SampleSeed     uint64   `json:"sample_seed"`
	Sampled        int      `json:"sampled"`
	SampledIDs     []string `json:"sampled_ids"`
	Panel          []string `json:"panel"`
	Summarizer     string   `json:"summarizer"`
	Retriever      string   `json:"retriever"`
	Utility        string   `json:"utility"`
	Budgets        []int    `json:"budgets"`
	Samples        int      `json:"samples"`
	Keep           int      `json:"keep"`
	Temperature    float64  `json:"temperature"`
	Seed           int      `json:"seed"`
	Words          int      `json:"words"`
	MaxTokens      int      `json:"max_tokens,omitempty"`
	DocTokens      int      `json:"doc_tokens"`
	Encoding       string   `json:"encoding"`
	Prompt         string   `json:"prompt"`
}

// PerExample is what a per-example oracle, choosing each example's best
// budget, would gain over the single estimate (beyond the paper: its
// future work).
type PerExample struct {
	Examples []ExampleBest `json:"examples"`
	// OracleMean is the mean over examples of each one's best score,
	// EstimateMean the mean at the estimate; Gain their difference.
	OracleMean   float64 `json:"oracle_mean"`
	EstimateMean float64 `json:"estimate_mean"`
	Gain         float64 `json:"gain"`
}

// ExampleBest is one example's best budget (smallest on ties).
type ExampleBest struct {
	ID         string  `json:"id"`
	Best       int     `json:"best"`
	BestMean   float64 `json:"best_mean"`
	AtEstimate float64 `json:"at_estimate"`
}

func (c *Config) settings(exs []Example) Settings {
	s := Settings{Summarizer: c.Summarizer.Name, Utility: c.Utility.Name(), Budgets: c.Budgets,
		Samples: c.Samples, Keep: c.Keep, Temperature: c.Temperature, Seed: c.Seed, Words: c.Words, MaxTokens: c.MaxTokens,
		DocTokens: c.DocTokens, Encoding: c.Tokenizer.Encoding(), Prompt: "Pratapa & Mitamura App. A.2.1", Sampled: len(exs)}
	if c.Retriever != nil {
		s.Retriever = c.Retriever.Name()
	}
	for _, m := range c.Panel {
		s.Panel = append(s.Panel, m.Name)
	}
	for _, e := range exs {
		s.SampledIDs = append(s.SampledIDs, e.ID)
	}
	return s
}

// Run estimates the retrieval length on the given (already sampled)
// examples.
func Run(ctx context.Context, cfg Config, exs []Example) (*Report, error) {
	cfg.defaults()
	if err := cfg.validate(true); err != nil {
		return nil, err
	}
	if len(exs) == 0 {
		return nil, invalidf("no examples")
	}
	r := &runner{cfg: &cfg}
	rep := &Report{Config: cfg.settings(exs), SilverModels: map[string]int{}}
	for _, m := range cfg.Panel {
		rep.SilverModels[m.Name] = 0 // a model MBR never keeps is listed too
	}

	// 1. silver candidates: every panel model, Samples times, full context
	np, ns := len(cfg.Panel), cfg.Samples
	cands := make([][]Candidate, len(exs))
	for e := range cands {
		cands[e] = make([]Candidate, np*ns)
	}
	err := r.each(ctx, "silver references", len(exs)*np*ns, func(ctx context.Context, i int) error {
		e, m, s := i/(np*ns), i/ns%np, i%ns
		prompt, _, err := cfg.fullPrompt(cfg.Panel[m], exs[e])
		if err != nil {
			return fmt.Errorf("example %s: %w", exs[e].ID, err)
		}
		resp, err := r.call(ctx, cfg.Panel[m], prompt, s)
		if err != nil {
			return fmt.Errorf("silver reference for %s: %w", exs[e].ID, err)
		}
		cands[e][m*ns+s] = Candidate{Model: cfg.Panel[m].Name, Sample: s, Text: resp.Content}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// 2. MBR keeps the best candidates as the silver references
	refs := make([][]string, len(exs))
	for e, ex := range exs {
		kept, err := MBR(ctx, cfg.Utility, cands[e], cfg.Keep)
		if err != nil {
			return nil, fmt.Errorf("example %s: %w", ex.ID, err)
		}
		for _, k := range kept {
			refs[e] = append(refs[e], k.Text)
			rep.Silver = append(rep.Silver, Silver{Example: ex.ID, Model: k.Model, Sample: k.Sample, Utility: k.Utility, Text: k.Text})
			rep.SilverModels[k.Model]++
		}
	}

	// 3. retrieval and packing per budget
	preps := make([]prepared, len(exs))
	if err := r.each(ctx, "retrieval", len(exs), func(ctx context.Context, e int) (err error) {
		preps[e], err = r.prepare(ctx, exs[e])
		return err
	}); err != nil {
		return nil, err
	}
	type packing struct {
		docs   []int
		tokens int
	}
	packs := make([][]packing, len(exs))  // distinct packings per example
	budgetPack := make([][]int, len(exs)) // [example][budget] → index into packs
	type job struct{ e, p, s int }
	var jobs []job
	for e, p := range preps {
		seen := map[string]int{}
		budgetPack[e] = make([]int, len(cfg.Budgets))
		for b, budget := range cfg.Budgets {
			chosen, total := Pack(p.scores, p.tokens, budget)
			k := packKey(chosen)
			idx, ok := seen[k]
			if !ok {
				idx = len(packs[e])
				seen[k] = idx
				packs[e] = append(packs[e], packing{docs: chosen, tokens: total})
				for s := range ns {
					jobs = append(jobs, job{e, idx, s})
				}
			}
			budgetPack[e][b] = idx
		}
	}
	// 4. the summarizer at each distinct packing
	summaries := make([][][]string, len(exs)) // [example][packing][sample]
	for e := range exs {
		summaries[e] = make([][]string, len(packs[e]))
		for p := range packs[e] {
			summaries[e][p] = make([]string, ns)
		}
	}
	err = r.each(ctx, "search", len(jobs), func(ctx context.Context, i int) error {
		j := jobs[i]
		ex, pk := exs[j.e], packs[j.e][j.p]
		docs := make([]string, len(pk.docs))
		for k, d := range pk.docs {
			docs[k] = preps[j.e].docs[d]
		}
		docs, _, err := FitWindow(cfg.Tokenizer, docs, cfg.docLimit(cfg.Summarizer, Example{Question: ex.Question, Docs: docs}))
		if err != nil {
			return fmt.Errorf("example %s: %w", ex.ID, err)
		}
		resp, err := r.call(ctx, cfg.Summarizer, RenderPrompt(docs, ex.Question, cfg.Words), j.s)
		if err != nil {
			return fmt.Errorf("summary of %s: %w", ex.ID, err)
		}
		summaries[j.e][j.p][j.s] = resp.Content
		return nil
	})
	if err != nil {
		return nil, err
	}
	// 5. each summary's score: its best match among the silver references
	scores := make([][][]float64, len(exs)) // [example][packing][sample]
	for e, ex := range exs {
		var flat []string
		for _, ss := range summaries[e] {
			flat = append(flat, ss...)
		}
		sim, err := cfg.Utility.Matrix(ctx, flat, refs[e])
		if err != nil {
			return nil, fmt.Errorf("example %s: score summaries: %w", ex.ID, err)
		}
		scores[e] = make([][]float64, len(packs[e]))
		for p := range packs[e] {
			scores[e][p] = make([]float64, ns)
			for s := range ns {
				best := math.Inf(-1)
				for _, v := range sim[p*ns+s] {
					best = max(best, v)
				}
				if math.IsInf(best, -1) {
					best = 0
				}
				scores[e][p][s] = best
			}
		}
	}
	// 6. the table and the one-std rule
	for b, budget := range cfg.Budgets {
		row := Row{Budget: budget, N: len(exs), Runs: make([]float64, ns)}
		for e := range exs {
			p := budgetPack[e][b]
			row.MeanTokens += float64(packs[e][p].tokens) / float64(len(exs))
			for s := range ns {
				row.Runs[s] += scores[e][p][s] / float64(len(exs))
			}
		}
		row.Mean, row.Std = meanStd(row.Runs)
		rep.Table = append(rep.Table, row)
	}
	slices.SortFunc(rep.Table, func(a, b Row) int { return a.Budget - b.Budget })
	est, best, ok := OneStd(rep.Table)
	if !ok {
		return nil, fmt.Errorf("no budget has a finite score")
	}
	rep.Estimate, rep.Best = est, best
	if cfg.PerExample {
		rep.PerExample = perExample(cfg.Budgets, exs, est, func(e, b int) float64 {
			m, _ := meanStd(scores[e][budgetPack[e][b]])
			return m
		})
	}
	rep.Spend = r.spend
	return rep, nil
}

// perExample picks each example's best budget (smallest on ties) and
// compares the oracle's mean with the estimate's.
func perExample(budgets []int, exs []Example, estimate int, mean func(e, b int) float64) *PerExample {
	order := make([]int, len(budgets))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return budgets[a] - budgets[b] })
	at := slices.Index(budgets, estimate)
	pe := &PerExample{}
	for e, ex := range exs {
		eb := ExampleBest{ID: ex.ID, BestMean: math.Inf(-1)}
		for _, b := range order {
			if m := mean(e, b); m > eb.BestMean {
				eb.Best, eb.BestMean = budgets[b], m
			}
		}
		if at >= 0 {
			eb.AtEstimate = mean(e, at)
		}
		pe.Examples = append(pe.Examples, eb)
		pe.OracleMean += eb.BestMean / float64(len(exs))
		pe.EstimateMean += eb.AtEstimate / float64(len(exs))
	}
	pe.Gain = pe.OracleMean - pe.EstimateMean
	return pe
}
