package main

import (
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

// musRecord is one MuSiQue record (the answerable set's format).
type musRecord struct {
	ID         string `json:"id"`
	Question   string `json:"question"`
	Answer     string `json:"answer"`
	Aliases    []string
	Answerable *bool `json:"answerable"`
	Paragraphs []struct {
		Idx        int    `json:"idx"`
		Title      string `json:"title"`
		Text       string `json:"paragraph_text"`
		Supporting bool   `json:"is_supporting"`
	} `json:"paragraphs"`
	Steps []struct {
		Question  string `json:"question"`
		Answer    string `json:"answer"`
		Paragraph *int   `json:"paragraph_support_idx"`
	} `json:"question_decomposition"`
}

func (m *musRecord) UnmarshalJSON(b []byte) error {
	type plain musRecord
	var v struct {
		plain
		Aliases []string `json:"answer_aliases"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*m = musRecord(v.plain)
	m.Aliases = v.Aliases
	return nil
}

// hopRef finds "#k", a step's reference to the answer of step k.
var hopRef = regexp.MustCompile(`#(\d+)`)

// convertMuSiQue converts MuSiQue's answerable questions. MuSiQue labels
// paragraphs (is_supporting), not sentences; its question decomposition
// names, per hop, the supporting paragraph and the hop's answer. A hop's
// gold sentence is derived from those: the sentence of its paragraph
// (chunk.SplitSentences) that holds the hop's answer (SQuAD-normalised,
// whole words; the last hop also through the answer's aliases); among
// several, the one that also names the hop's subject (the entity before
// ">>" in the hop's question, "#k" read as hop k's answer), else the first.
// When no sentence holds the answer, the paragraph's first sentence if the
// answer is its title, else the first sentence naming the subject. A
// question with a hop none of these locate is left out and counted, as are
// unanswerable ones. A passage is "title\n" + the paragraph.
func convertMuSiQue(raw []byte, skip map[string]bool, source string) ([]dataset.Record, []string, error) {
	var ms []musRecord
	if err := json.Unmarshal(raw, &ms); err != nil {
		return nil, nil, fmt.Errorf("musique: %w", err)
	}
	var out []dataset.Record
	skipped, unanswerable, unlocated, byTitle, bySubject := 0, 0, 0, 0, 0
	for i, m := range ms {
		if m.ID == "" {
			return nil, nil, fmt.Errorf("musique: record %d has no id", i)
		}
		if skip[m.ID] || skip[questionKey(m.Question)] {
			skipped++
			continue
		}
		if (m.Answerable != nil && !*m.Answerable) || len(m.Steps) == 0 {
			unanswerable++
			continue
		}
		rec := dataset.Record{ID: m.ID, Question: strings.TrimSpace(m.Question), Task: "musique"}
		seen := map[string]bool{}
		for _, a := range append([]string{m.Answer}, m.Aliases...) {
			if a = strings.TrimSpace(a); a != "" && !seen[a] {
				seen[a] = true
				rec.Answers = append(rec.Answers, a)
			}
		}
		meta := map[string]string{"hops": strconv.Itoa(len(m.Steps))}
		if source != "" {
			meta["source"] = source
		}
		rec.Meta, _ = json.Marshal(meta)
		at := map[int]int{} // paragraph idx → passage index
		for pi, p := range m.Paragraphs {
			at[p.Idx] = pi
			rec.Passages = append(rec.Passages, dataset.Passage{ID: fmt.Sprintf("p%d", p.Idx), Text: p.Title + "\n" + p.Text})
		}
		answers := make([]string, len(m.Steps))
		ok := true
		for si, st := range m.Steps {
			answers[si] = st.Answer
			if st.Paragraph == nil {
				ok = false
				break
			}
			pi, found := at[*st.Paragraph]
			if !found {
				ok = false
				break
			}
			targets := []string{st.Answer}
			if si == len(m.Steps)-1 {
				targets = rec.Answers
			}
			p := m.Paragraphs[pi]
			span, how := hopSentence(p.Title, p.Text, targets, hopSubjects(st.Question, answers[:si]))
			if span[1] <= span[0] {
				ok = false
				break
			}
			switch how {
			case "title":
				byTitle++
			case "subject":
				bySubject++
			}
			off := len(p.Title) + 1
			g := [2]int{span[0] + off, span[1] + off}
			pass := &rec.Passages[pi]
			if !slices.Contains(pass.GoldSpans, g) {
				pass.GoldSpans = append(pass.GoldSpans, g)
			}
			pass.Gold = true
		}
		if !ok {
			unlocated++
			continue
		}
		out = append(out, rec)
	}
	notes := []string{fmt.Sprintf("%d records read, %d excluded (--exclude), %d unanswerable, %d with a hop whose sentence could not be located left out; of the hops kept, %d located by the paragraph's title and %d by the hop's subject (the rest by the answer)",
		len(ms), skipped, unanswerable, unlocated, byTitle, bySubject)}
	return out, notes, nil
}

// hopSubjects are the entities a hop's question names: the text before
// ">>" ("Van Hook Township >> located in …"), with "#k" replaced by hop k's
// answer, and every earlier answer the question refers to.
func hopSubjects(q string, earlier []string) []string {
	var out []string
	for _, m := range hopRef.FindAllStringSubmatch(q, -1) {
		if k, err := strconv.Atoi(m[1]); err == nil && k >= 1 && k <= len(earlier) {
			out = append(out, earlier[k-1])
		}
	}
	if i := strings.Index(q, ">>"); i > 0 {
		subj := strings.TrimSpace(hopRef.ReplaceAllStringFunc(q[:i], func(ref string) string {
			k, _ := strconv.Atoi(ref[1:])
			if k >= 1 && k <= len(earlier) {
				return earlier[k-1]
			}
			return ref
		}))
		if subj != "" {
			out = append(out, subj)
		}
	}
	return out
}

// hopSentence locates a hop's gold sentence in a paragraph (byte offsets
// into text) and says how: "answer", "title", "subject", or "" with an
// empty span when it cannot.
func hopSentence(title, text string, answers, subjects []string) ([2]int, string) {
	sents := chunk.SplitSentences(text)
	if len(sents) == 0 {
		return [2]int{}, ""
	}
	norm := make([]string, len(sents))
	for i, s := range sents {
		norm[i] = " " + answer.Normalize(text[s[0]:s[1]]) + " "
	}
	holds := func(i int, phrases []string) bool {
		for _, a := range phrases {
			if n := answer.Normalize(a); n != "" && strings.Contains(norm[i], " "+n+" ") {
				return true
			}
		}
		return false
	}
	var withAnswer []int
	for i := range sents {
		if holds(i, answers) {
			withAnswer = append(withAnswer, i)
		}
	}
	if len(withAnswer) > 0 {
		for _, i := range withAnswer {
			if holds(i, subjects) {
				return sents[i], "answer"
			}
		}
		return sents[withAnswer[0]], "answer"
	}
	t := answer.Normalize(title)
	for _, a := range answers {
		if n := answer.Normalize(a); n != "" && (n == t || strings.HasPrefix(t, n+" ")) {
			return sents[0], "title"
		}
	}
	for i := range sents {
		if holds(i, subjects) {
			return sents[i], "subject"
		}
	}
	return [2]int{}, ""
}
