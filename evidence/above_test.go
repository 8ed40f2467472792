package evidence_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
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
