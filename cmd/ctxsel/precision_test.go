package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/embed/embedders"
	"github.com/ctxsel/ctxsel/llm"
)

// TestUseLitePrecision: CTXSEL_USELITE_PRECISION chooses the embedded
// model's precision; an index built at one precision is queried at it when
// the variable is unset, and a variable naming another precision is
// refused with a message naming both. Runs the real model.
func TestUseLitePrecision(t *testing.T) {
	oldLLM := llmFromEnv
	llmFromEnv = func() (llm.Client, error) { return nil, nil }
	t.Cleanup(func() { llmFromEnv = oldLLM })
	t.Setenv(envIndex, "")
	t.Setenv(embedders.EnvCache, "off")
	root := t.TempDir()
	docs := filepath.Join(root, "docs")
	os.MkdirAll(docs, 0o755)
	os.WriteFile(filepath.Join(docs, "volcano.txt"), []byte("Mount Etna is an active volcano on Sicily. Its eruptions are frequent."), 0o644)
	os.WriteFile(filepath.Join(docs, "bread.txt"), []byte("Bread rises because yeast makes gas. Knead the dough for ten minutes."), 0o644)
	model := func(idx string) string {
		t.Helper()
		code, out, errs := runCLI(t, "", "index", "stats", "--index", idx, "--json")
		var st struct {
			Config struct {
				Model string `json:"model"`
			} `json:"config"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
			t.Fatalf("stats: %d %s %s", code, out, errs)
		}
		return st.Config.Model
	}

	fp32 := filepath.Join(root, "fp32")
	t.Setenv(embedders.EnvUseLitePrecision, "fp32")
	if code, _, errs := runCLI(t, "", "index", "add", "--index", fp32, docs); code != 0 {
		t.Fatalf("add: %s", errs)
	}
	if m := model(fp32); strings.HasSuffix(m, "+int8") || strings.HasSuffix(m, "+bf16") || !strings.HasPrefix(m, "use-lite@") {
		t.Fatalf("fp32 index model %q", m)
	}
	t.Setenv(embedders.EnvUseLitePrecision, "")
	def := filepath.Join(root, "default")
	if code, _, errs := runCLI(t, "", "index", "add", "--index", def, docs); code != 0 {
		t.Fatalf("add: %s", errs)
	}
	if m := model(def); !strings.HasSuffix(m, "+int8") {
		t.Fatalf("default index model %q, want the int8 default", m)
	}

	// unset: each index is asked at its own precision
	for _, idx := range []string{fp32, def} {
		if code, out, errs := runCLI(t, "", "ask", "--index", idx, "--prompt=false", "Which", "volcano", "erupts?"); code != 0 || !strings.Contains(out, "volcano.txt") {
			t.Fatalf("ask %s: exit %d: %s %s", idx, code, out, errs)
		}
	}
	// set to another precision: refused, naming both and the fix
	t.Setenv(embedders.EnvUseLitePrecision, "int8")
	for _, args := range [][]string{{"ask", "--index", fp32, "Which volcano?"}, {"index", "add", "--index", fp32, docs}} {
		code, _, errs := runCLI(t, "", args...)
		if code != 2 || !strings.Contains(errs, "CTXSEL_USELITE_PRECISION=int8") || !strings.Contains(errs, "fp32 precision") || !strings.Contains(errs, "unset") {
			t.Errorf("%v with another precision: exit %d: %s", args[0], code, errs)
		}
	}
	t.Setenv(embedders.EnvUseLitePrecision, "fp16")
	if code, _, errs := runCLI(t, "", "ask", "--index", def, "Which volcano?"); code != 2 || !strings.Contains(errs, "want fp32, bf16 or int8") {
		t.Errorf("bad precision: exit %d: %s", code, errs)
	}
}
