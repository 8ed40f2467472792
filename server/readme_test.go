package server

import (
	"os"
	"regexp"
	"testing"
)

// The README's one-line description of /v1/ask shows its request body; that
// body decodes, so the README names the field the handler reads ("query",
// once written "question").
func TestReadmeAskBody(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("`POST /v1/ask` — `(\\{[^`]*\\})`").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README describes POST /v1/ask without its request body")
	}
	var r askRequest
	if err := decodeAsk(string(m[1]), &r, testLimits); err != nil {
		t.Fatalf("README's /v1/ask body %s: %v", m[1], err)
	}
	if r.query == "" {
		t.Fatalf("README's /v1/ask body %s carries no question", m[1])
	}
}
