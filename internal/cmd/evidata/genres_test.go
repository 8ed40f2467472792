package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel/dataset"
)

// FriendsQA: a question's passages are its episode's turns in scene order;
// its gold units the utterances its answers name, whole, speaker included.
func TestConvertFriendsQA(t *testing.T) {
	raw := `{"version":"0.1","data":[
	{"title":"s09_e02_c02","paragraphs":[{"utterances:":[
	  {"uid":0,"speakers":["Mona Lee"],"utterance":"The kettle is  broken again ."},
	  {"uid":1,"speakers":["Tom Park","Mona Lee"],"utterance":"We bought it on Tuesday ."}],
	 "qas":[{"id":"s09_e02_c02_When","question":"When did they buy the kettle ?","answers":[
	   {"answer_text":"Tuesday","utterance_id":1,"inner_start":4,"inner_end":4,"is_speaker":false},
	   {"answer_text":"on Tuesday","utterance_id":1,"inner_start":3,"inner_end":4,"is_speaker":false}]},
	  {"id":"s09_e02_c02_When","question":"When is it broken ?","answers":[{"answer_text":"again","utterance_id":0}]}]}]},
	{"title":"s09_e02_c01","paragraphs":[{"utterances:":[
	  {"uid":0,"speakers":["Tom Park"],"utterance":"Morning ."},
	  {"uid":1,"speakers":["Mona Lee"],"utterance":" "}],
	 "qas":[{"id":"s09_e02_c01_Who","question":"Who says morning ?","answers":[{"answer_text":"Tom Park","utterance_id":0,"is_speaker":true}]},
	  {"id":"s09_e02_c01_What","question":"What is blank ?","answers":[{"answer_text":"x","utterance_id":1}]}]}]}]}`
	recs, notes, err := convertFriendsQA([]byte(raw), map[string]bool{}, "src")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || !strings.Contains(notes[0], "2 scenes in 1 episodes") || !strings.Contains(notes[0], "1 whose answers name no utterance") {
		t.Fatalf("%d records, %v", len(recs), notes)
	}
	// scene c01 comes first; the blank utterance is no turn
	var texts []string
	for _, p := range recs[0].Passages {
		texts = append(texts, p.Text)
	}
	if got := strings.Join(texts, "\n"); got != "Tom Park: Morning .\nMona Lee: The kettle is broken again .\nTom Park, Mona Lee: We bought it on Tuesday ." {
		t.Fatalf("turns %q", got)
	}
	byID := map[string]dataset.Record{}
	for _, r := range recs {
		byID[r.ID] = r
		if r.Genre != "dialogue" || r.Task != "friendsqa" {
			t.Fatalf("%s: genre %q task %q", r.ID, r.Genre, r.Task)
		}
	}
	when := byID["s09_e02_c02_When"]
	if got := strings.Join(spanTexts(when), "|"); got != "Tom Park, Mona Lee: We bought it on Tuesday ." || strings.Join(when.Answers, "|") != "Tuesday|on Tuesday" {
		t.Fatalf("gold %q answers %q", got, when.Answers)
	}
	// a repeated id gets a suffix, not dropped
	if got := strings.Join(spanTexts(byID["s09_e02_c02_When#2"]), "|"); got != "Mona Lee: The kettle is broken again ." {
		t.Fatalf("repeated id: %q", got)
	}
	if got := strings.Join(spanTexts(byID["s09_e02_c01_Who"]), "|"); got != "Tom Park: Morning ." {
		t.Fatalf("speaker answer: %q", got)
	}
	if _, _, err := convertFriendsQA([]byte(`{"data":[{"title":"pilot","paragraphs":[]}]}`), nil, ""); err == nil {
		t.Fatal("accepted a scene title that names no episode")
	}
}

