package evidence_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/evidence"
	"github.com/ctxsel/ctxsel/index/indextest"
)

// unit is one unit of a split as text: its kind, its text, and the texts
// of the units it needs.
type unit struct {
	kind  evidence.Kind
	text  string
	needs []string
}

func units(text string, u evidence.Units) []unit {
	var out []unit
	for j, sp := range u.Sentences {
		x := unit{kind: u.Kind(j), text: text[sp[0]:sp[1]]}
		if u.Needs != nil {
			for _, k := range u.Needs[j] {
				x.needs = append(x.needs, text[u.Sentences[k][0]:u.Sentences[k][1]])
			}
		}
		out = append(out, x)
	}
	return out
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "units", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// find is the unit whose text is s.
func find(t *testing.T, us []unit, s string) unit {
	t.Helper()
	for _, u := range us {
		if u.text == s {
			return u
		}
	}
	t.Fatalf("no unit %q in %v", s, us)
	return unit{}
}

// Every line-structured sample (written for these tests in the formats
// people index) is cut into the units its structure gives, each with the
// context line it needs.
func TestSplitStructure(t *testing.T) {
	cases := []struct {
		file   string
		header string
		// a unit, its kind and the context it needs
		unit, needs string
		kind        evidence.Kind
		count       map[evidence.Kind]int
	}{
		{file: "chat.txt", unit: "I still dream about the custard tarts.", needs: "[2023-05-08 13:58] Tom:", kind: evidence.Turn,
			count: map[evidence.Kind]int{evidence.Context: 6, evidence.Turn: 16}},
		{file: "irc.txt", unit: "then reboot twice, the first boot rebuilds the initramfs", needs: "[09:15] <_tom>", kind: evidence.Turn,
			count: map[evidence.Kind]int{evidence.Context: 7, evidence.Turn: 10}},
		{file: "discord.txt", unit: "it keeps failing on the migrations step", needs: "Priya — Today at 9:41 PM", kind: evidence.Turn,
			count: map[evidence.Kind]int{evidence.Context: 5, evidence.Turn: 8}},
		{file: "whatsapp.txt", unit: "I booked it until noon.", needs: "12/03/2024, 09:17 - Jonas:", kind: evidence.Turn,
			count: map[evidence.Kind]int{evidence.Context: 4, evidence.Turn: 8}},
		{file: "transcript.txt", header: "Quarterly planning call", unit: "Most of them come from the northern farms.", needs: "DR. OKAFOR (00:00:11):", kind: evidence.Turn,
			count: map[evidence.Kind]int{evidence.Context: 4, evidence.Turn: 9}},
		{file: "subtitles.srt", unit: "I was waiting\nfor the ferry that never came.", needs: "2\n00:00:04,000 --> 00:00:07,250", kind: evidence.Turn,
			count: map[evidence.Kind]int{evidence.Context: 3, evidence.Turn: 4}},
		{file: "service.log", unit: "2024-02-11 08:13:02 ERROR payment gateway timed out after 30 s (request 7f3a)", kind: evidence.Turn,
			count: map[evidence.Kind]int{evidence.Turn: 5}},
		{file: "prices.md", header: "# Garden centre price list", unit: "| Rosemary | 1 l | 4.20 |", needs: "## Plants\n| Plant | Pot size | Price |\n|-------|----------|------:|", kind: evidence.Row,
			count: map[evidence.Kind]int{evidence.Sentence: 4, evidence.Context: 1, evidence.Row: 3, evidence.Item: 3, evidence.Code: 1}},
		{file: "statement.txt", header: "Harbourline Marine Supply Corporation", unit: "Gross profit" + strings.Repeat(" ", 44) + "\u00a0\u00a0          1,861,326\u00a0\u00a0\u00a0         1,441,205",
			needs: "Three Months Ended\nMarch 31,\n2024        \u00a0\u00a0        2023", kind: evidence.Row,
			count: map[evidence.Kind]int{evidence.Context: 5, evidence.Row: 12, evidence.Sentence: 7}},
		{file: "report.txt", header: "Consolidated results (in millions)", unit: "Online             87.9     131.6      49.7%", needs: "Segment            2022      2023     Change", kind: evidence.Row,
			count: map[evidence.Kind]int{evidence.Context: 1, evidence.Row: 3, evidence.Sentence: 1}},
	}
	for _, c := range cases {
		text := fixture(t, c.file)
		u := evidence.SplitUnits(text, evidence.AllUnits)
		us := units(text, u)
		header := ""
		if u.Header != nil {
			header = text[u.Header[0]:u.Header[1]]
		}
		if header != c.header {
			t.Errorf("%s: header %q, want %q", c.file, header, c.header)
		}
		got := find(t, us, c.unit)
		if got.kind != c.kind || strings.Join(got.needs, "\n") != c.needs {
			t.Errorf("%s: %q is a %v needing %q, want a %v needing %q", c.file, c.unit, got.kind, got.needs, c.kind, c.needs)
		}
		count := map[evidence.Kind]int{}
		for _, x := range us {
			count[x.kind]++
		}
		for k, n := range c.count {
			if count[k] != n {
				t.Errorf("%s: %d units of kind %v, want %d (%v)", c.file, count[k], k, n, us)
			}
		}
		checkUnits(t, text, u)
	}
	// the fence is one unit, its blank line and its "#" comment inside
	text := fixture(t, "prices.md")
	us := units(text, evidence.SplitUnits(text, evidence.AllUnits))
	code := slices.IndexFunc(us, func(x unit) bool { return x.kind == evidence.Code })
	if !strings.HasPrefix(us[code].text, "```sh") || !strings.HasSuffix(us[code].text, "```") || !strings.Contains(us[code].text, "# the file") {
		t.Errorf("code block %q", us[code].text)
	}
}

// A speaker named by four words (a parliament's record) opens a turn; a
// numbered label ("Step 1:") does not.
func TestSplitLongSpeakerNames(t *testing.T) {
	text := "Right Hon. Alex Morgan: We will table the bill next week.\n" +
		"Ms. Dana Price: When will the committee see it?\n" +
		"Right Hon. Alex Morgan: Before the recess. The text is ready.\n"
	u := evidence.SplitUnits(text, evidence.AllUnits)
	got := find(t, units(text, u), "The text is ready.")
	if got.kind != evidence.Turn || strings.Join(got.needs, "\n") != "Right Hon. Alex Morgan:" {
		t.Errorf("%q is a %v needing %q, want a turn needing its speaker", "The text is ready.", got.kind, got.needs)
	}
	checkUnits(t, text, u)
	steps := "Step 1: Open the valve slowly.\nStep 2: Wait for the gauge.\nStep 3: Close the valve.\n"
	if u := evidence.SplitUnits(steps, evidence.AllUnits); u.Kinds != nil {
		t.Errorf("numbered steps read as a conversation: %v", units(steps, u))
	}
}

// A diarised transcript names its speakers by a numbered role ("Speaker
// 1:", "SPEAKER_00:"): each line is a turn sent with that name; numbered
// sections and steps stay prose.
func TestSplitNumberedSpeakers(t *testing.T) {
	for _, text := range []string{
		"Speaker 1: Welcome everyone. Let's start with the budget.\nSpeaker 2: The budget is two million.\nSpeaker 1: Thanks. It was approved last week.\n",
		"SPEAKER_00: Welcome everyone. Let's start with the budget.\nSPEAKER_01: The budget is two million.\nSPEAKER_00: Thanks. It was approved last week.\n",
		"Interviewer 1: How did you start?\nParticipant 12: With a loan from my aunt.\nInterviewer 1: Thanks. It was approved last week.\n",
	} {
		u := evidence.SplitUnits(text, evidence.AllUnits)
		got := find(t, units(text, u), "It was approved last week.")
		want := text[strings.LastIndexByte(text[:len(text)-1], '\n')+1:]
		want = want[:strings.IndexByte(want, ':')+1]
		if got.kind != evidence.Turn || strings.Join(got.needs, "\n") != want {
			t.Errorf("%q is a %v needing %q, want a turn needing %q", "It was approved last week.", got.kind, got.needs, want)
		}
		checkUnits(t, text, u)
	}
	for _, text := range []string{
		"Section 1: Scope of the policy.\nSection 2: Who it covers.\nSection 3: What it excludes.\n",
		"Speaker 1: Welcome everyone.\nSpeaker 1: The budget is two million.\nSpeaker 1: Thanks.\n", // one speaker: a list, not a conversation
	} {
		if u := evidence.SplitUnits(text, evidence.AllUnits); u.Kinds != nil {
			t.Errorf("%q read as a conversation: %v", text, units(text, u))
		}
	}
}

// Discord's copy format: a header line "Name — Today at 9:41 PM" (or
// "— Yesterday at 21:41", "— 03/14/2024 9:41 PM", "— 3/14/24, 9:41 PM")
// opens a turn whose prefix is that line and whose body is the message
// lines below it, up to the next header or a blank line; the rule needs
// what a plain name's does (3 headers, 2 speakers), and prose with em
// dashes stays prose.
func TestSplitDiscord(t *testing.T) {
	for _, c := range []struct{ text, unit, needs string }{
		{"Ana — Yesterday at 21:41\nThe key is in the blue box.\nBen — Yesterday at 21:45\nWhich box?\nAna — Today at 08:02\nThe one by the door. It has a red lid.\n",
			"It has a red lid.", "Ana — Today at 08:02"},
		{"Ana — 3/14/24, 9:41 PM\nThe key is in the blue box.\nBen — 3/14/24, 9:45 PM\nWhich box?\nAna — 3/15/24, 8:02 AM\nThe one by the door.\nIt has a red lid.\n\nThe rest of the notes.\n",
			"It has a red lid.", "Ana — 3/15/24, 8:02 AM"},
	} {
		u := evidence.SplitUnits(c.text, evidence.AllUnits)
		us := units(c.text, u)
		if got := find(t, us, c.unit); got.kind != evidence.Turn || strings.Join(got.needs, "\n") != c.needs {
			t.Errorf("%q is a %v needing %q, want a turn needing %q", c.unit, got.kind, got.needs, c.needs)
		}
		if got := find(t, us, c.needs); got.kind != evidence.Context {
			t.Errorf("header %q is a %v, want a context line", c.needs, got.kind)
		}
		if strings.Contains(c.text, "\n\n") {
			if got := find(t, us, "The rest of the notes."); got.kind != evidence.Sentence || got.needs != nil {
				t.Errorf("the prose after a blank line is a %v needing %q, want a sentence", got.kind, got.needs)
			}
		}
		checkUnits(t, c.text, u)
	}
	for _, text := range []string{
		// an encyclopedia's em dashes
		"The band — formed in 1990 — released three albums.\nIts singer — Jane Roe — left in 1995.\nThe drummer — Sam Lee — joined in 1996.\n",
		// a single header: too little to call it a conversation
		"Ana — Today at 9:41 PM\nThe key is in the blue box. It has a red lid.\nAsk at the desk if it is gone.\n",
		// one speaker: a list of notes, not a conversation
		"Ana — Today at 9:41 PM\nFirst.\nAna — Today at 9:42 PM\nSecond.\nAna — Today at 9:43 PM\nThird.\n",
		// a time in a sentence, or an em dash before something else than a time
		"Dinner — Today at 7 PM at the harbour.\nLunch — Yesterday at noon.\nTalk — see 3/14/24, 9:41 PM slides\n",
	} {
		if u := evidence.SplitUnits(text, evidence.AllUnits); u.Kinds != nil {
			t.Errorf("%q read as a conversation: %v", text, units(text, u))
		}
	}
}

// A filing's statement exported to text (rows apart by blank lines, "$"
// a cell of its own, empty cells, a header of several lines above the
// first row) is a table: each row a unit needing every header line, a
// label wrapped onto more lines kept with its row, the next table's rows
// needing their own header.
func TestSplitStatements(t *testing.T) {
	const nb = "\u00a0"
	header := []string{
		"             " + nb + "     Year Ended December 31,",
		"",
		"             " + nb + "     2024   " + nb + nb + "   2023",
		"",
	}
	row := func(label string, values ...string) string {
		s := fmt.Sprintf("%-36s", label)
		for _, v := range values {
			s += nb + "$ " + fmt.Sprintf("%10s", v) + nb
		}
		return s
	}
	cases := []struct {
		name  string
		lines []string
		// rows, each by its first words: the lines of its unit and the
		// header lines it needs
		rows  map[string][]string
		needs []string
	}{
		{name: "income statement", lines: append(slices.Clone(header),
			row("Net sales", "12,400", "11,950"), "", row("Cost of sales", "(7,310)", "(7,002)"), "",
			row("Gross profit", "5,090", "4,948"), ""),
			rows: map[string][]string{"Net sales": {row("Net sales", "12,400", "11,950")},
				"Gross profit": {row("Gross profit", "5,090", "4,948")}},
			needs: []string{"Year Ended December 31,", "2024   " + nb + nb + "   2023"}},
		{name: "empty cells, a dash, a section label, no header (a chunk's start cut it)", lines: []string{
			"Liabilities:", "",
			"Accounts payable" + strings.Repeat(" ", 20) + nb + nb + "     4,120" + nb + nb + "        -" + nb, "",
			"Accrued expenses" + strings.Repeat(" ", 20) + nb + nb + "       982" + nb + nb + "      1,015" + nb, "",
			nb + "   " + nb, "",
			"Total liabilities" + strings.Repeat(" ", 19) + nb + "$     5,102" + nb + nb + "$     1,015" + nb, ""},
			rows: map[string][]string{"Accounts payable": {"Accounts payable" + strings.Repeat(" ", 20) + nb + nb + "     4,120" + nb + nb + "        -"},
				"Total liabilities": {"Total liabilities" + strings.Repeat(" ", 19) + nb + "$     5,102" + nb + nb + "$     1,015"}}},
		{name: "a label wrapped above its values and one wrapped below", lines: append(slices.Clone(header),
			row("Revenue", "900", "850"), "", row("Impairment of vessels held", "(40)", "-"), "", " for sale", "",
			"Loss on settlement of the Ardmore", "", " Holdings dispute", "",
			strings.Repeat(" ", 36)+nb+"$ "+fmt.Sprintf("%10s", "(15)")+nb+nb+"$ "+fmt.Sprintf("%10s", "-"), "",
			"Gain on the sale of", "", " Harbour Point", "", row("Other income", "12", "9"), "",
			row("Net income", "845", "850"), ""),
			rows: map[string][]string{"Gain on the sale": {"Gain on the sale of", "", " Harbour Point"}, "Impairment": {row("Impairment of vessels held", "(40)", "-"), "", " for sale"},
				"Loss on settlement": {"Loss on settlement of the Ardmore", "", " Holdings dispute", "",
					strings.Repeat(" ", 36) + nb + "$ " + fmt.Sprintf("%10s", "(15)") + nb + nb + "$ " + fmt.Sprintf("%10s", "-")},
				"Net income": {row("Net income", "845", "850")}},
			needs: []string{"Year Ended December 31,", "2024   " + nb + nb + "   2023"}},
		{name: "an equity line whose label wraps onto lines too long for a label", lines: append(slices.Clone(header),
			row("Common stock, $0.0001 par value;", "3,360", "2,327"), "",
			" 750,000,000 shares authorized; 33,592,055 and 23,270,404 shares of the common stock issued and outstanding as of", "",
			" March 31, 2024 and December 31, 2023, respectively", "",
			row("Additional paid-in capital", "40,785", "30,993"), "", row("Accumulated deficit", "(20,186)", "(13,301)"), "",
			row("Total equity", "20,602", "17,694"), ""),
			rows: map[string][]string{"Additional paid-in capital": {row("Additional paid-in capital", "40,785", "30,993")},
				"750,000,000 shares": {" 750,000,000 shares authorized; 33,592,055 and 23,270,404 shares of the common stock issued and outstanding as of", "", " March 31, 2024 and December 31, 2023, respectively"},
				"Total equity":       {row("Total equity", "20,602", "17,694")}},
			needs: []string{"Year Ended December 31,", "2024   " + nb + nb + "   2023"}},
		{name: "a page break between rows: its page number and blank lines", lines: append(slices.Clone(header),
			row("Security deposits", "46,300", "71,300"), "", row("Prepaid VAT", "17,785", "7,821"), "", "15", "", "", "", "", "", "",
			row("Prepaid insurance", "574,236", "-"), "", row("Prepaid other", "193,875", "78,460"), ""),
			rows:  map[string][]string{"Prepaid insurance": {row("Prepaid insurance", "574,236", "-")}, "Prepaid VAT": {row("Prepaid VAT", "17,785", "7,821")}},
			needs: []string{"Year Ended December 31,", "2024   " + nb + nb + "   2023"}},
	}
	for _, c := range cases {
		text := "Notes follow the statement below.\n\n" + strings.Join(c.lines, "\n") + "\nThe notes are an integral part of these statements.\n"
		u := evidence.SplitUnits(text, evidence.AllUnits)
		us := units(text, u)
		checkUnits(t, text, u)
		for first, lines := range c.rows {
			want := strings.TrimRight(strings.TrimSpace(strings.Join(lines, "\n")), " "+nb)
			got := find(t, us, want)
			if got.kind != evidence.Row || !slices.Equal(got.needs, c.needs) {
				t.Errorf("%s: %q is a %v needing %q, want a row needing %q", c.name, first, got.kind, got.needs, c.needs)
			}
		}
		if s := find(t, us, "The notes are an integral part of these statements."); s.kind != evidence.Sentence {
			t.Errorf("%s: the sentence after the statement is a %v", c.name, s.kind)
		}
		if strings.Contains(c.name, "page break") {
			// the page number: a context line no row needs (never sent)
			if p := find(t, us, "15"); p.kind != evidence.Context {
				t.Errorf("%s: the page number is a %v", c.name, p.kind)
			}
			for _, x := range us {
				if slices.Contains(x.needs, "15") {
					t.Errorf("%s: %q needs the page number", c.name, x.text)
				}
			}
		}
		if u := evidence.SplitUnits(text, evidence.AllUnits&^evidence.RowUnits); u.Kinds != nil {
			t.Errorf("%s: rows off, still read as structure: %v", c.name, units(text, u))
		}
	}
	// two tables one after the other: the second's rows need its own header
	text := fixture(t, "statement.txt")
	us := units(text, evidence.SplitUnits(text, evidence.AllUnits))
	i := slices.IndexFunc(us, func(x unit) bool { return strings.HasPrefix(x.text, "Operating lease cost") })
	if i < 0 || us[i].kind != evidence.Row || len(us[i].needs) != 2 || !strings.HasPrefix(us[i].needs[0], "March 31,") {
		t.Errorf("the second table's first row: %+v", us[max(i, 0)])
	}
}

// Text that only looks structured here and there stays prose: one
// "Name:" line, a lone bracket, two lines of double spaces.
func TestSplitProseStaysSentences(t *testing.T) {
	for _, text := range []string{
		"Ed Wood\nEd Wood was a filmmaker. He was American.\n\nScott Derrickson\nScott Derrickson is a director.",
		"Note: the museum is closed on Mondays. Tickets cost 12 euros.\nThe café opens at nine.",
		"Alice: hello there.\nBob went home. Alice: stayed.\nCarol came later.", // two "Name:" lines, one name at a line start
		"[1] Smith, J. A history of maps.\nThe book covers the years 1500 to 1700.",
		"The rates rose.  Then they fell.\nWages  stayed  flat.",
		// a reference list is no chat; a table cell a chunk cut is no list item
		"[7] J. D. Hunter. 2007. Matplotlib: A 2D graphics environment.\n[8] D. P. Kingma and J. Ba. 2014. Adam: A method for stochastic optimization.",
		"438)               (134,605)\nThe balance fell in the quarter.",
		// a filing's false friends: a contents page (one number a line),
		// prose with double spaces and amounts, years alone, page
		// numbers, a list of amounts one a line, a cover page's boxes,
		// a table of two rows
		"Item 1.     Financial Statements        3\n\nItem 2.     Management’s Discussion     15\n\nItem 3.     Controls and Procedures     22\n\nSignatures                              28",
		"Revenue rose to $1,234  in 2024,  from 1,002  in 2023.\n\nCosts were  5,678  and  9,101  in the two years.\n\nThe margin held at  12.5%  and  11.9%  over the period.",
		"          2022          2023\n\n          2024          2025\n\n          2026          2027",
		"                12\n\n                13\n\n                14",
		"1,234\n\n5,678\n\n(9,012)\n\n3.5%",
		"Large accelerated filer  ☐      Accelerated filer  ☐\n\nNon-accelerated filer  ☒      Smaller reporting company  ☒\n\nEmerging growth company  ☐",
		"             March 31,     December 31,\n\nCash              1,200          900\n\nTotal             1,200          900\n\nThe balance is unaudited.",
		// a hard-wrapped paragraph: lines opening in lower case, too long
		// for a label, with no row around them
		"The company reported growth across its segments during the quarter, driven by\nhigher volumes in the industrial segment and better pricing in the consumer segment, while\n costs of freight and of raw materials rose in both of the periods that it compares here",
	} {
		u := evidence.SplitUnits(text, evidence.AllUnits)
		if u.Kinds != nil || u.Needs != nil {
			t.Errorf("prose %q read as structure: %v", text, units(text, u))
		}
	}
}

// checkUnits asserts Split's invariants: spans inside the text, in order,
// disjoint, covering every non-space byte (header included); needs point
// to earlier units; a fenced block is never cut.
func checkUnits(t *testing.T, text string, u evidence.Units) {
	t.Helper()
	checkUnitsOn(t, text, u, evidence.AllUnits)
}

// checkUnitsOn is checkUnits for a split reading the structures of on.
func checkUnitsOn(t *testing.T, text string, u evidence.Units, on evidence.Structures) {
	t.Helper()
	spans := u.Sentences
	if u.Header != nil {
		spans = append([][2]int{*u.Header}, spans...)
	}
	covered := make([]bool, len(text))
	prev := 0
	for _, sp := range spans {
		if sp[0] < prev || sp[1] <= sp[0] || sp[1] > len(text) {
			t.Fatalf("span %v after %d in a text of %d bytes (%q)", sp, prev, len(text), text)
		}
		for i := sp[0]; i < sp[1]; i++ {
			covered[i] = true
		}
		prev = sp[1]
	}
	for i := range len(text) {
		if !covered[i] && !strings.ContainsRune(" \t\n\r\v\f", rune(text[i])) && text[i] < 0x80 {
			t.Fatalf("byte %d (%q) of %q is in no unit", i, text[i], text)
		}
	}
	if u.Kinds != nil && len(u.Kinds) != len(u.Sentences) || u.Needs != nil && len(u.Needs) != len(u.Sentences) {
		t.Fatalf("%d kinds, %d needs for %d units", len(u.Kinds), len(u.Needs), len(u.Sentences))
	}
	for j := range u.Sentences {
		if u.Needs == nil {
			break
		}
		for _, k := range u.Needs[j] {
			if k < 0 || k >= j {
				t.Fatalf("unit %d needs %d", j, k)
			}
		}
	}
	// groups: set exactly when kinds are, only on turns' and items'
	// sentences, each one run of units of one kind needing the same units
	if (u.Groups == nil) != (u.Kinds == nil) || u.Groups != nil && len(u.Groups) != len(u.Sentences) {
		t.Fatalf("%d groups for %d units (kinds %v)", len(u.Groups), len(u.Sentences), u.Kinds != nil)
	}
	seen := map[int]bool{}
	for j := range u.Sentences {
		g := u.Group(j)
		if g == 0 {
			continue
		}
		if k := u.Kind(j); k != evidence.Turn && k != evidence.Item {
			t.Fatalf("unit %d (%s) in group %d", j, k, g)
		}
		if j > 0 && u.Group(j-1) == g {
			if u.Kind(j-1) != u.Kind(j) || u.Needs != nil && !slices.Equal(u.Needs[j-1], u.Needs[j]) {
				t.Fatalf("units %d and %d of group %d differ in kind or needs", j-1, j, g)
			}
			continue
		}
		if seen[g] {
			t.Fatalf("group %d is not one run (unit %d)", g, j)
		}
		seen[g] = true
	}
	// a fence opened at a line's start is closed inside the same unit
	// (when fences are read)
	for j, sp := range u.Sentences {
		if on&evidence.CodeUnits == 0 {
			break
		}
		s := text[sp[0]:sp[1]]
		if u.Kind(j) != evidence.Code && (sp[0] == 0 || text[sp[0]-1] == '\n') && strings.HasPrefix(s, "```") {
			t.Fatalf("unit %q opens a fence but is not code", s)
		}
		if u.Kind(j) == evidence.Code {
			fence := s[:3]
			if fence != "```" && fence != "~~~" {
				t.Fatalf("code unit %q opens no fence", s)
			}
			rest := s[3:]
			// closed by its fence, or a lone fence line never closed in the text
			i := strings.LastIndexByte(rest, '\n')
			closed := i >= 0 && strings.HasPrefix(strings.TrimLeft(rest[i+1:], " \t"), fence)
			if !closed && (i >= 0 || fenceAfter(text[sp[1]:], fence)) {
				t.Fatalf("code unit %q is cut before its closing fence", s)
			}
		}
	}
}

// What is sent of a chat log keeps each kept sentence's "[time] Name:",
// and of a table the header row before a kept row (a model that scores by
// BM25: what is sent with a unit does not depend on the model).
func TestSelectSendsContextLines(t *testing.T) {
	bm25 := &evidence.Model{Version: 3, Learner: evidence.LearnerLogistic, Features: []string{"bm25_z"},
		Mean: []float64{0}, Scale: []float64{1}, Weights: []float64{3}, Bias: -4, Passages: 20, CostExponent: 1}
	chat, prices := fixture(t, "chat.txt"), fixture(t, "prices.md")
	for _, c := range []struct {
		question, text, want string
	}{
		{"What is the name of Maya's cat?", chat, "[2023-05-08 14:05] Maya:"},
		{"How much does rosemary cost?", prices, "| Plant | Pot size | Price |\n|-------|----------|------:|"},
	} {
		q := query(t, c.question, c.text)
		s, err := evidence.Parse("evidence:budget=60,floor=0,stop=0,units=turn|row|item|code|heading",
			evidence.Options{Embedder: indextest.HashEmbedder{}, Counter: counter(t), Model: bm25})
		if err != nil {
			t.Fatal(err)
		}
		sel, err := s.SelectTexts(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		ev := sel.Evidence[0]
		checkPrunedUnits(t, c.text, ev, evidence.AllUnits)
		t.Logf("%q → %q", c.question, ev.Text)
		if !strings.Contains(ev.Text, c.want) {
			t.Errorf("%q: sent %q without %q", c.question, ev.Text, c.want)
		}
		if counter(t).Count(ev.Text) != ev.Tokens || ev.Tokens > 60 {
			t.Errorf("sent %d tokens (counted %d) for a budget of 60", ev.Tokens, counter(t).Count(ev.Text))
		}
	}
}

// A kept row of a filing's statement is sent under every line of its
// column header, in the text's order, within the budget with them (a
// model that scores by BM25 keeps the row asked for; what is sent with a
// unit does not depend on the model).
func TestSelectSendsStatementHeader(t *testing.T) {
	bm25 := &evidence.Model{Version: 3, Learner: evidence.LearnerLogistic, Features: []string{"bm25_z"},
		Mean: []float64{0}, Scale: []float64{1}, Weights: []float64{3}, Bias: -4, Passages: 20, CostExponent: 1}
	text := fixture(t, "statement.txt")
	for _, c := range []struct {
		question, row string
		header        []string
	}{
		{"What were the net revenues?", "Net revenues", []string{"Three Months Ended", "March 31,", "2024"}},
		{"What was the short-term lease cost?", "Short-term lease cost", []string{"March 31,   \u00a0\u00a0December 31,", "2024      \u00a0\u00a0    2023"}},
	} {
		for _, budget := range []int{80, 200} {
			s, err := evidence.Parse(fmt.Sprintf("evidence:budget=%d,floor=0,stop=0,units=turn|row|item|code|heading", budget),
				evidence.Options{Embedder: indextest.HashEmbedder{}, Counter: counter(t), Model: bm25})
			if err != nil {
				t.Fatal(err)
			}
			sel, err := s.SelectTexts(context.Background(), query(t, c.question, text))
			if err != nil {
				t.Fatal(err)
			}
			ev := sel.Evidence[0]
			checkPrunedUnits(t, text, ev, evidence.AllUnits)
			row := strings.Index(ev.Text, c.row)
			if row < 0 {
				t.Errorf("%q, budget %d: the row %q is not sent: %q", c.question, budget, c.row, ev.Text)
				continue
			}
			at := 0
			for _, h := range c.header {
				i := strings.Index(ev.Text[at:], h)
				if i < 0 || at+i > row {
					t.Errorf("%q, budget %d: header line %q not sent before the row: %q", c.question, budget, h, ev.Text)
					break
				}
				at += i + len(h)
			}
			if counter(t).Count(ev.Text) != ev.Tokens || ev.Tokens > budget {
				t.Errorf("sent %d tokens (counted %d) for a budget of %d", ev.Tokens, counter(t).Count(ev.Text), budget)
			}
		}
	}
}

// fenceAfter reports a line of text after its first that opens with fence.
func fenceAfter(text, fence string) bool {
	lines := strings.Split(text, "\n")
	for _, l := range lines[1:] {
		if strings.HasPrefix(strings.TrimLeft(l, " \t"), fence) {
			return true
		}
	}
	return false
}

// A chunk's edges cut structures: a table without its header row (no rule
// under its first line) has rows and no header; a fence never closed in
// the passage is a unit alone and the text after it stays text.
func TestSplitCutStructures(t *testing.T) {
	text := "| kNN | 0.602 | 0.87 |\n| lstm | 0.714 | 1.79 |\n\nThe LSTM wins."
	us := units(text, evidence.SplitUnits(text, evidence.AllUnits))
	if r := find(t, us, "| kNN | 0.602 | 0.87 |"); r.kind != evidence.Row || r.needs != nil {
		t.Errorf("first row of a cut table: %+v", r)
	}
	text = "x = 1\n```\n\nThe loss is the mean. It falls fast.\n\n- a point"
	u := evidence.SplitUnits(text, evidence.AllUnits)
	us = units(text, u)
	if c := find(t, us, "```"); c.kind != evidence.Code {
		t.Errorf("lone fence: %+v", c)
	}
	if s := find(t, us, "It falls fast."); s.kind != evidence.Sentence {
		t.Errorf("text after a lone fence: %+v", s)
	}
	checkUnits(t, text, u)
}

// A turn's sentences (its continuation lines too) are one group, another
// turn's another; a list item's likewise; prose sentences none.
func TestSplitGroups(t *testing.T) {
	chat := fixture(t, "chat.txt")
	u := evidence.Split(chat)
	group := func(text, s string, u evidence.Units) int {
		t.Helper()
		for j, sp := range u.Sentences {
			if text[sp[0]:sp[1]] == s {
				return u.Group(j)
			}
		}
		t.Fatalf("no unit %q", s)
		return 0
	}
	a, b := group(chat, "It was great, thanks.", u), group(chat, "I still dream about the custard tarts.", u)
	if a == 0 || a != b {
		t.Errorf("one turn's sentences in groups %d and %d", a, b)
	}
	if c := group(chat, "Did you go to Sintra?", u); c == a || c == 0 {
		t.Errorf("the next turn in group %d (the first %d)", c, a)
	}
	text := "Notes\n- Open the lid. Remove the filter.\n- Close it.\n\nThen wait. It beeps."
	u = evidence.Split(text)
	if a, b := group(text, "- Open the lid.", u), group(text, "Remove the filter.", u); a == 0 || a != b || group(text, "- Close it.", u) == a {
		t.Errorf("list items: groups %d, %d, %d", a, b, group(text, "- Close it.", u))
	}
	if g := group(text, "It beeps.", u); g != 0 {
		t.Errorf("a prose sentence in group %d", g)
	}
}
