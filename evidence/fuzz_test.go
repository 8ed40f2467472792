package evidence_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/evidence"
)

// FuzzSelect runs the selector on any passages and budget: it either fails
// with an input error (invalid UTF-8, no text, nothing fits) or sends, for
// every passage, text built only from the passage's own bytes (header, kept
// sentences, the white space between adjacent ones) and gap markers, with
// exact token counts that fit the budget.
func FuzzSelect(f *testing.F) {
	for _, s := range []string{
		"[10:02] Ann: Hi. Who was born in London?\n[10:03] Bo: Ada was.\n[10:04] Ann: Thanks!",
		"Meeting\n[10:01] Ann: London then.\n[10:02] Bo: Okay.\n[10:03] Cy: Ada was born there. In 1815.\n[10:04] Dee: Right.",
		"| City | Born |\n|---|---|\n| London | Ada |\n| Paris | Bo |", "```\ncode. more.\n```\nAfter.",
		"Ada Lovelace\nShe was born in London. She wrote notes.", "# Head\n- a\n- b\n1. c", "U.S. Army. Dr. Who. 3.14 is pi.",
		"“Quoted.” 'Go!' she said.", "你好。世界！", "", "\xff\xfe", "word " + "word word word word word word word word.",
		"      Year Ended\n\n      2024  \u00a0\u00a0  2023\n\nLondon sales  \u00a0$  1,200\u00a0\u00a0$  (900)\n\nCosts  \u00a0  -\u00a0\u00a0  12.5%\n\nGain on the sale of\n\n London\n\n     (15)  \u00a0  -\n\nNet  $ 3  $ 4",
	} {
		f.Add(s, "Title\nA second passage. With two sentences.", uint16(40))
	}
	// chunks of one chat cut as an index cuts them: the second opens with
	// the rest of a turn, and the same words in two turns
	f.Add("[10:01] Ann: Was Ada born in London? Yes.\n[10:02] Bo: Yes.\n[10:03] Cy: In 1815, and then\nshe moved.",
		"and then\nshe moved.\n[10:04] Dee: Yes.\n[10:05] Ann: London, yes.", uint16(300))
	// a space-aligned table and a statement, each cut by b's start below
	// its header
	f.Add("Results\n\nCity       Born      Year\nLondon     Ada       1815\n", "Paris      Bo        1820\nRome       Cy        1830\n", uint16(120))
	f.Add("                 December 31,\n              2024        2023\nLondon     $ 1,200     $ 900\n\n", "Paris         800         700\nRome          500         400\nTotal     $ 2,500     $ 2,000\n", uint16(90))
	// indented rows and label lines, a form feed and a CRLF in the header
	f.Add("                 December 31,\r\n\f             2024        2023\r\nAssets:\r\n  London   $ 1,200     $ 900\r\n", "  Paris       800         700\r\nCosts:\r\n\t Rome        500         400\r\n  Total   $ 2,500     $ 2,000\r\n", uint16(60))
	// a wide, decaying prior (broad_reach=9, broad_decay=1 below)
	f.Add("Meeting\n[10:01] Ann: London then.\n[10:02] Bo: Okay.\n[10:03] Cy: Ada was born there. In 1815.\n[10:04] Dee: Right.\n[10:05] Eve: London, yes.", "Title\nA second passage.", uint16(200))
	c := counter(f)
	floors := []string{"0", "0.1", "0.5"}
	stops := []string{"0", "0.5", "0.9"}
	runs := []string{"0", "0.5", "1"}
	f.Fuzz(func(t *testing.T, a, b string, budget uint16) {
		for _, c2 := range []struct {
			s  ctxsel.TextSelector
			on evidence.Structures
		}{
			{newSelector(t, "evidence:budget="+itoa(1+int(budget)%2000)+",neighbors="+itoa(int(budget)%2)), evidence.DefaultModel().Units()},
			// the second hop (which may join the third passage, named by
			// the first) and a floor
			{hopSelector(t, "evidence:budget="+itoa(1+int(budget)%2000)+",floor="+floors[int(budget)%3]), hopModel().Units()},
			// turns and list items sent whole, runs of turns
			{newSelector(t, "evidence:budget="+itoa(1+int(budget)%2000)+",whole=turn|item,stop="+stops[int(budget)%3]+",run="+runs[int(budget)%3]), evidence.DefaultModel().Units()},
		} {
			fuzzOne(t, c, c2.s, c2.on, "who was born in London?", a, b, budget, nil)
		}
		// a broad question's turns packed as runs, with a neighbourhood prior
		s := newSelector(t, "evidence:budget="+itoa(1+int(budget)%2000)+",broad_run="+runs[int(budget)%3]+",broad_prior="+runs[int(budget/3)%3])
		fuzzOne(t, c, s, evidence.DefaultModel().Units(), "What did Ann say about London when discussing Ada?", a, b, budget, nil)
		// and with a wider neighbourhood, its decay, the passage and chunk priors and a stretch
		s = newSelector(t, "evidence:budget="+itoa(1+int(budget)%2000)+",broad_reach="+itoa(1+int(budget)%evidence.MaxBroadReach)+",broad_decay="+runs[int(budget/72)%3]+
			",broad_passage="+[]string{"0", "1", "10"}[int(budget/8)%3]+",broad_stretch="+runs[int(budget/24)%3]+
			",broad_chunk="+[]string{"0", "2", "10"}[int(budget/5)%3])
		fuzzOne(t, c, s, evidence.DefaultModel().Units(), "Summarize the discussion of London.", a, b, budget, nil)
		// an early stop, and a and b chunks of one document (repeats)
		s = newSelector(t, "evidence:budget="+itoa(1+int(budget)%2000)+",stop="+stops[int(budget)%3])
		fuzzOne(t, c, s, evidence.DefaultModel().Units(), "who was born in London?", a, b, budget, []string{"Doc", "Doc", ""})
		// lines above the passages, as a source gives them (any text: a
		// table's header and rule, headings, b itself; and for b, what
		// chunk.Above finds above it where a and b are one document's
		// text, b a chunk cut at a's end)
		s = newSelector(t, "evidence:budget="+itoa(1+int(budget)%2000)+",header="+itoa(int(budget)%2))
		fuzzOneAbove(t, c, s, evidence.DefaultModel().Units(), "who was born in London?", a, b, budget, []string{"Doc", "", "Doc"},
			[]string{"# Guide\n## Births\n| City | Born |\n| --- | --- |", chunk.Above(a+b, len(a)), b})
	})
}

