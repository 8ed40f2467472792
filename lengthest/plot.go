package lengthest

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
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

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="24" font-size="15">%s</text>`+"\n", left, html.EscapeString(title))
	// the one-std band: [best − std, best]
	bestY, floorY := y(rep.Best.Mean), y(rep.Best.Mean-rep.Best.Std)
	fmt.Fprintf(&b, `<rect class="band" x="%d" y="%.1f" width="%.1f" height="%.1f" fill="#4c9be8" fill-opacity="0.15"/>`+"\n",
		left, bestY, pw, math.Max(floorY-bestY, 0.5))
	fmt.Fprintf(&b, `<line x1="%d" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#4c9be8" stroke-dasharray="4 3"/>`+"\n", left, float64(left)+pw, bestY, bestY)
	// the legend sits in the lower right, where scores that grow with the
	// budget leave room
	fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" fill="#4c9be8">shaded: within one std of the best mean (%.3f ± %.3f at %s)</text>`+"\n",
		width-right-6, float64(top)+ph-10, rep.Best.Mean, rep.Best.Std, kilo(rep.Best.Budget))
	// axes and ticks
	fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", left, float64(top)+ph, float64(left)+pw, float64(top)+ph)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%.1f" stroke="black"/>`+"\n", left, top, left, float64(top)+ph)
	for _, r := range rows {
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x(float64(r.Budget)), float64(top)+ph+16, kilo(r.Budget))
	}
	for i := 0; i <= 4; i++ {
		v := ylo + (yhi-ylo)*float64(i)/4
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%.3f</text>`+"\n", left-6, y(v)+4, v)
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">retrieval budget (tokens)</text>`+"\n", float64(left)+pw/2, height-18)
	fmt.Fprintf(&b, `<text transform="translate(16 %.1f) rotate(-90)" text-anchor="middle">score vs silver (%s)</text>`+"\n", float64(top)+ph/2, html.EscapeString(rep.Config.Utility))
	// the estimate
	ex := x(float64(rep.Estimate))
	fmt.Fprintf(&b, `<line class="estimate" x1="%.1f" x2="%.1f" y1="%d" y2="%.1f" stroke="#d62728" stroke-width="2"/>`+"\n", ex, ex, top, float64(top)+ph)
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" fill="#d62728" text-anchor="middle">estimate %s</text>`+"\n", ex, top-6, kilo(rep.Estimate))
	// mean ± std
	var path []string
	for _, r := range rows {
		cx := x(float64(r.Budget))
		path = append(path, fmt.Sprintf("%.1f,%.1f", cx, y(r.Mean)))
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#333"/>`+"\n", cx, cx, y(r.Mean-r.Std), y(r.Mean+r.Std))
	}
	fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="#333" stroke-width="1.5"/>`+"\n", strings.Join(path, " "))
	for _, r := range rows {
		fmt.Fprintf(&b, `<circle class="point" cx="%.1f" cy="%.1f" r="3.5" fill="#333"><title>%d tokens: %.4f ± %.4f (n=%d)</title></circle>`+"\n",
			x(float64(r.Budget)), y(r.Mean), r.Budget, r.Mean, r.Std, r.N)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
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
