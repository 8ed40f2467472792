package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/ldar"
)

// tinyData writes n labelled questions: each has a gold passage sharing its
// question's words and a distractor.
func tinyData(t *testing.T, n int) string {
	t.Helper()
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, `{"id":"q%d","question":"where was person%d born","answers":["x"],"passages":[{"id":"g","text":"person%d was born in town%d","gold":true},{"id":"d","text":"filler text number %d about weather","gold":false}]}`+"\n", i, i, i, i, i)
	}
	path := filepath.Join(t.TempDir(), "tiny.jsonl")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestTrainBandAndUseIt(t *testing.T) {
	data := tinyData(t, 30)
	dir := t.TempDir()
	out := filepath.Join(dir, "p.safetensors")
	curves := filepath.Join(dir, "learning.svg")
	code, stdout, stderr := runCLI(t, "", "train", "band", "--scorer", "bm25", "--data", data, "--out", out, "--pool", "12", "--aug", "1",
		"--epochs", "2", "--batch", "8", "--samples", "4", "--cache", "", "--plot-curves", curves, "--dim", "8", "--window", "8")
	if code != 0 {
		t.Fatalf("train: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "test split") || !strings.Contains(stdout, " band ") {
		t.Errorf("train output lacks the test report:\n%s", stdout)
	}
	p, err := ldar.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if p.Meta["scorer"] != "bm25" || p.Config().Dim != 8 {
		t.Errorf("policy meta %v config %+v", p.Meta, p.Config())
	}
	if _, err := os.Stat(out + ".ckpt"); err != nil {
		t.Errorf("no checkpoint: %v", err)
	}
	if b, err := os.ReadFile(curves); err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("learning curve: %v", err)
	}
	// resume from the finished checkpoint: nothing left to do, same policy
	if code, _, stderr := runCLI(t, "", "train", "band", "--scorer", "bm25", "--data", data, "--out", out, "--pool", "12", "--aug", "1",
		"--epochs", "2", "--batch", "8", "--samples", "4", "--cache", "", "--dim", "8", "--window", "8", "--resume"); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}

	// The trained policy through the environment, in eval and select.
	t.Setenv(envBandPolicy, out)
	code, stdout, stderr = runCLI(t, "", "eval", "--scorer", "bm25", "--data", data, "--pool", "12", "--strategies", "band,topk:k=1")
	if code != 0 || !strings.Contains(stdout, "band") {
		t.Fatalf("eval band: exit %d\n%s\n%s", code, stdout, stderr)
	}
	in := `{"id":"a","score":0.9,"tokens":50}
{"id":"b","score":0.2,"tokens":70}
{"id":"c","score":0.1,"tokens":70}
`
	code, stdout, stderr = runCLI(t, in, "select", "--strategy", "band")
	if code != 0 || !strings.Contains(stdout, `"kind": "band"`) {
		t.Fatalf("select band: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

func TestTrainUsage(t *testing.T) {
	for _, args := range [][]string{
		{"train"},
		{"train", "picker"},
		{"train", "band"},
		{"train", "band", "--data", "x.jsonl"},
		{"train", "band", "--data", "x", "--out", "y", "--reward", "nope"},
		{"train", "band", "--data", "x", "--out", "y", "--split", "1"},
	} {
		if code, _, _ := runCLI(t, "", args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

func TestDefaultBandStrategy(t *testing.T) {
	t.Setenv(envBandPolicy, "")
	code, stdout, stderr := runCLI(t, "", "eval", "--scorer", "bm25", "--limit", "20", "--pool", "100", "--strategies", "band,topk:k=3")
	if code != 0 || !strings.Contains(stdout, "band") {
		t.Fatalf("eval with the embedded policy: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
