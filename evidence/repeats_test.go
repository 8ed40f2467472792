package evidence_test

import (
	"context"
	"github.com/ctxsel/ctxsel/evidence"
	"github.com/ctxsel/ctxsel/index/indextest"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
)

// Two overlapping chunks of one document, as an index cuts them: the
// second repeats the first's last whole sentences, and each holds a
// fragment of a sentence the other holds whole at the cut.
const (
	s1 = "The orchard grew apples and pears in long rows."
	s2 = "Fruit, by the bye, was all their diet."
	s3 = "These people of the remote future were strict vegetarians, and while I was with them I had to be frugivorous also."
	s4 = "Horses, cattle, sheep and dogs had followed the Ichthyosaurus into extinction."
	s5 = "But the fruits were very delightful."
)

func overlappingChunks(t *testing.T) ctxsel.TextQuery {
	t.Helper()
	chunk1 := s1 + " " + s2 + " " + s3 + " Horses, cattle, sheep and dogs"  // ends cut in s4
	chunk2 := "by the bye, was all their diet. " + s3 + " " + s4 + " " + s5 // starts cut in s2
	q := query(t, "What kind of diet do the people of the future follow?", chunk1, chunk2)
	q.Headers = []string{"The Time Machine", "The Time Machine"} // one document
	return q
}

func sentTexts(sel ctxsel.Selection, q ctxsel.TextQuery) []string {
	var out []string
	for i, idx := range sel.Indices {
		for _, sp := range sel.Evidence[i].Spans {
			out = append(out, q.Texts[idx][sp[0]:sp[1]])
		}
	}
	return out
}

