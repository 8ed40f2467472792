package ingest_test

import (
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/index/ingest"
)

func TestHTMLText(t *testing.T) {
	cases := []struct{ in, want string }{
		{`<p>Hello <b>bold</b> world</p>`, "Hello bold world"},
		{`<p>One</p><p>Two</p>`, "One\n\nTwo"},
		{`<ul><li>a</li><li>b</li></ul>`, "a\nb"},
		{`line<br>break`, "line\nbreak"},
		{`<p>x &amp; y &lt;z&gt; &eacute;</p>`, "x & y <z> é"},
		{`<pre>  keep   spacing
  here</pre>`, "keep   spacing\n  here"},
		{`<head><title>T</title><script>bad()</script></head><body><noscript>no</noscript><svg><text>s</text></svg>ok</body>`, "T\n\nok"},
		{`<table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>`, "| a | b |\n| c |  |"},
		{`text<span>glued</span> <i>spaced</i>`, "textglued spaced"},
		{`<h1>Title</h1>Body.`, "# Title\n\nBody."},
		// a heading as Markdown writes it, on one line, at its level; the
		// page's title not repeated above an <h1> that says it
		{`<head><title>Guide</title></head><body><h1>Guide</h1><h2>Setup <b>now</b></h2><p>Run it.</p><h3>Step<br>one<script>x()</script></h3>x</body>`, "# Guide\n\n## Setup now\n\nRun it.\n\n### Step one\n\nx"},
		{`<h2>  </h2><p>No heading.</p><h6>Deep</h6>`, "No heading.\n\n###### Deep"},
		{``, ""},
		{`<p>unclosed <b>tags`, "unclosed tags"},
	}
	for _, tc := range cases {
		got, err := ingest.HTMLText(strings.NewReader(tc.in))
		if err != nil || got != tc.want {
			t.Errorf("HTMLText(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestCleanText(t *testing.T) {
	if got := ingest.CleanText("\ufeffa\r\nb\rc\xff"); got != "a\nb\nc\ufffd" {
		t.Fatalf("CleanText: %q", got)
	}
}
