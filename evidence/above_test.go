package evidence_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/evidence"
)

// What the source says lies above a passage (TextQuery.Above) is sent with
// it, after its title and before what is kept, counted in its tokens; a
// passage that starts among a table's rows takes no row as its title; and
// header=0 sends neither.
func TestAboveIsSent(t *testing.T) {
	rows := "3 of the watchdog | restart 3 |\n| E104 | fault 4 of the watchdog | restart 4 |\n| E105 | fault 5 of the watchdog | restart 5 |"
	prose := "Clean the vents every six months. Replace the battery every three years."
	q := query(t, "What does error E105 mean?", rows, prose)
	q.Headers = []string{"# Router Guide", "# Router Guide"}
	q.Above = []string{"## 2. Configuration\n### 2.3 Error codes\n| Code | Meaning | Action |\n| --- | --- | --- |", "## 3.   Maintenance\n\n"}
	sel, err := newSelector(t, "evidence:budget=400,floor=0,stop=0").SelectTexts(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	c := counter(t)
	if len(sel.Evidence) != 2 {
		t.Fatalf("%d passages sent, want 2", len(sel.Evidence))
	}
	for i, ev := range sel.Evidence {
		if ev.Header != nil || ev.Title != "# Router Guide" {
			t.Errorf("passage %d: header %v, title %q: want the source's title, no line of its own", i, ev.Header, ev.Title)
		}
		if got := c.Count(ev.Text); got != ev.Tokens {
			t.Errorf("passage %d: %d tokens counted, %d said", i, got, ev.Tokens)
		}
	}
	table := sel.Evidence[0]
	if sel.Indices[0] != 0 {
		table = sel.Evidence[1]
	}
	want := "# Router Guide\n## 2. Configuration\n### 2.3 Error codes\n| Code | Meaning | Action |\n| --- | --- | --- |\n"
	if !strings.HasPrefix(table.Text, want) || !strings.Contains(table.Text, "| E105 |") {
		t.Errorf("the table's passage sends\n%s\nwant it to open with\n%s", table.Text, want)
	}
	if table.Above != want[len("# Router Guide\n"):len(want)-1] {
		t.Errorf("Above %q", table.Above)
	}
	other := sel.Evidence[1-indexOf(sel.Indices, 0)]
	if !strings.HasPrefix(other.Text, "# Router Guide\n## 3. Maintenance\n") || other.Above != "## 3. Maintenance" {
		t.Errorf("the prose passage sends %q (above %q): want its section line once, its spaces made single", other.Text, other.Above)
	}

	// header=0: no title, nothing above
	sel, err = newSelector(t, "evidence:budget=400,floor=0,stop=0,header=0").SelectTexts(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range sel.Evidence {
		if ev.Above != "" || strings.Contains(ev.Text, "##") || strings.Contains(ev.Text, "| Code |") {
			t.Errorf("header=0 sends %q", ev.Text)
		}
	}

	// valid UTF-8 only
	q.Above = []string{"## \xff", ""}
	if _, err := newSelector(t, "evidence:budget=400").SelectTexts(context.Background(), q); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Errorf("invalid UTF-8 above a passage: %v", err)
	}
	// one per candidate
	q.Above = q.Above[:1]
	if _, err := newSelector(t, "evidence:budget=400").SelectTexts(context.Background(), q); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Errorf("one above text for two candidates: %v", err)
	}
}

func indexOf(xs []int, x int) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

