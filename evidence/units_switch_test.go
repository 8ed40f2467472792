package evidence_test

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/evidence"
)

// With rows off a Markdown table passage (a report's table and its
// paragraph, as TAT-QA's) splits exactly as prose did before the units;
// with them on, its rows are units under the header row.
func TestSplitUnitsRowsOff(t *testing.T) {
	text := "Annual report 2019\n| | 2019 | 2018 |\n|---|---|---|\n| Revenue | 1,204 | 1,100 |\n| Net income | 310 | 295 |\n\nRevenue rose by 9.5% in 2019. Net income grew less."
	on := evidence.SplitUnits(text, evidence.AllUnits)
	if !slices.Contains(on.Kinds, evidence.Row) || on.Needs == nil {
		t.Fatalf("rows on: no row units: %v", units(text, on))
	}
	for _, set := range []evidence.Structures{evidence.AllUnits &^ evidence.RowUnits, evidence.SentenceUnits} {
		off := evidence.SplitUnits(text, set)
		if off.Kinds != nil || off.Needs != nil {
			t.Errorf("units=%s: read as structure: %v", set, units(text, off))
		}
		if want := evidence.PreUnitsSplit(text); !reflect.DeepEqual(off, want) {
			t.Errorf("units=%s: %+v, want the prose split %+v", set, off, want)
		}
	}
}

// A structure switched off leaves the others: the price list's table
// lines are prose with rows off, its list items and code block still
// units; with every structure off it is prose throughout.
func TestSplitUnitsKeepOthers(t *testing.T) {
	text := fixture(t, "prices.md")
	u := evidence.SplitUnits(text, evidence.AllUnits&^evidence.RowUnits)
	checkUnits(t, text, u)
	us := units(text, u)
	for _, x := range us {
		if x.kind == evidence.Row || x.kind == evidence.Context {
			t.Errorf("rows off: %+v", x)
		}
	}
	if !slices.Contains(u.Kinds, evidence.Item) || !slices.Contains(u.Kinds, evidence.Code) {
		t.Errorf("rows off lost the items or the code: %v", us)
	}
	if x := find(t, us, "- Watering can, 10 litres."); x.kind != evidence.Item || !slices.Equal(x.needs, []string{"## Tools"}) {
		t.Errorf("an item keeps its heading path: %+v", x)
	}
	u = evidence.SplitUnits(text, evidence.AllUnits&^evidence.HeadingUnits)
	if x := find(t, units(text, u), "- Watering can, 10 litres."); x.needs != nil {
		t.Errorf("headings off: an item still needs %v", x.needs)
	}
	u = evidence.SplitUnits(text, evidence.SentenceUnits)
	if !reflect.DeepEqual(u, evidence.PreUnitsSplit(text)) {
		t.Errorf("every structure off: not the prose split: %v", units(text, u))
	}
}

// The units words read into Structures and back.
func TestParseStructures(t *testing.T) {
	s, err := evidence.ParseStructures("turn|item")
	if err != nil || s != evidence.SentenceUnits|evidence.TurnUnits|evidence.ItemUnits || s.String() != "sentence|turn|item" {
		t.Errorf("turn|item: %v (%s), %v", uint8(s), s, err)
	}
	if s, err := evidence.ParseStructures(evidence.AllUnits.String()); err != nil || s != evidence.AllUnits {
		t.Errorf("all: %v, %v", s, err)
	}
	if _, err := evidence.ParseStructures("table"); err == nil {
		t.Error("table: no error")
	}
}

// A selector with rows off (the default of a model fitted on prose alone;
// the embedded one has a table model that reads rows) reads a table as
// prose: its rows and header are one sentence, sent whole or not at all
// (with rows on, the rosemary row is sent alone under its header:
// TestSelectSendsContextLines). A selector names units that are not the
// default's in its spec.
func TestSelectRowsOff(t *testing.T) {
	if evidence.DefaultUnits&evidence.RowUnits != 0 {
		t.Fatal("rows are on for a model fitted on prose alone")
	}
	if got := newSelector(t, "evidence:budget=80,units=turn|row").Name(); !strings.Contains(got, "units=sentence|turn|row") {
		t.Errorf("name %q does not say its units", got)
	}
	if got := newSelector(t, "evidence:budget=80").Name(); strings.Contains(got, "units=") {
		t.Errorf("name %q names the default units", got)
	}
	prices := fixture(t, "prices.md")
	q := query(t, "How much does rosemary cost?", prices)
	s := newSelector(t, "evidence:budget=80,floor=0,stop=0,units=turn|item|code|heading")
	sel, err := s.SelectTexts(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	ev := sel.Evidence[0]
	checkPrunedUnits(t, prices, ev, evidence.AllUnits&^evidence.RowUnits)
	t.Logf("%q", ev.Text)
	table := "| Plant | Pot size | Price |\n|-------|----------|------:|\n| Lavender | 2 l | 6.50 |\n| Rosemary | 1 l | 4.20 |\n| Olive tree | 20 l | 89.00 |"
	if !strings.Contains(ev.Text, table) || ev.Text == prices {
		t.Errorf("sent %q: want the whole table and not the whole passage", ev.Text)
	}
}
