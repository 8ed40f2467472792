package eval

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// fullReport exercises every part of the tables: baselines, a pruning
// selector on span-labelled data, evidence and answer columns, a judge,
// degenerate replies and a picker's own calls, with the longest strategy
// name of the default list.
func fullReport() *Report {
	judge, judgeSE := 0.5, 0.05
	routed := 0.25
	r := func(name string) Result {
		return Result{Strategy: name, N: 100, Recall: 0.912, Precision: 0.1, AllGold: 0.85, MeanK: 71.2, MeanTokens: 10622,
			GainVsTopK: -0.014, EnvelopeRecall: 0.93, GainVsEnvelope: -0.03, GainSE: 0.02, BestSingleRecall: 0.9, GainVsBestSingle: 0.012, BestSingleSE: 0.021,
			EvidenceResult: &EvidenceResult{EvidenceQuestions: 100, EvidenceRecall: 0.9, EvidenceTokens: 12345, EvidenceEnvelope: 0.8, EvidenceGain: 0.1, EvidenceGainSE: 0.01},
			PresenceResult: &PresenceResult{PresenceQuestions: 94, YesNoQuestions: 6, AnswerPresent: 0.8, PresenceTokens: 12345, AnswerEnvelope: 0.7, AnswerGain: 0.1, AnswerGainSE: 0.02},
			AnswerResult: &AnswerResult{Answered: 100, SubEM: 0.61, SubEMErr: 0.049, EM: 0.5, F1: 0.7, Judge: &judge, JudgeErr: &judgeSE, JudgeInvalid: 3,
				LLMCalls: 1.54, InputTokens: 74000, OutputTokens: 12, LLMFailures: 2, TokensCounted: true, Routed: &routed},
		}
	}
	pruned := r("evidence:budget=1500")
	pruned.Prunes = true
	picked := r("picker:budget=4000")
	picked.Selector = &SelectorCalls{MeanPromptTokens: 3900, MeanCompletionTokens: 40, InvalidRate: 0.1}
	return &Report{Scorer: "hybrid(use-lite+bm25):alpha=0.5,fusion=zscore", Encoding: "cl100k_base", Questions: 100, MeanPassages: 1000,
		MeanContextTokens: 136795, MeanGold: 2, SpanLabels: true,
		Answers: &AnswerTotals{Reader: "openai:qwen2.5-7b-instruct@http://127.0.0.1:8000/v1#window=32768", Judge: "llm:openai:gpt-4o-mini",
			Window: 32768, Calls: 354, Cached: 12, Failures: 2, Truncated: 1, Empty: 1, InputTokens: 650000, OutputTokens: 4000, Stopped: "interrupted"},
		Results:   []Result{r("adaptivek:head=0.05"), pruned, picked},
		Baselines: []Baseline{{Scorer: "use-lite"}, {Scorer: "bm25"}},
	}
}

func TestCompactTableFitsAndKeepsTheFigures(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCompactTable(&buf, fullReport(), "bundled sample: 100 HotpotQA dev questions (CC BY-SA 4.0) · pool 1000 · seed 1 · test split (20 questions, train share 0.8, split seed 1)"); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for i, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > CompactWidth {
			t.Errorf("line %d has %d runes (> %d): %q", i+1, n, CompactWidth, line)
		}
	}
	// The figures a comparison reads stay, each in its table.
	for _, want := range []string{"adaptivek:head=0.05", "0.912", "0.850", "71.2", "10622", "-0.014", "-0.030 ± 0.020", "+0.012 ± 0.021",
		"0.912†", "+0.100 ± 0.010", "+0.100 ± 0.020", "0.610 ± 0.049", "0.500 ± 0.050", "1.54", "74000",
		"invalid rate", "3900", "use-lite, bm25", "stopped early: interrupted", "1 truncated", "--wide"} {
		if !strings.Contains(out, want) {
			t.Errorf("compact table lacks %q:\n%s", want, out)
		}
	}
	// The wide table is the one with every column, and it is wider.
	var wide bytes.Buffer
	if err := WriteTable(&wide, fullReport()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(wide.String(), "precision") || strings.Contains(out, "precision") {
		t.Error("precision belongs to the wide table only")
	}
}

func TestCompactTableWithoutGoldLabels(t *testing.T) {
	rep := fullReport()
	rep.NoGoldLabels = true
	var buf bytes.Buffer
	if err := WriteCompactTable(&buf, rep, "lara:32k/book · pool 0 · seed 1"); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.Contains(out, "vs envelope") || !strings.Contains(out, "subem ± se") || !strings.Contains(out, "recall not measurable") {
		t.Errorf("a report without gold labels shows only the answers:\n%s", out)
	}
}

func TestWrapText(t *testing.T) {
	long := strings.Repeat("word ", 30) + "averyveryveryverylongwordthatcannotbebrokenatall"
	for _, tc := range []struct {
		in    string
		width int
	}{
		{"short · heading", 100},
		{"scorer hybrid(use-lite+bm25):alpha=0.5,fusion=zscore · tokens cl100k_base · 100 questions (0 skipped: no gold) · 1000 passages and 136795 tokens per context · 2.00 gold per question", 100},
		{"a · " + long + " · b", 40},
		{long, 20},
		{"ü · é · ö · " + strings.Repeat("ß", 30), 12},
	} {
		got := wrapText(tc.in, tc.width)
		for _, line := range strings.Split(got, "\n") {
			// Only a single word longer than the width (and the separator after it) may pass it.
			if utf8.RuneCountInString(line) > tc.width && strings.ContainsRune(strings.TrimSuffix(line, " ·"), ' ') {
				t.Errorf("wrapText(%q, %d): line %q is %d runes", tc.in, tc.width, line, utf8.RuneCountInString(line))
			}
			if strings.HasPrefix(line, "·") {
				t.Errorf("wrapText(%q, %d): a line starts with the separator: %q", tc.in, tc.width, line)
			}
		}
		if strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(tc.in), " ") {
			t.Errorf("wrapText(%q, %d) changed the words: %q", tc.in, tc.width, got)
		}
	}
}
