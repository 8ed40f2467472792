package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/llm/llmtest"
)

func TestMineCommand(t *testing.T) {
	t.Setenv("CTXSEL_LLM_CACHE", "off")
	dir := t.TempDir()
	data := filepath.Join(dir, "d.jsonl")
	recs := `{"id":"1","question":"Where was Ada born?","answers":["London"],"passages":[{"id":"a","text":"Ada was born in London.","gold":true},{"id":"b","text":"Ada liked maths."},{"id":"c","text":"Paris is in France."}]}
{"id":"2","question":"Who wrote Emma?","answers":["Austen"],"passages":[{"id":"a","text":"Emma is a novel."},{"id":"b","text":"Emma was written by Jane Austen.","gold":true}]}
`
	if err := os.WriteFile(data, []byte(recs), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(llmtest.Reader([]llmtest.Question{
		{Question: "Where was Ada born?", Gold: []string{"Ada was born in London."}, Answer: "London"},
		{Question: "Who wrote Emma?", Gold: []string{"Emma was written by Jane Austen."}, Answer: "Jane Austen"},
	}, llmtest.ReaderOptions{}))
	defer srv.Close()
	code, out, errs := runCLI(t, "", "mine", "--data", data, "--dry-run", "--k", "3")
	if code != 0 || !strings.Contains(out, "2 questions, k=3: generator calls 7–9") {
		t.Fatalf("dry run %d: %s %s", code, out, errs)
	}
	if srv.Requests() != 0 {
		t.Fatal("dry run called the LLM")
	}
	mined := filepath.Join(dir, "mined.jsonl")
	code, out, errs = runCLI(t, "", "mine", "--data", data, "--generator", srv.OpenAISpec("g"), "--judge", "subem", "--k", "3", "--out", mined)
	if code != 0 || !strings.Contains(out, "2 mined") {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	got, err := dataset.LoadFile(mined)
	if err != nil || len(got) != 2 {
		t.Fatalf("%v %d", err, len(got))
	}
	for i, r := range got {
		orig, _ := dataset.Load(strings.NewReader(strings.Split(recs, "\n")[i]))
		for j, p := range r.Passages {
			if p.Gold != orig[0].Passages[j].Gold {
				t.Fatalf("record %s passage %s: mined gold %v, original %v", r.ID, p.ID, p.Gold, orig[0].Passages[j].Gold)
			}
		}
	}
	// A second run resumes everything from the checkpoint.
	n := srv.Requests()
	if code, out, _ := runCLI(t, "", "mine", "--data", data, "--generator", srv.OpenAISpec("g"), "--k", "3", "--out", mined); code != 0 || !strings.Contains(out, "2 resumed") || srv.Requests() != n {
		t.Fatalf("resume: %d %s, %d calls", code, out, srv.Requests()-n)
	}
	// A checkpoint overwritten with garbage is moved aside with one note,
	// not silently emptied, and its records are mined again.
	os.WriteFile(mined+".ckpt", []byte(strings.Repeat("garbage ", 64)), 0o644)
	code, out, errs = runCLI(t, "", "mine", "--data", data, "--generator", srv.OpenAISpec("g"), "--k", "3", "--out", mined)
	if code != 0 || !strings.Contains(out, "2 mined") || strings.Count(errs, "note: checkpoint:") != 1 {
		t.Fatalf("garbage checkpoint: %d %s %s", code, out, errs)
	}
	if q, _ := filepath.Glob(mined + ".ckpt.corrupt-*"); len(q) != 1 {
		t.Fatalf("no quarantine copy: %v", q)
	}
	if code, _, errs := runCLI(t, "", "mine", "--data", data); code != 2 || !strings.Contains(errs, "--generator") {
		t.Fatalf("usage: %d %s", code, errs)
	}
}

func TestExportCommand(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "m.jsonl")
	var b strings.Builder
	for i := range 30 {
		b.WriteString(`{"id":"q` + strings.Repeat("x", i) + `","question":"where?","answers":["a"],"passages":[{"id":"p1","text":"one two","gold":true},{"id":"p2","text":"three"}]}` + "\n")
	}
	if err := os.WriteFile(data, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"verl", "trl"} {
		out := filepath.Join(dir, format)
		code, stdout, errs := runCLI(t, "", "export", "grpo", "--data", data, "--format", format, "--stage", "2", "--out", out, "--val-percent", "20")
		if code != 0 || !strings.Contains(stdout, "30 rows") {
			t.Fatalf("%s: %d %s %s", format, code, stdout, errs)
		}
		ext := map[string]string{"verl": ".parquet", "trl": ".jsonl"}[format]
		for _, part := range []string{"train", "val"} {
			if st, err := os.Stat(filepath.Join(out, part+ext)); err != nil || st.Size() == 0 {
				t.Fatalf("%s %s: %v", format, part, err)
			}
		}
	}
	if code, _, _ := runCLI(t, "", "export", "grpo", "--data", data, "--format", "csv", "--out", dir); code != 2 {
		t.Fatalf("csv accepted: %d", code)
	}
}
