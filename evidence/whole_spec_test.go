package evidence_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/evidence"
	"github.com/ctxsel/ctxsel/index/indextest"
)

// whole=turn|item names the selector and reads as it says (SentenceUnits
// always in the set, as units= has it); a spec without it leaves the
// name as it was, whole=none is named; rows cannot be whole (a row is one
// unit already).
func TestWholeSpec(t *testing.T) {
	const s = evidence.SentenceUnits
	for spec, want := range map[string]struct {
		whole evidence.Structures
		name  string
	}{
		"evidence:budget=500":                 {0, "evidence:budget=500"},
		"evidence:budget=500,whole=none":      {s, "evidence:budget=500,whole=none"},
		"evidence:budget=500,whole=turn":      {s | evidence.TurnUnits, "evidence:budget=500,whole=turn"},
		"evidence:budget=500,whole=item|turn": {s | evidence.TurnUnits | evidence.ItemUnits, "evidence:budget=500,whole=turn|item"},
		"evidence:budget=500,whole=none|item": {s | evidence.ItemUnits, "evidence:budget=500,whole=item"},
	} {
		opt, err := evidence.ParseSpec(spec, evidence.Options{})
		if err != nil || opt.Whole != want.whole {
			t.Errorf("%s: whole %v, %v; want %v", spec, opt.Whole, err, want.whole)
		}
		if got := newSelector(t, spec).(interface{ Name() string }).Name(); got != want.name {
			t.Errorf("%s: named %s, want %s", spec, got, want.name)
		}
	}
	if _, err := evidence.New(evidence.Options{Budget: 5, Whole: evidence.RowUnits, Embedder: indextest.HashEmbedder{}}); !errors.Is(err, ctxsel.ErrInvalidInput) || !strings.Contains(err.Error(), "whole") {
		t.Errorf("whole rows: %v", err)
	}
	if _, err := evidence.ParseWhole("turn|row"); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Errorf("ParseWhole(turn|row): %v", err)
	}
}

// FuzzParseSpec reads any spec: an input error, or options New accepts
// whose selector's name reads back to the same options.
func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"evidence:budget=500", "evidence:budget=500,whole=turn|item", "evidence:budget=9,whole=none|turn,units=turn",
		"evidence:budget=500,whole=", "evidence:budget=500,whole=row", "evidence:budget=1,floor=0.5,stop=0,order=doc,max_k=2", "evidence:whole=turn",
		"evidence:budget=500,run=0.5", "evidence:budget=500,run=0", "evidence:budget=500,run=1.5", "evidence:budget=500,run=-0.2,whole=none",
		"evidence:budget=500,min_expected=1", "evidence:budget=500,min_expected=0", "evidence:budget=500,min_expected=1001",
		"evidence:budget=500,blend=0.5", "evidence:budget=500,blend=0", "evidence:budget=500,blend=1", "evidence:budget=500,blend=1.5", "evidence:budget=500,blend=-0.25,run=0",
		"evidence:budget=500,broad_run=0.9,broad_prior=1", "evidence:budget=500,broad_run=0,broad_prior=0", "evidence:budget=500,broad_run=1.5", "evidence:budget=500,broad_prior=-1,run=0.5",
		"evidence:budget=500,broad_reach=4,broad_passage=1", "evidence:budget=500,broad_reach=1,broad_passage=0", "evidence:budget=500,broad_reach=65", "evidence:budget=500,broad_reach=0",
		"evidence:budget=500,broad_reach=64,broad_decay=1", "evidence:budget=500,broad_decay=0", "evidence:budget=500,broad_decay=0.5,broad_reach=1", "evidence:budget=500,broad_decay=1.5", "evidence:budget=500,broad_decay=-1",
		"evidence:budget=500,broad_passage=10.5", "evidence:budget=500,broad_passage=-1,broad_reach=2.5", "evidence:budget=500,broad_prior=0,broad_reach=8,broad_passage=3",
		"evidence:budget=500,broad_stretch=0.75", "evidence:budget=500,broad_stretch=0", "evidence:budget=500,broad_stretch=1.5", "evidence:budget=500,broad_stretch=1,broad_reach=8,broad_passage=1",
		"evidence:budget=500,broad_chunk=2", "evidence:budget=500,broad_chunk=0", "evidence:budget=500,broad_chunk=0.5,broad_passage=0", "evidence:budget=500,broad_chunk=10.5", "evidence:budget=500,broad_chunk=-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		opt, err := evidence.ParseSpec(spec, evidence.Options{Embedder: indextest.HashEmbedder{}})
		if err != nil {
			if !errors.Is(err, ctxsel.ErrInvalidInput) {
				t.Fatalf("%q: not an input error: %v", spec, err)
			}
			return
		}
		s, err := evidence.New(opt)
		if err != nil {
			if !errors.Is(err, ctxsel.ErrInvalidInput) {
				t.Fatalf("%q: not an input error: %v", spec, err)
			}
			return
		}
		again, err := evidence.ParseSpec(s.Name(), evidence.Options{Embedder: indextest.HashEmbedder{}})
		if err != nil || again.Whole != opt.Whole || again.Budget != opt.Budget || again.Units != opt.Units || again.Run != opt.Run || again.Blend != opt.Blend ||
			again.BroadRun != opt.BroadRun || again.BroadPrior != opt.BroadPrior || again.BroadReach != opt.BroadReach || again.BroadPassage != opt.BroadPassage ||
			again.BroadStretch != opt.BroadStretch || again.BroadDecay != opt.BroadDecay || again.BroadChunk != opt.BroadChunk {
			t.Fatalf("%q named %q reads back as %+v, %v", spec, s.Name(), again, err)
		}
		// the floor, the stop and the gate in use, the model's defaults
		// resolved, survive the name
		s2, err := evidence.New(again)
		if err != nil {
			t.Fatalf("%q named %q: %v", spec, s.Name(), err)
		}
		p, p2 := s.Params(), s2.Params()
		for _, k := range []string{"floor", "stop", "min_expected", "blend", "run", "broad_run", "broad_prior", "broad_reach", "broad_decay", "broad_passage", "broad_chunk", "broad_stretch"} {
			if p[k] != p2[k] {
				t.Fatalf("%q named %q: %s %v, read back %v", spec, s.Name(), k, p[k], p2[k])
			}
		}
	})
}

