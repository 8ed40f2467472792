package ldareval

import (
	"fmt"
	"io"
	"math"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/internal/plot"
	"github.com/ctxsel/ctxsel/ldar"
)

// PlotLearning draws the learning curve: mean sampled reward on the
// training questions and the deterministic policy's reward on the
// validation questions, per epoch (SVG).
func PlotLearning(w io.Writer, hist []ldar.EpochStats, title string) error {
	const W, H, L, R, T, B = 760, 420, 70, 190, 40, 50
	if len(hist) == 0 {
		return fmt.Errorf("plot: no epochs")
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, e := range hist {
		for _, v := range []float64{e.TrainReward, e.ValReward} {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if hi-lo < 1e-9 {
		hi, lo = hi+0.5, lo-0.5
	}
	pad := (hi - lo) * 0.08
	lo, hi = lo-pad, hi+pad
	n := len(hist)
	x := func(ep int) float64 {
		if n == 1 {
			return L + (W-L-R)/2
		}
		return L + float64(ep-1)/float64(n-1)*(W-L-R)
	}
	y := func(v float64) float64 { return T + (hi-v)/(hi-lo)*(H-T-B) }
	svg := plot.New(W, H, 12, false)
	svg.El(`%s<text x="%d" y="22" font-size="14">%s</text>`, plot.Background, L, plot.Esc(title))
	svg.El(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/><line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`, L, H-B, W-R, H-B, L, T, L, H-B)
	for i := range 6 {
		v := lo + (hi-lo)*float64(i)/5
		svg.El(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%.3f</text>`, L, y(v), W-R, y(v), L-6, y(v)+4, v)
	}
	step := max(1, n/10)
	for ep := 1; ep <= n; ep += step {
		svg.El(`<text x="%.1f" y="%d" text-anchor="middle">%d</text>`, x(ep), H-B+16, ep)
	}
	svg.El(`<text x="%d" y="%d" text-anchor="middle">epoch</text>`, (L+W-R)/2, H-12)
	svg.El(`<text x="16" y="%d" transform="rotate(-90 16 %d)" text-anchor="middle">reward</text>`, (T+H-B)/2, (T+H-B)/2)
	series := []struct {
		name, color string
		val         func(ldar.EpochStats) float64
	}{
		{"train (sampled)", "#1f77b4", func(e ldar.EpochStats) float64 { return e.TrainReward }},
		{"validation (Beta means)", "#d62728", func(e ldar.EpochStats) float64 { return e.ValReward }},
	}
	for si, s := range series {
		pts := plot.Points(len(hist), func(i int) (float64, float64) { return x(hist[i].Epoch), y(s.val(hist[i])) })
		svg.El(`<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`, s.color, pts)
		svg.El(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/><text x="%d" y="%d">%s</text>`,
			W-R+10, T+20*si+10, W-R+30, T+20*si+10, s.color, W-R+34, T+20*si+14, s.name)
	}
	return svg.End(w)
}

// PlotBands draws, for up to n questions, the best ranks of the
// similarity curve (the policy's window), gold passages marked, with the
// band the policy chose shaded — the paper's Fig. 3 (left) for labelled
// data. Questions are picked evenly through qs.
func PlotBands(w io.Writer, p *ldar.Policy, qs []ldar.Question, n int, title string) error {
	if len(qs) == 0 || n < 1 {
		return fmt.Errorf("plot: no questions")
	}
	n = min(n, len(qs))
	const cols, pw, ph, gap, top = 3, 300, 200, 40, 50
	rows := (n + cols - 1) / cols
	W, H := cols*(pw+gap)+gap, top+rows*(ph+gap+20)
	svg := plot.New(W, H, 11, false)
	svg.El(`%s<text x="%d" y="22" font-size="14">%s</text>`, plot.Background, gap, plot.Esc(title))
	svg.El(`<text x="%d" y="40">shaded: selected band · red dots: gold passages · grey: other passages · x: rank (0 = best), y: score</text>`, gap)
	for k := range n {
		q := qs[k*len(qs)/n]
		order := ctxsel.Ranking(q.Scores)
		pr := p.Predict(q.Scores, q.Tokens)
		m := min(len(order), max(pr.M, 30))
		m = min(m, max(30, 2*pr.End+5))
		ox := gap + (k%cols)*(pw+gap)
		oy := top + (k/cols)*(ph+gap+20)
		lo, hi := math.Inf(1), math.Inf(-1)
		for r := range m {
			s := q.Scores[order[r]]
			lo, hi = min(lo, s), max(hi, s)
		}
		if hi-lo < 1e-12 {
			hi, lo = hi+1, lo-1
		}
		X := func(r float64) float64 { return float64(ox) + (r+0.5)/float64(m)*pw }
		Y := func(s float64) float64 { return float64(oy) + (hi-s)/(hi-lo)*(ph-10) + 5 }
		svg.El(`<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="#2ca02c" fill-opacity="0.18"/>`,
			X(float64(pr.Start)-0.5), oy, X(float64(pr.End)-0.5)-X(float64(pr.Start)-0.5), ph)
		svg.El(`<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#888"/>`, ox, oy, pw, ph)
		pts := plot.Points(m, func(r int) (float64, float64) { return X(float64(r)), Y(q.Scores[order[r]]) })
		svg.El(`<polyline fill="none" stroke="#555" points="%s"/>`, pts)
		hit, gold := 0, 0
		for _, g := range q.Gold {
			if g {
				gold++
			}
		}
		for r := range m {
			i := order[r]
			c, rad := "#999", 2.0
			if q.Gold[i] {
				c, rad = "#d62728", 4
				if r >= pr.Start && r < pr.End {
					hit++
				}
			}
			svg.El(`<circle cx="%.1f" cy="%.1f" r="%.1f" fill="%s"/>`, X(float64(r)), Y(q.Scores[i]), rad, c)
		}
		svg.El(`<text x="%d" y="%d">%s: ranks %d–%d, %d/%d gold (of %d)</text>`,
			ox, oy+ph+14, plot.Esc(short(q.ID, 18)), pr.Start, pr.End-1, hit, gold, len(q.Scores))
	}
	return svg.End(w)
}

func short(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
