package evidence

import (
	"strings"
	"testing"
)

// byteCounter counts one token per byte: far more than the sentences'
// estimates below, so pack must give sentences back.
type byteCounter struct{}

func (byteCounter) Count(text string) int { return len(text) }
func (byteCounter) Encoding() string      { return "bytes" }

// TestPackGivesBackUntilTheExactCountFits: when the exact count of the
// texts crosses the budget the estimates fitted in, pack gives back the
// last chosen sentences, and what it then reports (texts, tokens, total)
// is what a fresh build of the sentences it kept gives.
func TestPackGivesBackUntilTheExactCountFits(t *testing.T) {
	texts := []string{"Alpha one is here. Alpha two is here. Alpha three is here.", "Beta one is here. Beta two is here."}
	var ps []passage
	var ss []sentence
	for pi, text := range texts {
		u := Split(text)
		ps = append(ps, passage{input: pi, rank: pi, text: text, units: u, first: len(ss), n: len(u.Sentences)})
		for j, sp := range u.Sentences {
			// An estimate of 1 token each: every sentence seems to fit.
			ss = append(ss, sentence{passage: pi, index: j, span: sp, text: text[sp[0]:sp[1]], tokens: 1, p: 0.9 - 0.1*float64(len(ss))})
		}
	}
	const budget = 60
	pk := pack(ps, ss, packSettings{budget: budget}, nil, byteCounter{})
	if pk.fixups == 0 {
		t.Fatalf("no sentence given back; total %d of budget %d", pk.total, budget)
	}
	if pk.total > budget {
		t.Fatalf("total %d over the budget %d", pk.total, budget)
	}
	fresh := &packing{kept: pk.kept, opened: pk.opened}
	fresh.build(ps, byteCounter{})
	if fresh.total != pk.total {
		t.Fatalf("total %d, a fresh build of the kept sentences counts %d", pk.total, fresh.total)
	}
	for pi := range ps {
		if pk.texts[pi] != fresh.texts[pi] || pk.tokens[pi] != fresh.tokens[pi] {
			t.Errorf("passage %d: %q (%d tokens), a fresh build gives %q (%d)", pi, pk.texts[pi], pk.tokens[pi], fresh.texts[pi], fresh.tokens[pi])
		}
		if !pk.opened[pi] && pk.texts[pi] != "" {
			t.Errorf("passage %d is closed but sends %q", pi, pk.texts[pi])
		}
	}
	if got := strings.Join(pk.texts, ""); got == "" {
		t.Fatal("nothing sent")
	}
}
