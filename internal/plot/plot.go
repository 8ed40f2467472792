// Package plot writes the module's standalone SVG charts (ask's curve,
// eval's frontier, lengthest's budget curve, ldareval's learning curve and
// bands): the document, elements one a line, escaped text and polyline
// points, so that each chart's code says only what it draws. It has no
// scales or axes of its own: each chart maps its data itself, and its
// output is pinned by golden files (internal/plot/plottest).
package plot

import (
	"fmt"
	"html"
	"io"
	"strings"
)

// Background is a white rectangle over the whole page.
const Background = `<rect width="100%" height="100%" fill="white"/>`

// Doc is an SVG document being written.
type Doc struct {
	b strings.Builder
}

// New begins a width×height document in sans-serif at fontSize pixels,
// with a matching viewBox when viewBox is set (the chart then scales).
func New(width, height, fontSize int, viewBox bool) *Doc {
	d := &Doc{}
	if viewBox {
		d.El(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="%d">`, width, height, width, height, fontSize)
	} else {
		d.El(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="%d">`, width, height, fontSize)
	}
	return d
}

// El writes one line of elements, formatted as fmt.Sprintf does; text
// from data goes through Esc.
func (d *Doc) El(format string, args ...any) {
	fmt.Fprintf(&d.b, format, args...)
	d.b.WriteByte('\n')
}

// Background writes the Background line.
func (d *Doc) Background() { d.El("%s", Background) }

// End closes the document and writes it to w.
func (d *Doc) End(w io.Writer) error {
	d.b.WriteString("</svg>\n")
	_, err := io.WriteString(w, d.b.String())
	return err
}

// Esc is s as SVG text or attribute value.
func Esc(s string) string { return html.EscapeString(s) }

// Points is a polyline's points attribute: n points, at(i) the i-th one's
// coordinates, to a tenth of a pixel.
func Points(n int, at func(i int) (x, y float64)) string {
	pts := make([]string, n)
	for i := range n {
		x, y := at(i)
		pts[i] = fmt.Sprintf("%.1f,%.1f", x, y)
	}
	return strings.Join(pts, " ")
}
