package dataset

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

func TestLoad(t *testing.T) {
	good := `{"id":"q","question":"who?","answers":["x"],"passages":[{"id":"p0","text":"t","gold":true}]}` + "\n\n"
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte(good))
	w.Close()
	for name, in := range map[string][]byte{"plain": []byte(good), "gzip": gz.Bytes()} {
		recs, err := Load(bytes.NewReader(in))
		if err != nil || len(recs) != 1 || recs[0].GoldCount() != 1 {
			t.Errorf("%s: %v %v", name, recs, err)
		}
	}
	bad := map[string]string{
		"not json":        "{",
		"no id":           `{"question":"q","passages":[{"id":"a","text":""}]}`,
		"no question":     `{"id":"q","passages":[{"id":"a","text":""}]}`,
		"no passages":     `{"id":"q","question":"q"}`,
		"dup passage":     `{"id":"q","question":"q","passages":[{"id":"a"},{"id":"a"}]}`,
		"dup record":      good + good,
		"empty":           "",
		"passage without": `{"id":"q","question":"q","passages":[{"text":"x"}]}`,
		"ids for spans":   `{"id":"q","question":"q","passages":[{"id":"a","text":"xy","gold":true,"gold_spans":[[0,1],[1,2]],"gold_ids":["u"]}]}`,
		"empty gold id":   `{"id":"q","question":"q","passages":[{"id":"a","text":"xy","gold":true,"gold_spans":[[0,1]],"gold_ids":[" "]}]}`,
	}
	for name, in := range bad {
		if _, err := Load(strings.NewReader(in)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := Load(strings.NewReader(good + "{\n")); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("error does not name the line: %v", err)
	}
}

// Spans that share a gold id, in one passage or in two (a turn in the
// overlap of two chunks), are one unit; spans without ids a unit each.
func TestGoldUnits(t *testing.T) {
	in := `{"id":"q","question":"q","passages":[` +
		`{"id":"c0","text":"A: one.\nB: two.","gold":true,"gold_spans":[[0,7],[8,15]],"gold_ids":["t0","t1"]},` +
		`{"id":"c1","text":"B: two.\nA: three.","gold":true,"gold_spans":[[0,7],[8,17]],"gold_ids":["t1","t2"]},` +
		`{"id":"c2","text":"A: four.","gold":true,"gold_spans":[[0,8]]}]}`
	recs, err := Load(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	units, n := recs[0].GoldUnits()
	if want := [][]int{{0, 1}, {1, 2}, {3}}; n != 4 || fmt.Sprint(units) != fmt.Sprint(want) {
		t.Errorf("GoldUnits = %v, %d; want %v, 4", units, n, want)
	}
	if c := recs[0].SpanCount(); c != 4 {
		t.Errorf("SpanCount = %d, want 4 (5 spans, two of one unit)", c)
	}
	// a record built by hand, not loaded, with fewer ids than spans: a
	// span without an id is a unit of its own (no panic)
	short := Record{Passages: []Passage{{GoldSpans: [][2]int{{0, 1}, {1, 2}}, GoldIDs: []string{"u"}}}}
	if _, n := short.GoldUnits(); n != 2 {
		t.Errorf("fewer ids than spans: %d units, want 2", n)
	}
}

func TestPool(t *testing.T) {
	var recs []Record
	for q := range 30 {
		r := Record{ID: fmt.Sprintf("q%d", q), Question: "?"}
		for p := range 5 {
			r.Passages = append(r.Passages, Passage{ID: fmt.Sprintf("p%d", p), Text: fmt.Sprintf("text %d-%d", q, p), Gold: p == 0})
		}
		recs = append(recs, r)
	}
	recs[1].Passages[3].Text = recs[0].Passages[0].Text // same text as q0's gold
	a, err := Pool(recs, 50, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Pool(recs, 50, 7)
	c, _ := Pool(recs, 50, 8)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatal("same seed, different pools")
	}
	if fmt.Sprint(a) == fmt.Sprint(c) {
		t.Fatal("different seeds, same pools")
	}
	for i, r := range a {
		if len(r.Passages) != 50 {
			t.Fatalf("record %d has %d passages", i, len(r.Passages))
		}
		texts, ids := map[string]bool{}, map[string]bool{}
		own := 0
		for _, p := range r.Passages {
			if texts[p.Text] || ids[p.ID] {
				t.Fatalf("record %d: duplicate passage %+v", i, p)
			}
			texts[p.Text], ids[p.ID] = true, true
			if !strings.Contains(p.ID, "/") {
				own++
			} else if p.Gold {
				t.Fatalf("record %d: drawn passage %s marked gold", i, p.ID)
			}
		}
		if own != 5 || r.GoldCount() != 1 {
			t.Fatalf("record %d: %d own passages, %d gold", i, own, r.GoldCount())
		}
	}
	// Only 15 passages exist, and one of q1's repeats q0's gold text: 14 distinct.
	small, _ := Pool(recs[:3], 1000, 1)
	if len(small[0].Passages) != 14 || len(small[2].Passages) != 14 {
		t.Fatalf("want every available passage, got %d", len(small[0].Passages))
	}
	if len(recs[0].Passages) != 5 {
		t.Fatal("Pool modified its input")
	}
}

func FuzzLoad(f *testing.F) {
	f.Add([]byte(`{"id":"q","question":"who?","passages":[{"id":"p0","text":"t","gold":true}]}`))
	f.Add([]byte{0x1f, 0x8b, 0, 0})
	f.Add([]byte(`{"id":"q","question":"q","passages":[{"id":"a","text":"xy","gold":true,"gold_spans":[[0,1],[1,2]],"gold_ids":["u","u"],"title":"T"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, err := Load(bytes.NewReader(b))
		if err == nil {
			for _, r := range recs {
				if r.validate() != nil {
					t.Fatal("returned an invalid record")
				}
				units, n := r.GoldUnits()
				for i, p := range r.Passages {
					for j := range p.GoldSpans {
						if u := units[i][j]; u < 0 || u >= n {
							t.Fatalf("unit %d of %d", u, n)
						}
					}
				}
			}
		}
	})
}

// A pool far larger than the set (--pool 3000000000 --limit 2) gives every
// question all the set holds, sizing nothing by the requested size.
func TestPoolLargerThanTheSet(t *testing.T) {
	recs := []Record{
		{ID: "a", Passages: []Passage{{ID: "1", Text: "x", Gold: true}, {ID: "2", Text: "y"}}},
		{ID: "b", Passages: []Passage{{ID: "1", Text: "z", Gold: true}}},
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out, err := Pool(recs, 1<<22, 1)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(out[0].Passages) != 3 || len(out[1].Passages) != 3 {
		t.Fatalf("pools of %d and %d passages, want 3 (all there is)", len(out[0].Passages), len(out[1].Passages))
	}
	// Maps pre-sized for 4M entries would take well over 100 MB.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Fatalf("pooling 3 passages allocated %d bytes", alloc)
	}
}
