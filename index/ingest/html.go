package ingest

import (
	"fmt"
	"io"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// HTMLText extracts the readable text of an HTML document: the title on
// the first line, then the body's text with block elements (paragraphs,
// headings, list items, table rows, …) on lines of their own, a heading
// as a Markdown heading ("## " for <h2>, its text on one line), runs of white
// space collapsed outside <pre>, a data table as a Markdown table (a header
// row, a rule, a line a row: htmltable.go), and scripts, styles, templates,
// SVG and other non-text content dropped.
func HTMLText(r io.Reader) (string, error) {
	doc, err := html.Parse(r)
	if err != nil {
		return "", fmt.Errorf("parse HTML: %w", err)
	}
	var buf []byte
	var title string
	pendingBreak := 0 // newlines owed before the next text
	space := func() { // a separating space, unless one is there or a break is owed
		if len(buf) > 0 && pendingBreak == 0 && buf[len(buf)-1] != ' ' && buf[len(buf)-1] != '\n' {
			buf = append(buf, ' ')
		}
	}
	write := func(s string) {
		if len(buf) > 0 && pendingBreak > 0 {
			for len(buf) > 0 && buf[len(buf)-1] == ' ' {
				buf = buf[:len(buf)-1]
			}
			for range pendingBreak {
				buf = append(buf, '\n')
			}
		}
		pendingBreak = 0
		buf = append(buf, s...)
	}
	brk := func(n int) { pendingBreak = max(pendingBreak, n) }
	var walk func(n *html.Node, pre bool)
	walk = func(n *html.Node, pre bool) {
		switch n.Type {
		case html.TextNode:
			if pre {
				write(n.Data)
				return
			}
			t := strings.Join(strings.Fields(n.Data), " ")
			if t == "" {
				space()
				return
			}
			if isSpace(n.Data[0]) {
				space()
			}
			write(t)
			if isSpace(n.Data[len(n.Data)-1]) {
				space()
			}
			return
		case html.ElementNode:
			if unreadable(n.DataAtom) {
				return
			}
			switch n.DataAtom {
			case atom.Head:
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					if c.Type == html.ElementNode && c.DataAtom == atom.Title && title == "" {
						title = strings.Join(strings.Fields(textOf(c)), " ")
					}
				}
				return
			case atom.Br:
				brk(1)
				return
			case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
				// a heading as Markdown writes it, so that a chunk of the
				// page is read under its heading path (evidence's units,
				// chunk.Above) as a Markdown file's is
				if t := strings.Join(strings.Fields(headingText(n)), " "); t != "" && !pre {
					brk(breakBefore(n.DataAtom))
					write(strings.Repeat("#", headingLevel(n.DataAtom)) + " " + t)
					brk(breakBefore(n.DataAtom))
					return
				}
			case atom.Table:
				if md, ok := markdownTable(n); ok {
					// a data table as Markdown (htmltable.go), its caption above it
					for c := n.FirstChild; c != nil; c = c.NextSibling {
						if c.Type == html.ElementNode && c.DataAtom == atom.Caption {
							if t := strings.Join(strings.Fields(textOf(c)), " "); t != "" {
								brk(2)
								write(t)
							}
						}
					}
					brk(2)
					write(md)
					brk(2)
					return
				}
			}
		}
		block := n.Type == html.ElementNode && blockElements[n.DataAtom]
		if block {
			brk(breakBefore(n.DataAtom))
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, pre || n.DataAtom == atom.Pre)
		}
		if block {
			brk(breakBefore(n.DataAtom))
		}
	}
	walk(doc, false)
	body := strings.TrimSpace(string(buf))
	if title != "" && !strings.HasPrefix(body, title) && !strings.HasPrefix(body, "# "+title) {
		body = title + "\n\n" + body
	}
	return body, nil
}

// headingText is a heading's text, a <br> in it a space.
func headingText(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch {
		case n.Type == html.TextNode:
			b.WriteString(n.Data)
		case n.Type == html.ElementNode && n.DataAtom == atom.Br:
			b.WriteByte(' ')
		case n.Type == html.ElementNode && unreadable(n.DataAtom):
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// headingLevel is the level of a heading element (1 for <h1>).
func headingLevel(a atom.Atom) int {
	switch a {
	case atom.H1:
		return 1
	case atom.H2:
		return 2
	case atom.H3:
		return 3
	case atom.H4:
		return 4
	case atom.H5:
		return 5
	}
	return 6
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' }

func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// breakBefore is the number of newlines around a block: paragraphs and
// headings get a blank line (a sentence and paragraph boundary for the
// chunkers), list items and table rows one line.
func breakBefore(a atom.Atom) int {
	switch a {
	case atom.Li, atom.Tr, atom.Dt, atom.Dd, atom.Td, atom.Th, atom.Option:
		return 1
	}
	return 2
}

var blockElements = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Section: true, atom.Article: true, atom.Header: true, atom.Footer: true,
	atom.Nav: true, atom.Aside: true, atom.Main: true, atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true,
	atom.H5: true, atom.H6: true, atom.Ul: true, atom.Ol: true, atom.Li: true, atom.Dl: true, atom.Dt: true,
	atom.Dd: true, atom.Table: true, atom.Tr: true, atom.Td: true, atom.Th: true, atom.Pre: true,
	atom.Blockquote: true, atom.Figure: true, atom.Figcaption: true, atom.Hr: true, atom.Form: true,
	atom.Fieldset: true, atom.Address: true, atom.Details: true, atom.Summary: true, atom.Caption: true,
	atom.Option: true, atom.Title: true,
}

// unreadable says an element holds no text a reader sees (scripts,
// styles, embedded objects): HTMLText and a table cell's text skip it.
func unreadable(a atom.Atom) bool {
	switch a {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Svg, atom.Math, atom.Iframe, atom.Object:
		return true
	}
	return false
}
