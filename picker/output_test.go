package picker_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/picker"
)

var offered = map[string]int{"a": 0, "b": 1, "3": 2, "x y": 3}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in        string
		ids       []string
		rationale string
		reason    string
	}{
		{`{"rationale":"r","ids":["a","b"]}`, []string{"a", "b"}, "r", ""},
		{"  ```json\n{\"rationale\": \" spaced \", \"ids\": [\"x y\"]}\n```  ", []string{"x y"}, "spaced", ""},
		{"Here you go:\n```\n{\"ids\": [3]}\n```\nDone.", []string{"3"}, "", ""},
		{`{"rationale":null,"ids":["b"],"extra":1}`, []string{"b"}, "", ""},
		{``, nil, "", "empty output"},
		{`["a"]`, nil, "", "not a JSON object"},
		{`{"ids":"a"}`, nil, "", `"ids" is not a list`},
		{`{"ids":null}`, nil, "", `no "ids" field`},
		{`{"ids":[null]}`, nil, "", "neither a string nor a number"},
		{`{"ids":[true]}`, nil, "", "neither a string nor a number"},
		{`{"ids":[3.0]}`, nil, "", `unknown id "3.0"`},
		{`{"rationale":5,"ids":["a"]}`, nil, "", "rationale is not a string"},
		{`{"ids":["a"]}{"ids":["b"]}`, nil, "", "text after the JSON object"},
		{`{"ids":["a",]}`, nil, "", "malformed JSON"},
		{"```python\n{\"ids\":[\"a\"]}\n```", nil, "", "code fence of python"},
		{"```json\n{\"ids\":[\"a\"]}", nil, "", "unterminated code fence"},
		{`{"ids":["A"]}`, nil, "", `unknown id "A"`},
	} {
		out, err := picker.Parse(tc.in, offered)
		if tc.reason != "" {
			if !errors.Is(err, picker.ErrInvalidOutput) || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("%q: err %v, want %q", tc.in, err, tc.reason)
			}
			continue
		}
		if err != nil || !slices.Equal(out.IDs, tc.ids) || out.Rationale != tc.rationale {
			t.Fatalf("%q: %+v %v", tc.in, out, err)
		}
	}
}

// The parser never panics, and whatever it accepts is a non-empty list of
// distinct offered ids.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"rationale":"r","ids":["a","b"]}`, "```json\n{\"ids\":[3]}\n```", `{"ids":[]}`, `{"ids":["a","a"]}`,
		`{"ids":[1e400]}`, `{"ids":["\ud800"]}`, "{", "```", "```\n```", `{"ids":[-0]}`, `{"rationale":"` + strings.Repeat("z", 100) + `","ids":["x y"]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := picker.Parse(s, offered)
		if err != nil {
			if !errors.Is(err, picker.ErrInvalidOutput) {
				t.Fatalf("error %v does not wrap ErrInvalidOutput", err)
			}
			return
		}
		if len(out.IDs) == 0 {
			t.Fatal("accepted an empty selection")
		}
		seen := map[string]bool{}
		for _, id := range out.IDs {
			if _, ok := offered[id]; !ok || seen[id] {
				t.Fatalf("accepted %q (offered %v, seen %v)", id, ok, seen[id])
			}
			seen[id] = true
		}
	})
}

// Prompt assembly and output parsing for 100 candidates of ~120 tokens:
// the picker's own overhead, beside the LLM call it wraps.
func BenchmarkPromptAndParse100(b *testing.B) {
	cands := make([]picker.Offered, 100)
	ids := make(map[string]int, 100)
	text := strings.Repeat("The quick brown fox jumps over the lazy dog near the river bank. ", 10)
	for i := range cands {
		cands[i] = picker.Offered{ID: fmt.Sprintf("doc-%d#%d", i/10, i), Text: text}
		ids[cands[i].ID] = i
	}
	answer := `{"rationale": "passages doc-0#3 and doc-4#41 give both hops of the chain", "ids": ["doc-0#3", "doc-4#41", "doc-9#99"]}`
	b.ReportAllocs()
	for b.Loop() {
		p := picker.Prompt(picker.StageTest, "Which river runs past the bank where the fox jumps?", cands)
		if len(p) == 0 {
			b.Fatal("empty prompt")
		}
		if _, err := picker.Parse(answer, ids); err != nil {
			b.Fatal(err)
		}
	}
}
