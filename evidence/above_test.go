package evidence_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
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