// A spec without whole sends turns whole (DefaultWhole): what it sends of
// a chat log is what whole=turn sends, not what whole=none sends.
func TestWholeTurnsByDefault(t *testing.T) {
	if evidence.DefaultWhole != evidence.TurnUnits {
		t.Fatalf("DefaultWhole %v: update this test", evidence.DefaultWhole)
	}
	// run=0: runs of turns fill a whole=none packing's gaps too
	sent := chatVariants(t, "evidence:budget=80,floor=0,run=0", []string{"", ",whole=turn", ",whole=none"}, "(whole=turn)", ",whole=none", nil)
	bio := query(t, "Who was born in London?", "Ada Lovelace\nShe was born in London. She wrote notes. Her father was a poet.")
	sel, err := newSelector(t, "evidence:budget=80,floor=0").SelectTexts(context.Background(), bio)
	if err != nil || strings.Contains(sel.Explanation.Reason, "whole=") {
		t.Errorf("prose: Why %q, %v", sel.Explanation.Reason, err)
	}
	if sent[""] != sent[",whole=turn"] {
		t.Errorf("default sent %q, whole=turn %q", sent[""], sent[",whole=turn"])
	}
	if sent[""] == sent[",whole=none"] {
		t.Errorf("default and whole=none both sent %q", sent[""])
	}
	t.Logf("whole=turn: %q\nwhole=none: %q", sent[",whole=turn"], sent[",whole=none"])
}

// chatVariants selects from the chat fixture with base followed by each
// variant, scored by the prose model (packing, not a model, is under test:
// its scores leave gaps a packing option fills), and returns what each
// sent. The explanation must name marker for every variant but off.
// check, when set, is called with each variant's selector.
func chatVariants(t *testing.T, base string, variants []string, marker, off string, check func(variant string, s ctxsel.TextSelector)) map[string]string {
	t.Helper()
	chat := fixture(t, "chat.txt")
	q := query(t, "What did Tom eat in Lisbon?", chat)
	prose := *evidence.DefaultModel()
	prose.Kinds = nil
	sent := map[string]string{}
	for _, v := range variants {
		s, err := evidence.Parse(base+v, evidence.Options{Embedder: indextest.HashEmbedder{}, Counter: counter(t), Model: &prose})
		if err != nil {
			t.Fatal(err)
		}
		sel, err := s.SelectTexts(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		checkPruned(t, chat, sel.Evidence[0])
		sent[v] = sel.Evidence[0].Text
		if says := strings.Contains(sel.Explanation.Reason, marker); says != (v != off) {
			t.Errorf("%s: Why %q", v, sel.Explanation.Reason)
		}
		if check != nil {
			check(v, s)
		}
	}
	return sent
}
