package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ctxsel/ctxsel/answer"
	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/dataset"
)

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// markdownRow renders one table row as a Markdown row, "| a | b |", cells
// folded onto one line and their pipes escaped: what a report exported to
// Markdown looks like.
func markdownRow(cells []string) string {
	var b strings.Builder
	b.WriteString("|")
	for _, c := range cells {
		b.WriteString(" ")
		b.WriteString(strings.ReplaceAll(oneLine(c), "|", `\|`))
		b.WriteString(" |")
	}
	return b.String()
}

// markdownTable renders rows as a Markdown table (the first row the header,
// then the separator line) and returns each row's byte span in the text.
func markdownTable(rows [][]string) (string, [][2]int) {
	var b strings.Builder
	spans := make([][2]int, len(rows))
	for i, r := range rows {
		if i > 0 {
			b.WriteByte('\n')
		}
		spans[i][0] = b.Len()
		b.WriteString(markdownRow(r))
		spans[i][1] = b.Len()
		if i == 0 {
			b.WriteString("\n|")
			for range r {
				b.WriteString("---|")
			}
		}
	}
	return b.String(), spans
}

// numberRe finds the numbers of a derivation or an answer: "1,496.5",
// "(2.3)", "12%", "$ 4".
var numberRe = regexp.MustCompile(`\d[\d,]*(?:\.\d+)?`)