func TestRepeatsAreSentOnce(t *testing.T) {
	q := overlappingChunks(t)
	// a budget that holds everything, no floor, no stop: only dedup decides
	on, err := newSelector(t, "evidence:budget=2000,floor=0,stop=0,hop=0").SelectTexts(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	got := sentTexts(on, q)
	for _, want := range []string{s1, s2, s3, s4, s5} {
		n := 0
		for _, g := range got {
			if g == want {
				n++
			}
		}
		if n != 1 {
			t.Errorf("dedup on: %q sent %d times, want once (sent: %q)", want, n, got)
		}
	}
	if len(got) != 5 {
		t.Errorf("dedup on: sent %d sentences, want the 5 whole ones, no fragment: %q", len(got), got)
	}
	if !strings.Contains(on.Explanation.Reason, "not sent again") {
		t.Errorf("the explanation does not say repeats were left out: %s", on.Explanation.Reason)
	}
	off, err := newSelector(t, "evidence:budget=2000,floor=0,stop=0,hop=0,dedup=0").SelectTexts(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(sentTexts(off, q)); n != 8 { // 4 + 4 sentences, s3 twice, two fragments
		t.Errorf("dedup=0: sent %d sentences, want all 8", n)
	}
	if off.Tokens <= on.Tokens {
		t.Errorf("dedup=0 sent %d tokens, dedup %d: want dedup to send less", off.Tokens, on.Tokens)
	}
}

func TestRepeatsOnlyWithinADocument(t *testing.T) {
	q := overlappingChunks(t)
	q.Headers = []string{"The Time Machine", "The Island of Doctor Moreau"} // two documents
	sel, err := newSelector(t, "evidence:budget=2000,floor=0,stop=0,hop=0").SelectTexts(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(sentTexts(sel, q)); n != 8 {
		t.Errorf("two documents: sent %d sentences, want all 8 (repeats are looked for within a document only)", n)
	}
}

func TestStopSendsLess(t *testing.T) {
	q := query(t, "Who directed the film Ed Wood?",
		"Ed Wood (film)\nEd Wood is a 1994 American film directed by Tim Burton. It stars Johnny Depp. The music is by Howard Shore. It was shot in black and white. It lost money.",
		"Tim Burton\nTim Burton is an American director. He was born in Burbank. He studied at CalArts. He worked at Disney.",
		"Burbank\nBurbank is a city in California. It is home to studios. Its airport is small.")
	full, err := newSelector(t, "evidence:budget=2000,floor=0,stop=0,hop=0").SelectTexts(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	early, err := newSelector(t, "evidence:budget=2000,floor=0,stop=0.5,hop=0,min_expected=0").SelectTexts(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if early.Tokens >= full.Tokens {
		t.Errorf("stop=0.5 sent %d tokens, stop=0 %d: want fewer", early.Tokens, full.Tokens)
	}
	if !strings.Contains(early.Explanation.Reason, "stopped once the kept sentences held") {
		t.Errorf("the explanation does not name the stop: %s", early.Explanation.Reason)
	}
	if got := early.Explanation.Params["stop"]; got != 0.5 {
		t.Errorf("params stop = %v, want 0.5", got)
	}
	if strings.Contains(full.Explanation.Reason, "stopped") {
		t.Errorf("stop=0 says it stopped: %s", full.Explanation.Reason)
	}
}

func TestStopAndDedupSpecs(t *testing.T) {
	for _, bad := range []string{"evidence:budget=500,stop=1", "evidence:budget=500,stop=-0.1", "evidence:budget=500,stop=x", "evidence:budget=500,dedup=2"} {
		if _, err := newSelectorErr(t, bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	s := newSelector(t, "evidence:budget=500,stop=0.99,dedup=0")
	if got := s.(interface{ Name() string }).Name(); got != "evidence:budget=500,stop=0.99,dedup=0" {
		t.Errorf("Name() = %q", got)
	}
}

func newSelectorErr(t *testing.T, spec string) (ctxsel.TextSelector, error) {
	t.Helper()
	return evidence.Parse(spec, evidence.Options{Embedder: indextest.HashEmbedder{}, Counter: counter(t)})
}

// A chunk cut inside a turn's "[time] Name:" prefix opens with the line's
// tail, which reads as prose: with dedup it is a fragment of the turn the
// other chunk holds whole, and is not sent; without dedup it may be.
func TestRepeatsCutTurnPrefix(t *testing.T) {
	chunk1 := "[2024-05-15 15:25] Marek: My password expires tomorrow. Can I change it from home?\n" +
		"[2024-05-15 15:28] Ines: Yes, as long as you are on the VPN. Press Ctrl+Alt+Del and choose Change a password.\n" +
		"[2024-05-15 15:30] Marek: Thanks, will do it tonight.\n"
	tail := "4-05-15 15:28] Ines: Yes, as long as you are on the VPN."
	chunk2 := tail + "\n[2024-05-16 08:30] Ines: Reminder: the file server restarts tonight at 22:00.\n" +
		"[2024-05-16 08:41] Aiko: Will the shared drives be back by the morning?\n" +
		"[2024-05-16 08:43] Ines: They should be back by 22:30.\n"
	q := query(t, "Can Marek change his password from home over the VPN?", chunk1, chunk2)
	q.Headers = []string{"helpdesk", "helpdesk"}
	for _, dedup := range []string{"1", "0"} {
		sel, err := newSelector(t, "evidence:budget=2000,floor=0,stop=0,hop=0,dedup="+dedup).SelectTexts(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		sentTail := false
		for _, g := range sentTexts(sel, q) {
			sentTail = sentTail || strings.Contains(g, "4-05-15 15:28]") && !strings.Contains(g, "[2024-05-15 15:28]")
		}
		if sentTail != (dedup == "0") {
			t.Errorf("dedup=%s: the cut prefix's tail sent %v (sent: %q)", dedup, sentTail, sentTexts(sel, q))
		}
	}
}

// The same words said in two turns of one chat ("Yes, it is.") are two
// pieces of evidence, each sent under its own "[time] Name:"; only the
// same turn read twice (in the overlap of two chunks) is a repeat.
func TestRepeatsTurnsAreNotTheirWords(t *testing.T) {
	yes := "Yes, it is."
	chunk1 := "[2024-05-15 09:00] Marek: Is the VPN required to change my password?\n" +
		"[2024-05-15 09:02] Ines: " + yes + "\n" +
		"[2024-05-15 09:05] Marek: Thanks, I will connect first.\n"
	chunk2 := "[2024-05-15 09:05] Marek: Thanks, I will connect first.\n" +
		"[2024-05-16 14:10] Aiko: Is the VPN required to print at home?\n" +
		"[2024-05-16 14:12] Ines: " + yes + "\n"
	q := query(t, "Is the VPN required?", chunk1, chunk2)
	q.Headers = []string{"helpdesk", "helpdesk"}
	sel, err := newSelector(t, "evidence:budget=2000,floor=0,stop=0,hop=0,whole=none").SelectTexts(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	yeses, thanks := 0, 0
	for _, g := range sentTexts(sel, q) {
		if g == yes {
			yeses++
		}
		if g == "Thanks, I will connect first." {
			thanks++
		}
	}
	if yeses != 2 || thanks != 1 {
		t.Errorf("%q sent %d times (want 2: two turns), the repeated turn %d times (want 1): %q", yes, yeses, thanks, sentTexts(sel, q))
	}
}

// A chunk that starts inside a turn of two lines holds its second line
// without the prefix: with dedup that copy is not sent, the turn's copy
// under its "[time] Name:" in the chunk before is.
func TestRepeatsTurnLineWithoutPrefix(t *testing.T) {
	line2 := "Without the VPN your laptop keeps the old one until you are back in the office."
	chunk1 := "[2024-05-15 15:25] Marek: My password expires tomorrow. Can I change it from home?\n" +
		"[2024-05-15 15:28] Ines: Yes, as long as you are on the VPN.\n" + line2 + "\n" +
		"[2024-05-15 15:30] Marek: Thanks, will do it tonight.\n"
	chunk2 := line2 + "\n[2024-05-16 08:30] Ines: Reminder: the file server restarts tonight at 22:00.\n" +
		"[2024-05-16 08:41] Aiko: Will the shared drives be back by the morning?\n" +
		"[2024-05-16 08:43] Ines: They should be back by 22:30.\n"
	q := query(t, "Does the laptop keep the old password without the VPN?", chunk1, chunk2)
	q.Headers = []string{"helpdesk", "helpdesk"}
	for _, dedup := range []string{"1", "0"} {
		sel, err := newSelector(t, "evidence:budget=2000,floor=0,stop=0,hop=0,dedup="+dedup).SelectTexts(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		bare := false // line2 sent from the second chunk, which holds no prefix for it
		for i, idx := range sel.Indices {
			for _, sp := range sel.Evidence[i].Spans {
				bare = bare || idx == 1 && q.Texts[idx][sp[0]:sp[1]] == line2
			}
		}
		if bare != (dedup == "0") {
			t.Errorf("dedup=%s: the line without its prefix sent %v (sent: %q)", dedup, bare, sentTexts(sel, q))
		}
	}
}

// A chunk that an index's chunker cut inside a turn opens with the turn's
// rest, whose "[time] Name:" is in the chunk before: with dedup it is not
// sent where the passage is known to be such a chunk (another candidate
// has its title or holds the rest too, or it opens with the tail of a
// prefix); a passage of its own keeps its opening line ("3 people joined …"); dedup=0 sends it.
func TestRepeatsTurnRestNotSent(t *testing.T) {
	turns := "[2024-05-16 08:30] Ines: Reminder: the file server restarts tonight at 22:00.\n" +
		"[2024-05-16 08:41] Aiko: Can I change a password while the file server restarts?\n" +
		"[2024-05-16 08:43] Ines: They should be back by 22:30.\n"
	other := "[2024-05-15 15:25] Marek: My password expires tomorrow.\n[2024-05-15 15:26] Ines: Yes.\n[2024-05-15 15:27] Marek: Ok.\n"
	rest := "and choose Change a password, the VPN must be on."
	for _, c := range []struct {
		name, dedup, open string
		headers           []string
		sent              bool
	}{
		{"a chunk of a titled document", "1", rest, []string{"helpdesk", "helpdesk"}, false},
		{"no title, the other chunk holds the rest (the overlap)", "1", rest, nil, false},
		{"a cut prefix's tail, no title", "1", "-05-15 15:28] Ines: " + rest, nil, false},
		{"a passage of its own", "1", rest, nil, true},
		{"its own first line", "1", "3 people joined the call to change a password.", nil, true},
		{"dedup=0", "0", rest, []string{"helpdesk", "helpdesk"}, true},
	} {
		o := other
		if strings.HasPrefix(c.name, "no title, the other chunk") {
			o += "[2024-05-15 15:28] Ines: Press Ctrl+Alt+Del " + rest + "\n"
		}
		q := query(t, "How do I change a password with the VPN on?", c.open+"\n"+turns, o)
		q.Headers = c.headers
		sel, err := newSelector(t, "evidence:budget=2000,floor=0,stop=0,hop=0,dedup="+c.dedup).SelectTexts(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		line := strings.TrimSpace(c.open[strings.LastIndex(c.open, ": ")+1:])
		sent := false // from the first passage, which opens with it
		for i, idx := range sel.Indices {
			for _, sp := range sel.Evidence[i].Spans {
				sent = sent || idx == 0 && strings.Contains(q.Texts[idx][sp[0]:sp[1]], line)
			}
		}
		if sent != c.sent {
			t.Errorf("%s: the opening line sent %v, want %v (sent: %q)", c.name, sent, c.sent, sentTexts(sel, q))
		}
	}
}
