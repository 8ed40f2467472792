package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel/dataset"
)

type molweniFile struct {
	Data struct {
		Dialogues []struct {
			EDUs []struct {
				Text    string `json:"text"`
				Speaker string `json:"speaker"`
			} `json:"edus"`
			Context string    `json:"context"`
			QAs     []squadQA `json:"qas"`
		} `json:"dialogues"`
	} `json:"data"`
}

// molweniStart is the synthetic log's first session: Molweni's dialogues
// carry no times, and a chat export's lines do ("[time] Name: text").
var molweniStart = time.Date(2023, time.March, 1, 19, 0, 0, 0, time.UTC)

// molweniSeed orders the dialogues for the validation/test halves.
const molweniSeed = 1

// convertMolweni converts Molweni's MRC file (multiparty Ubuntu IRC chats,
// SQuAD-like questions over each dialogue's "context") into one
// multi-session chat log: the dialogues in file order are its sessions,
// one a day (from molweniStart, synthetic), one turn a line
// "[YYYY-MM-DD HH:MM] speaker: text", a minute between turns and a blank
// line between sessions. Every question's passages are the whole log's
// turns; its gold turn is the one whose line holds its answer span (the
// span's answer_start, in code points of the lowercased context, mapped to
// the edu that holds it, the answer text checked there), whole, prefix
// included. Unanswerable questions are left out. There is no train part:
// the conversations (dialogues that share a turn, molweniConversations),
// in a seeded order, go half to validation, half to test, a whole
// conversation to one half, and each question's id is chosen so that
// dataset.SplitOf (eval --split, seed 1) reads that half.
func convertMolweni(raw []byte, skip map[string]bool, source string) ([]dataset.Record, []string, error) {
	var f molweniFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, nil, fmt.Errorf("molweni: %w", err)
	}
	ds := f.Data.Dialogues
	var passages []dataset.Passage
	first := make([]int, len(ds)) // dialogue → index of its first edu's passage in edu order
	at := map[[2]int]int{}        // (dialogue, edu) → passage index
	clock := molweniStart
	for di, d := range ds {
		first[di] = len(passages)
		if day := molweniStart.AddDate(0, 0, di); day.After(clock) {
			clock = day
		}
		for ei, e := range d.EDUs {
			text := oneLine(e.Text)
			if text == "" {
				continue
			}
			at[[2]int{di, ei}] = len(passages)
			p := turnPassage(fmt.Sprintf("d%d_e%d", di, ei), oneLine(e.Speaker), text)
			p.Text = "[" + clock.Format("2006-01-02 15:04") + "] " + p.Text
			passages = append(passages, p)
			clock = clock.Add(time.Minute)
		}
		if n := len(passages); n > first[di] && di < len(ds)-1 {
			passages[n-1].Text += "\n" // a blank line after each session
		}
	}
	group, groups := molweniConversations(len(ds), func(di int) []string {
		var lines []string
		for _, e := range ds[di].EDUs {
			if text := oneLine(e.Text); text != "" {
				lines = append(lines, oneLine(e.Speaker)+"\x00"+text)
			}
		}
		return lines
	})
	half := molweniHalves(group, groups)
	var out []dataset.Record
	impossible, skipped, unmapped, dialogues := 0, 0, 0, 0
	for di, d := range ds {
		piece := func(i int) string { return d.EDUs[i].Speaker + ": " + d.EDUs[i].Text }
		edus := molweniEDUs(d.Context, len(d.EDUs), piece)
		kept := 0
		for _, qa := range d.QAs {
			if qa.IsImpossible || len(qa.Answers) == 0 {
				impossible++
				continue
			}
			if skip[qa.ID] || skip[questionKey(qa.Question)] {
				skipped++
				continue
			}
			rec := dataset.Record{Question: strings.TrimSpace(qa.Question), Task: "molweni", Genre: "chat",
				Passages: slices.Clone(passages)}
			for _, a := range qa.Answers {
				for _, ei := range molweniAnswerEDUs(d.Context, edus, a.Start, a.Text, piece) {
					if pi, ok := at[[2]int{di, ei}]; ok {
						markGold(&rec, pi)
					}
				}
				if t := strings.TrimSpace(a.Text); t != "" && !slices.Contains(rec.Answers, t) {
					rec.Answers = append(rec.Answers, t)
				}
			}
			if rec.SpanCount() == 0 {
				unmapped++
				continue
			}
			rec.ID = molweniID(di, qa.ID, half[di])
			meta := map[string]string{"dialogue": fmt.Sprintf("d%03d", di), "conversation": fmt.Sprintf("c%03d", group[di]), "half": string(half[di])}
			if source != "" {
				meta["source"] = source
			}
			rec.Meta, _ = json.Marshal(meta)
			out = append(out, rec)
			kept++
		}
		if kept > 0 {
			dialogues++
		}
	}
	nval := 0
	for _, h := range half {
		if h == dataset.SplitValidation {
			nval++
		}
	}
	notes := []string{fmt.Sprintf("%d dialogues (sessions) in %d conversations, %d turns; %d questions kept from %d dialogues; %d unanswerable and %d excluded left out, %d whose answer could not be mapped to a turn dropped; %d dialogues in validation, %d in test",
		len(ds), groups, len(passages), len(out), dialogues, impossible, skipped, unmapped, nval, len(ds)-nval)}
	return out, notes, nil
}

