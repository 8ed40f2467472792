package evidence_test

import (
	"strconv"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/evidence"
)

// A spec without run lends DefaultRun: on a chat log it sends what
// run=DefaultRun sends, and not what run=0 sends; run reads back from the
// selector's name and params.
func TestRunByDefault(t *testing.T) {
	if evidence.DefaultRun <= 0 {
		t.Fatalf("DefaultRun %v: update this test", evidence.DefaultRun)
	}
	def := ",run=" + strconv.FormatFloat(evidence.DefaultRun, 'g', -1, 64)
	// Why says so where a lent value sent a sentence, and only there
	sent := chatVariants(t, "evidence:budget=80,floor=0,whole=none", []string{"", def, ",run=0"}, "next to theirs ("+def[1:]+")", ",run=0",
		func(v string, s ctxsel.TextSelector) {
			if p, ok := s.(interface{ Params() map[string]float64 }); ok && v == "" && p.Params()["run"] != evidence.DefaultRun {
				t.Errorf("params: run %v, want %v", p.Params()["run"], evidence.DefaultRun)
			}
		})
	if sent[""] != sent[def] {
		t.Errorf("default sent %q, %s %q", sent[""], def, sent[def])
	}
	if sent[""] == sent[",run=0"] {
		t.Errorf("default and run=0 both sent %q", sent[""])
	}
}
