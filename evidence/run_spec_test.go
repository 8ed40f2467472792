package evidence_test

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/evidence"
	"github.com/ctxsel/ctxsel/index/indextest"
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

// By default a broad question's turns are packed with DefaultBroadRun and
// DefaultBroadPrior, and Why says so; broad_run=0.5,broad_prior=0,
// broad_passage=0 (run's share, no prior) packs them as any other question's; a question for
// one fact is packed the same whatever they are.
func TestBroadSpec(t *testing.T) {
	if evidence.DefaultBroadRun == evidence.DefaultRun && evidence.DefaultBroadPrior == 0 {
		t.Fatalf("DefaultBroadRun %v, DefaultBroadPrior %v: nothing differs by default; update this test", evidence.DefaultBroadRun, evidence.DefaultBroadPrior)
	}
	chat := "[10:01] Ann: The trip budget is fine.\n[10:02] Bo: Okay.\n[10:03] Cy: Yes.\n[10:04] Dee: The trip was long.\n" +
		"[10:05] Eve: The trip had rain.\n[10:06] Fay: The trip ended well.\n[10:07] Gus: Lunch now.\n"
	prose := *evidence.DefaultModel()
	prose.Kinds = nil
	const base, off = "evidence:budget=30,floor=0,stop=0", ",broad_run=0.5,broad_prior=0,broad_passage=0"
	def := ",broad_run=" + strconv.FormatFloat(evidence.DefaultBroadRun, 'g', -1, 64) + ",broad_prior=" + strconv.FormatFloat(evidence.DefaultBroadPrior, 'g', -1, 64)
	one, wide := "Who had rain on the trip?", "Summarize the discussion of the trip budget."
	sent := map[string]string{}
	for _, q := range []string{one, wide} {
		if got := evidence.Broad(q); got != (q == wide) {
			t.Fatalf("Broad(%q) = %v", q, got)
		}
		for _, v := range []string{"", def, off} {
			s, err := evidence.Parse(base+v, evidence.Options{Embedder: indextest.HashEmbedder{}, Counter: counter(t), Model: &prose})
			if err != nil {
				t.Fatal(err)
			}
			if s.Name() != base+v {
				t.Errorf("%s: named %s", base+v, s.Name())
			}
			sel, err := s.SelectTexts(context.Background(), query(t, q, chat))
			if err != nil {
				t.Fatal(err)
			}
			checkPruned(t, chat, sel.Evidence[0])
			sent[q+v] = sel.Evidence[0].Text
			says := strings.Contains(sel.Explanation.Reason, "asks for a discussion or a summary")
			if want := v != off && q == wide; says != want {
				t.Errorf("%s, %q: Why %q", v, q, sel.Explanation.Reason)
			}
			p := sel.Explanation.Params
			if on := v != off; on != (p["broad_run"] == evidence.DefaultBroadRun && p["broad_prior"] == evidence.DefaultBroadPrior) {
				t.Errorf("%s: params %v", v, p)
			}
		}
	}
	if sent[one] != sent[one+off] || sent[one] != sent[one+def] {
		t.Errorf("a question for one fact: sent %q by default, %q with %s", sent[one], sent[one+off], off)
	}
	if sent[wide] != sent[wide+def] {
		t.Errorf("a broad question: sent %q by default, %q with %s", sent[wide], sent[wide+def], def)
	}
	// Ann's turn, the likeliest alone, gives way to the stretch after it
	if sent[wide] == sent[wide+off] || !strings.Contains(sent[wide+off], "Ann:") || strings.Contains(sent[wide], "Ann:") {
		t.Errorf("a broad question: sent %q by default and %q with %s", sent[wide], sent[wide+off], off)
	}
}

