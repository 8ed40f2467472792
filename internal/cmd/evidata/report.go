package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
)

// reportRow is the part of an eval --json result the report reads.
type reportRow struct {
	Strategy          string  `json:"strategy"`
	EvidenceQuestions int     `json:"evidence_questions"`
	EvidenceRecall    float64 `json:"evidence_recall"`
	EvidenceTokens    float64 `json:"evidence_tokens"`
	EvidenceEnvelope  float64 `json:"evidence_envelope"`
	EvidenceGain      float64 `json:"evidence_gain"`
	EvidenceGainSE    float64 `json:"evidence_gain_se"`
	AnswerQuestions   int     `json:"answer_questions"`
	AnswerPresent     float64 `json:"answer_present"`
	AnswerEnvelope    float64 `json:"answer_envelope"`
	AnswerGain        float64 `json:"answer_gain"`
	AnswerGainSE      float64 `json:"answer_gain_se"`
}

// report prints, from eval --json reports (one per data file, measured
// apart: each file pooled with its own distractors), the evidence figures
// of the named strategies per file and pooled over the files. Pooled
// figures are question-weighted means of the files' (evidence figures by
// the questions with gold_spans, answer figures by the questions counted
// for answer_present); a pooled gain's standard error is
// sqrt(Σ w_f² se_f²), the files being independent samples. A file given
// as GENRE=PATH belongs to that genre, and each genre of more than one
// file is also pooled on its own (figures by genre, issue 26).
//
//	evidata report --strategies evidence:budget=300,… A.json B.json…
//	evidata report dialogue=friendsqa.json meeting=qmsum.json encyclopedic=hp.json encyclopedic=2wiki.json
func report(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("evidata report", flag.ContinueOnError)
	strategies := fs.String("strategies", "", "strategies to report (as named in the reports), comma-separated; default every pruning one")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("usage: evidata report [--strategies A,B] [GENRE=]REPORT.json...")
	}
	type file struct {
		name, genre string
		rows        map[string]reportRow
	}
	var files []file
	var order []string
	if *strategies != "" {
		order = specList(*strategies)
	}
	for _, arg := range fs.Args() {
		genre, path := genreArg(arg)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var rep struct {
			Results []reportRow `json:"results"`
		}
		if err := json.Unmarshal(b, &rep); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		f := file{name: strings.TrimSuffix(filepath.Base(path), ".json"), genre: genre, rows: map[string]reportRow{}}
		for _, r := range rep.Results {
			f.rows[r.Strategy] = r
			if *strategies == "" && strings.Contains(r.Strategy, "evidence") && !slices.Contains(order, r.Strategy) {
				order = append(order, r.Strategy)
			}
		}
		files = append(files, f)
	}
	fmt.Fprintln(stdout, "| set | strategy | q | evidence recall | envelope | gain ± s.e. | tokens | answer present | its gain ± s.e. |")
	fmt.Fprintln(stdout, "|---|---|---|---|---|---|---|---|---|")
	line := func(set, strategy string, r reportRow) {
		fmt.Fprintf(stdout, "| %s | `%s` | %d | %.3f | %.3f | **%+.3f ± %.3f** | %.0f | %.3f | %+.3f ± %.3f |\n", set, strategy, r.EvidenceQuestions,
			r.EvidenceRecall, r.EvidenceEnvelope, r.EvidenceGain, r.EvidenceGainSE, r.EvidenceTokens, r.AnswerPresent, r.AnswerGain, r.AnswerGainSE)
	}
	for _, s := range order {
		var rows []reportRow
		byGenre := map[string][]reportRow{}
		var genres []string
		for _, f := range files {
			r, ok := f.rows[s]
			if !ok {
				return fmt.Errorf("%s has no row %q", f.name, s)
			}
			line(f.name, s, r)
			rows = append(rows, r)
			if f.genre != "" {
				if _, ok := byGenre[f.genre]; !ok {
					genres = append(genres, f.genre)
				}
				byGenre[f.genre] = append(byGenre[f.genre], r)
			}
		}
		for _, g := range genres {
			if len(byGenre[g]) > 1 {
				line("**"+g+"**", s, pool(byGenre[g]))
			}
		}
		if len(files) > 1 {
			line("**pooled**", s, pool(rows))
		}
	}
	return nil
}

// pool is the question-weighted mean of independent files' figures, a
// gain's standard error sqrt(Σ w² se²).
func pool(rows []reportRow) reportRow {
	var pooled reportRow
	var ne, na int
	var seE, seA float64
	for _, r := range rows {
		ne += r.EvidenceQuestions
		na += r.AnswerQuestions
	}
	for _, r := range rows {
		we, wa := 0.0, 0.0
		if ne > 0 {
			we = float64(r.EvidenceQuestions) / float64(ne)
		}
		if na > 0 {
			wa = float64(r.AnswerQuestions) / float64(na)
		}
		pooled.EvidenceRecall += we * r.EvidenceRecall
		pooled.EvidenceEnvelope += we * r.EvidenceEnvelope
		pooled.EvidenceGain += we * r.EvidenceGain
		pooled.EvidenceTokens += we * r.EvidenceTokens
		seE += we * we * r.EvidenceGainSE * r.EvidenceGainSE
		pooled.AnswerPresent += wa * r.AnswerPresent
		pooled.AnswerGain += wa * r.AnswerGain
		seA += wa * wa * r.AnswerGainSE * r.AnswerGainSE
	}
	pooled.EvidenceQuestions, pooled.AnswerQuestions = ne, na
	pooled.EvidenceGainSE, pooled.AnswerGainSE = math.Sqrt(seE), math.Sqrt(seA)
	return pooled
}

// genreArg splits "GENRE=PATH" (a genre a word of letters, digits, dashes
// and underscores) from a plain PATH.
func genreArg(arg string) (genre, path string) {
	g, p, ok := strings.Cut(arg, "=")
	if !ok || g == "" || p == "" {
		return "", arg
	}
	for _, r := range g {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '_' {
			return "", arg
		}
	}
	return g, p
}

// specList splits a comma-separated list of specs as ctxsel does: a part
// without a colon that sets a parameter ("hop=0") belongs to the spec
// before it ("evidence:budget=300,hop=0").
func specList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if n := len(out); n > 0 && !strings.Contains(part, ":") && strings.Contains(part, "=") && strings.Contains(out[n-1], ":") {
			out[n-1] += "," + part
			continue
		}
		out = append(out, part)
	}
	return out
}
