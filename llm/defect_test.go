package llm

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel/llm/llmtest"
)

// Degenerate replies are answers flagged as such, not errors, and never
// cached: empty, cut off at the token limit, over the size bound.
func TestDegenerateRepliesFlaggedAndNotCached(t *testing.T) {
	big := strings.Repeat("é", DefaultMaxReplyBytes) // 2 MiB of two-byte runes
	for _, tc := range []struct {
		name  string
		reply llmtest.Reply
		want  string
	}{
		{"empty", llmtest.Reply{Content: ""}, DefectEmpty},
		{"blank", llmtest.Reply{Content: " \n "}, DefectEmpty},
		{"length", llmtest.Reply{Content: "Mount Et", FinishReason: "length"}, DefectTruncated},
		{"oversize", llmtest.Reply{Content: "x" + big}, DefectTruncated},
		{"sound", llmtest.Reply{Content: "Etna"}, ""},
	} {
		for _, provider := range []string{"openai", "ollama"} {
			t.Run(tc.name+"/"+provider, func(t *testing.T) {
				srv := llmtest.New(func(llmtest.Call) llmtest.Reply { return tc.reply })
				defer srv.Close()
				base := srv.URL + "/v1"
				if provider == "ollama" {
					base = srv.URL
				}
				c, err := Open(Spec{Provider: provider, Model: "m", BaseURL: base}, Options{})
				if err != nil {
					t.Fatal(err)
				}
				cache, err := OpenCache(t.TempDir(), CacheOptions{})
				if err != nil {
					t.Fatal(err)
				}
				defer cache.Close()
				cc := Cached(c, cache)
				r, err := Ask(context.Background(), cc, "q")
				if err != nil {
					t.Fatalf("a degenerate reply is an answer, not an error: %v", err)
				}
				if r.Defect() != tc.want {
					t.Fatalf("defect %q, want %q", r.Defect(), tc.want)
				}
				if tc.name == "oversize" && (len(r.Content) > DefaultMaxReplyBytes || !r.Oversize || !utf8.ValidString(r.Content)) {
					t.Fatalf("oversize reply kept %d bytes (valid UTF-8 %v)", len(r.Content), utf8.ValidString(r.Content))
				}
				if _, err := Ask(context.Background(), cc, "q"); err != nil {
					t.Fatal(err)
				}
				wantCalls := 2 // a degenerate reply is asked again
				if tc.want == "" {
					wantCalls = 1
				}
				if srv.Requests() != wantCalls {
					t.Fatalf("%d calls, want %d", srv.Requests(), wantCalls)
				}
			})
		}
	}
}
