package answer

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"regexp"
	"strings"
	"testing"
)

// pyEscape undoes str.format's unescaping: the template file as the
// official repository stores it ({{ }} for braces, placeholders single).
func pyEscape(s string, placeholders ...string) string {
	s = strings.NewReplacer("{", "{{", "}", "}}").Replace(s)
	for _, p := range placeholders {
		s = strings.ReplaceAll(s, "{{"+p+"}}", "{"+p+"}")
	}
	return s
}

func sha(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }

// TestTemplatesA13AreOfficial pins the judge's two prompts to the official
// files (megagonlabs/adaptive-k-retrieval, commit fc86f12,
// prompts/holobench_eval_template.txt and holobench_postproc_template.txt)
// by their SHA-256, and checks the 8 worked examples are there.
func TestTemplatesA13AreOfficial(t *testing.T) {
	if got := sha(pyEscape(JudgeTemplateA13, "question", "pred", "gold", "output_format")); got != "8025f5ec910c530a057ed6c8dd896bb6b2d30e55f1a7213c5ff48bb2fad5a9bb" {
		t.Errorf("JudgeTemplateA13 differs from holobench_eval_template.txt: sha256 %s", got)
	}
	if got := sha(pyEscape(ExtractTemplateA13, "response")); got != "91f936963778a321830cbafe2bbdfb84d763111830a00ab73f4fb8c7b7a0b533" {
		t.Errorf("ExtractTemplateA13 differs from holobench_postproc_template.txt: sha256 %s", got)
	}
	if n := len(regexp.MustCompile(`(?m)^\*\*Example \d: `).FindAllString(JudgeTemplateA13, -1)); n != 8 {
		t.Errorf("%d worked examples, want 8", n)
	}
}

// TestTemplateA13MatchesPaper: the official template is the paper's A.1.3
// prompt (as its text extraction prints it) with the examples written in:
// the same words before the examples and after "Your task starts here",
// markup aside.
func TestTemplateA13MatchesPaper(t *testing.T) {
	b, err := os.ReadFile("../../shared/papers/adaptive-k.txt")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("paper text missing in CI: %v", err)
		}
		t.Skip("paper text not available")
	}
	paper := string(b)
	start := strings.Index(paper, "A.1.3 Prompt template for LLM-as-a-Judge")
	end := strings.Index(paper, "A.2 Detailed experimental setup")
	if start < 0 || end < start {
		t.Fatal("A.1.3 not found in the paper")
	}
	paper = paper[start+len("A.1.3 Prompt template for LLM-as-a-Judge") : end]
	words := func(s string) string {
		return strings.Join(strings.Fields(regexp.MustCompile(`[^A-Za-z0-9{}' ]+`).ReplaceAllString(strings.ReplaceAll(s, "’", "'"), " ")), " ")
	}
	split := func(s, examples, task string) (head, tail string) {
		i, j := strings.Index(s, examples), strings.Index(s, task)
		if i < 0 || j < i {
			t.Fatalf("markers not found in %.80q", s)
		}
		return words(s[:i]), words(strings.ReplaceAll(s[j:], `\_`, "_"))
	}
	ph, pt := split(paper, "Examples:", "Your task starts here")
	oh, ot := split(JudgeTemplateA13, "Examples:", "Your task starts here")
	if ph != oh {
		t.Errorf("instructions differ\npaper:    %s\nofficial: %s", ph, oh)
	}
	if pt != ot {
		t.Errorf("task part differs\npaper:    %s\nofficial: %s", pt, ot)
	}
}

