package wire

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
)

// TestAppendEvidence: the hand-written encoder writes what encoding/json
// writes for ctxsel.Evidence (its JSON tags), read back the same.
func TestAppendEvidence(t *testing.T) {
	dropped := 0.125
	for _, e := range []ctxsel.Evidence{
		{Header: &[2]int{0, 5}, Spans: [][2]int{{6, 20}, {40, 61}}, Text: "Title\nFirst kept. … Second \"kept\"\u2028.", Tokens: 12, PassageTokens: 40,
			KeptScore: 0.61, DroppedScore: &dropped, Sentences: 5, Why: "kept 2 of 5 sentences"},
		{Title: "Doc title › Section", Spans: [][2]int{{0, 3}}, Text: "Doc title › Section\nabc", Tokens: 3, PassageTokens: 3, KeptScore: 1e-9, Sentences: 1, Why: "all"},
	} {
		b := AppendEvidence(nil, &e)
		if !json.Valid(b) {
			t.Fatalf("not JSON: %s", b)
		}
		var got, want map[string]any
		std, _ := json.Marshal(e)
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(std, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got  %s\nwant %s", b, std)
		}
	}
	// A selection with evidence carries it aligned with its ids; one
	// without, none.
	sel := ctxsel.Selection{IDs: []string{"a"}, Indices: []int{0}, K: 1, Evidence: []ctxsel.Evidence{{Spans: [][2]int{{0, 1}}, Text: "x"}}}
	res := Selected{Sel: sel, Score: func(int) float64 { return 1 }, Sorted: []float64{1}}
	var out struct {
		IDs      []string          `json:"ids"`
		Evidence []ctxsel.Evidence `json:"evidence"`
	}
	if err := json.Unmarshal(append(append([]byte{'{'}, AppendSelected(nil, res, 10)...), '}'), &out); err != nil || len(out.Evidence) != 1 || out.Evidence[0].Text != "x" {
		t.Fatalf("%+v %v", out, err)
	}
	res.Sel.Evidence = nil
	if b := AppendSelected(nil, res, 10); !json.Valid(append(append([]byte{'{'}, b...), '}')) || strings.Contains(string(b), `"evidence"`) {
		t.Fatalf("evidence without a pruning selector: %s", b)
	}
}