// broad_reach, broad_decay, broad_passage, broad_chunk and broad_stretch read back from the name
// and the params, Why names them for a broad question, a question for one
// fact is packed the same with them, the defaults send what they name,
// and out-of-range values are input errors.
func TestBroadReachSpec(t *testing.T) {
	if evidence.DefaultBroadReach != 8 || evidence.DefaultBroadPassage != 1 || evidence.DefaultBroadStretch != 0 || evidence.DefaultBroadDecay != 0 || evidence.DefaultBroadChunk != 0 {
		t.Fatalf("DefaultBroadReach %v, DefaultBroadPassage %v, DefaultBroadStretch %v, DefaultBroadDecay %v, DefaultBroadChunk %v: update this test",
			evidence.DefaultBroadReach, evidence.DefaultBroadPassage, evidence.DefaultBroadStretch, evidence.DefaultBroadDecay, evidence.DefaultBroadChunk)
	}
	chat := "[10:01] Ann: The trip budget is fine.\n[10:02] Bo: Okay.\n[10:03] Cy: Yes.\n[10:04] Dee: The trip was long.\n" +
		"[10:05] Eve: The trip had rain.\n[10:06] Fay: The trip ended well.\n[10:07] Gus: Lunch now.\n"
	other := "[11:01] Hal: The trip was paid.\n[11:02] Ida: The budget was small.\n"
	prose := *evidence.DefaultModel()
	prose.Kinds = nil
	const base, wider = "evidence:budget=30,floor=0,stop=0", ",broad_reach=4,broad_passage=1,broad_stretch=0.5"
	const def, before = ",broad_reach=8,broad_decay=0,broad_passage=1", ",broad_reach=1,broad_passage=0"
	const decayed, chunked = ",broad_reach=32,broad_decay=1", ",broad_chunk=2"
	// what Why names (for a broad question) and Params hold, per variant
	why := map[string]string{"": "broad_reach=8, broad_passage=1)", def: "broad_reach=8, broad_passage=1)", before: "broad_prior=1)",
		wider:   "broad_reach=4, broad_passage=1, broad_stretch=0.5): first the stretch of contiguous turns",
		decayed: "broad_reach=32, broad_decay=1, broad_passage=1)", chunked: "broad_reach=8, broad_passage=1, broad_chunk=2)"}
	params := map[string][5]float64{"": {8, 0, 1, 0, 0}, def: {8, 0, 1, 0, 0}, before: {0, 0, 0, 0, 0}, wider: {4, 0, 1, 0.5, 0}, decayed: {32, 1, 1, 0, 0},
		chunked: {8, 0, 1, 0, 2}}
	one, wide := "Who had rain on the trip?", "Summarize the discussion of the trip budget."
	sent := map[string]string{}
	for _, q := range []string{one, wide} {
		for _, v := range []string{"", def, before, wider, decayed, chunked} {
			s, err := evidence.Parse(base+v, evidence.Options{Embedder: indextest.HashEmbedder{}, Counter: counter(t), Model: &prose})
			if err != nil {
				t.Fatal(err)
			}
			if s.Name() != base+v {
				t.Errorf("%s: named %s", base+v, s.Name())
			}
			sel, err := s.SelectTexts(context.Background(), query(t, q, chat, other))
			if err != nil {
				t.Fatal(err)
			}
			var texts []string
			for _, ev := range sel.Evidence {
				texts = append(texts, ev.Text)
			}
			sent[q+v] = strings.Join(texts, "\n--\n")
			if says := strings.Contains(sel.Explanation.Reason, why[v]); says != (q == wide) {
				t.Errorf("%s, %q: Why %q", v, q, sel.Explanation.Reason)
			}
			p := sel.Explanation.Params
			if got := [5]float64{p["broad_reach"], p["broad_decay"], p["broad_passage"], p["broad_stretch"], p["broad_chunk"]}; got != params[v] {
				t.Errorf("%s: params %v, want broad_reach, broad_decay, broad_passage, broad_stretch, broad_chunk %v", v, p, params[v])
			}
		}
	}
	for _, v := range []string{def, before, wider, decayed, chunked} {
		if sent[one] != sent[one+v] {
			t.Errorf("a question for one fact: sent %q by default, %q with %s", sent[one], sent[one+v], v)
		}
	}
	if sent[wide] != sent[wide+def] {
		t.Errorf("a broad question: sent %q by default, %q with %s", sent[wide], sent[wide+def], def)
	}
	for _, bad := range []evidence.Options{{Budget: 30, BroadReach: evidence.MaxBroadReach + 1}, {Budget: 30, BroadReach: -1},
		{Budget: 30, BroadPassage: evidence.MaxBroadPassage + 0.5}, {Budget: 30, BroadPassage: -0.5}, {Budget: 30, BroadStretch: 1.5}, {Budget: 30, BroadStretch: -0.5},
		{Budget: 30, BroadDecay: 1.5}, {Budget: 30, BroadDecay: -0.5}, {Budget: 30, BroadDecay: math.NaN()},
		{Budget: 30, BroadChunk: evidence.MaxBroadChunk + 0.5}, {Budget: 30, BroadChunk: -0.5}, {Budget: 30, BroadChunk: math.Inf(1)}} {
		bad.Embedder = indextest.HashEmbedder{}
		if _, err := evidence.New(bad); !errors.Is(err, ctxsel.ErrInvalidInput) || !strings.Contains(err.Error(), "broad_") {
			t.Errorf("reach %d, decay %v, passage %v, stretch %v, chunk %v: %v, want an input error", bad.BroadReach, bad.BroadDecay, bad.BroadPassage, bad.BroadStretch, bad.BroadChunk, err)
		}
	}
}
