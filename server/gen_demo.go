//go:build ignore

// gen_demo writes web/demo.json, the example the web page opens with: a real
// similarity curve, not a made-up one. It takes one question of the bundled
// HotpotQA sample, pads it to a long context the way `ctxsel eval --pool`
// does, embeds the question and every passage with the embedded offline
// model (USE-Lite) and scores by cosine similarity.
//
//	cd server && go generate                  # writes web/demo.json
//	cd server && go run gen_demo.go -survey    # prints every question's gold ranks
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"html"
	"log"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/embed/uselite"
	"github.com/ctxsel/ctxsel/eval/sample"
	"github.com/ctxsel/ctxsel/internal/vecmath"
	"github.com/ctxsel/ctxsel/token"
)

type demoCandidate struct {
	ID     string  `json:"id"`
	Score  float64 `json:"score"`
	Tokens int     `json:"tokens"`
	Gold   bool    `json:"gold"`
	Text   string  `json:"text"`
}

type demo struct {
	Source     string          `json:"source"`
	Question   string          `json:"question"`
	Answers    []string        `json:"answers"`
	Candidates []demoCandidate `json:"candidates"`
}

func main() {
	question := flag.Int("q", 61, "index of the sample question")
	pool := flag.Int("pool", 60, "passages per question after padding")
	survey := flag.Bool("survey", false, "print gold ranks for every question instead of writing")
	out := flag.String("o", "web/demo.json", "output file")
	flag.Parse()

	recs, err := sample.HotpotQA()
	if err != nil {
		log.Fatal(err)
	}
	pooled, err := dataset.Pool(recs, *pool, 1)
	if err != nil {
		log.Fatal(err)
	}
	model, err := uselite.New(uselite.Options{})
	if err != nil {
		log.Fatal(err)
	}
	counter, err := token.New(token.Default)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	score := func(r dataset.Record) []demoCandidate {
		texts := make([]string, len(r.Passages))
		for i, p := range r.Passages {
			texts[i] = p.Text
		}
		vecs, err := model.Embed(ctx, texts)
		if err != nil {
			log.Fatal(err)
		}
		q, err := model.Embed(ctx, []string{r.Question})
		if err != nil {
			log.Fatal(err)
		}
		cands := make([]demoCandidate, len(r.Passages))
		for i, p := range r.Passages {
			// The sample keeps some HTML entities ("&amp;"); the page shows
			// text as text.
			text := html.UnescapeString(p.Text)
			if len(text) > 420 {
				cut := strings.LastIndexByte(text[:420], ' ')
				text = text[:max(cut, 300)] + " …"
			}
			cands[i] = demoCandidate{ID: p.ID, Score: math.Round(vecmath.Cosine32(q[0], vecs[i])*1e4) / 1e4,
				Tokens: counter.Count(p.Text), Gold: p.Gold, Text: text}
		}
		return cands
	}
	if *survey {
		for qi, r := range pooled {
			cands := score(r)
			sorted := slices.Clone(cands)
			slices.SortStableFunc(sorted, func(a, b demoCandidate) int {
				if a.Score != b.Score {
					if a.Score > b.Score {
						return -1
					}
					return 1
				}
				return 0
			})
			var gold []int
			for rank, c := range sorted {
				if c.Gold {
					gold = append(gold, rank)
				}
			}
			fmt.Printf("%3d gold ranks %v top %.3f %.3f %.3f %.3f  %s\n", qi, gold, sorted[0].Score, sorted[1].Score, sorted[2].Score, sorted[3].Score, r.Question)
		}
		return
	}
	r := pooled[*question]
	d := demo{
		Source:     fmt.Sprintf("HotpotQA dev question %s (CC BY-SA 4.0), padded to %d passages, scored by USE-Lite cosine similarity", r.ID, len(r.Passages)),
		Question:   r.Question,
		Answers:    r.Answers,
		Candidates: score(r),
	}
	b, err := json.MarshalIndent(d, "", " ")
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
		log.Fatal(err)
	}
}
