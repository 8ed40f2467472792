package ollamahost

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]string{
		"":                          "http://127.0.0.1:11434",
		"  ":                        "http://127.0.0.1:11434",
		"0.0.0.0":                   "http://0.0.0.0:11434",
		"example.com":               "http://example.com:11434",
		" example.com:8080 ":        "http://example.com:8080",
		":1234":                     "http://127.0.0.1:1234",
		"http://example.com":        "http://example.com:80",
		"https://example.com":       "https://example.com:443",
		"https://example.com:9000/": "https://example.com:9000",
		"http://h:1/ollama":         "http://h:1/ollama",
		"[::1]:11434":               "http://[::1]:11434",
		"::1":                       "http://[::1]:11434",
		"http://":                   "http://127.0.0.1:80",
	} {
		u, err := Parse(in)
		if err != nil || u.String() != want {
			t.Errorf("Parse(%q) = %v, %v; want %s", in, u, err, want)
		}
	}
	for _, bad := range []string{"ftp://h", "http://u:p@h", "h?x=1", "h#f", "h:99999", "h:0", "h:x", "exa mple.com", "h/a b", "%000", "h\\x"} {
		if u, err := Parse(bad); err == nil || !strings.Contains(err.Error(), "host") {
			t.Errorf("Parse(%q) = %v, %v; want an error", bad, u, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "h:1", "https://[::1]:9/x", "ftp://h", "h:99999", "::1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := Parse(s)
		if err != nil {
			return
		}
		back, err := Parse(u.String())
		if err != nil || back.String() != u.String() {
			t.Fatalf("%q → %s → %v, %v", s, u, back, err)
		}
	})
}