// QMSum: specific queries only; their turn ranges (inclusive, as strings)
// are the gold turns; markup is removed and a turn left empty dropped.
func TestConvertQMSum(t *testing.T) {
	meeting := `{"topic_list":[],"general_query_list":[{"query":"Summarise the meeting.","answer":"They met."}],
	"specific_query_list":[
	 {"query":"What did they decide on the budget?","answer":"To cut it.","relevant_text_span":[["1","2"]]},
	 {"query":"Out of range?","answer":"x","relevant_text_span":[["7","9"]]}],
	"meeting_transcripts":[
	 {"speaker":"Chair A","content":"Let us start . {vocalsound}"},
	 {"speaker":"Member B","content":"The budget {disfmarker} we cut it ."},
	 {"speaker":"Chair A","content":"{vocalsound}"},
	 {"speaker":"Member C","content":"Agreed ."}]}`
	raw, err := jsonRows([]byte(meeting+"\n"+strings.Replace(meeting, "Let us start", "Welcome", 1)+"\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	recs, notes, err := convertQMSum(raw, map[string]bool{}, "src")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || !strings.Contains(notes[0], "2 turn ranges outside the transcript dropped, 2 queries without a gold turn") {
		t.Fatalf("%d records, %v", len(recs), notes)
	}
	r := recs[0]
	if len(r.Passages) != 3 || r.Passages[0].Text != "Chair A: Let us start ." || r.Genre != "meeting" {
		t.Fatalf("%+v", r)
	}
	// turn 2 was only markup: the range 1–2 keeps turn 1
	if got := strings.Join(spanTexts(r), "|"); got != "Member B: The budget we cut it ." {
		t.Fatalf("gold %q", got)
	}
	if recs[0].ID == recs[1].ID || !strings.HasPrefix(r.ID, "qmsum-") {
		t.Fatalf("ids %q %q", recs[0].ID, recs[1].ID)
	}
}

// TAT-QA: the table in Markdown, a gold row a span of it (found by the
// derivation's numbers); a text answer's sentence in its paragraph.
func TestConvertTATQA(t *testing.T) {
	raw := `[{"table":{"uid":"tb1","table":[["","Year ended",""],["","2021","2020"],["Revenue","$ 1,200.5","$ 990"],["Costs","(300)","250"],["Staff","12","11"]]},
	"paragraphs":[{"uid":"a","order":1,"text":"Revenue grew in 2021. The board met twice."},{"uid":"b","order":2,"text":"Staff are paid monthly. Bonuses are paid in March."}],
	"questions":[
	 {"uid":"q1","question":"What is the change in revenue?","answer":210.5,"derivation":"1,200.5 - 990","answer_type":"arithmetic","answer_from":"table","rel_paragraphs":[]},
	 {"uid":"q2","question":"When are bonuses paid?","answer":["March"],"derivation":"","answer_type":"span","answer_from":"text","rel_paragraphs":["2"]},
	 {"uid":"q3","question":"What is unlocatable?","answer":["nothing"],"derivation":"","answer_type":"span","answer_from":"text","rel_paragraphs":["1"]}]}]`
	recs, notes, err := convertTATQA([]byte(raw), map[string]bool{}, "src")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || !strings.Contains(notes[0], "1 whose evidence could not be located") {
		t.Fatalf("%d records, %v", len(recs), notes)
	}
	table := recs[0].Passages[0].Text
	want := "|  | Year ended |  |\n|---|---|---|\n|  | 2021 | 2020 |\n| Revenue | $ 1,200.5 | $ 990 |\n| Costs | (300) | 250 |\n| Staff | 12 | 11 |"
	if table != want {
		t.Fatalf("table\n%s", table)
	}
	if got := spanTexts(recs[0]); len(got) != 1 || got[0] != "| Revenue | $ 1,200.5 | $ 990 |" {
		t.Fatalf("gold rows %q", got)
	}
	if got := strings.Join(spanTexts(recs[1]), "|"); got != "Bonuses are paid in March." || recs[1].Genre != "finance-table" {
		t.Fatalf("gold %q", got)
	}
	if got := strings.Join(numbers("$(1,200.50) and 12% of 3"), " "); got != "1200.5 12 3" {
		t.Fatalf("numbers %q", got)
	}
	if rowHasValue([]string{"", "2021", "2020"}) || !rowHasValue([]string{"Revenue", "1,200"}) {
		t.Fatal("header rows: years are labels, other numbers values")
	}
}

// PolicyQA is SQuAD's format: the answer's sentence, genre policy.
func TestConvertPolicyQA(t *testing.T) {
	raw := `{"version":"1","data":[{"title":"example.com","paragraphs":[
	{"context":"We collect your email. We never sell it.","qas":[{"id":"p1","question":"Do they sell data?","answers":[{"text":"never sell it","answer_start":26}]}]},
	{"context":"Cookies are used.","qas":[]}]}]}`
	recs, _, err := convertSQuAD([]byte(raw), map[string]bool{}, 2, "src", "policyqa", "policy")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Genre != "policy" || recs[0].Task != "policyqa" || len(recs[0].Passages) != 2 {
		t.Fatalf("%+v", recs)
	}
	if got := strings.Join(spanTexts(recs[0]), "|"); got != "We never sell it." {
		t.Fatalf("gold %q", got)
	}
}

// writeTurns writes rec with one passage a turn, the third gold, to
// dir/in.jsonl.gz and returns that path.
func writeTurns(t *testing.T, dir string, rec dataset.Record, turns []string) string {
	t.Helper()
	for i, turn := range turns {
		p := dataset.Passage{ID: string(rune('a' + i)), Text: turn}
		if i == 2 {
			p.Gold, p.GoldSpans = true, [][2]int{{0, len(turn)}}
		}
		rec.Passages = append(rec.Passages, p)
	}
	in := filepath.Join(dir, "in.jsonl.gz")
	if err := write(in, []dataset.Record{rec}); err != nil {
		t.Fatal(err)
	}
	return in
}

// regroup --order document keeps the passages' order and joins them with
// --sep; the default shuffles.
func TestRegroupDocumentOrder(t *testing.T) {
	dir := t.TempDir()
	in := writeTurns(t, dir, dataset.Record{ID: "q", Question: "Who?", Genre: "dialogue"},
		[]string{"A: one two three.", "B: four five six.", "A: seven eight nine.", "B: ten eleven twelve."})
	out := filepath.Join(dir, "out.jsonl.gz")
	var log bytes.Buffer
	if err := regroup([]string{"--tokens", "14", "--order", "document", "--sep", `\n`, "--in", in, "--out", out}, &log); err != nil {
		t.Fatal(err)
	}
	recs, err := dataset.LoadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	r := recs[0]
	if len(r.Passages) != 2 || r.Passages[0].Text != "A: one two three.\nB: four five six." || r.Passages[1].Text != "A: seven eight nine.\nB: ten eleven twelve." {
		t.Fatalf("chunks %+v", r.Passages)
	}
	if got := strings.Join(spanTexts(r), "|"); got != "A: seven eight nine." || r.Genre != "dialogue" {
		t.Fatalf("gold %q genre %q", got, r.Genre)
	}
	if err := regroup([]string{"--order", "sideways", "--in", in, "--out", out}, &log); err == nil {
		t.Fatal("accepted --order sideways")
	}
}

// chunk cuts each question's document with the index's chunker: windows
// that overlap and may start inside a turn; a gold turn is in every chunk
// that holds it whole, one id for its copies, and each chunk has the
// document's title.
func TestChunkAsAnIndex(t *testing.T) {
	dir := t.TempDir()
	turns := []string{"A: one two three four five six seven.", "B: eight nine ten eleven twelve thirteen.", "A: yes.", "B: fourteen fifteen sixteen seventeen eighteen.", "A: nineteen twenty twenty-one twenty-two."}
	in := writeTurns(t, dir, dataset.Record{ID: "q", Question: "Who?", Genre: "dialogue", Meta: json.RawMessage(`{"episode":"s01_e01"}`)}, turns)
	out := filepath.Join(dir, "out.jsonl.gz")
	var log bytes.Buffer
	if err := chunkDoc([]string{"--chunker", "tokens:size=12,overlap=6", "--sep", `\n`, "--title-meta", "episode", "--in", in, "--out", out}, &log); err != nil {
		t.Fatal(err)
	}
	recs, err := dataset.LoadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	r := recs[0]
	doc := strings.Join(turns, "\n")
	copies, midTurn := 0, false
	for _, p := range r.Passages {
		if !strings.Contains(doc, p.Text) || p.Title != "s01_e01" {
			t.Fatalf("chunk %q (title %q) is no window of the document", p.Text, p.Title)
		}
		midTurn = midTurn || !strings.HasPrefix(p.Text, "A:") && !strings.HasPrefix(p.Text, "B:")
		for j, g := range p.GoldSpans {
			if p.Text[g[0]:g[1]] != turns[2] || p.GoldIDs[j] != "c/0" {
				t.Fatalf("gold %q id %q", p.Text[g[0]:g[1]], p.GoldIDs[j])
			}
			copies++
		}
	}
	if copies < 2 || !midTurn || r.SpanCount() != 1 {
		t.Fatalf("%d copies of the gold turn (want 2 or more: the windows overlap), a chunk opening inside a turn %v, %d units; chunks %+v", copies, midTurn, r.SpanCount(), r.Passages)
	}
	if err := chunkDoc([]string{"--title-meta", "scene", "--in", in, "--out", out}, &log); err == nil {
		t.Fatal("accepted a --title-meta the records lack")
	}
	if err := chunkDoc([]string{"--chunker", "windows:size=0", "--in", in, "--out", out}, &log); err == nil {
		t.Fatal("accepted a bad --chunker")
	}
}

// report pools each genre of more than one file on its own.
func TestReportGenres(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, n int, recall float64) string {
		p := filepath.Join(dir, name)
		b, _ := json.Marshal(map[string]any{"results": []map[string]any{{"strategy": "evidence:budget=300", "evidence_questions": n, "evidence_recall": recall}}})
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var out bytes.Buffer
	args := []string{"dialogue=" + write("f.json", 10, 0.2), "dialogue=" + write("g.json", 30, 0.6), "policy=" + write("p.json", 20, 0.9)}
	if err := report(args, &out); err != nil {
		t.Fatal(err)
	}
	// dialogue: (10·0.2 + 30·0.6)/40 = 0.5; all: (2 + 18 + 18)/60 = 0.633
	if !strings.Contains(out.String(), "| **dialogue** | `evidence:budget=300` | 40 | 0.500 |") || !strings.Contains(out.String(), "| **pooled** | `evidence:budget=300` | 60 | 0.633 |") ||
		strings.Contains(out.String(), "**policy**") {
		t.Fatalf("%s", out.String())
	}
	if g, p := genreArg("/tmp/a=b.json"); g != "" || p != "/tmp/a=b.json" {
		t.Fatalf("a path with = read as a genre: %q %q", g, p)
	}
}

// The genre converters never panic on a malformed raw file, and whatever
// they convert loads back (every span inside its passage, gold set).
func FuzzGenreConverters(f *testing.F) {
	f.Add(`{"data":[{"title":"s01_e01_c01","paragraphs":[{"utterances:":[{"uid":0,"speakers":["A"],"utterance":"Hi ."}],"qas":[{"id":"q","question":"Who?","answers":[{"answer_text":"A","utterance_id":0}]}]}]}]}`)
	f.Add(`[{"specific_query_list":[{"query":"Q?","answer":"A","relevant_text_span":[["0","0"]]}],"meeting_transcripts":[{"speaker":"A","content":"Yes {vocalsound}"}]}]`)
	f.Add(`[{"table":{"uid":"t","table":[["","2020"],["Sales","1,000"],[]]},"paragraphs":[{"order":1,"text":"Sales were 1,000."}],"questions":[{"uid":"q","question":"Sales?","answer":"1,000","derivation":"","answer_type":"span","answer_from":"table-text","rel_paragraphs":["1","x"]}]}]`)
	f.Add(`{"data":[{"title":"p","paragraphs":[{"context":"We sell. We share.","qas":[{"id":"q","question":"Share?","answers":[{"text":"share","answer_start":12}]}]}]}]}`)
	f.Add(`{"data":{"dialogues":[{"edus":[{"text":"Hi café","speaker":"A"},{"text":"yo","speaker":"b"}],"context":"a: hi café b: yo","qas":[{"id":"q","question":"Who?","answers":[{"text":"yo","answer_start":14}],"is_impossible":false}]}]}}`)
	f.Fuzz(func(t *testing.T, raw string) {
		convs := []func() ([]dataset.Record, []string, error){
			func() ([]dataset.Record, []string, error) {
				return convertFriendsQA([]byte(raw), map[string]bool{}, "")
			},
			func() ([]dataset.Record, []string, error) { return convertQMSum([]byte(raw), map[string]bool{}, "") },
			func() ([]dataset.Record, []string, error) { return convertTATQA([]byte(raw), map[string]bool{}, "") },
			func() ([]dataset.Record, []string, error) {
				return convertSQuAD([]byte(raw), map[string]bool{}, 2, "", "policyqa", "policy")
			},
			func() ([]dataset.Record, []string, error) { return convertMolweni([]byte(raw), map[string]bool{}, "") },
		}
		for _, conv := range convs {
			recs, _, err := conv()
			if err != nil || len(recs) == 0 {
				continue
			}
			for _, r := range recs {
				for _, p := range r.Passages {
					for _, g := range p.GoldSpans {
						if g[0] < 0 || g[1] <= g[0] || g[1] > len(p.Text) || !p.Gold {
							t.Fatalf("%s: span %v of a %d-byte passage (gold %v)", r.ID, g, len(p.Text), p.Gold)
						}
					}
				}
			}
		}
	})
}

// Molweni: the dialogues become one chat log, a session a day and a turn
// a line with its synthetic time; a question's gold is the turn its answer
// offset (code points of the lowercased context) falls in, prefix and
// all; the halves go by dialogue, as eval --split reads them.
func TestConvertMolweni(t *testing.T) {
	type qa struct {
		q, ans  string
		at      int // -1: the answer's place in the context; else this offset
		nothing bool
	}
	type dlg struct {
		edus [][2]string // speaker, text
		qas  []qa
	}
	dialogues := []dlg{
		{[][2]string{{"Ana_", "my café wifi drops"}, {"bob-x", "try  sudo dhclient"}, {"Ana_", "that fixed it"}},
			[]qa{{"What does bob-x suggest ?", "sudo dhclient", -1, false}, {"Who suggests it ?", "bob-x", -1, false},
				{"What drops ?", "wifi", -1, false}, {"Why ?", "", 0, true}}},
		{[][2]string{{"Zed", "hello"}, {"Ann", "  spaced   out text "}, {"Zed", " "}},
			[]qa{{"How is the text ?", "out", -1, false}, {"Misplaced ?", "hello", 2, false}, {"Excluded ?", "hello", -1, false}}},
		{[][2]string{{"kim", "grub is broken"}}, []qa{{"What is broken ?", "grub", -1, false}}},
		{[][2]string{{"kim", "grub  is broken"}, {"lee", "use the live cd"}}, []qa{{"What to use ?", "the live cd", -1, false}}}, // a window of d2's conversation
	}
	var ds []map[string]any
	for di, d := range dialogues {
		var edus []map[string]string
		var pieces []string
		for _, e := range d.edus {
			edus = append(edus, map[string]string{"speaker": e[0], "text": e[1]})
			pieces = append(pieces, strings.ToLower(e[0]+": "+e[1]))
		}
		context := strings.Join(pieces, " ")
		var qas []map[string]any
		for qi, q := range d.qas {
			item := map[string]any{"id": fmt.Sprintf("q%d_%d", di, qi), "question": q.q, "is_impossible": q.nothing, "answers": []map[string]any{}}
			if !q.nothing {
				at := q.at
				if at < 0 { // Python's offset: code points
					at = utf8.RuneCountInString(context[:strings.Index(context, q.ans)])
				}
				item["answers"] = []map[string]any{{"text": q.ans, "answer_start": at}}
			}
			qas = append(qas, item)
		}
		ds = append(ds, map[string]any{"edus": edus, "context": context, "qas": qas})
	}
	raw, _ := json.Marshal(map[string]any{"data": map[string]any{"title": "test", "dialogues": ds}})
	recs, notes, err := convertMolweni(raw, map[string]bool{questionKey("Excluded ?"): true}, "src")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 6 || !strings.Contains(notes[0], "4 dialogues (sessions) in 3 conversations, 8 turns") ||
		!strings.Contains(notes[0], "1 unanswerable and 1 excluded left out, 1 whose answer could not be mapped") {
		t.Fatalf("%d records, %v", len(recs), notes)
	}
	var lines []string
	for _, p := range recs[0].Passages {
		lines = append(lines, p.Text)
	}
	want := "[2023-03-01 19:00] Ana_: my café wifi drops\n[2023-03-01 19:01] bob-x: try sudo dhclient\n[2023-03-01 19:02] Ana_: that fixed it\n\n" +
		"[2023-03-02 19:00] Zed: hello\n[2023-03-02 19:01] Ann: spaced out text\n\n" +
		"[2023-03-03 19:00] kim: grub is broken\n\n[2023-03-04 19:00] kim: grub is broken\n[2023-03-04 19:01] lee: use the live cd"
	if got := strings.Join(lines, "\n"); got != want {
		t.Fatalf("log\n%s", got)
	}
	gold := map[string]string{}
	for _, r := range recs {
		if r.Genre != "chat" || r.Task != "molweni" || len(r.Passages) != 8 {
			t.Fatalf("%s: genre %q task %q, %d turns", r.ID, r.Genre, r.Task, len(r.Passages))
		}
		gold[r.Question] = strings.Join(spanTexts(r), "|")
	}
	for q, turn := range map[string]string{
		"What does bob-x suggest ?": "[2023-03-01 19:01] bob-x: try sudo dhclient",
		"Who suggests it ?":         "[2023-03-01 19:01] bob-x: try sudo dhclient", // the answer is the speaker
		"What drops ?":              "[2023-03-01 19:00] Ana_: my café wifi drops", // after "é": code points, not bytes
		"How is the text ?":         "[2023-03-02 19:01] Ann: spaced out text",     // white space folded, the blank line after it not in the span
		"What is broken ?":          "[2023-03-03 19:00] kim: grub is broken",
	} {
		if gold[q] != turn {
			t.Errorf("%s: gold %q, want %q", q, gold[q], turn)
		}
	}
	// by conversation: one half each, the half eval --split reads
	half, conv := map[string]string{}, map[string]string{}
	for _, r := range recs {
		var m map[string]string
		if err := json.Unmarshal(r.Meta, &m); err != nil {
			t.Fatal(err)
		}
		if string(dataset.SplitOf(r.ID, 1)) != m["half"] || m["half"] == string(dataset.SplitTrain) {
			t.Fatalf("%s: SplitOf %s, half %q", r.ID, dataset.SplitOf(r.ID, 1), m["half"])
		}
		if h, ok := half[m["conversation"]]; ok && h != m["half"] {
			t.Fatalf("conversation %s in %s and %s", m["conversation"], h, m["half"])
		}
		half[m["conversation"]] = m["half"]
		conv[m["dialogue"]] = m["conversation"]
	}
	if conv["d002"] != conv["d003"] || conv["d000"] == conv["d002"] || len(half) != 3 {
		t.Fatalf("conversations %v", conv)
	}
	// 100 conversations of one dialogue each: 50 and 50, and a seeded order
	n := map[dataset.Split]int{}
	ident := make([]int, 100)
	for i := range ident {
		ident[i] = i
	}
	halves := molweniHalves(ident, 100)
	for _, h := range halves {
		n[h]++
	}
	if n[dataset.SplitValidation] != 50 || n[dataset.SplitTest] != 50 || slices.Equal(halves[:50], slices.Repeat([]dataset.Split{dataset.SplitValidation}, 50)) {
		t.Fatalf("halves %v", n)
	}
	if _, _, err := convertMolweni([]byte(`{"data":[]}`), nil, ""); err == nil {
		t.Fatal("accepted a file without dialogues")
	}
}
