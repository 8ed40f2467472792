package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ctxsel/ctxsel/dataset"
)

// A turn is one passage "Speaker: text" (one line), so that regrouping in
// document order with --sep "\n" gives what a transcript exported one turn
// a line looks like, and a gold turn is the whole of its passage.
func turnPassage(id, speaker, text string) dataset.Passage {
	line := text
	if speaker != "" {
		line = speaker + ": " + text
	}
	return dataset.Passage{ID: id, Text: line}
}

// markGold makes passage i of rec gold, its whole text the span.
func markGold(rec *dataset.Record, i int) {
	p := &rec.Passages[i]
	s, e := trim(p.Text, 0, len(p.Text))
	if e > s && !p.Gold {
		p.Gold = true
		p.GoldSpans = [][2]int{{s, e}}
	}
}

// oneLine folds a turn's text onto one line: a turn is one line of the
// exported transcript.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

type friendsFile struct {
	Data []struct {
		Title      string `json:"title"`
		Paragraphs []struct {
			Utterances []struct {
				UID      int      `json:"uid"`
				Speakers []string `json:"speakers"`
				Text     string   `json:"utterance"`
			} `json:"utterances:"` // sic: FriendsQA's key has the colon
			QAs []struct {
				ID       string `json:"id"`
				Question string `json:"question"`
				Answers  []struct {
					Text      string `json:"answer_text"`
					Utterance int    `json:"utterance_id"`
				} `json:"answers"`
			} `json:"qas"`
		} `json:"paragraphs"`
	} `json:"data"`
}

// friendsScene reads FriendsQA's scene titles, "s01_e23_c06": the
// episode "s01_e23" and the scene number 6.
var friendsScene = regexp.MustCompile(`^(s\d+_e\d+)_c(\d+)$`)

// convertFriendsQA converts FriendsQA (SQuAD-like JSON over TV-show
// scenes). A question's passages are the turns of its whole episode (every
// scene of the file from that episode, in scene order): one passage per
// utterance, "Speaker A, Speaker B: utterance". Its gold units are the
// utterances its answers were annotated in (answer spans and
// speaker-answers alike name an utterance_id), each span the whole turn.
func convertFriendsQA(raw []byte, skip map[string]bool, source string) ([]dataset.Record, []string, error) {
	var f friendsFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, nil, fmt.Errorf("friendsqa: %w", err)
	}
	type scene struct{ n, di int }
	episodes := map[string][]scene{}
	var order []string
	for di, d := range f.Data {
		m := friendsScene.FindStringSubmatch(d.Title)
		if m == nil {
			return nil, nil, fmt.Errorf("friendsqa: scene title %q is not sNN_eNN_cNN", d.Title)
		}
		n, _ := strconv.Atoi(m[2])
		if _, ok := episodes[m[1]]; !ok {
			order = append(order, m[1])
		}
		episodes[m[1]] = append(episodes[m[1]], scene{n: n, di: di})
	}
	var out []dataset.Record
	seen := map[string]bool{}
	skipped, unlocated := 0, 0
	for _, ep := range order {
		scenes := episodes[ep]
		sort.SliceStable(scenes, func(i, j int) bool { return scenes[i].n < scenes[j].n })
		var passages []dataset.Passage
		at := map[[2]int]int{} // (data index, uid) → passage index
		for si := range scenes {
			d := f.Data[scenes[si].di]
			for _, p := range d.Paragraphs {
				for _, u := range p.Utterances {
					text := oneLine(u.Text)
					if text == "" {
						continue
					}
					at[[2]int{scenes[si].di, u.UID}] = len(passages)
					passages = append(passages, turnPassage(fmt.Sprintf("%s_u%d", d.Title, u.UID), strings.Join(u.Speakers, ", "), text))
				}
			}
		}
		for _, sc := range scenes {
			d := f.Data[sc.di]
			for _, p := range d.Paragraphs {
				for _, qa := range p.QAs {
					if skip[qa.ID] || skip[questionKey(qa.Question)] {
						skipped++
						continue
					}
					id := qa.ID // FriendsQA's ids (scene and wh-word) may repeat in a scene
					for n := 2; seen[id]; n++ {
						id = fmt.Sprintf("%s#%d", qa.ID, n)
					}
					rec := dataset.Record{ID: id, Question: strings.TrimSpace(qa.Question), Task: "friendsqa", Genre: "dialogue",
						Passages: slices.Clone(passages)}
					for _, a := range qa.Answers {
						if t := strings.TrimSpace(a.Text); t != "" && !slices.Contains(rec.Answers, t) {
							rec.Answers = append(rec.Answers, t)
						}
						if i, ok := at[[2]int{sc.di, a.Utterance}]; ok {
							markGold(&rec, i)
						}
					}
					if rec.SpanCount() == 0 {
						unlocated++
						continue
					}
					meta := map[string]string{"episode": ep, "scene": d.Title}
					if source != "" {
						meta["source"] = source
					}
					rec.Meta, _ = json.Marshal(meta)
					seen[id] = true
					out = append(out, rec)
				}
			}
		}
	}
	notes := []string{fmt.Sprintf("%d scenes in %d episodes; %d questions excluded, %d whose answers name no utterance left out",
		len(f.Data), len(order), skipped, unlocated)}
	return out, notes, nil
}

