package llmtest

import (
	"encoding/binary"
	"hash/fnv"
	"strings"
)

// Question is one entry of a simulated reader's table.
type Question struct {
	// Question is looked for verbatim in the prompt.
	Question string
	// Gold are the texts of the passages the answer needs: all must be in
	// the prompt.
	Gold []string
	// Answer is returned when they are.
	Answer string
}

// ReaderOptions tune Reader.
type ReaderOptions struct {
	// Unanswerable is the reply when gold is missing (default "unanswerable").
	Unanswerable string
	// DistractionPer1k is the chance, per 1,000 prompt words, that the
	// reader answers "unanswerable" even with all gold present (capped at
	// 1): a crude stand-in for long-context degradation. 0 disables it.
	DistractionPer1k float64
	// Seed makes the distraction draws reproducible; a given (seed,
	// prompt) always draws the same.
	Seed uint64
}

// Reader is a simulated reader: for the table question found in the prompt
// (the longest one that occurs), it replies with the answer iff the prompt
// holds every gold text, else "unanswerable"; optionally it is distracted
// with a probability growing with the prompt's length.
//
// It is a plumbing check. Its accuracy says nothing about any model.
func Reader(table []Question, opts ReaderOptions) Replier {
	if opts.Unanswerable == "" {
		opts.Unanswerable = "unanswerable"
	}
	qs := append([]Question(nil), table...)
	return func(c Call) Reply {
		prompt := c.Prompt()
		var q *Question
		for i := range qs {
			if strings.Contains(prompt, qs[i].Question) && (q == nil || len(qs[i].Question) > len(q.Question)) {
				q = &qs[i]
			}
		}
		if q == nil {
			return Reply{Content: opts.Unanswerable}
		}
		for _, g := range q.Gold {
			if !strings.Contains(prompt, g) {
				return Reply{Content: opts.Unanswerable}
			}
		}
		if opts.DistractionPer1k > 0 {
			p := min(1, opts.DistractionPer1k*float64(len(strings.Fields(prompt)))/1000)
			if draw(opts.Seed, prompt) < p {
				return Reply{Content: opts.Unanswerable}
			}
		}
		return Reply{Content: q.Answer}
	}
}

// draw is a deterministic uniform number in [0,1) from seed and s.
func draw(seed uint64, s string) float64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	h.Write([]byte(s))
	return float64(h.Sum64()>>11) / (1 << 53)
}
