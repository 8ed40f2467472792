package uselite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/embed/cache"
	"github.com/ctxsel/ctxsel/embed/uselite"
	"github.com/ctxsel/ctxsel/eval"
	"github.com/ctxsel/ctxsel/fusion"
	"github.com/ctxsel/ctxsel/score"
)

// TestRecallByPrecision measures what a reduced precision costs retrieval:
// recall at fixed top-k of every precision against fp32 on the same pooled
// contexts (HotpotQA, MuSiQue, SummHay; pool 1000, seed 1, as `ctxsel
// eval`), dense (cosine) and hybrid (the default pipeline's z-score fusion
// with BM25, alpha 0.5), with the paired difference per question and its
// standard error. It embeds tens of thousands of passages per precision, so it runs
// only when CTXSEL_PRECISION_RECALL names a directory for its report
// (recall.json); vectors go through the embedding cache of
// CTXSEL_EMBED_CACHE when set, except for the precisions listed in
// CTXSEL_PRECISION_RECALL_FRESH (e.g. "int8" after changing its
// arithmetic). docs/embedding.md reports its figures.
func TestRecallByPrecision(t *testing.T) {
	out := os.Getenv("CTXSEL_PRECISION_RECALL")
	if out == "" {
		t.Skip("set CTXSEL_PRECISION_RECALL=DIR to measure recall by precision (slow)")
	}
	var store *cache.Store
	if dir := os.Getenv("CTXSEL_EMBED_CACHE"); dir != "" && dir != "off" {
		var err error
		if store, err = cache.Open(dir); err != nil {
			t.Fatal(err)
		}
		defer store.Close()
	}
	ks := []int{1, 5, 10, 20, 50}
	type row struct {
		Data      string             `json:"data"`
		Scorer    string             `json:"scorer"`
		Questions int                `json:"questions"`
		Precision string             `json:"precision"`
		K         int                `json:"k"`
		Recall    float64            `json:"recall"`
		FP32      float64            `json:"recall_fp32"`
		Diff      float64            `json:"diff_points"`
		SE        float64            `json:"se_points"`
		Changed   int                `json:"questions_changed"`
		Cosine    map[string]float64 `json:"cosine_to_fp32,omitempty"`
	}
	var rows []row
	ctx := context.Background()
	for _, data := range []string{"hotpotqa_dev500.jsonl", "musique_train100.jsonl", "summhay_news.jsonl.gz"} {
		recs, err := dataset.LoadFile(filepath.Join("../../../shared/data", data))
		if err != nil {
			t.Fatal(err)
		}
		pooled, err := dataset.Pool(recs, 1000, 1)
		if err != nil {
			t.Fatal(err)
		}
		recall := map[string][][]float64{} // per scorer and precision, per k, per question
		vecsOf := map[uselite.Precision]map[string][]float32{}
		for _, p := range []uselite.Precision{uselite.FP32, uselite.Int8, uselite.BF16} {
			m, err := uselite.New(uselite.Options{Precision: p})
			if err != nil {
				t.Fatal(err)
			}
			var e embed.Embedder = m
			if store != nil && !slices.Contains(strings.Split(os.Getenv("CTXSEL_PRECISION_RECALL_FRESH"), ","), p.String()) {
				e = cache.Wrap(m, store)
			}
			sc := score.NewEmbedding("use-lite", e, score.EmbeddingOptions{Memo: true})
			hy, err := score.NewHybrid(sc, fusion.ZScore, 0.5)
			if err != nil {
				t.Fatal(err)
			}
			for _, scorer := range []score.Scorer{sc, hy} {
				name := "dense"
				if scorer == score.Scorer(hy) {
					name = "hybrid"
				}
				curves, _, err := eval.Curves(ctx, pooled, scorer, nil, 0)
				if err != nil {
					t.Fatal(err)
				}
				per := make([][]float64, len(ks))
				for _, c := range curves {
					order := make([]int, len(c.Scores))
					for i := range order {
						order[i] = i
					}
					slices.SortStableFunc(order, func(a, b int) int {
						switch {
						case c.Scores[a] > c.Scores[b]:
							return -1
						case c.Scores[a] < c.Scores[b]:
							return 1
						}
						return 0
					})
					gold := 0
					for _, g := range c.Gold {
						if g {
							gold++
						}
					}
					for ki, k := range ks {
						found := 0
						for _, i := range order[:min(k, len(order))] {
							if c.Gold[i] {
								found++
							}
						}
						per[ki] = append(per[ki], float64(found)/float64(gold))
					}
				}
				recall[name+"/"+p.String()] = per
			}
			// the passages' vectors, to compare with fp32's (a sample)
			vecsOf[p] = map[string][]float32{}
			var sample []string
			for _, r := range recs {
				for _, ps := range r.Passages {
					if len(sample) < 2000 {
						sample = append(sample, ps.Text)
					}
				}
			}
			vs, err := e.Embed(ctx, sample)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range sample {
				vecsOf[p][s] = vs[i]
			}
		}
		for _, p := range []uselite.Precision{uselite.Int8, uselite.BF16} {
			worst, mean, n := 1.0, 0.0, 0
			for s, v := range vecsOf[p] {
				c := cos(v, vecsOf[uselite.FP32][s])
				worst = min(worst, c)
				mean += c
				n++
			}
			cosines := map[string]float64{"worst": worst, "mean": mean / float64(n), "passages": float64(n)}
			for _, scorer := range []string{"dense", "hybrid"} {
				for ki, k := range ks {
					a, b := recall[scorer+"/"+p.String()][ki], recall[scorer+"/fp32"][ki]
					var ra, rb, d, dd float64
					changed := 0
					for i := range a {
						ra += a[i]
						rb += b[i]
						d += a[i] - b[i]
						if a[i] != b[i] {
							changed++
						}
					}
					n := float64(len(a))
					mean := d / n
					for i := range a {
						x := a[i] - b[i] - mean
						dd += x * x
					}
					se := 0.0
					if n > 1 {
						se = math.Sqrt(dd/(n-1)) / math.Sqrt(n)
					}
					r := row{Data: strings.SplitN(data, ".", 2)[0], Scorer: scorer, Questions: len(a), Precision: p.String(), K: k,
						Recall: ra / n, FP32: rb / n, Diff: 100 * mean, SE: 100 * se, Changed: changed}
					if ki == 0 && scorer == "dense" {
						r.Cosine = cosines
					}
					rows = append(rows, r)
					t.Logf("%-16s %-6s %s k=%2d recall %.4f fp32 %.4f diff %+.2f ± %.2f points (%d questions changed)",
						r.Data, scorer, p, k, r.Recall, r.FP32, r.Diff, r.SE, changed)
				}
			}
			t.Logf("%-16s %s cosine to fp32 over %d passages: worst %.5f mean %.6f", data, p, n, worst, mean/float64(n))
		}
	}
	b, _ := json.MarshalIndent(rows, "", "  ")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "recall.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	fmt.Println(filepath.Join(out, "recall.json"))
}

func cos(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}