// Lines above a passage are not charged while packing, yet a passage whose
// title and lines above leave no room for any of its units must not be
// opened: the passages that fit are sent instead of none (the selection
// failed with "no sentence fits" while a 7-token sentence did).
func TestAboveTooLongForTheBudget(t *testing.T) {
	above := "## 2. Configuration of the network interfaces and the routing tables\n### 2.3 Error codes the unit shows on its display and in its web interface\n| Code | Meaning | Action | Severity | Since firmware |\n| --- | --- | --- | --- | --- |"
	c := counter(t)
	for _, budget := range []int{30, 50, 70} {
		q := query(t, "What does error E105 mean?", "| E105 | watchdog fault | restart | high | 2.1 |\n| E106 | fan | clean | low | 2.1 |", "Clean the vents every six months.")
		q.Headers = []string{"Guide", "Guide"}
		q.Above = []string{above, ""}
		sel, err := newSelector(t, "evidence:budget="+itoa(budget)+",floor=0,stop=0").SelectTexts(context.Background(), q)
		if err != nil {
			t.Errorf("budget %d, %d tokens above the first passage: %v", budget, c.Count(above), err)
			continue
		}
		if !slices.Equal(sel.Indices, []int{1}) || sel.Tokens > budget {
			t.Errorf("budget %d: passages %v sent, %d tokens; want the second alone", budget, sel.Indices, sel.Tokens)
		}
	}
	// alone, it fits in no budget under its lines above, and says so
	q := query(t, "What does error E105 mean?", "| E105 | watchdog fault | restart | high | 2.1 |\n| E106 | fan | clean | low | 2.1 |")
	q.Headers, q.Above = []string{"Guide"}, []string{above}
	if _, err := newSelector(t, "evidence:budget=50").SelectTexts(context.Background(), q); !errors.Is(err, ctxsel.ErrInvalidInput) || !strings.Contains(err.Error(), "more for its header and the lines above it") {
		t.Errorf("a passage whose lines above leave no room: %v", err)
	}
}

// However many passages carry lines above, however long, and however small
// the budget, what is sent fits it, each text counted exactly, its title and
// lines above first; and where the selection fails, no passage could have
// been sent alone.
func TestAboveBudgetStress(t *testing.T) {
	c := counter(t)
	rng := rand.New(rand.NewPCG(7, 11))
	words := strings.Fields("the unit router fault error code E105 watchdog restart fan vents clean replace battery network link cable power switch display table row column value")
	sentence := func() string {
		n := 3 + rng.IntN(14)
		w := make([]string, n)
		for i := range w {
			w[i] = words[rng.IntN(len(words))]
		}
		return strings.ToUpper(w[0][:1]) + w[0][1:] + " " + strings.Join(w[1:], " ") + "."
	}
	heading := func(level int) string {
		h := strings.Repeat("#", level) + " " + sentence()
		for range rng.IntN(4) {
			h += " " + sentence()
		}
		return h
	}
	specs := []string{"", ",neighbors=1", ",floor=0.1,stop=0.5", ",whole=turn|item", ",floor=0,stop=0", ",header=0"}
	for trial := range 300 {
		n := 2 + rng.IntN(10)
		texts, above, headers := make([]string, n), make([]string, n), make([]string, n)
		prose := make([]bool, n)
		for i := range n {
			var lines []string
			prose[i] = rng.IntN(2) == 0
			for range 1 + rng.IntN(6) {
				if prose[i] {
					lines = append(lines, sentence()+" "+sentence())
				} else {
					lines = append(lines, "| "+strings.ReplaceAll(sentence(), " ", " | ")+" |")
				}
			}
			texts[i] = strings.Join(lines, "\n")
			headers[i] = []string{"", "Guide", "LP-4200 service manual"}[rng.IntN(3)]
			var ab []string
			for l := 1; l <= rng.IntN(5); l++ {
				ab = append(ab, heading(l))
			}
			if !prose[i] || rng.IntN(3) == 0 {
				ab = append(ab, "| Code | Meaning | "+strings.Repeat("Column | ", rng.IntN(30)), "| --- | --- |")
			}
			above[i] = strings.Join(ab, "\n")
		}
		q := query(t, "What does error E105 mean for the watchdog?", texts...)
		q.Headers, q.Above = headers, above
		budget := 1 + rng.IntN(300)
		spec := specs[trial%len(specs)]
		sel, err := newSelector(t, "evidence:budget="+itoa(budget)+spec).SelectTexts(context.Background(), q)
		if err != nil {
			if !errors.Is(err, ctxsel.ErrInvalidInput) {
				t.Fatalf("trial %d: %v", trial, err)
			}
			// no prose passage's title, lines above and shortest sentence fit
			for i := range n {
				if !prose[i] || spec == ",header=0" {
					continue
				}
				var shortest string
				for _, s := range strings.SplitAfter(texts[i], ". ") {
					if s = strings.TrimSpace(s); shortest == "" || c.Count(s) < c.Count(shortest) {
						shortest = s
					}
				}
				var b strings.Builder
				if headers[i] != "" {
					b.WriteString(headers[i] + "\n")
				}
				b.WriteString(evidence.AboveText(above[i]) + "\n… " + shortest)
				if c.Count(b.String())+4 <= budget {
					t.Errorf("trial %d (budget %d%s): %v; passage %d could be sent alone in %d tokens", trial, budget, spec, err, i, c.Count(b.String()))
				}
			}
			continue
		}
		total := 0
		for k, ev := range sel.Evidence {
			if got := c.Count(ev.Text); got != ev.Tokens {
				t.Fatalf("trial %d: passage %d: %d tokens said, %d counted", trial, k, ev.Tokens, got)
			}
			total += ev.Tokens
			if len(ev.Spans) == 0 {
				t.Errorf("trial %d: passage %d sent with nothing of its own: %q", trial, k, ev.Text)
			}
			want := ""
			if ev.Title != "" {
				want = ev.Title + "\n"
			}
			if ev.Above != "" {
				want += ev.Above + "\n"
				if ev.Above != evidence.AboveText(above[sel.Indices[k]]) {
					t.Errorf("trial %d: above %q sent as %q", trial, above[sel.Indices[k]], ev.Above)
				}
			}
			if !strings.HasPrefix(ev.Text, want) {
				t.Errorf("trial %d: passage %d sends %q, not opening with %q", trial, k, ev.Text, want)
			}
		}
		if total != sel.Tokens || total > budget {
			t.Fatalf("trial %d (budget %d%s): %d tokens sent (%d said), over the budget", trial, budget, spec, total, sel.Tokens)
		}
	}
}