// qmsumMarkup is QMSum's transcription markup ("{disfmarker}",
// "{vocalsound}"): not what a user's transcript holds.
var qmsumMarkup = regexp.MustCompile(`\{[a-z_]+\}`)

type qmsumMeeting struct {
	Specific []struct {
		Query  string      `json:"query"`
		Answer string      `json:"answer"`
		Spans  [][2]string `json:"relevant_text_span"`
	} `json:"specific_query_list"`
	Transcript []struct {
		Speaker string `json:"speaker"`
		Content string `json:"content"`
	} `json:"meeting_transcripts"`
}

// convertQMSum converts QMSum's query-based meeting summarisation (one
// meeting a line). Only the specific queries are kept: each names the
// turns it was written from (relevant_text_span, inclusive turn ranges),
// which are its gold units; the general queries ("summarise the meeting")
// name none. A question's passages are its meeting's turns, one a passage
// ("Speaker: text", QMSum's markup removed); a turn left empty by that is
// dropped. Records have no ids in QMSum: a meeting is named by the hash of
// its first turns, a query by its meeting and its number there.
func convertQMSum(raw []byte, skip map[string]bool, source string) ([]dataset.Record, []string, error) {
	var ms []qmsumMeeting
	if err := json.Unmarshal(raw, &ms); err != nil {
		return nil, nil, fmt.Errorf("qmsum: %w", err)
	}
	var out []dataset.Record
	skipped, outside, noGold := 0, 0, 0
	for _, m := range ms {
		var passages []dataset.Passage
		at := make([]int, len(m.Transcript)) // turn → passage index, -1 when dropped
		var first strings.Builder
		for ti, t := range m.Transcript {
			if ti < 5 {
				first.WriteString(t.Speaker + "\x00" + t.Content + "\x00")
			}
			text := oneLine(qmsumMarkup.ReplaceAllString(t.Content, " "))
			at[ti] = -1
			if text == "" {
				continue
			}
			at[ti] = len(passages)
			passages = append(passages, turnPassage(fmt.Sprintf("t%d", ti), strings.TrimSpace(t.Speaker), text))
		}
		meeting := "qmsum-" + shortHash(first.String())
		for qi, q := range m.Specific {
			id := fmt.Sprintf("%s-q%d", meeting, qi)
			if skip[id] || skip[questionKey(q.Query)] {
				skipped++
				continue
			}
			rec := dataset.Record{ID: id, Question: strings.TrimSpace(q.Query), Answers: []string{strings.TrimSpace(q.Answer)},
				Task: "qmsum", Genre: "meeting", Passages: slices.Clone(passages)}
			for _, sp := range q.Spans {
				a, err1 := strconv.Atoi(strings.TrimSpace(sp[0]))
				b, err2 := strconv.Atoi(strings.TrimSpace(sp[1]))
				if err1 != nil || err2 != nil || a < 0 || b < a || b >= len(at) {
					outside++
					continue
				}
				for ti := a; ti <= b; ti++ {
					if at[ti] >= 0 {
						markGold(&rec, at[ti])
					}
				}
			}
			if rec.SpanCount() == 0 {
				noGold++
				continue
			}
			meta := map[string]string{"meeting": meeting}
			if source != "" {
				meta["source"] = source
			}
			rec.Meta, _ = json.Marshal(meta)
			out = append(out, rec)
		}
	}
	notes := []string{fmt.Sprintf("%d meetings; %d queries excluded, %d turn ranges outside the transcript dropped, %d queries without a gold turn left out",
		len(ms), skipped, outside, noGold)}
	return out, notes, nil
}
