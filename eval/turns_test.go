package eval

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/embed/uselite"
	"github.com/ctxsel/ctxsel/evidence"
	"github.com/ctxsel/ctxsel/score"
	"github.com/ctxsel/ctxsel/token"
)

func TestTurnsOf(t *testing.T) {
	chat := "[10:01] Ana: Hello there. How are you?\n" +
		"[10:02] Ben: Fine.\n" +
		"It rained all day though.\n" +
		"\n" +
		"A paragraph after a blank line.\n" +
		"[10:05] Ana: Good: see you.\n"
	got := turnsOf(chat)
	want := []string{"[10:01] Ana:| Hello there. How are you?", "[10:02] Ben:| Fine.\nIt rained all day though.", "[10:05] Ana:| Good: see you."}
	if len(got) != len(want) {
		t.Fatalf("turns %v", got)
	}
	for i, tr := range got {
		if s := chat[tr.start:tr.body] + "|" + chat[tr.body:tr.end]; s != want[i] {
			t.Errorf("turn %d: %q, want %q", i, s, want[i])
		}
	}
	irc := "[19:00] nbx909: how do i find a usb device ?\n" +
		"[19:01] _jason: lsusb\n" +
		"[19:02] Sa[i]nT: try dmesg too\n" +
		"[19:03] [admin]: done\n"
	if got := turnsOf(irc); len(got) != 4 {
		t.Errorf("IRC nicks: %d turns, want 4: %v", len(got), got)
	}
	clientLog := "[19:00] <nbx909> how do i find a usb device ?\n" +
		"[19:01] <@_jason> lsusb\n" +
		"[19:02] <Sa[i]nT> try dmesg too\n"
	if got := turnsOf(clientLog); len(got) != 3 || clientLog[got[1].start:got[1].body] != "[19:01] <@_jason>" {
		t.Errorf("IRC client's nicks: %v, want 3 turns, the second's prefix %q", got, "[19:01] <@_jason>")
	}
	for _, text := range []string{
		"[10:02] joined the channel.\n[10:03] left: the channel.\n[10:04] back.\n", // times, no names
		"Plain prose here, nothing: at all.\nNote: one line.\nAnother: two.\n",     // two prefixes at most
		"Ana: one.\nAna: two.\nAna: three.\n",                                      // one speaker
		"Ana: one.\nBen: two.\n",                                                   // too few lines
	} {
		if tr := turnsOf(text); tr != nil {
			t.Errorf("%q read as a conversation: %v", text, tr)
		}
	}
}

