package lengthest

import (
	"fmt"
	"io"
	"math"

	"github.com/ctxsel/ctxsel/internal/plot"
)

// WritePlot draws score against budget as a standalone SVG: the mean with
// ± one std error bars, the one-std band below the best mean shaded, and
// the estimate marked with a vertical line.
func WritePlot(w io.Writer, rep *Report, title string) error {
	const (
		width, height          = 760, 460
		left, right, top, bott = 70, 30, 50, 60
	)
	rows := rep.Table
	if len(rows) == 0 {
		return invalidf("plot: empty table")
	}
	pw, ph := float64(width-left-right), float64(height-top-bott)
	xlo, xhi := float64(rows[0].Budget), float64(rows[len(rows)-1].Budget)
	if xhi == xlo {
		xlo, xhi = xlo-1, xhi+1
	}
	ylo, yhi := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		ylo, yhi = math.Min(ylo, r.Mean-r.Std), math.Max(yhi, r.Mean+r.Std)
	}
	if pad := (yhi - ylo) * 0.1; pad > 0 {
		ylo, yhi = ylo-pad, yhi+pad
	} else {
		ylo, yhi = ylo-0.05, yhi+0.05
	}
	x := func(b float64) float64 { return float64(left) + pw*(b-xlo)/(xhi-xlo) }
	y := func(s float64) float64 { return float64(top) + ph*(1-(s-ylo)/(yhi-ylo)) }

	svg := plot.New(width, height, 12, true)
	svg.El(`<rect width="%d" height="%d" fill="white"/>`, width, height)
	svg.El(`<text x="%d" y="24" font-size="15">%s</text>`, left, plot.Esc(title))
	// the one-std band: [best − std, best]
	bestY, floorY := y(rep.Best.Mean), y(rep.Best.Mean-rep.Best.Std)
	svg.El(`<rect class="band" x="%d" y="%.1f" width="%.1f" height="%.1f" fill="#4c9be8" fill-opacity="0.15"/>`,
		left, bestY, pw, math.Max(floorY-bestY, 0.5))
	svg.El(`<line x1="%d" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#4c9be8" stroke-dasharray="4 3"/>`, left, float64(left)+pw, bestY, bestY)
	// the legend sits in the lower right, where scores that grow with the
	// budget leave room
	svg.El(`<text x="%d" y="%.1f" text-anchor="end" fill="#4c9be8">shaded: within one std of the best mean (%.3f ± %.3f at %s)</text>`,
		width-right-6, float64(top)+ph-10, rep.Best.Mean, rep.Best.Std, kilo(rep.Best.Budget))
	// axes and ticks
	svg.El(`<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`, left, float64(top)+ph, float64(left)+pw, float64(top)+ph)
	svg.El(`<line x1="%d" y1="%d" x2="%d" y2="%.1f" stroke="black"/>`, left, top, left, float64(top)+ph)
	for _, r := range rows {
		svg.El(`<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, x(float64(r.Budget)), float64(top)+ph+16, kilo(r.Budget))
	}
	for i := 0; i <= 4; i++ {
		v := ylo + (yhi-ylo)*float64(i)/4
		svg.El(`<text x="%d" y="%.1f" text-anchor="end">%.3f</text>`, left-6, y(v)+4, v)
	}
	svg.El(`<text x="%.1f" y="%d" text-anchor="middle">retrieval budget (tokens)</text>`, float64(left)+pw/2, height-18)
	svg.El(`<text transform="translate(16 %.1f) rotate(-90)" text-anchor="middle">score vs silver (%s)</text>`, float64(top)+ph/2, plot.Esc(rep.Config.Utility))
	// the estimate
	ex := x(float64(rep.Estimate))
	svg.El(`<line class="estimate" x1="%.1f" x2="%.1f" y1="%d" y2="%.1f" stroke="#d62728" stroke-width="2"/>`, ex, ex, top, float64(top)+ph)
	svg.El(`<text x="%.1f" y="%d" fill="#d62728" text-anchor="middle">estimate %s</text>`, ex, top-6, kilo(rep.Estimate))
	// mean ± std
	for _, r := range rows {
		cx := x(float64(r.Budget))
		svg.El(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#333"/>`, cx, cx, y(r.Mean-r.Std), y(r.Mean+r.Std))
	}
	path := plot.Points(len(rows), func(i int) (float64, float64) { return x(float64(rows[i].Budget)), y(rows[i].Mean) })
	svg.El(`<polyline points="%s" fill="none" stroke="#333" stroke-width="1.5"/>`, path)
	for _, r := range rows {
		svg.El(`<circle class="point" cx="%.1f" cy="%.1f" r="3.5" fill="#333"><title>%d tokens: %.4f ± %.4f (n=%d)</title></circle>`,
			x(float64(r.Budget)), y(r.Mean), r.Budget, r.Mean, r.Std, r.N)
	}
	return svg.End(w)
}

func kilo(n int) string {
	if n >= 1000 && n%1000 == 0 {
		return fmt.Sprintf("%dk", n/1000)
	}
	if n >= 1000 {
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	}
	return fmt.Sprint(n)
}