// A PDF export's space-aligned table and a filing's statement, each cut by
// a chunk's start below its header: with chunk.Above's lines above, the
// chunk's first line is a row (not taken for the header nor the title),
// and the rows go out under the header the source gave.
func TestAboveTextTable(t *testing.T) {
	doc := "## Results by region\n\n" +
		"Region          Units      Revenue     Margin\n" +
		"North           1,200      $ 45,000    12.1%\n" +
		"South             950      $ 31,500     9.8%\n" +
		"East            1,430      $ 52,250    13.4%\n" +
		"West              610      $ 20,100     7.2%\n" +
		"Central           880      $ 33,900    10.5%\n\n" +
		"                                     December 31,\n" +
		"                                  2024           2023\n" +
		"Cash and cash equivalents     $  1,234       $  1,100\n\n" +
		"Receivables and stock on hand\n" +
		"Accounts receivable               567            498\n" +
		"Inventories                       890            812\n" +
		"Total current assets          $  2,691       $  2,410\n"
	// the header goes out with its layout, its columns over the rows' figures
	alignedHeader := "Region          Units      Revenue     Margin"
	stmtHeader := "                                     December 31,\n                                  2024           2023"
	for _, tc := range []struct {
		name, from, question, row, header string
	}{
		{"aligned, at a row's start", "South", "What revenue did the East region make?", "East            1,430      $ 52,250    13.4%", alignedHeader},
		{"aligned, a row cut", "31,500", "What revenue did the East region make?", "East            1,430      $ 52,250    13.4%", alignedHeader},
		{"statement", "Accounts receivable", "How much were inventories at December 31, 2024?", "Inventories                       890            812", stmtHeader},
		{"statement, at a label line", "Receivables and", "How much were inventories at December 31, 2024?", "Inventories                       890            812", stmtHeader},
		{"statement, its header cut", "2024           2023", "How much were inventories at December 31, 2024?", "Inventories                       890            812", "                                     December 31,"},
	} {
		start := strings.Index(doc, tc.from)
		above := chunk.Above(doc, start)
		text := doc[start:]
		if !strings.Contains(evidence.AboveText(above), tc.header) {
			t.Fatalf("%s: chunk.Above gives %q, want the table's header %q", tc.name, above, tc.header)
		}
		u := evidence.SplitUnitsAbove(text, evidence.AllUnits, above)
		if u.Header != nil {
			t.Errorf("%s: the passage's first line %q is taken for its title", tc.name, text[u.Header[0]:u.Header[1]])
		}
		for j, sp := range u.Sentences {
			if line := text[sp[0]:sp[1]]; u.Kind(j) == evidence.Context && strings.Contains(line, "$") && !strings.Contains(tc.name, "statement") {
				t.Errorf("%s: the row %q is read as the table's header", tc.name, line)
			}
		}
		q := query(t, tc.question, text, "Clean the vents every six months. Replace the battery every three years.")
		q.Headers = []string{"report", "manual"}
		q.Above = []string{above, ""}
		sel, err := newSelector(t, "evidence:budget=300,floor=0,stop=0").SelectTexts(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		ev := sel.Evidence[indexOf(sel.Indices, 0)]
		checkPrunedUnitsAbove(t, text, above, ev, evidence.AllUnits)
		at := strings.Index(ev.Text, tc.row)
		if h := strings.Index(ev.Text, tc.header); at < 0 || h < 0 || h > at {
			t.Errorf("%s: sent\n%s\nwant %q under %q", tc.name, ev.Text, tc.row, tc.header)
		}
		if c := strings.Index(ev.Text, "2024"); strings.Contains(tc.name, "statement") && (c < 0 || c > at) {
			t.Errorf("%s: sent\n%s\nwant the columns' years above %q", tc.name, ev.Text, tc.row)
		}
	}
	// without the lines above, the aligned chunk's first row is its header (as before)
	text := doc[strings.Index(doc, "South"):]
	if u := evidence.SplitUnits(text, evidence.AllUnits); u.Kind(0) != evidence.Context {
		t.Errorf("without lines above, the first line is a %v", u.Kind(0))
	}
}

// A line above that may hold a text table's cells keeps its layout, less a
// CRLF file's "\r", other white space and what trails it; any other line
// (a heading) is sent with its spaces made single, blank lines dropped.
func TestAboveTextLayout(t *testing.T) {
	doc := "## Results by region\r\n\r\nRegion          Units\fx    Revenue     Margin   \r\n" +
		"North           1,200      $ 45,000    12.1%\r\nSouth             950      $ 31,500     9.8%\r\n" +
		"East            1,430      $ 52,250    13.4%\r\nWest              610      $ 20,100     7.2%\r\n"
	above := chunk.Above(doc, strings.Index(doc, "South"))
	if got, want := evidence.AboveText(above), "## Results by region\nRegion          Units x    Revenue     Margin"; got != want {
		t.Errorf("lines above %q sent as %q, want %q", above, got, want)
	}
	for _, tc := range []struct{ above, want string }{
		{"# Manual \r\n\r\n## Error\u00a0codes\r", "# Manual\n## Error codes"},
		{"                 (in thousands)\n            2024\t2023 \v", "                 (in thousands)\n            2024\t2023"},
		{"\n \n", ""},
	} {
		if got := evidence.AboveText(tc.above); got != tc.want {
			t.Errorf("lines above %q sent as %q, want %q", tc.above, got, tc.want)
		}
	}
}

// A statement's figures are read by the column they stand in: sent from a
// chunk below the header, with rows left out between, every row keeps its
// indent and the header its layout, so that each figure stands under its
// year as in the document.
func TestAboveKeepsColumns(t *testing.T) {
	doc := "CONDENSED BALANCE SHEETS\n\n" +
		"                                     March 31,    December 31,\n" +
		"                                          2024            2023\n" +
		"ASSETS\nCurrent assets:\n" +
		"  Cash and cash equivalents           $ 12,418        $ 10,952\n" +
		"  Accounts receivable                    9,874          11,206\n" +
		"Total current assets                    22,292          22,158\n\n" +
		"Current liabilities:\n" +
		"  Accounts payable                     $ 6,904         $ 5,117\n" +
		"  Accrued payroll and benefits           3,216           4,085\n" +
		"  Accrued warranty costs                 1,487           1,402\n" +
		"  Deferred revenue, current              2,760           2,531\n" +
		"  Revolving credit facility              3,500               -\n" +
		"Total current liabilities               17,867          13,135\n"
	endOf := func(text, line, cell string) int { // the column a cell of a line ends at, -1 when none
		for l := range strings.Lines(text) {
			if strings.Contains(l, line) {
				if i := strings.Index(l, cell); i >= 0 {
					return i + len(cell)
				}
			}
		}
		return -1
	}
	year, figure := endOf(doc, "2024", "2024"), endOf(doc, "Revolving credit", "3,500")
	if year < 0 || year != figure {
		t.Fatalf("the document's columns: 2024 ends at %d, 3,500 at %d", year, figure)
	}
	start := strings.Index(doc, "  Cash and")
	text := doc[start:]
	above := chunk.Above(doc, start)
	q := query(t, "How much did the company owe on its revolving credit facility at March 31, 2024?", text, "Clean the vents every six months.")
	q.Above = []string{above, ""}
	for _, budget := range []int{80, 120, 160} {
		sel, err := newSelector(t, "evidence:budget="+itoa(budget)+",floor=0,stop=0").SelectTexts(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		ev := sel.Evidence[indexOf(sel.Indices, 0)]
		checkPrunedUnitsAbove(t, text, above, ev, evidence.AllUnits)
		if len(ev.Spans) == len(evidence.SplitUnitsAbove(text, evidence.AllUnits, above).Sentences) {
			t.Fatalf("budget %d: the whole chunk was sent, no row left out:\n%s", budget, ev.Text)
		}
		if y, f := endOf(ev.Text, "2024", "2024"), endOf(ev.Text, "Revolving credit", "3,500"); y != year || f != figure {
			t.Errorf("budget %d: sent\n%s\n2024 ends at column %d and 3,500 at %d, want both at %d", budget, ev.Text, y, f, year)
		}
	}
}

// A statement whose header the chunk holds itself, below prose left out:
// its first kept line (a header line) follows a gap as any row does, so it
// keeps its indent, under the passage's title ("…" on a line of its own
// marks the opening left out) and with no title alike, and each figure
// stands under its year.
func TestOwnHeaderKeepsColumns(t *testing.T) {
	doc := "Northwind's revenue grew in the quarter on higher calibration volumes. Backlog rose as well.\n" +
		"                                     March 31,    December 31,\n" +
		"                                          2024            2023\n" +
		"Current liabilities:\n" +
		"  Accounts payable                     $ 6,904         $ 5,117\n" +
		"  Accrued payroll and benefits           3,216           4,085\n" +
		"  Revolving credit facility              3,500               -\n" +
		"Total current liabilities               17,867          13,135\n"
	lines := strings.Split(doc, "\n")
	for _, title := range []string{"northwind-q1", ""} {
		for _, budget := range []int{40, 60, 80} {
			q := query(t, "How much did the company owe on its revolving credit facility at March 31, 2024?", doc, "Clean the vents every six months.")
			if title != "" {
				q.Headers = []string{title, ""}
			}
			sel, err := newSelector(t, "evidence:budget="+itoa(budget)+",floor=0,stop=0").SelectTexts(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			ev := sel.Evidence[indexOf(sel.Indices, 0)]
			checkPrunedUnits(t, doc, ev, evidence.DefaultModel().Units())
			if ev.Spans[0][0] == 0 {
				t.Fatalf("title %q, budget %d: the prose is kept, no gap opens the passage:\n%s", title, budget, ev.Text)
			}
			for _, cell := range []string{"March 31,", "2024", "Revolving credit facility"} {
				sent := slices.IndexFunc(strings.Split(ev.Text, "\n"), func(l string) bool { return strings.Contains(l, cell) })
				want := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, cell) })
				if sent < 0 || strings.Split(ev.Text, "\n")[sent] != lines[want] {
					t.Errorf("title %q, budget %d: the line of %q is not sent as the document lays it out:\n%s", title, budget, cell, ev.Text)
				}
			}
		}
	}
}