func TestTurnPrefixes(t *testing.T) {
	chat := "[10:01] Ana: Hello there. How are you?\n[10:02] Ben: Fine.\nIt rained all day though.\n[10:05] Cleo: Good.\n"
	sp := func(s string) [2]int { i := strings.Index(chat, s); return [2]int{i, i + len(s)} }
	for _, c := range []struct {
		name             string
		spans            [][2]int
		inTurn, prefixed int
	}{
		{"sentence with its prefix", [][2]int{sp("[10:01] Ana:"), sp("How are you?")}, 1, 1},
		{"sentence without", [][2]int{sp("How are you?")}, 1, 0},
		{"continuation line with its turn's prefix", [][2]int{sp("[10:02] Ben:"), sp("It rained all day though.")}, 1, 1},
		{"continuation line under another turn's prefix", [][2]int{sp("[10:01] Ana:"), sp("It rained all day though.")}, 1, 0},
		{"a prefix alone is no span of a turn's text", [][2]int{sp("[10:05] Cleo:")}, 0, 0},
		{"a whole line, prefix included", [][2]int{sp("[10:05] Cleo: Good.")}, 1, 1},
		{"half a prefix is not its prefix", [][2]int{sp("Ana:"), sp("Hello there.")}, 1, 0},
	} {
		n, p := turnPrefixes(chat, ctxsel.Evidence{Spans: c.spans})
		if n != c.inTurn || p != c.prefixed {
			t.Errorf("%s: %d in a turn, %d prefixed; want %d, %d", c.name, n, p, c.inTurn, c.prefixed)
		}
	}
	dr := "Ross Geller: Hi .\nDr. Franzblau: So , you are here ?\nRoss Geller: Yes .\nFrank Buffay Jr.: What ?\n"
	i := strings.Index(dr, "So ,")
	if n, p := turnPrefixes(dr, ctxsel.Evidence{Spans: [][2]int{{0, len("Ross Geller:")}, {i, i + 4}}}); n != 1 || p != 0 {
		t.Errorf("a title's abbreviation: %d in a turn, %d prefixed; want the doctor's turn, its prefix not sent (Ross's is)", n, p)
	}
	j := strings.Index(dr, "What ?")
	k := strings.LastIndex(dr, "Ross Geller:")
	if n, p := turnPrefixes(dr, ctxsel.Evidence{Spans: [][2]int{{k, k + len("Ross Geller: Yes .")}, {j, j + 6}}}); n != 2 || p != 1 {
		t.Errorf("Jr.: %d in a turn, %d prefixed; want Ross's last turn (prefixed) and Frank's (not)", n, p)
	}
	// a passage cut inside a turn, as an index's chunker cuts: its first
	// lines are the turn's rest without a prefix; after a blank line they
	// are not
	cut := "the VPN first.\nThen reboot.\n[10:01] Ana: Done.\n[10:02] Ben: Good.\n[10:03] Ana: Bye.\n"
	if n, p := turnPrefixes(cut, ctxsel.Evidence{Spans: [][2]int{{0, len("the VPN first.")}}}); n != 1 || p != 0 {
		t.Errorf("a cut turn's rest: %d in a turn, %d prefixed; want 1, 0", n, p)
	}
	session := "27 19:05] Cleo: then it worked.\n\n" + cut[len("the VPN first.\nThen reboot.\n"):]
	if n, p := turnPrefixes(session, ctxsel.Evidence{Spans: [][2]int{{len("27 19:05] Cleo: "), len("27 19:05] Cleo: then it worked.")}}}); n != 1 || p != 0 {
		t.Errorf("a cut session's last line above a blank line: %d in a turn, %d prefixed; want 1, 0", n, p)
	}
	note := "#NOTE#: [ Scene : Central Perk . ]\n" + cut[len("the VPN first.\nThen reboot.\n"):]
	if n, _ := turnPrefixes(note, ctxsel.Evidence{Spans: [][2]int{{0, len("#NOTE#: [ Scene : Central Perk . ]")}}}); n != 0 {
		t.Errorf("a line that opens whole (a scene note): %d spans in a turn, want 0", n)
	}
	titled := "Team chat\n\n" + cut[len("the VPN first.\nThen reboot.\n"):]
	if n, _ := turnPrefixes(titled, ctxsel.Evidence{Spans: [][2]int{{0, len("Team chat")}}}); n != 0 {
		t.Errorf("a title above a blank line: %d spans in a turn, want 0", n)
	}
	if n, _ := turnPrefixes("Prose here. More prose.", ctxsel.Evidence{Spans: [][2]int{{0, 11}}}); n != 0 {
		t.Errorf("prose: %d spans in a turn", n)
	}
}

// TestTurnFiguresInReport: eval reports the kept spans inside turns and the
// share sent with their prefix for a pruning selector, none for whole
// passages.
func TestTurnFiguresInReport(t *testing.T) {
	a := "0.9 100 x\n[10:01] Ana: The capital is Paris.\n[10:02] Ben: Right. The. End.\n[10:03] Ana: Bye."
	recs := []dataset.Record{{ID: "q1", Question: "capital?", Passages: []dataset.Passage{
		{ID: "a", Text: a, Gold: true, GoldSpans: [][2]int{spanOf(a, "The capital is Paris.")}},
		{ID: "b", Text: "0.5 100 Nothing here."},
	}}}
	specs, err := ctxsel.Resolver{}.ResolveList("topk:k=1")
	if err != nil {
		t.Fatal(err)
	}
	// lastSentence sends "End." of the chat without its prefix
	rep, err := Run(context.Background(), recs, fakeScorer{}, Options{Counter: fakeCounter{}, Bootstrap: -1, Strategies: append(specs, TextSelectors(lastSentence{})...)})
	if err != nil {
		t.Fatal(err)
	}
	if e := rep.Results[0].EvidenceResult; e.TurnSpans != 0 || e.TurnPrefixed != nil {
		t.Errorf("whole passages: %d turn spans, prefixed %v", e.TurnSpans, e.TurnPrefixed)
	}
	if e := rep.Results[1].EvidenceResult; e.TurnSpans != 1 || e.TurnPrefixed == nil || *e.TurnPrefixed != 0 {
		t.Errorf("a last sentence sent without its prefix: %d turn spans, prefixed %v", e.TurnSpans, e.TurnPrefixed)
	}
}