// numbers are the normalised numbers of s ("1,496.50" → "1496.5"); years
// and other integers too, since an answer may be one.
func numbers(s string) []string {
	var out []string
	for _, m := range numberRe.FindAllString(s, -1) {
		n := strings.ReplaceAll(m, ",", "")
		if f, err := strconv.ParseFloat(n, 64); err == nil {
			n = strconv.FormatFloat(f, 'f', -1, 64)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

type tatItem struct {
	Table struct {
		UID   string     `json:"uid"`
		Table [][]string `json:"table"`
	} `json:"table"`
	Paragraphs []struct {
		Order int    `json:"order"`
		Text  string `json:"text"`
	} `json:"paragraphs"`
	Questions []struct {
		UID        string          `json:"uid"`
		Question   string          `json:"question"`
		Answer     json.RawMessage `json:"answer"`
		Derivation string          `json:"derivation"`
		Type       string          `json:"answer_type"`
		From       string          `json:"answer_from"`
		Paragraphs []string        `json:"rel_paragraphs"`
	} `json:"questions"`
}

// convertTATQA converts TAT-QA (hybrid tables and text of financial
// reports). A question's passages are its report's table, rendered as
// Markdown (one passage, each gold row a span of it), then its paragraphs
// in order. TAT-QA labels evidence as where the answer
// comes from (table, text or both) and which paragraphs (rel_paragraphs);
// it names no cells. Gold units are derived: a table row is gold when one
// of its cells holds a number of the answer or the derivation ("1,496.5 -
// 1,202.9"), or a span answer's text; a sentence (chunk.SplitSentences) of
// a relevant paragraph is gold when it holds a number of the answer or the
// derivation or a span answer's text. A question whose every source
// (table, text) locates nothing is left out and counted.
func convertTATQA(raw []byte, skip map[string]bool, source string) ([]dataset.Record, []string, error) {
	var items []tatItem
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, nil, fmt.Errorf("tatqa: %w", err)
	}
	var out []dataset.Record
	skipped, unlocated, partial := 0, 0, 0
	for _, it := range items {
		if len(it.Table.Table) == 0 {
			continue
		}
		// The header is the table's first row and every row before the
		// first that holds a number: TAT-QA's headers span rows
		// ("Years Ended September 30," over "2019 2018 2017").
		head := 1
		for head < len(it.Table.Table)-1 && !rowHasValue(it.Table.Table[head]) {
			head++
		}
		text, spans := markdownTable(it.Table.Table)
		passages := []dataset.Passage{{ID: "table", Text: text}}
		paraAt := map[string]int{}
		for _, p := range it.Paragraphs {
			t := strings.TrimSpace(p.Text)
			if t == "" {
				continue
			}
			paraAt[strconv.Itoa(p.Order)] = len(passages)
			passages = append(passages, dataset.Passage{ID: fmt.Sprintf("p%d", p.Order), Text: t})
		}
		for _, q := range it.Questions {
			if skip[q.UID] || skip[questionKey(q.Question)] {
				skipped++
				continue
			}
			answers := tatAnswers(q.Answer)
			targets := numbers(q.Derivation)
			for _, a := range answers {
				targets = append(targets, numbers(a)...)
			}
			var spanTexts []string
			if q.Type == "span" || q.Type == "multi-span" {
				spanTexts = answers
			}
			rec := dataset.Record{ID: q.UID, Question: strings.TrimSpace(q.Question), Answers: answers,
				Task: "tatqa", Genre: "finance-table", Passages: slices.Clone(passages)}
			found := map[string]bool{}
			if strings.Contains(q.From, "table") {
				for ri := head; ri < len(it.Table.Table); ri++ {
					if rowHolds(it.Table.Table[ri], targets, spanTexts) {
						t := &rec.Passages[0]
						t.GoldSpans = append(t.GoldSpans, spans[ri])
						t.Gold = true
						found["table"] = true
					}
				}
			}
			if strings.Contains(q.From, "text") {
				for _, o := range q.Paragraphs {
					pi, ok := paraAt[strings.TrimSpace(o)]
					if !ok {
						continue
					}
					p := &rec.Passages[pi]
					for _, s := range chunk.SplitSentences(p.Text) {
						if sentenceHolds(p.Text[s[0]:s[1]], targets, spanTexts) {
							if g := [2]int{s[0], s[1]}; !slices.Contains(p.GoldSpans, g) {
								p.GoldSpans = append(p.GoldSpans, g)
								p.Gold = true
								found["text"] = true
							}
						}
					}
				}
			}
			if len(found) == 0 {
				unlocated++
				continue
			}
			if q.From == "table-text" && len(found) < 2 {
				partial++
			}
			meta := map[string]string{"answer_from": q.From, "answer_type": q.Type, "table": it.Table.UID}
			if source != "" {
				meta["source"] = source
			}
			rec.Meta, _ = json.Marshal(meta)
			out = append(out, rec)
		}
	}
	notes := []string{fmt.Sprintf("%d reports; %d questions excluded, %d whose evidence could not be located left out, %d table-text questions kept with evidence located in one of the two",
		len(items), skipped, unlocated, partial)}
	return out, notes, nil
}

// tatAnswers reads TAT-QA's answer: a string, a number or a list of them.
func tatAnswers(raw json.RawMessage) []string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	var out []string
	add := func(x any) {
		var s string
		switch t := x.(type) {
		case string:
			s = t
		case float64:
			s = strconv.FormatFloat(t, 'f', -1, 64)
		}
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if l, ok := v.([]any); ok {
		for _, x := range l {
			add(x)
		}
	} else {
		add(v)
	}
	return out
}

// rowHasValue reports a row with a number past its first cell that is not
// a year: a header row holds labels and years, a data row values.
func rowHasValue(cells []string) bool {
	for _, c := range cells[min(1, len(cells)):] {
		for _, n := range numbers(c) {
			if y, err := strconv.Atoi(n); err != nil || y < 1900 || y > 2100 || strings.Contains(c, ",") {
				return true
			}
		}
	}
	return false
}

// rowHolds reports a row with a cell whose number is one of targets, or a
// cell that is one of the span answers (normalised).
func rowHolds(cells []string, targets, spans []string) bool {
	for _, c := range cells {
		for _, n := range numbers(c) {
			if slices.Contains(targets, n) {
				return true
			}
		}
		for _, s := range spans {
			if ns := answer.Normalize(s); ns != "" && ns == answer.Normalize(c) {
				return true
			}
		}
	}
	return false
}

// sentenceHolds reports a sentence holding a number of targets or a span
// answer (normalised, whole words).
func sentenceHolds(s string, targets, spans []string) bool {
	for _, n := range numbers(s) {
		if slices.Contains(targets, n) {
			return true
		}
	}
	norm := " " + answer.Normalize(s) + " "
	for _, a := range spans {
		if n := answer.Normalize(a); n != "" && strings.Contains(norm, " "+n+" ") {
			return true
		}
	}
	return false
}
