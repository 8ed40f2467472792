package ldareval

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"

	"github.com/ctxsel/ctxsel"
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
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", W, H)
	fmt.Fprintf(&sb, `<rect width="100%%" height="100%%" fill="white"/><text x="%d" y="22" font-size="14">%s</text>`+"\n", L, html.EscapeString(title))
	fmt.Fprintf(&sb, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/><line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", L, H-B, W-R, H-B, L, T, L, H-B)
	for i := range 6 {
		v := lo + (hi-lo)*float64(i)/5
		fmt.Fprintf(&sb, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%.3f</text>`+"\n", L, y(v), W-R, y(v), L-6, y(v)+4, v)
	}
	step := max(1, n/10)
	for ep := 1; ep <= n; ep += step {
		fmt.Fprintf(&sb, `<text x="%.1f" y="%d" text-anchor="middle">%d</text>`+"\n", x(ep), H-B+16, ep)
	}
	fmt.Fprintf(&sb, `<text x="%d" y="%d" text-anchor="middle">epoch</text>`+"\n", (L+W-R)/2, H-12)
	fmt.Fprintf(&sb, `<text x="16" y="%d" transform="rotate(-90 16 %d)" text-anchor="middle">reward</text>`+"\n", (T+H-B)/2, (T+H-B)/2)
	series := []struct {
		name, color string
		val         func(ldar.EpochStats) float64
	}{
		{"train (sampled)", "#1f77b4", func(e ldar.EpochStats) float64 { return e.TrainReward }},
		{"validation (Beta means)", "#d62728", func(e ldar.EpochStats) float64 { return e.ValReward }},
	}
	for si, s := range series {
		var pts []string
		for _, e := range hist {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(e.Epoch), y(s.val(e))))
		}
		fmt.Fprintf(&sb, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", s.color, strings.Join(pts, " "))
		fmt.Fprintf(&sb, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/><text x="%d" y="%d">%s</text>`+"\n",
			W-R+10, T+20*si+10, W-R+30, T+20*si+10, s.color, W-R+34, T+20*si+14, s.name)
	}
	sb.WriteString("</svg>\n")
	_, err := io.WriteString(w, sb.String())
	return err
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
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", W, H)
	fmt.Fprintf(&sb, `<rect width="100%%" height="100%%" fill="white"/><text x="%d" y="22" font-size="14">%s</text>`+"\n", gap, html.EscapeString(title))
	fmt.Fprintf(&sb, `<text x="%d" y="40">shaded: selected band · red dots: gold passages · grey: other passages · x: rank (0 = best), y: score</text>`+"\n", gap)
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
		fmt.Fprintf(&sb, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="#2ca02c" fill-opacity="0.18"/>`+"\n",
			X(float64(pr.Start)-0.5), oy, X(float64(pr.End)-0.5)-X(float64(pr.Start)-0.5), ph)
		fmt.Fprintf(&sb, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#888"/>`+"\n", ox, oy, pw, ph)
		var pts []string
		for r := range m {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", X(float64(r)), Y(q.Scores[order[r]])))
		}
		fmt.Fprintf(&sb, `<polyline fill="none" stroke="#555" points="%s"/>`+"\n", strings.Join(pts, " "))
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
			fmt.Fprintf(&sb, `<circle cx="%.1f" cy="%.1f" r="%.1f" fill="%s"/>`+"\n", X(float64(r)), Y(q.Scores[i]), rad, c)
		}
		fmt.Fprintf(&sb, `<text x="%d" y="%d">%s: ranks %d–%d, %d/%d gold (of %d)</text>`+"\n",
			ox, oy+ph+14, html.EscapeString(short(q.ID, 18)), pr.Start, pr.End-1, hit, gold, len(q.Scores))
	}
	sb.WriteString("</svg>\n")
	_, err := io.WriteString(w, sb.String())
	return err
}

func short(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
