package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/embed/embedders"
)

func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestSelect(t *testing.T) {
	in := `{"id":"a","score":0.2,"tokens":5}
{"id":"b","score":0.9,"text":"hello world"}
{"id":7,"score":0.85,"tokens":3}
{"id":"d","score":0.1,"tokens":1}
`
	code, out, errs := runCLI(t, in, "select", "--strategy", "adaptivek", "--param", "buffer=0", "--order", "document")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var sel struct {
		IDs         []string `json:"ids"`
		K           int      `json:"k"`
		Tokens      int      `json:"tokens"`
		Explanation struct {
			Decision struct {
				Kind string `json:"kind"`
				Rank int    `json:"rank"`
			} `json:"decision"`
			Params map[string]float64 `json:"params"`
		} `json:"explanation"`
	}
	if err := json.Unmarshal([]byte(out), &sel); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	// sorted: b .9, 7 .85, a .2, d .1 → largest gap after rank 1; "hello world" is 2 tokens.
	if strings.Join(sel.IDs, ",") != "b,7" || sel.K != 2 || sel.Tokens != 5 || sel.Explanation.Decision.Kind != "gap" ||
		sel.Explanation.Decision.Rank != 1 || sel.Explanation.Params["buffer"] != 0 {
		t.Fatalf("selection %+v", sel)
	}
}

func TestExitCodes(t *testing.T) {
	cases := []struct {
		stdin string
		args  []string
		code  int
		msg   string
	}{
		{"", nil, 2, "Usage"},
		{"", []string{"frobnicate"}, 2, "unknown command"},
		{"", []string{"select", "--nosuch"}, 2, "flag provided but not defined"},
		{`{"id":"a","score":1}`, []string{"select", "--strategy", "nosuch"}, 2, "unknown strategy"},
		{`{"id":"a","score":1}`, []string{"select", "--strategy", "topk", "--param", "k=0"}, 2, "out of range"},
		{`{"id":"a","score":1}{"id":"a","score":2}`, []string{"select"}, 2, "duplicate id"},
		{``, []string{"select"}, 2, "no candidates"},
		{`{"id":"a"}`, []string{"select"}, 2, "candidate 1: score: missing"},
		{`{"id":"a","score":"x"}`, []string{"select"}, 2, "candidate 1"},
		{`{"id":"a","score":1,"tokens":-3}`, []string{"select"}, 2, "candidate 1: tokens: must be a whole number"},
		// One numbering, from 1, whatever is wrong with the third candidate.
		{"{\"id\":\"a\",\"score\":1}\n{\"id\":\"b\",\"score\":1}\n{\"id\":\"c\",", []string{"select"}, 2, "candidate 3:"},
		{"{\"id\":\"a\",\"score\":1}\n{\"id\":\"b\",\"score\":1}\n{\"id\":\"\",\"score\":1}", []string{"select"}, 2, "candidate 3: id: empty id"},
		{"{\"id\":\"a\",\"score\":1}\n{\"id\":\"b\",\"score\":1}\n{\"id\":\"a\",\"score\":1}", []string{"select"}, 2, `candidate 3: id: duplicate id "a" (also candidate 1)`},
		// Fields are matched as the server matches them: exactly.
		{`{"id":"a","Score":1}`, []string{"select"}, 2, `candidate 1: Score: unknown field: did you mean "score"?`},
		{`{"id":"a","score":1,"tokns":5}`, []string{"select"}, 2, `candidate 1: tokns: unknown field: did you mean "tokens"?`},
		{`{"id":"a","score":1,"gold":true,"title":"x"}`, []string{"select"}, 0, ""},
		{`{"id":"a","score":1,"score":2}`, []string{"select"}, 2, "candidate 1: score: given twice"},
		{`{"id":"a","score":1,"vector":[1,0]}`, []string{"select"}, 2, "candidate 1: vector: vectors need a query vector"},
		{"{\"id\":\"a\xff\",\"score\":1}", []string{"select"}, 2, "candidate 1: id: not valid UTF-8"},
		// Flags are checked before the input, even when nothing needs them.
		{`{"id":"a","score":1,"tokens":3}`, []string{"select", "--encoding", "nosuch"}, 2, "--encoding \"nosuch\": unknown"},
		{`{"id":"a","score":1}`, []string{"select", "--order", "sideways"}, 2, "order"},
		{"", []string{"eval", "--data", "/nonexistent/file.jsonl"}, 1, "no such file"},
		{"", []string{"eval", "--strategies", "topk:k=-1"}, 2, "out of range"},
		{"", []string{"eval", "--scorer", "nosuch"}, 2, "unknown scorer"},
		{"", []string{"eval", "--pool", "-1"}, 2, "negative"},
		{"", []string{"eval", "--scorer", "hybrid:alpha=2"}, 2, "alpha"},
		{"", []string{"eval", "--scorer", "hybrid:fusion=max"}, 2, "fusion=max: want zscore"}, // the parameter schema's ParamError
		{"", []string{"eval", "--baselines", "some"}, 2, "--baselines"},
		{"", []string{"help"}, 0, ""},
		{"", []string{"select", "-h"}, 0, ""},
	}
	for _, tc := range cases {
		code, _, errs := runCLI(t, tc.stdin, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.msg) {
			t.Errorf("%v: exit %d (want %d), stderr %q (want it to contain %q)", tc.args, code, tc.code, errs, tc.msg)
		}
	}
}

