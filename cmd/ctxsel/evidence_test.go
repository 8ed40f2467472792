package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/embed/embedders"
	"github.com/ctxsel/ctxsel/evidence"
	"github.com/ctxsel/ctxsel/llm/llmtest"
	"github.com/ctxsel/ctxsel/token"
)

// eval resolves evidence specs like any other (no special case): alone,
// composed after a strategy, with --evidence-model, and names a bad one.
func TestEvalEvidenceSpecs(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(embedders.EnvCache, filepath.Join(dir, "cache"))
	js := filepath.Join(dir, "r.json")
	code, _, errs := runCLI(t, "", "eval", "--data", "../../../shared/data/hotpotqa_sf_dev53.jsonl", "--limit", "6", "--pool", "60", "--scorer", "bm25",
		"--baselines", "none", "--strategies", "topk:k=3,evidence:budget=200,topk:k=10+evidence:budget=200", "--json", js)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Results []struct {
			Strategy       string  `json:"strategy"`
			EvidenceRecall float64 `json:"evidence_recall"`
			EvidenceTokens float64 `json:"evidence_tokens"`
		} `json:"results"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, r := range rep.Results {
		got[r.Strategy] = r.EvidenceTokens
		if r.EvidenceRecall <= 0 {
			t.Errorf("%s: evidence recall %v", r.Strategy, r.EvidenceRecall)
		}
	}
	for _, name := range []string{"topk:k=3", "evidence:budget=200", "topk:k=10+evidence:budget=200"} {
		tok, ok := got[name]
		if !ok {
			t.Fatalf("no row %q in %v", name, got)
		}
		if strings.Contains(name, "evidence") && (tok <= 0 || tok > 200) {
			t.Errorf("%s: %v tokens sent for a budget of 200", name, tok)
		}
	}
	for _, bad := range []string{"evidence:budget=0", "evidence:budget=10,colour=red", "topk:k=3+evidence"} {
		code, _, errs := runCLI(t, "", "eval", "--limit", "1", "--strategies", bad)
		if code != 2 || !strings.Contains(errs, "evidence") {
			t.Errorf("%s: exit %d: %s", bad, code, errs)
		}
	}
	code, _, errs = runCLI(t, "", "eval", "--limit", "1", "--strategies", "evidence:budget=100", "--evidence-model", filepath.Join(dir, "none.json"))
	if code != 2 || !strings.Contains(errs, "--evidence-model") {
		t.Errorf("missing model file: exit %d: %s", code, errs)
	}
}

// select --question with texts and an evidence spec prints, per selected
// passage, the kept sentences as byte spans of its text, the pruned text,
// its tokens before and after, and why.
func TestSelectEvidence(t *testing.T) {
	t.Setenv(embedders.EnvCache, filepath.Join(t.TempDir(), "cache"))
	texts := map[string]string{
		"a": "Ebenezer Scrooge\nScrooge was a miser in London. His clerk was Bob Cratchit, who worked in a cold office. The weather that winter was bad.",
		"b": "Jacob Marley was dead. Marley had been Scrooge's partner for many years. Nobody mourned him.",
		"c": "Paris is the capital of France. It lies on the Seine.",
	}
	var in strings.Builder
	for i, id := range []string{"a", "b", "c"} {
		b, _ := json.Marshal(map[string]any{"id": id, "score": 1 - 0.3*float64(i), "text": texts[id]})
		in.Write(b)
		in.WriteByte('\n')
	}
	code, out, errs := runCLI(t, in.String(), "select", "--strategy", "evidence:budget=40", "--question", "Who was Scrooge's clerk?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var sel struct {
		IDs      []string `json:"ids"`
		Tokens   int      `json:"tokens"`
		Evidence []struct {
			Spans         [][2]int `json:"spans"`
			Text          string   `json:"text"`
			Tokens        int      `json:"tokens"`
			PassageTokens int      `json:"passage_tokens"`
			Why           string   `json:"why"`
		} `json:"evidence"`
	}
	if err := json.Unmarshal([]byte(out), &sel); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(sel.IDs) == 0 || len(sel.Evidence) != len(sel.IDs) || sel.Tokens > 40 {
		t.Fatalf("selection: %s", out)
	}
	sum := 0
	for i, ev := range sel.Evidence {
		text := texts[sel.IDs[i]]
		for _, sp := range ev.Spans {
			if sp[0] < 0 || sp[1] > len(text) || !strings.Contains(ev.Text, text[sp[0]:sp[1]]) {
				t.Fatalf("span %v of %q is not in the sent text %q", sp, sel.IDs[i], ev.Text)
			}
		}
		if ev.Tokens <= 0 || ev.Tokens > ev.PassageTokens || !strings.HasPrefix(ev.Why, "kept ") {
			t.Fatalf("passage %s: %+v", sel.IDs[i], ev)
		}
		sum += ev.Tokens
	}
	if sum != sel.Tokens {
		t.Fatalf("tokens %d, the passages' sum %d", sel.Tokens, sum)
	}
	// Without --question, or with a candidate without text, it says why.
	if code, _, errs := runCLI(t, in.String(), "select", "--strategy", "evidence:budget=40"); code != 2 || !strings.Contains(errs, "--question") {
		t.Fatalf("no question: %d %s", code, errs)
	}
	if code, _, errs := runCLI(t, `{"id":"x","score":1,"tokens":5}`, "select", "--strategy", "default", "--question", "q"); code != 2 || !strings.Contains(errs, "text") {
		t.Fatalf("no text: %d %s", code, errs)
	}
}

// select reads a candidate's "above" (the lines of its document above it)
// as /v1/select does: a space-aligned table's header goes out over the rows
// kept of a chunk cut below it, columns kept.
func TestSelectEvidenceAbove(t *testing.T) {
	t.Setenv(embedders.EnvCache, filepath.Join(t.TempDir(), "cache"))
	header := "                              March 31,   December 31,\n                                   2024           2023"
	chunk := "Accounts payable               $ 6,904        $ 5,117\nRevolving credit facility        3,500              -\nAccrued warranty costs           1,487          1,402\n"
	var in strings.Builder
	for _, c := range []map[string]any{
		{"id": "debt", "score": 0.9, "text": chunk, "above": "CONDENSED BALANCE SHEETS\n" + header},
		{"id": "other", "score": 0.2, "text": "Paris is the capital of France. It lies on the Seine."},
	} {
		b, _ := json.Marshal(c)
		in.Write(b)
		in.WriteByte('\n')
	}
	code, out, errs := runCLI(t, in.String(), "select", "--strategy", "evidence:budget=80", "--question", "How much was owed on the revolving credit facility at March 31, 2024?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var sel struct {
		IDs      []string `json:"ids"`
		Evidence []struct {
			Above string `json:"above"`
			Text  string `json:"text"`
		} `json:"evidence"`
	}
	if err := json.Unmarshal([]byte(out), &sel); err != nil || len(sel.IDs) == 0 || sel.IDs[0] != "debt" {
		t.Fatalf("%v: %s", err, out)
	}
	ev := sel.Evidence[0]
	if want := "CONDENSED BALANCE SHEETS\n" + header; ev.Above != want || !strings.HasPrefix(ev.Text, want+"\n") || !strings.Contains(ev.Text, "Revolving credit facility        3,500") {
		t.Fatalf("above %q, text %q: want the rows under the header, its layout kept", ev.Above, ev.Text)
	}
}

// ctxsel ask against an Ollama server whose model takes 4,096 tokens: the
// window is learned, no prompt sent is larger, and the output says what
// the window dropped; against an OpenAI-compatible server answering
// "context length exceeded" the error names the window and #window=N.
func TestAskFitsTheReadersWindow(t *testing.T) {
	useHashEmbedder(t)
	t.Setenv("CTXSEL_LLM_CACHE", "off")
	root := t.TempDir()
	book, err := os.ReadFile("../../../shared/data/lara/datasets/32k/book/A Christmas Carol.txt")
	if err != nil {
		t.Fatalf("test data: %v", err)
	}
	docs := filepath.Join(root, "docs")
	os.MkdirAll(docs, 0o755)
	os.WriteFile(filepath.Join(docs, "A Christmas Carol.txt"), book, 0o644)
	idx := filepath.Join(root, "idx")
	if code, _, errs := runCLI(t, "", "index", "add", "--index", idx, docs); code != 0 {
		t.Fatalf("add: %s", errs)
	}
	srv := llmtest.New(nil)
	defer srv.Close()
	srv.SetContextLength(4096)
	code, out, errs := runCLI(t, "", "ask", "--index", idx, "--reader", srv.OllamaSpec("llama3.2"), "--strategy", "topk:k=20", "--prompt=false", "What did Gordon say about Christmas?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"Window: 4096 tokens (server) − 512 for the answer", "did not fit and were dropped", "--- answer ("} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	tk, _ := token.New("")
	for _, c := range srv.Calls() {
		if n := tk.Count(c.Prompt()); n+512 > 4096 || c.NumCtx != 4096 {
			t.Fatalf("sent %d prompt tokens with num_ctx %d to a 4096-token model", n, c.NumCtx)
		}
	}
	// The default prunes, each chunk under its document's title.
	code, out, errs = runCLI(t, "", "ask", "--index", idx, "--reader", srv.OllamaSpec("llama3.2"), "--prompt=false", "What did Gordon say about Christmas?")
	if code != 0 || !strings.Contains(out, "evidence:budget=1500") || !strings.Contains(out, "    | A Christmas Carol\n") || !strings.Contains(out, "tokens sent") {
		t.Fatalf("default: exit %d %s\n%s", code, errs, out)
	}

	oa := llmtest.New(nil)
	defer oa.Close()
	oa.Script(llmtest.Fault{Status: http.StatusBadRequest, Code: "context_length_exceeded",
		Message: "This model's maximum context length is 2048 tokens. However, your messages resulted in 9000 tokens."})
	code, _, errs = runCLI(t, "", "ask", "--index", idx, "--reader", oa.OpenAISpec("small"), "--strategy", "topk:k=20", "--prompt=false", "Who is Gordon's clerk?")
	if code == 0 || !strings.Contains(errs, "the server says the model takes 2048") || !strings.Contains(errs, "#window=N") || !strings.Contains(errs, "32000 tokens") {
		t.Fatalf("context length exceeded: exit %d: %s", code, errs)
	}
}

// train evidence fits on train questions, chooses on validation ones, and
// writes a version 3 model that eval reads with --evidence-model.
func TestTrainEvidence(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(embedders.EnvCache, filepath.Join(dir, "cache"))
	model, report := filepath.Join(dir, "m.json"), filepath.Join(dir, "r.json")
	data := "../../../shared/data/hotpotqa_sf_dev53.jsonl"
	code, out, errs := runCLI(t, "", "train", "evidence", "--data", data, "--limit", "24", "--pool", "40", "--scorer", "bm25",
		"--learner", "logistic,trees", "--trees", "6", "--tree-counts", "3,6", "--hops", "0,2", "--cost-exponents", "1",
		"--floors", "0,0.01", "--budgets", "150", "--out", model, "--report", report)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "gain@150") || !strings.Contains(out, "chose ") || !strings.Contains(errs, "validated") {
		t.Fatalf("output: %s\n%s", out, errs)
	}
	b, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	m, err := evidence.ParseModel(b)
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != evidence.ModelVersion || m.Provenance["split"] == "" || !strings.Contains(m.Provenance["command"], "train evidence") {
		t.Fatalf("model %+v", m)
	}
	var rep struct {
		Settings []struct {
			Learner string          `json:"learner"`
			Gain    map[int]float64 `json:"gain"`
		} `json:"settings"`
	}
	rb, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(rb, &rep); err != nil || len(rep.Settings) < 4 {
		t.Fatalf("report: %v, %d settings", err, len(rep.Settings))
	}
	code, _, errs = runCLI(t, "", "eval", "--data", data, "--limit", "6", "--pool", "40", "--scorer", "bm25", "--baselines", "none",
		"--strategies", "evidence:budget=150,evidence:budget=150,hop=0", "--evidence-model", model)
	if code != 0 {
		t.Fatalf("eval with the trained model: exit %d: %s", code, errs)
	}
	// --from keeps the model's learner and chooses only its floor and stop again
	repacked := filepath.Join(dir, "m2.json")
	code, _, errs = runCLI(t, "", "train", "evidence", "--data", data, "--limit", "24", "--pool", "40", "--scorer", "bm25",
		"--from", model, "--floors", "0,0.01", "--stops", "0,0.5", "--budgets", "150", "--out", repacked)
	if code != 0 {
		t.Fatalf("--from: exit %d: %s", code, errs)
	}
	b2, err := os.ReadFile(repacked)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := evidence.ParseModel(b2)
	if err != nil {
		t.Fatal(err)
	}
	if m2.Learner != m.Learner || !reflect.DeepEqual(m2.Forest, m.Forest) || !reflect.DeepEqual(m2.Weights, m.Weights) ||
		m2.Provenance["command"] != m.Provenance["command"] || !strings.Contains(m2.Provenance["packing"], "chosen again on validation") ||
		(m2.Stop != 0 && m2.Stop != 0.5) || (m2.Floor != 0 && m2.Floor != 0.01) {
		t.Fatalf("--from changed the learner or lost its provenance: %+v", m2)
	}
	// --calibrate fits a map on validation and writes a version 3 model
	// that eval reads, with its report and reliability plot
	calibrated, calReport, plot := filepath.Join(dir, "mc.json"), filepath.Join(dir, "rc.json"), filepath.Join(dir, "rc.svg")
	code, out, errs = runCLI(t, "", "train", "evidence", "--data", data, "--limit", "24", "--pool", "40", "--scorer", "bm25",
		"--from", model, "--calibrate", "auto", "--calibrate-kinds", "--calibration-bins", "5", "--out", calibrated, "--report", calReport, "--calibration-plot", plot)
	if code != 0 || !strings.Contains(out, "hotpotqa_sf_dev53.jsonl") || !strings.Contains(out, "chose ") {
		t.Fatalf("--calibrate: exit %d: %s\n%s", code, out, errs)
	}
	bc, err := os.ReadFile(calibrated)
	if err != nil {
		t.Fatal(err)
	}
	mc, err := evidence.ParseModel(bc)
	if err != nil {
		t.Fatal(err)
	}
	if mc.Version != m.Version || mc.Calibration == nil || !reflect.DeepEqual(mc.Forest, m.Forest) || mc.Floor != m.Floor || mc.Stop != m.Stop {
		t.Fatalf("--calibrate: model %+v", mc)
	}
	var calRep struct {
		Files []struct {
			Sentences int     `json:"sentences"`
			ECE       float64 `json:"ece"`
		} `json:"files"`
	}
	if rb, err := os.ReadFile(calReport); err != nil || json.Unmarshal(rb, &calRep) != nil || len(calRep.Files) != 1 || calRep.Files[0].Sentences == 0 {
		t.Fatalf("--calibrate report: %v %+v", err, calRep)
	}
	if sb, err := os.ReadFile(plot); err != nil || !strings.HasPrefix(string(sb), "<svg") || !strings.Contains(string(sb), "hotpotqa_sf_dev53") {
		t.Fatalf("reliability plot: %v %.200s", err, sb)
	}
	code, _, errs = runCLI(t, "", "eval", "--data", data, "--limit", "6", "--pool", "40", "--scorer", "bm25", "--baselines", "none",
		"--strategies", "evidence:budget=150", "--evidence-model", calibrated)
	if code != 0 {
		t.Fatalf("eval with the calibrated model: exit %d: %s", code, errs)
	}
	// cross-validation folds
	code, _, errs = runCLI(t, "", "train", "evidence", "--data", data, "--limit", "24", "--pool", "40", "--scorer", "bm25",
		"--learner", "logistic", "--hops", "0", "--cost-exponents", "1", "--floors", "0", "--stops", "0", "--budgets", "150",
		"--folds", "3", "--fold", "2", "--out", filepath.Join(dir, "m3.json"))
	if code != 0 {
		t.Fatalf("--folds: exit %d: %s", code, errs)
	}
	// --pools: every file read at each pool size, a set of its own
	pooled := filepath.Join(dir, "mp.json")
	code, _, errs = runCLI(t, "", "train", "evidence", "--data", data, "--limit", "24", "--pools", "40,0", "--scorer", "bm25",
		"--learner", "logistic", "--hops", "0", "--cost-exponents", "1", "--floors", "0", "--stops", "0", "--budgets", "150", "--out", pooled)
	if code != 0 || !strings.Contains(errs, "hotpotqa_sf_dev53.jsonl@40: ") || !strings.Contains(errs, "hotpotqa_sf_dev53.jsonl@0: ") {
		t.Fatalf("--pools: exit %d: %s", code, errs)
	}
	if mp, err := readEvidenceModel("test", pooled); err != nil || !strings.Contains(mp.Provenance["pool"], "[40 0]") {
		t.Fatalf("--pools: %v %v", err, mp)
	}
	for _, bad := range [][]string{{"--data", data}, {"--data", data, "--out", model, "--learner", "forest"}, {"--data", data, "--out", model, "--pools", "40,-1"}, {"--data", data, "--out", model, "--tree-counts", "900"},
		{"--data", data, "--out", model, "--folds", "1"}, {"--data", data, "--out", model, "--folds", "3", "--fold", "3"},
		{"--data", data, "--out", model, "--from", filepath.Join(dir, "missing.json")}, {"--data", data, "--out", model, "--stops", "1"},
		{"--data", data, "--out", model, "--calibrate", "auto"}, {"--data", data, "--from", model, "--calibrate", "none"},
		{"--data", data, "--out", filepath.Join(dir, "m4.json"), "--from", model, "--calibrate", "beta"}} {
		if code, _, errs := runCLI(t, "", append([]string{"train", "evidence"}, bad...)...); code == 0 {
			t.Errorf("%v accepted: %s", bad, errs)
		}
	}
	// --kind: the hop-less fold model scores turns and tables, the first
	// model the rest; the combined file's floor and stop are chosen again
	// and it is calibrated like any --from model, its kinds kept
	combined, sub := filepath.Join(dir, "mk.json"), filepath.Join(dir, "m3.json")
	if code, out, errs := runCLI(t, "", "train", "evidence", "--from", model, "--kind", "turns="+sub+",table="+sub, "--out", combined); code != 0 || !strings.Contains(out, "wrote ") {
		t.Fatalf("--kind: exit %d: %s %s", code, out, errs)
	}
	mk, err := readEvidenceModel("test", combined)
	if err != nil || mk.Version != 4 || len(mk.Kinds) != 2 || !reflect.DeepEqual(mk.Forest, m.Forest) || !strings.Contains(mk.Provenance["kinds"], "turns: logistic, 3") ||
		!strings.Contains(mk.Provenance["kinds_command"], "--kind turns=") {
		t.Fatalf("--kind: %v %+v", err, mk)
	}
	// --blend gives the kinds' models their blend weight; without it, a
	// replaced model's blend that the new one lacks is named
	blended := filepath.Join(dir, "mkb.json")
	if code, _, errs := runCLI(t, "", "train", "evidence", "--from", model, "--kind", "turns="+sub, "--blend", "0.5", "--out", blended); code != 0 {
		t.Fatalf("--blend: exit %d: %s", code, errs)
	}
	mb, err := readEvidenceModel("test", blended)
	if err != nil || mb.Kinds[evidence.KindTurns].Blend != 0.5 || !strings.Contains(mb.Kinds[evidence.KindTurns].Provenance["blend"], "--blend") {
		t.Fatalf("--blend 0.5: %v %+v", err, mb.Kinds[evidence.KindTurns])
	}
	if code, _, errs := runCLI(t, "", "train", "evidence", "--from", blended, "--kind", "turns="+sub, "--out", filepath.Join(dir, "mkc.json")); code != 0 || !strings.Contains(errs, "had blend 0.5") {
		t.Fatalf("a blend dropped unsaid: exit %d: %s", code, errs)
	}
	for _, bad := range [][]string{{"--blend", "1.5"}, {"--blend", "NaN"}} {
		if code, _, _ := runCLI(t, "", append([]string{"train", "evidence", "--from", model, "--kind", "turns=" + sub, "--out", blended}, bad...)...); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
	if code, _, _ := runCLI(t, "", "train", "evidence", "--from", model, "--blend", "0.5", "--out", blended); code != 2 {
		t.Errorf("--blend without --kind: exit %d, want 2", code)
	}
	for _, extra := range [][]string{{"--floors", "0,0.01", "--stops", "0,0.5"}, {"--calibrate", "auto", "--calibrate-kinds", "--calibration-bins", "5"}} {
		again := filepath.Join(dir, "mk2.json")
		args := append([]string{"train", "evidence", "--data", data, "--limit", "24", "--pool", "40", "--scorer", "bm25", "--budgets", "150", "--from", combined, "--out", again}, extra...)
		if code, _, errs := runCLI(t, "", args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, errs)
		}
		m2, err := readEvidenceModel("test", again)
		if err != nil || !reflect.DeepEqual(m2.Kinds, mk.Kinds) || m2.Version != 4 {
			t.Fatalf("%v lost the kinds: %v", extra, err)
		}
	}
	for _, bad := range [][]string{{"--kind", "turns=" + sub, "--out", combined}, {"--from", model, "--kind", "prose=" + sub, "--out", combined},
		{"--from", model, "--kind", "turns=" + sub + ",turns=" + sub, "--out", combined}, {"--from", model, "--kind", "turns", "--out", combined},
		{"--from", model, "--kind", "table=" + filepath.Join(dir, "missing.json"), "--out", combined}} {
		if code, _, errs := runCLI(t, "", append([]string{"train", "evidence"}, bad...)...); code == 0 {
			t.Errorf("%v accepted: %s", bad, errs)
		}
	}
}