// A chunk whose start cuts a Markdown table's header row holds the row's
// rest, the rule and the rows: the whole header row is sent above them.
func TestAboveCutHeaderRow(t *testing.T) {
	doc := "## Error codes\n\n| Code | Meaning | Action |\n| --- | --- | --- |\n| E104 | fault 4 of the watchdog | restart 4 |\n| E105 | fault 5 of the fan | clean 5 |\n"
	start := strings.Index(doc, "Action |")
	above := chunk.Above(doc, start)
	if want := "## Error codes\n| Code | Meaning | Action |"; above != want {
		t.Fatalf("chunk.Above %q, want %q", above, want)
	}
	text := doc[start:]
	q := query(t, "What does error E105 mean?", text, "Clean the vents every six months. Replace the battery every three years.")
	q.Headers, q.Above = []string{"manual", "manual"}, []string{above, ""}
	sel, err := newSelector(t, "evidence:budget=300,floor=0,stop=0").SelectTexts(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	ev := sel.Evidence[indexOf(sel.Indices, 0)]
	checkPrunedUnitsAbove(t, text, above, ev, evidence.AllUnits)
	if h, r := strings.Index(ev.Text, "| Code | Meaning | Action |"), strings.Index(ev.Text, "| E105 |"); h < 0 || r < 0 || h > r {
		t.Errorf("sent\n%s\nwant the header row above the row E105", ev.Text)
	}
}

// A source that gives the lines above as asked (TextQuery.AboveOf) is asked
// for the passages the selector reads (its 20 best, and the second hop's),
// not for every candidate, and the selection is the one Above gives.
func TestAboveOfAskedForWhatIsRead(t *testing.T) {
	texts := make([]string, 200)
	above := make([]string, 200)
	for i := range texts {
		texts[i] = fmt.Sprintf("| E%d | fault %d of the watchdog | restart %d |\n| E%d | fault %d of the fan | clean %d |", 100+2*i, i, i, 101+2*i, i, i)
		above[i] = fmt.Sprintf("## Error codes, part %d\n| Code | Meaning | Action |\n| --- | --- | --- |", i)
	}
	q := query(t, "What does error E105 mean?", texts...)
	q.Above = above
	s := newSelector(t, "evidence:budget=300,floor=0,stop=0")
	want, err := s.SelectTexts(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	var asked []int
	q.Above = nil
	q.AboveOf = func(_ context.Context, indices []int) ([]string, error) {
		asked = append(asked, indices...)
		out := make([]string, len(indices))
		for i, j := range indices {
			out[i] = above[j]
		}
		return out, nil
	}
	got, err := s.SelectTexts(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("with AboveOf: %+v\nwith Above: %+v", got, want)
	}
	if len(asked) == 0 || len(asked) > evidence.DefaultModel().Passages+evidence.DefaultModel().Hop {
		t.Errorf("asked for the lines above %d passages of %d (%v); want the ones read", len(asked), len(texts), asked)
	}
	for _, i := range got.Indices {
		if !slices.Contains(asked, i) {
			t.Errorf("passage %d sent without its lines above being asked for", i)
		}
	}
	// a source that fails fails the selection, with its error
	q.AboveOf = func(context.Context, []int) ([]string, error) { return nil, errors.New("segment unreadable") }
	if _, err := s.SelectTexts(context.Background(), q); err == nil || !strings.Contains(err.Error(), "segment unreadable") {
		t.Errorf("a failing source: %v", err)
	}
}

// A chunk whose own first lines hold a text table's header (its start at
// or inside the header's line above them, or under a heading that reads
// as a statement's column header): the lines above read on into the
// passage, but its aligned table's first line is that header, which its
// rows need, not a row.
func TestAboveTextTableHeaderInChunk(t *testing.T) {
	for _, tc := range []struct{ name, doc, from, header string }{
		{"a statement's header cut above its columns",
			"Sales by segment, a sentence long enough to be prose and no label of a statement.\n\n" +
				"                              Three Months Ended\n" +
				"Segment               2024           2023\n" +
				"Industrial           1,234          1,100\n" +
				"Medical                567            498\n" +
				"Aerospace              890            812\n",
			"Months Ended", "Segment               2024           2023"},
		{"a heading that reads as columns",
			"# Report\n\n## Sales  2024\n\n" +
				"Region    Units     Revenue\n" +
				"North     1,200     45,000\n" +
				"South       950     31,500\n" +
				"East      1,430     52,250\n",
			"Region", "Region    Units     Revenue"},
	} {
		start := strings.Index(tc.doc, tc.from)
		above, text := chunk.Above(tc.doc, start), tc.doc[start:]
		u := evidence.SplitUnitsAbove(text, evidence.AllUnits, above)
		hdr := -1
		for j, sp := range u.Sentences {
			if text[sp[0]:sp[1]] == tc.header {
				hdr = j
			}
		}
		if hdr < 0 || u.Kind(hdr) != evidence.Context {
			t.Errorf("%s (lines above %q): the header %q is no context line (unit %d)", tc.name, above, tc.header, hdr)
			continue
		}
		for j, sp := range u.Sentences {
			if u.Kind(j) == evidence.Row && !slices.Contains(u.Needs[j], hdr) {
				t.Errorf("%s: the row %q is sent without its header", tc.name, text[sp[0]:sp[1]])
			}
		}
	}
	// a statement's rows below its header, aligned: the first is a row
	doc := "                   December 31,\n               2024        2023\nCash          1,234       1,100\n" +
		"Receivables     567         498\nInventories     890         812\nPrepaid         120         110\n"
	start := strings.Index(doc, "Receivables")
	text := doc[start:]
	if u := evidence.SplitUnitsAbove(text, evidence.AllUnits, chunk.Above(doc, start)); u.Kind(0) != evidence.Row {
		t.Errorf("under a statement's header, the aligned rows' first is a %v", u.Kind(0))
	}
}