// TestEvalHybridDefault measures the shipped default strategy by its name
// on the hybrid scorer, with the single scorers as baselines.
func TestEvalHybridDefault(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(embedders.EnvCache, filepath.Join(dir, "cache"))
	js := filepath.Join(dir, "r.json")
	code, out, errs := runCLI(t, "", "eval", "--limit", "10", "--pool", "100", "--scorer", "hybrid:alpha=0.4,fusion=rrf", "--strategies", "topk:k=3,default", "--json", js)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "hybrid(use-lite+bm25):alpha=0.4,fusion=rrf") || !strings.Contains(out, "vs best single") {
		t.Fatalf("table:\n%s", out)
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Results []struct {
			Strategy string  `json:"strategy"`
			MeanK    float64 `json:"mean_k"`
		} `json:"results"`
		Baselines []struct {
			Scorer string `json:"scorer"`
		} `json:"baselines"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2 || rep.Results[1].Strategy != "default" || rep.Results[1].MeanK <= 0 {
		t.Fatalf("results %+v", rep.Results)
	}
	if len(rep.Baselines) != 2 || rep.Baselines[0].Scorer != "use-lite" || rep.Baselines[1].Scorer != "bm25" {
		t.Fatalf("baselines %+v", rep.Baselines)
	}
}

func TestEvalBundledSample(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(embedders.EnvCache, filepath.Join(dir, "cache"))
	js, svg := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.svg")
	code, out, errs := runCLI(t, "", "eval", "--limit", "20", "--pool", "200", "--strategies", "topk:k=5,adaptivek,knee", "--json", js, "--plot", svg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "20 questions") || !strings.Contains(out, "adaptivek") {
		t.Fatalf("table:\n%s", out)
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Scorer    string `json:"scorer"`
		Questions int    `json:"questions"`
		Results   []struct {
			Strategy string  `json:"strategy"`
			Recall   float64 `json:"recall"`
			N        int     `json:"n"`
		} `json:"results"`
		Frontier []struct{} `json:"frontier"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Scorer != "hybrid(use-lite+bm25):alpha=0.5,fusion=zscore" || rep.Questions != 20 || len(rep.Results) != 3 || rep.Results[0].N != 20 || len(rep.Frontier) != 200 {
		t.Fatalf("report %+v", rep)
	}
	for _, r := range rep.Results {
		if r.Recall <= 0 || r.Recall > 1 {
			t.Errorf("%s: recall %v", r.Strategy, r.Recall)
		}
	}
	if p, err := os.ReadFile(svg); err != nil || !bytes.HasPrefix(p, []byte("<svg")) {
		t.Fatalf("plot: %v", err)
	}
}

func TestStrategiesCommand(t *testing.T) {
	code, out, _ := runCLI(t, "", "strategies")
	for _, name := range []string{"adaptivek", "knee", "topk", "budget", "threshold", "topp", "full", "max_tokens"} {
		if !strings.Contains(out, name) {
			t.Errorf("strategies output lacks %s", name)
		}
	}
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// --pool past what the set holds is capped, and the header says so.
func TestEvalPoolCapped(t *testing.T) {
	code, out, errs := runCLI(t, "", "eval", "--limit", "2", "--pool", "3000000000", "--scorer", "bm25", "--strategies", "topk:k=1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "(asked 3000000000: the set holds no more)") {
		t.Fatalf("header does not say the pool was capped:\n%s", out)
	}
}
