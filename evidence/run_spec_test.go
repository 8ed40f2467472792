package evidence_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/evidence"
	"github.com/ctxsel/ctxsel/index/indextest"
)

// A spec without run lends DefaultRun: on a chat log it sends what
// run=DefaultRun sends, and not what run=0 sends; run reads back from the
// selector's name and params.
func TestRunByDefault(t *testing.T) {
	if evidence.DefaultRun <= 0 {
		t.Skipf("DefaultRun %v: no default to test", evidence.DefaultRun)
	}
	chat := fixture(t, "chat.txt")
	q := query(t, "What did Tom eat in Lisbon?", chat)
	prose := *evidence.DefaultModel()
	prose.Kinds = nil // the prose model leaves a gap between kept sentences here
	sent := map[string]string{}
	def := ",run=" + strconv.FormatFloat(evidence.DefaultRun, 'g', -1, 64)
	for _, r := range []string{"", def, ",run=0"} {
		s, err := evidence.Parse("evidence:budget=80,floor=0,whole=none"+r, evidence.Options{Embedder: indextest.HashEmbedder{}, Counter: counter(t), Model: &prose})
		if err != nil {
			t.Fatal(err)
		}
		sel, err := s.SelectTexts(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		checkPruned(t, chat, sel.Evidence[0])
		sent[r] = sel.Evidence[0].Text
		// Why says so where a lent value sent a sentence, and only there
		if says := strings.Contains(sel.Explanation.Reason, "next to theirs ("+def[1:]+")"); says != (r != ",run=0") {
			t.Errorf("%s: Why %q", r, sel.Explanation.Reason)
		}
		if p, ok := s.(interface{ Params() map[string]float64 }); ok && r == "" && p.Params()["run"] != evidence.DefaultRun {
			t.Errorf("params: run %v, want %v", p.Params()["run"], evidence.DefaultRun)
		}
	}
	if sent[""] != sent[def] {
		t.Errorf("default sent %q, %s %q", sent[""], def, sent[def])
	}
	if sent[""] == sent[",run=0"] {
		t.Errorf("default and run=0 both sent %q", sent[""])
	}
}
