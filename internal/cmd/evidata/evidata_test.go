package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/dataset"
)

func TestJSONRows(t *testing.T) {
	want := `[{"_id":"a","x":1},{"_id":"b","x":2}]`
	norm := func(b []byte) string {
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		out, _ := json.Marshal(v)
		return string(out)
	}
	for name, in := range map[string]string{
		"array":  want,
		"lines":  "{\"_id\":\"a\",\"x\":1}\n{\"_id\":\"b\",\"x\":2}\n",
		"pandas": `{"_id":{"0":"a","1":"b"},"x":{"1":2,"0":1}}`,
	} {
		got, err := jsonRows([]byte(in), "")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if norm(got) != norm([]byte(want)) {
			t.Errorf("%s: %s", name, got)
		}
	}
	// an id renamed by a copy ("_1"), read with --id-field
	got, err := jsonRows([]byte(`{"_1":{"0":"a"},"id":{"0":"7316"}}`), "_1")
	if err != nil || norm(got) != `[{"_id":"a","id":"a"}]` {
		t.Fatalf("id field: %s %v", got, err)
	}
	// any other object is left alone (SQuAD's file)
	squad := `{"data":[],"version":"1.1"}`
	if got, err := jsonRows([]byte(squad), ""); err != nil || string(got) != squad {
		t.Fatalf("object: %s %v", got, err)
	}
	for _, bad := range []string{"", "nope", `{"a":1} {`, `[{"x":1}]`} {
		if _, err := jsonRows([]byte(bad), "_1"); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

// 2WikiMultihopQA's sentences are joined by a space; a supporting fact is
// its sentence's span.
func TestConvert2Wiki(t *testing.T) {
	raw := `[{"_id":"w1","question":"Who was born first, Ann or Bo?","answer":"Ann","type":"comparison",
	"context":[["Ann",["Ann (born 1900) was a poet.","She lived in Rome."]],["Bo",["Bo (born 1950) was a painter."]],["Cy",["Cy is a town."]]],
	"supporting_facts":[["Ann",0],["Bo",0]]},
	{"_id":"w2","question":"No context?","answer":"x"}]`
	recs, notes, err := convertHotpot([]byte(raw), map[string]bool{}, "src", "", "2wiki")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || !strings.Contains(notes[0], "1 without a context") {
		t.Fatalf("%d records, %v", len(recs), notes)
	}
	r := recs[0]
	if r.Task != "2wikimultihopqa" || r.Passages[0].Text != "Ann\nAnn (born 1900) was a poet. She lived in Rome." {
		t.Fatalf("%+v", r)
	}
	if got := spanTexts(r); strings.Join(got, "|") != "Ann (born 1900) was a poet.|Bo (born 1950) was a painter." {
		t.Fatalf("gold %q", got)
	}
}

func spanTexts(r dataset.Record) []string {
	var out []string
	for _, p := range r.Passages {
		for _, g := range p.GoldSpans {
			out = append(out, p.Text[g[0]:g[1]])
		}
	}
	return out
}

// MuSiQue's sentence labels come from each hop's answer in its supporting
// paragraph; among several, the sentence naming the hop's subject; a
// question with a hop that cannot be located is left out.
func TestConvertMuSiQue(t *testing.T) {
	raw := `[{"id":"2hop__1_2","question":"What is the seat of the county where Van Hook Township is?","answer":"Stanley","answer_aliases":["Stanley, ND"],"answerable":true,
	"paragraphs":[
	 {"idx":0,"title":"Van Hook Township","paragraph_text":"Van Hook Township is a township. It lies in Mountrail County. Mountrail County has lakes.","is_supporting":true},
	 {"idx":1,"title":"Mountrail County","paragraph_text":"Its seat is Stanley. Stanley is small.","is_supporting":true},
	 {"idx":2,"title":"Other","paragraph_text":"Nothing here.","is_supporting":false}],
	"question_decomposition":[
	 {"id":1,"question":"Van Hook Township >> located in","answer":"Mountrail County","paragraph_support_idx":0},
	 {"id":2,"question":"#1 >> capital","answer":"Stanley","paragraph_support_idx":1}]},
	{"id":"2hop__3_4","question":"Lost?","answer":"Zed","answerable":true,
	"paragraphs":[{"idx":0,"title":"A","paragraph_text":"Nothing of it.","is_supporting":true}],
	"question_decomposition":[{"id":3,"question":"A >> b","answer":"Zed","paragraph_support_idx":0}]},
	{"id":"2hop__5_6","question":"Unanswerable?","answer":"","answerable":false,"paragraphs":[],"question_decomposition":[]}]`
	recs, notes, err := convertMuSiQue([]byte(raw), map[string]bool{}, "src")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || !strings.Contains(notes[0], "1 unanswerable, 1 with a hop whose sentence could not be located") {
		t.Fatalf("%d records, %v", len(recs), notes)
	}
	r := recs[0]
	// each hop's answer is in two sentences, neither naming the hop's
	// subject (Van Hook Township; Mountrail County): the first is gold
	if got := strings.Join(spanTexts(r), "|"); got != "It lies in Mountrail County.|Its seat is Stanley." {
		t.Fatalf("gold %q", got)
	}
	if strings.Join(r.Answers, "|") != "Stanley|Stanley, ND" || r.Passages[1].Text != "Mountrail County\nIts seat is Stanley. Stanley is small." {
		t.Fatalf("%+v", r)
	}
	// the subject decides between sentences holding the answer
	span, how := hopSentence("T", "Paris is big. Ann lived in Paris.", []string{"Paris"}, []string{"Ann"})
	if how != "answer" || span != [2]int{14, 33} {
		t.Fatalf("%v %s", span, how)
	}
	// an answer that is the title: the first sentence
	if span, how := hopSentence("Mountrail County", "It has lakes. It is big.", []string{"Mountrail County"}, nil); how != "title" || span != [2]int{0, 13} {
		t.Fatalf("%v %s", span, how)
	}
	if got := hopSubjects("#1 >> capital", []string{"Mountrail County"}); strings.Join(got, "|") != "Mountrail County|Mountrail County" {
		t.Fatalf("subjects %q", got)
	}
}

// report pools files' figures by their questions.
func TestReport(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, n int, gain, se float64) string {
		p := filepath.Join(dir, name)
		b, _ := json.Marshal(map[string]any{"results": []map[string]any{{"strategy": "evidence:budget=300", "evidence_questions": n, "evidence_recall": 0.9,
			"evidence_gain": gain, "evidence_gain_se": se, "answer_questions": n, "answer_present": 0.8}}})
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var out bytes.Buffer
	if err := report([]string{write("a.json", 30, 0.1, 0.03), write("b.json", 10, 0.3, 0.04)}, &out); err != nil {
		t.Fatal(err)
	}
	// pooled gain 0.75·0.1 + 0.25·0.3 = 0.15, s.e. sqrt(0.75²·0.03² + 0.25²·0.04²) = 0.0246
	if !strings.Contains(out.String(), "| **pooled** | `evidence:budget=300` | 40 | 0.900 |") || !strings.Contains(out.String(), "**+0.150 ± 0.025**") {
		t.Fatalf("%s", out.String())
	}
}

func TestSpecList(t *testing.T) {
	got := strings.Join(specList("topk:k=1,evidence:budget=300,hop=0,knee,evidence:budget=500"), "|")
	if got != "topk:k=1|evidence:budget=300,hop=0|knee|evidence:budget=500" {
		t.Fatal(got)
	}
}