// molweniConversations groups dialogues that share a turn (the same
// speaker and text): Molweni's dialogues are overlapping windows cut from
// the same IRC conversations (in its test file, 562 of 845 turns recur in
// another dialogue). group[di] numbers dialogue di's conversation, in the
// order of their first dialogues; n is how many there are.
func molweniConversations(count int, lines func(int) []string) (group []int, n int) {
	parent := make([]int, count)
	for i := range parent {
		parent[i] = i
	}
	var root func(int) int
	root = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	first := map[string]int{}
	for di := range count {
		for _, l := range lines(di) {
			if o, ok := first[l]; ok {
				a, b := root(o), root(di)
				parent[max(a, b)] = min(a, b) // the root is the group's first dialogue
			} else {
				first[l] = di
			}
		}
	}
	group = make([]int, count)
	number := map[int]int{}
	for di := range count {
		r := root(di)
		if _, ok := number[r]; !ok {
			number[r] = len(number)
		}
		group[di] = number[r]
	}
	return group, len(number)
}

// molweniHalves puts the n conversations, in a seeded order, half in
// validation (the first ⌈n/2⌉), half in test, each dialogue (group[di]
// its conversation) with its conversation.
func molweniHalves(group []int, n int) []dataset.Split {
	part := make([]dataset.Split, n)
	for i, g := range rand.New(rand.NewPCG(molweniSeed, 0x6d6f6c)).Perm(n) {
		part[g] = dataset.SplitTest
		if i < (n+1)/2 {
			part[g] = dataset.SplitValidation
		}
	}
	out := make([]dataset.Split, len(group))
	for di, g := range group {
		out[di] = part[g]
	}
	return out
}

// molweniID names question qid of dialogue di
// "molweni-dDDD-QID-N", N the smallest number for which dataset.SplitOf
// at seed 1 puts the id in part, so that eval --split reads the halves.
func molweniID(di int, qid string, part dataset.Split) string {
	for n := 0; ; n++ {
		id := fmt.Sprintf("molweni-d%03d-%s-%d", di, qid, n)
		if dataset.SplitOf(id, 1) == part {
			return id
		}
	}
}

// molweniEDUs returns where each of a dialogue's n edus starts in its
// context, in code points (Molweni's context is the edus' lowercased
// "speaker: text" joined by one space; offsets count Python code points),
// with one more entry for the context's end; nil when the edus do not add
// up to the context's length.
func molweniEDUs(context string, n int, piece func(int) string) []int {
	starts := make([]int, n+1)
	pos := 0
	for i := range n {
		starts[i] = pos
		pos += utf8.RuneCountInString(piece(i)) + 1
	}
	starts[n] = pos - 1
	if n == 0 || starts[n] != utf8.RuneCountInString(context) {
		return nil
	}
	return starts
}

// molweniAnswerEDUs are the edus an answer span [start, start+len(text))
// overlaps, when the context holds the answer there and each edu's own
// text holds its part (case folded: the context is lowercased); nil
// otherwise.
func molweniAnswerEDUs(context string, starts []int, start int, text string, piece func(int) string) []int {
	ctx := []rune(context)
	ans := []rune(text)
	if starts == nil || text == "" || start < 0 || start > len(ctx) || len(ans) > len(ctx)-start {
		return nil
	}
	end := start + len(ans)
	if string(ctx[start:end]) != text {
		return nil
	}
	var out []int
	for i := range len(starts) - 1 {
		s, e := starts[i], starts[i+1]-1 // the edu's runes, without the joining space
		if s >= end || start >= e {
			continue
		}
		own := []rune(piece(i))
		a, b := max(start, s)-s, min(end, e)-s
		if b > len(own) || !strings.EqualFold(string(own[a:b]), string(ctx[max(start, s):min(end, e)])) {
			return nil
		}
		out = append(out, i)
	}
	return out
}
