package ask

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/internal/plot"
)

// WriteCurveSVG draws the similarity curve of an answer — candidate score by
// rank — as a standalone SVG: selected passages in colour, the cut as a
// dashed line labelled with what decided it, and the ranks a gap search
// looked at shaded.
func WriteCurveSVG(w io.Writer, a Answer) error {
	const (
		width, height            = 900, 480
		left, right, top, bottom = 70, 30, 60, 60
	)
	n := len(a.Scores)
	if n == 0 {
		return fmt.Errorf("curve: no scores to draw")
	}
	pw, ph := float64(width-left-right), float64(height-top-bottom)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range a.Scores {
		lo, hi = math.Min(lo, s), math.Max(hi, s)
	}
	pad := (hi - lo) * 0.05
	if pad == 0 {
		pad = 0.05
	}
	lo, hi = lo-pad, hi+pad
	x := func(rank float64) float64 {
		if n == 1 {
			return float64(left) + pw/2
		}
		return float64(left) + pw*rank/float64(n-1)
	}
	y := func(s float64) float64 { return float64(top) + ph*(hi-s)/(hi-lo) }

	ex := a.Selection.Explanation
	first, end := ex.Start, ex.Start+ex.K // selected ranks [first, end)

	svg := plot.New(width, height, 12, true)
	svg.Background()
	title := a.Question
	if len([]rune(title)) > 110 {
		title = string([]rune(title)[:110]) + "…"
	}
	svg.El(`<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>`, left, plot.Esc(title))
	svg.El(`<text x="%d" y="42" fill="#444">%s: kept %d of %d candidates, %d tokens</text>`, left,
		plot.Esc(ex.Strategy), a.Selection.K, n, a.Selection.Tokens)
	// search range of a gap strategy
	if d := ex.Decision; d.SearchFrom != nil && d.SearchTo != nil && *d.SearchTo > *d.SearchFrom {
		// gap indices [from, to) lie between ranks from and to
		x0, x1 := x(float64(*d.SearchFrom)), x(float64(*d.SearchTo))
		svg.El(`<rect x="%.1f" y="%d" width="%.1f" height="%.1f" fill="#f3f0ff"/>`, x0, top, math.Max(x1-x0, 1), ph)
		svg.El(`<text x="%.1f" y="%d" fill="#7a6fb0" font-size="10">searched ranks</text>`, x0+3, top+12)
	}
	// grid
	for i := 0; i <= 5; i++ {
		s := lo + (hi-lo)*float64(i)/5
		svg.El(`<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e5e5e5"/><text x="%d" y="%.1f" text-anchor="end">%.3f</text>`,
			left, y(s), float64(left)+pw, y(s), left-6, y(s)+4, s)
	}
	for _, r := range rankTicks(n) {
		svg.El(`<text x="%.1f" y="%.1f" text-anchor="middle">%d</text>`, x(float64(r)), float64(top)+ph+16, r)
	}
	svg.El(`<text x="%.1f" y="%d" text-anchor="middle">rank (0 = best match)</text>`, float64(left)+pw/2, height-18)
	svg.El(`<text transform="translate(18 %.1f) rotate(-90)" text-anchor="middle">%s</text>`, float64(top)+ph/2, scoreLabel(a.Retriever))
	// curve
	pts := plot.Points(n, func(r int) (float64, float64) { return x(float64(r)), y(a.Scores[r]) })
	svg.El(`<polyline fill="none" stroke="#999" stroke-width="1.5" points="%s"/>`, pts)
	radius := 3.0
	if n > 200 {
		radius = 1.5
	}
	for r, s := range a.Scores {
		fill := "#bbb"
		if r >= first && r < end {
			fill = "#d62728"
		}
		svg.El(`<circle cx="%.1f" cy="%.1f" r="%.1f" fill="%s"><title>rank %d: %.4f</title></circle>`, x(float64(r)), y(s), radius, fill, r, s)
	}
	// what decided the cut: the gap (or knee) the strategy found
	if d := ex.Decision; (d.Kind == "gap" || d.Kind == "knee") && d.Rank >= 0 && d.Rank+1 < n {
		gx := (x(float64(d.Rank)) + x(float64(d.Rank+1))) / 2
		y0, y1 := y(a.Scores[d.Rank]), y(a.Scores[d.Rank+1])
		svg.El(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#6a3d9a" stroke-width="3"/>`, gx, y0, gx, y1)
		label := fmt.Sprintf("%s after rank %d", d.Kind, d.Rank)
		if d.Kind == "gap" {
			label = fmt.Sprintf("largest gap %.4f after rank %d", d.Value, d.Rank)
		}
		svg.El(`<text x="%.1f" y="%.1f" fill="#6a3d9a">%s</text>`, gx+6, (y0+y1)/2+4, plot.Esc(label))
	}
	// the cut
	if end < n {
		cx := (x(float64(end-1)) + x(float64(end))) / 2
		if end == 0 {
			cx = x(0) - 4
		}
		svg.El(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="#d62728" stroke-dasharray="5,4" stroke-width="1.5"/>`, cx, top, cx, float64(top)+ph)
		label := fmt.Sprintf("cut: kept ranks %d–%d", first, end-1)
		if end == 0 {
			label = "cut: nothing kept"
		}
		if len(ex.CapsApplied) > 0 {
			label += " (" + strings.Join(ex.CapsApplied, ", ") + ")"
		}
		anchor, lx := "start", cx+5
		if cx > float64(left)+pw*0.7 {
			anchor, lx = "end", cx-5
		}
		svg.El(`<text x="%.1f" y="%.1f" fill="#d62728" text-anchor="%s">%s</text>`, lx, float64(top)+ph-8, anchor, plot.Esc(label))
	}
	return svg.End(w)
}

// rankTicks picks about ten round rank labels.
func rankTicks(n int) []int {
	step := 1
	for _, s := range []int{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000} {
		step = s
		if n/s <= 10 {
			break
		}
	}
	var out []int
	for r := 0; r < n; r += step {
		out = append(out, r)
	}
	return out
}

// scoreLabel names the scores the curve plots: what the retriever scored
// the candidates by. Hybrid scores are fused (dense and BM25 combined), not
// similarities.
func scoreLabel(r index.Retriever) string {
	switch r {
	case index.Dense:
		return "cosine similarity"
	case index.BM25:
		return "BM25 score"
	case index.Hybrid:
		return "fused score (dense and BM25)"
	}
	return "score"
}