// synthChat is a fixed synthetic team chat, turns of one to three
// sentences, cut into passages of turnsPer turns (as regroup cuts a
// conversation: never inside a turn). bracket: "[date time] Name:"
// prefixes, else "Name:" as the dialogue sets write them.
func synthChat(bracket bool, turnsPer int) []string {
	speakers := []string{"Ana", "Ben Okafor", "Chidi", "Dana Levi"}
	sentences := []string{
		"The release is planned for Thursday afternoon.", "I moved the staging database to the new cluster.",
		"Can someone review the payment pull request?", "The invoice for March was sent twice by mistake.",
		"Finance will refund the second charge within five days.", "The office is closed on Monday for the holiday.",
		"Our new designer starts on the first of June.", "The build server runs out of disk every night.",
		"I doubled the disk and moved the artefacts to object storage.", "The customer in Lyon asked for a German invoice.",
		"Lunch on Friday is at the Thai place near the station.", "I booked a table for eight at half past twelve.",
		"The VPN client must be updated to version 5.2.", "Older clients drop the connection every ten minutes.",
		"Please fill in the travel form before Wednesday.", "The conference in Porto is from the 12th to the 14th.",
		"We have three tickets left for the conference.", "The coffee machine on the second floor is broken again.",
		"A technician comes on Tuesday morning to fix it.", "The backup of the wiki failed last night.",
		"It was a permissions problem on the new bucket.", "I fixed the bucket policy and started the backup again.",
		"Marketing wants the screenshots by the end of the week.", "The dark theme screenshots are in the shared folder.",
		"The security training is mandatory for everyone this quarter.", "It takes about forty minutes to finish.",
		"Our largest customer renewed the contract for two years.", "They asked for a discount on the support plan.",
		"The printer jams on double-sided jobs.", "Use the printer by the kitchen until it is fixed.",
	}
	var turns []string
	for i, k := 0, 0; i < 64; i++ {
		n := 1 + i%3
		var body []string
		for range n {
			body = append(body, sentences[k%len(sentences)])
			k++
		}
		text := strings.Join(body, " ")
		if i%7 == 3 && n > 1 { // a turn that goes on on a second line
			text = strings.Join(body[:n-1], " ") + "\n" + body[n-1]
		}
		who := speakers[(i*3+i/4)%len(speakers)]
		if bracket {
			turns = append(turns, fmt.Sprintf("[2024-06-%02d %02d:%02d] %s: %s", 3+i/16, 9+i%16/2, (i*7)%60, who, text))
		} else {
			turns = append(turns, who+": "+text)
		}
	}
	var passages []string
	for i := 0; i < len(turns); i += turnsPer {
		passages = append(passages, strings.Join(turns[i:min(i+turnsPer, len(turns))], "\n"))
	}
	return passages
}

// TestShippedModelSendsTurnPrefixes: the shipped sentence model and the
// default units on a fixed synthetic chat, as the evidence selector keeps
// spans for several questions at several budgets: at least 95 % of the
// kept spans inside a turn go out with their turn's prefix (issue 26's
// bar). Measured with turnPrefixes, the eval figure, which reads turns on
// its own.
func TestShippedModelSendsTurnPrefixes(t *testing.T) {
	if testing.Short() {
		t.Skip("embeds with use-lite")
	}
	model, err := uselite.New(uselite.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	counter, err := token.New(token.Default)
	if err != nil {
		t.Fatal(err)
	}
	questions := []string{
		"When will the double charge be refunded?", "Which VPN version do we need?", "Where is lunch on Friday?",
		"Why did the wiki backup fail?", "When does the technician fix the coffee machine?", "How long is the security training?",
	}
	for _, bracket := range []bool{true, false} {
		texts := synthChat(bracket, 10)
		inTurn, prefixed := 0, 0
		for _, q := range questions {
			scores := score.BM25Scores(q, texts)
			cands := make([]ctxsel.Candidate, len(texts))
			for i := range cands {
				cands[i] = ctxsel.Candidate{ID: fmt.Sprint(i), Score: scores[i], Tokens: counter.Count(texts[i])}
			}
			curve, err := ctxsel.NewCurve(cands)
			if err != nil {
				t.Fatal(err)
			}
			for _, budget := range []int{100, 300, 1000} {
				s, err := evidence.New(evidence.Options{Budget: budget, Embedder: model, Counter: counter})
				if err != nil {
					t.Fatal(err)
				}
				sel, err := s.SelectTexts(context.Background(), ctxsel.TextQuery{Question: q, Curve: curve, Texts: texts})
				if err != nil {
					t.Fatal(err)
				}
				for i, idx := range sel.Indices {
					n, p := turnPrefixes(texts[idx], sel.Evidence[i])
					inTurn, prefixed = inTurn+n, prefixed+p
					if p < n {
						t.Logf("bracket=%v %q budget %d: %d of %d spans without their prefix in\n%s", bracket, q, budget, n-p, n, sel.Evidence[i].Text)
					}
				}
			}
		}
		share := float64(prefixed) / float64(max(inTurn, 1))
		t.Logf("bracket=%v: %d of %d kept spans inside a turn sent with its prefix (%.3f)", bracket, prefixed, inTurn, share)
		if inTurn < 50 {
			t.Errorf("bracket=%v: only %d kept spans inside a turn: the questions no longer reach the chat", bracket, inTurn)
		}
		if share < 0.95 {
			t.Errorf("bracket=%v: %.3f of the kept spans inside a turn carry its prefix, want ≥ 0.95", bracket, share)
		}
	}
}
