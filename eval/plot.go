package eval

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/ctxsel/ctxsel/internal/plot"
)

// WritePlot draws the fixed top-k recall/token frontier as a line and every
// strategy as a labelled point, as a standalone SVG. Tokens are on a log
// axis: the interesting region is a few percent of the context.
func WritePlot(w io.Writer, rep *Report, title string) error {
	const (
		width, height          = 860, 520
		left, right, top, bott = 70, 190, 40, 60
	)
	pw, ph := float64(width-left-right), float64(height-top-bott)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range rep.Frontier {
		if p.MeanTokens > 0 {
			lo, hi = math.Min(lo, p.MeanTokens), math.Max(hi, p.MeanTokens)
		}
	}
	for _, r := range rep.Results {
		if r.MeanTokens > 0 {
			lo, hi = math.Min(lo, r.MeanTokens), math.Max(hi, r.MeanTokens)
		}
	}
	if math.IsInf(lo, 0) {
		lo, hi = 1, 10
	}
	llo, lhi := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if lhi == llo {
		lhi++
	}
	x := func(t float64) float64 {
		t = math.Max(t, math.Pow(10, llo))
		return float64(left) + pw*(math.Log10(t)-llo)/(lhi-llo)
	}
	y := func(r float64) float64 { return float64(top) + ph*(1-r) }

	svg := plot.New(width, height, 12, true)
	svg.Background()
	svg.El(`<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>`, left, plot.Esc(title))
	// grid and axes
	for r := 0.0; r <= 1.0001; r += 0.2 {
		svg.El(`<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e5e5e5"/><text x="%d" y="%.1f" text-anchor="end">%.1f</text>`,
			left, y(r), float64(left)+pw, y(r), left-6, y(r)+4, r)
	}
	for e := llo; e <= lhi; e++ {
		t := math.Pow(10, e)
		svg.El(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="#e5e5e5"/><text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`,
			x(t), top, x(t), float64(top)+ph, x(t), float64(top)+ph+16, tokenLabel(t))
	}
	svg.El(`<text x="%.1f" y="%d" text-anchor="middle">mean tokens selected (log scale)</text>`, float64(left)+pw/2, height-18)
	svg.El(`<text transform="translate(18 %.1f) rotate(-90)" text-anchor="middle">context recall</text>`, float64(top)+ph/2)
	// frontier
	if len(rep.Frontier) > 0 {
		pts := plot.Points(len(rep.Frontier), func(i int) (float64, float64) {
			return x(rep.Frontier[i].MeanTokens), y(rep.Frontier[i].Recall)
		})
		svg.El(`<polyline fill="none" stroke="#888" stroke-width="2" points="%s"/>`, pts)
		for _, p := range rep.Frontier {
			if p.K == 1 || p.K == 5 || p.K == 10 || p.K == 20 || p.K == 50 || p.K == 100 || p.K == len(rep.Frontier) {
				svg.El(`<circle cx="%.1f" cy="%.1f" r="2.5" fill="#888"/><text x="%.1f" y="%.1f" fill="#666" font-size="10">k=%d</text>`,
					x(p.MeanTokens), y(p.Recall), x(p.MeanTokens)+4, y(p.Recall)+12, p.K)
			}
		}
	}
	palette := []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#bcbd22"}
	colour := 0
	for i, r := range rep.Results {
		// Fixed top-k lies on the frontier by definition: hollow grey rings,
		// so the adaptive strategies stand out.
		fill, stroke := "white", "#555"
		if !strings.HasPrefix(r.Strategy, "topk:") {
			fill, stroke = palette[colour%len(palette)], "none"
			colour++
		}
		svg.El(`<circle cx="%.1f" cy="%.1f" r="5" fill="%s" stroke="%s" stroke-width="1.5"><title>%s: recall %.3f at %.0f tokens (gain %+.3f)</title></circle>`,
			x(r.MeanTokens), y(r.Recall), fill, stroke, plot.Esc(r.Strategy), r.Recall, r.MeanTokens, r.GainVsTopK)
		ly := float64(top) + 10 + 18*float64(i)
		svg.El(`<circle cx="%.1f" cy="%.1f" r="5" fill="%s" stroke="%s" stroke-width="1.5"/><text x="%.1f" y="%.1f">%s (%+.3f)</text>`,
			float64(width-right)+14, ly, fill, stroke, float64(width-right)+24, ly+4, plot.Esc(r.Strategy), r.GainVsTopK)
	}
	svg.El(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#888" stroke-width="2"/><text x="%.1f" y="%.1f">fixed top-k frontier</text>`,
		float64(width-right)+8, float64(top)+10+18*float64(len(rep.Results)), float64(width-right)+20, float64(top)+10+18*float64(len(rep.Results)),
		float64(width-right)+24, float64(top)+14+18*float64(len(rep.Results)))
	if err := svg.End(w); err != nil {
		return fmt.Errorf("write plot: %w", err)
	}
	return nil
}

func tokenLabel(t float64) string {
	switch {
	case t >= 1e6:
		return fmt.Sprintf("%gM", t/1e6)
	case t >= 1e3:
		return fmt.Sprintf("%gk", t/1e3)
	}
	return fmt.Sprintf("%g", t)
}
