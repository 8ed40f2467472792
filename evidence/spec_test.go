package evidence

import (
	"errors"
	"testing"

	"github.com/ctxsel/ctxsel"
)

// ParseSpec reads every declared parameter into Options: 0 turns a model
// setting off, a setting left out stays the model's, and a bad one is the
// schema's ParamError.
func TestParseSpecOptions(t *testing.T) {
	got, err := ParseSpec("evidence:budget=500,passages=7,header=0,neighbors=1,hop=0,floor=0,stop=0,min_expected=0,dedup=0,order=document,max_k=3,max_tokens=400,units=turn|code,whole=turn|item", Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := Options{Budget: 500, Passages: 7, NoHeader: true, Neighbors: 1, Hop: HopOff, Floor: FloorOff, Stop: StopOff, MinExpected: MinExpectedOff,
		KeepRepeats: true, Order: ctxsel.DocumentOrder, Caps: ctxsel.Caps{MaxK: 3, MaxTokens: 400}, Units: SentenceUnits | TurnUnits | CodeUnits, Whole: SentenceUnits | TurnUnits | ItemUnits}
	if got != want {
		t.Errorf("all given:\n got %+v\nwant %+v", got, want)
	}
	got, err = ParseSpec("evidence:budget=500,hop=2,floor=0.1,stop=0.5,min_expected=2,order=doc", Options{})
	want = Options{Budget: 500, Neighbors: -1, Hop: 2, Floor: 0.1, Stop: 0.5, MinExpected: 2, Order: ctxsel.DocumentOrder}
	if err != nil || got != want {
		t.Errorf("some given:\n got %+v, %v\nwant %+v", got, err, want)
	}
	got, err = ParseSpec("evidence:budget=500", Options{})
	want = Options{Budget: 500, Neighbors: -1, Order: ctxsel.RankOrder}
	if err != nil || got != want {
		t.Errorf("budget only:\n got %+v, %v\nwant %+v", got, err, want)
	}
	for spec, param := range map[string]string{
		"evidence":                            "budget",
		"evidence:budget=0":                   "budget",
		"evidence:budget=500,min_k=1":         "min_k",
		"evidence:budget=500,floor=1":         "floor",
		"evidence:budget=500,min_expected=-1": "min_expected",
		"evidence:budget=500,order=edge":      "order",
		"evidence:budget=500,header=2":        "header",
		"evidence:budget=500,hop=21":          "hop",
		"evidence:budget=500,units=table":     "units",
		"evidence:budget=500,units=1":         "units",
		"evidence:budget=500,whole=row":       "whole",
		"evidence:budget=500,whole=1":         "whole",
	} {
		var pe *ctxsel.ParamError
		if _, err := ParseSpec(spec, Options{}); !errors.As(err, &pe) || pe.Param != param || pe.Strategy != "evidence" {
			t.Errorf("%s: %v, want a ParamError about %s", spec, err, param)
		}
	}
	if _, err := ParseSpec("picker:budget=5", Options{}); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Errorf("another name: %v", err)
	}
}

// A model fitted on prose leaves rows off unless told; a model that reads
// unit_row (fitted on rows as units), or has a kind's model that does, as
// the embedded one's table model, reads them.
func TestModelUnits(t *testing.T) {
	top := *DefaultModel()
	top.Kinds = nil
	if got := top.Units(); got != DefaultUnits || got&RowUnits != 0 {
		t.Errorf("the embedded model's prose model: units %s, want %s without rows", got, DefaultUnits)
	}
	if got := DefaultModel().Units(); got != DefaultUnits|RowUnits || DefaultModel().Kinds[KindTable] == nil {
		t.Errorf("embedded model: units %s, want rows too (its table model reads them)", got)
	}
	m := &Model{Features: []string{"bm25_z", "unit_row"}}
	if got := m.Units(); got != DefaultUnits|RowUnits {
		t.Errorf("a model reading unit_row: units %s", got)
	}
	opt, err := ParseSpec("evidence:budget=500,units=row", Options{})
	if err != nil || opt.Units != SentenceUnits|RowUnits {
		t.Errorf("units=row: %v, %v", opt.Units, err)
	}
}