func fuzzOne(t *testing.T, c interface{ Count(string) int }, s ctxsel.TextSelector, on evidence.Structures, question, a, b string, budget uint16, headers []string) {
	t.Helper()
	fuzzOneAbove(t, c, s, on, question, a, b, budget, headers, nil)
}

func fuzzOneAbove(t *testing.T, c interface{ Count(string) int }, s ctxsel.TextSelector, on evidence.Structures, question, a, b string, budget uint16, headers, above []string) {
	t.Helper()
	{
		q := query(t, question, a, b, "London\nLondon is a city. Ada was born there.")
		q.Headers, q.Above = headers, above
		sel, err := s.SelectTexts(context.Background(), q)
		if err != nil {
			if !errors.Is(err, ctxsel.ErrInvalidInput) {
				t.Fatalf("not an input error: %v", err)
			}
			if utf8.ValidString(a) && utf8.ValidString(b) && (len(a)+len(b)) > 0 && err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if !utf8.ValidString(a) || !utf8.ValidString(b) {
			t.Fatal("invalid UTF-8 accepted") // both are candidates of both selectors
		}
		total := 0
		for i, ev := range sel.Evidence {
			var ab string
			if above != nil {
				ab = above[sel.Indices[i]]
			}
			checkPrunedUnitsAbove(t, q.Texts[sel.Indices[i]], ab, ev, on)
			if c.Count(ev.Text) != ev.Tokens {
				t.Fatalf("inexact count for %q", ev.Text)
			}
			total += ev.Tokens
		}
		if total != sel.Tokens || total > 1+int(budget)%2000 {
			t.Fatalf("sent %d tokens (reported %d) for a budget of %d", total, sel.Tokens, 1+int(budget)%2000)
		}
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// FuzzSplit checks Split on any text: spans inside it, in order, disjoint,
// covering every non-space byte; needs pointing to earlier units; a fence
// never cut; never a panic.
func FuzzSplit(f *testing.F) {
	for _, name := range []string{"chat.txt", "irc.txt", "discord.txt", "whatsapp.txt", "transcript.txt", "subtitles.srt", "service.log", "prices.md", "report.txt", "statement.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata", "units", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	for _, s := range []string{"", "```", "```\n", "|a|\n|---|", "1\n00:00:01,000 --> 00:00:02,000\n", "[x] A:\n[y] B:", "# T\n## U\n- a\n```\nx\n", "A  B  C\n1  2  3\n4  5  6",
		// a filing's statement: blank lines between rows, "$" cells, a
		// header of several lines, labels wrapped above and below values
		"      Year Ended\n\n      2024  \u00a0\u00a0  2023\n\nSales  \u00a0$  1,200\u00a0\u00a0$  (900)\n\nCosts  \u00a0  -\u00a0\u00a0  12.5%\n\n\u00a0 \u200b \u00a0\n\nLoss on the sale of\n\n Ardmore\n\n     (15)  \u00a0  -\n\n for sale\n\nNet  $ 3  $ 4",
		"Item 1.  Financial Statements  3\n\nItem 2.  Controls  15\n\n12\n\n  2022  2023\n\n$  $  %\n\nTotal  1  2",
		// a diarised transcript's numbered speakers
		"SPEAKER_00: Hi. How are you?\nSPEAKER_01: Fine.\nspeaker 7:\nSPEAKER_00: Good.",
		// Discord's copy format: header lines, one without a message, an
		// em dash in a message and in prose
		"A — Today at 9:41 PM\nhi — there\nB — Yesterday at 21:41\nA — 3/14/24, 9:41 PM\n\nThe band — formed in 1990 — split.\nC — 03/14/2024 9:41 PM"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		// every structure, the default's, and each one off (the bytes
		// of a text pick which)
		sets := []evidence.Structures{evidence.AllUnits, evidence.DefaultUnits, evidence.SentenceUnits}
		if len(text) > 0 {
			sets = append(sets, evidence.AllUnits&^(evidence.TurnUnits<<(text[0]%5)))
		}
		for _, on := range sets {
			checkUnitsOn(t, text, evidence.SplitUnits(text, on), on)
		}
	})
}