func TestPyRepr(t *testing.T) {
	for in, want := range map[string]string{
		"Paris":         `'Paris'`,
		"O'Neil":        `"O'Neil"`,
		`say "hi"`:      `'say "hi"'`,
		`both ' and "`:  `'both \' and "'`,
		"a\\b\nc\td":    `'a\\b\nc\td'`,
		"café ünï 日本":   `'café ünï 日本'`,
		"nbsp\u00a0x":   `'nbsp\xa0x'`,
		"zw\u200bj":     `'zw\u200bj'`,
		"\x01":          `'\x01'`,
		"":              `''`,
		"emoji 🙂":       `'emoji 🙂'`,
		"\U000e0001tag": `'\U000e0001tag'`,
	} {
		if got := pyRepr(in); got != want {
			t.Errorf("pyRepr(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestPromptJudgeA13(t *testing.T) {
	p, want := PromptJudgeA13(Item{Question: "q?"}, "No answer")
	if want != 1 || !strings.Contains(p, "**Ground Truth:**\n```\n[]\n```") || !strings.Contains(p, "[{'id': 0, 'label': '...'}]") {
		t.Fatalf("empty gold: want %d\n%s", want, p[len(p)-300:])
	}
	gold := make([]string, 60)
	for i := range gold {
		gold[i] = "g"
	}
	if _, want := PromptJudgeA13(Item{Gold: gold}, "x"); want != MaxGoldEntriesA13 {
		t.Fatalf("%d entries judged of 60, want %d", want, MaxGoldEntriesA13)
	}
	// Braces in the question or the answer are kept as they are.
	p, _ = PromptJudgeA13(Item{Question: "{gold} {pred}", Gold: []string{"{question}"}}, "{output_format}")
	if !strings.Contains(p, "```\n{gold} {pred}\n```") || !strings.Contains(p, "'answer': '{question}'") || !strings.Contains(p, "```\n{output_format}\n```") {
		t.Fatal("placeholders inside values were replaced")
	}
}

func FuzzParseExtractA13(f *testing.F) {
	for _, s := range []string{`{"reasoning": "r", "final_answer": "a"}`, "```json\n{\"final_answer\": \"\"}\n```", "{", "}{", `{"final_answer": 3}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, out string) {
		final, ok := ParseExtractA13(out)
		if ok && !strings.Contains(out, "final_answer") {
			t.Fatalf("%q → %q without final_answer", out, final)
		}
	})
}

// FuzzPyRepr: the repr is one line between matching quotes, and escaping
// keeps every printable character of the input.
func FuzzPyRepr(f *testing.F) {
	for _, s := range []string{"Paris", "O'Neil", `a "b" 'c'`, "x\ny\\", "\u00a0\u200b", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := pyRepr(s)
		if len(r) < 2 || (r[0] != '\'' && r[0] != '"') || r[len(r)-1] != r[0] || strings.ContainsAny(r, "\n\r\t") {
			t.Fatalf("pyRepr(%q) = %s", s, r)
		}
	})
}

// FuzzParseLDAR: the official reading, 'true' in the lowercased reply.
func FuzzParseLDAR(f *testing.F) {
	for _, s := range []string{"True", "False.", "not true", "maybe", "TRUE FALSE", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, out string) {
		correct, ok := ParseLDAR(out)
		lo := strings.ToLower(out)
		if correct != strings.Contains(lo, "true") || ok != (strings.Contains(lo, "true") || strings.Contains(lo, "false")) {
			t.Fatalf("ParseLDAR(%q) = %v, %v", out, correct, ok)
		}
	})
}

// TestLDARPromptsAreOfficial pins LDAR's judge prompts to the f-strings of
// evaluation/optim_utils.py (ku-dmlab/LDAR commit 9d55489) by SHA-256, the
// placeholders as written there.
func TestLDARPromptsAreOfficial(t *testing.T) {
	if got := sha(JudgePromptLDAR); got != "561e18a08c05058b21ace085fae103d383bcf846c977b725844b9f3a10b153ba" {
		t.Errorf("JudgePromptLDAR: sha256 %s", got)
	}
	if got := sha(JudgePromptLDARHallu); got != "1f978c27aa23db7225169f688834531676f3b0314476ce6c2933aae352b72f65" {
		t.Errorf("JudgePromptLDARHallu: sha256 %s", got)
	}
}
