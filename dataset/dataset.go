// Package dataset is ctxsel's labelled data: the common JSONL format of
// ../shared/data/README.md (Record, Passage, gold passages and gold
// sentence spans), its loader (plain or gzip, every record checked),
// HELMET-style pooling into long contexts (Pool), the seeded splits by
// question (SplitOf's 60/20/20 by a hash of the id, SplitShare's seeded
// share), and the LaRA benchmark read as records (LoadLaRA). Measuring
// (eval), mining (mine), training (ldar/ldartrain) and export read it.
package dataset

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Passage is one labelled passage: Gold marks evidence for the answer.
type Passage struct {
	ID   string `json:"id"`
	Text string `json:"text"`
	Gold bool   `json:"gold"`
	// GoldSpans are the UTF-8 byte offsets [start, end) into Text of each
	// gold evidence sentence (sentence-level labels, e.g. HotpotQA's
	// supporting facts); Gold is then true. Optional.
	GoldSpans [][2]int `json:"gold_spans,omitempty"`
	// GoldIDs, when set, names the gold unit of each of GoldSpans (one id
	// a span, in order): a unit that occurs in several passages, as a turn
	// in the overlap of two chunks of one document does, has one id, and
	// the record's spans that share an id are one unit, counted once and
	// kept when any of them is. Spans without ids are a unit each.
	GoldIDs []string `json:"gold_ids,omitempty"`
	// Title is the title of the document the passage comes from, when the
	// source gives one apart from its text (an index gives every chunk its
	// document's): eval hands it to a text selector as the passage's
	// header. Optional.
	Title string `json:"title,omitempty"`
}

// GoldUnits numbers the record's gold units: units[i][j] is the unit of
// passage i's span j (0 … n-1, in order of first occurrence), spans
// sharing a GoldIDs id sharing a number; n is how many units there are.
func (r *Record) GoldUnits() (units [][]int, n int) {
	units = make([][]int, len(r.Passages))
	byID := map[string]int{}
	for i, p := range r.Passages {
		units[i] = make([]int, len(p.GoldSpans))
		for j := range p.GoldSpans {
			if j < len(p.GoldIDs) { // a record not loaded (unchecked) may have fewer
				if u, ok := byID[p.GoldIDs[j]]; ok {
					units[i][j] = u
					continue
				}
				byID[p.GoldIDs[j]] = n
			}
			units[i][j] = n
			n++
		}
	}
	return units, n
}

// HasSpans reports whether the record carries sentence-level labels: at
// least one passage with gold spans.
func (r *Record) HasSpans() bool {
	for _, p := range r.Passages {
		if len(p.GoldSpans) > 0 {
			return true
		}
	}
	return false
}

// SpanCount is the number of gold units over all passages: the gold
// spans, those that share a GoldIDs id counted once.
func (r *Record) SpanCount() int {
	_, n := r.GoldUnits()
	return n
}

// Record is one question with its passages, in the common format of
// ../shared/data/README.md.
type Record struct {
	ID       string    `json:"id"`
	Question string    `json:"question"`
	Answers  []string  `json:"answers"`
	Passages []Passage `json:"passages"`
	Task     string    `json:"task,omitempty"`
	// Genre names the kind of text the passages are (dialogue, meeting,
	// policy, finance-table, …), so figures can be pooled per genre; empty
	// for the encyclopedic sets that predate it. Optional.
	Genre string          `json:"genre,omitempty"`
	Meta  json.RawMessage `json:"meta,omitempty"`
}

// GoldCount is the number of gold passages.
func (r *Record) GoldCount() int {
	n := 0
	for _, p := range r.Passages {
		if p.Gold {
			n++
		}
	}
	return n
}

// maxLine bounds one JSONL record (SummHay records hold ~100 documents).
const maxLine = 64 << 20

// LoadFile reads a JSONL file, gzip-compressed or plain (detected from the
// content, not the name).
func LoadFile(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load dataset: %w", err)
	}
	defer f.Close()
	recs, err := Load(f)
	if err != nil {
		return nil, fmt.Errorf("load dataset %s: %w", path, err)
	}
	return recs, nil
}

// Load reads JSONL records from r, transparently decompressing gzip. Every
// record is checked: an id, a question, unique non-empty passage ids.
func Load(r io.Reader) ([]Record, error) {
	br := bufio.NewReader(r)
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		defer gz.Close()
		br = bufio.NewReader(gz)
	}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 1<<20), maxLine)
	var recs []Record
	seen := map[string]int{}
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var rec Record
		dec := json.NewDecoder(bytes.NewReader(b))
		if err := dec.Decode(&rec); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if err := rec.validate(); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if prev, dup := seen[rec.ID]; dup {
			return nil, fmt.Errorf("line %d: record id %q repeats line %d", line, rec.ID, prev)
		}
		seen[rec.ID] = line
		recs = append(recs, rec)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("a record is longer than %d MiB: %w", maxLine>>20, err)
		}
		return nil, fmt.Errorf("read: %w", err)
	}
	if len(recs) == 0 {
		return nil, errors.New("no records")
	}
	return recs, nil
}

func (r *Record) validate() error {
	if strings.TrimSpace(r.ID) == "" {
		return errors.New("record without id")
	}
	if strings.TrimSpace(r.Question) == "" {
		return fmt.Errorf("record %q: empty question", r.ID)
	}
	if len(r.Passages) == 0 {
		return fmt.Errorf("record %q: no passages", r.ID)
	}
	ids := make(map[string]bool, len(r.Passages))
	for i, p := range r.Passages {
		if p.ID == "" {
			return fmt.Errorf("record %q: passage %d without id", r.ID, i)
		}
		if ids[p.ID] {
			return fmt.Errorf("record %q: duplicate passage id %q", r.ID, p.ID)
		}
		ids[p.ID] = true
		for _, sp := range p.GoldSpans {
			if sp[0] < 0 || sp[1] <= sp[0] || sp[1] > len(p.Text) {
				return fmt.Errorf("record %q: passage %q: gold span [%d, %d) is not inside its %d bytes", r.ID, p.ID, sp[0], sp[1], len(p.Text))
			}
		}
		if p.GoldIDs != nil && len(p.GoldIDs) != len(p.GoldSpans) {
			return fmt.Errorf("record %q: passage %q: %d gold ids for %d gold spans", r.ID, p.ID, len(p.GoldIDs), len(p.GoldSpans))
		}
		for _, id := range p.GoldIDs {
			if strings.TrimSpace(id) == "" {
				return fmt.Errorf("record %q: passage %q: an empty gold id", r.ID, p.ID)
			}
		}
		if len(p.GoldSpans) > 0 && !p.Gold {
			return fmt.Errorf("record %q: passage %q has gold spans but is not gold", r.ID, p.ID)
		}
	}
	return nil
}
