package ctxsel

import (
	"fmt"
	"slices"
)

// Order is the order in which selected passages are returned.
type Order int

const (
	// RankOrder returns passages best first.
	RankOrder Order = iota
	// DocumentOrder returns passages in their input (document) order.
	DocumentOrder
	// EdgesOrder puts the best passages at both ends and the weakest in the
	// middle, where long-context readers attend least ("lost in the middle").
	EdgesOrder
)

// ParseOrder reads "rank", "document" or "edges".
func ParseOrder(s string) (Order, error) {
	switch s {
	case "", "rank":
		return RankOrder, nil
	case "document", "doc":
		return DocumentOrder, nil
	case "edges":
		return EdgesOrder, nil
	}
	return 0, invalidf("order %q: want rank, document or edges", s)
}

func (o Order) String() string {
	switch o {
	case DocumentOrder:
		return "document"
	case EdgesOrder:
		return "edges"
	}
	return "rank"
}

// Caps bound any strategy's choice. Zero means no bound. MaxTokens is a hard
// limit and wins over MinK: it drops the weakest selected passages until the
// rest fits, stopping before the passage that would cross it.
type Caps struct {
	MinK      int `json:"min_k,omitempty"`
	MaxK      int `json:"max_k,omitempty"`
	MaxTokens int `json:"max_tokens,omitempty"`
}

// Validate reports caps that cannot be met.
func (c Caps) Validate() error {
	switch {
	case c.MinK < 0 || c.MaxK < 0 || c.MaxTokens < 0:
		return invalidf("caps must not be negative (min_k=%d max_k=%d max_tokens=%d)", c.MinK, c.MaxK, c.MaxTokens)
	case c.MaxK > 0 && c.MinK > c.MaxK:
		return invalidf("min_k=%d exceeds max_k=%d", c.MinK, c.MaxK)
	}
	return nil
}

// Decision says what decided a cut: the gap, knee, threshold, mass or band
// that a strategy found, at which rank, with the scores either side.
type Decision struct {
	// Kind is one of fixed, budget, all, gap, spike, knee, threshold, mass, band.
	Kind string `json:"kind"`
	// Rank is the rank (0 = best) where the decision fell: the last rank
	// before the gap or knee, the last rank kept by a threshold.
	Rank int `json:"rank"`
	// Value is the deciding quantity: the gap size, the knee height, the
	// threshold, the probability mass reached, the token budget.
	Value float64 `json:"value"`
	// Above and Below are the scores at Rank and Rank+1 (when they exist).
	Above *float64 `json:"above,omitempty"`
	Below *float64 `json:"below,omitempty"`
	// SearchFrom and SearchTo bound the ranks a search looked at (gap
	// indices for Adaptive-k), when the strategy restricts its search.
	SearchFrom *int `json:"search_from,omitempty"`
	SearchTo   *int `json:"search_to,omitempty"`
}

// Cut is a strategy's raw decision: ranks [Start, End) are selected.
type Cut struct {
	Start, End int
	Decision   Decision
	Reason     string
	// Guards names the guards that changed or qualified the strategy's own
	// rule (head_guard, window_clamped, …); Reason says what each did.
	Guards []string
}

// Explanation tells a user why a selection is what it is.
type Explanation struct {
	Strategy string             `json:"strategy"`
	Params   map[string]float64 `json:"params"`
	Caps     Caps               `json:"caps"`
	N        int                `json:"n"`
	// StrategyK is how many passages the strategy chose before caps.
	StrategyK int `json:"strategy_k"`
	// Start is the first selected rank (non-zero only for band strategies).
	Start       int      `json:"start"`
	K           int      `json:"k"`
	Decision    Decision `json:"decision"`
	Reason      string   `json:"reason"`
	CapsApplied []string `json:"caps_applied,omitempty"`
	// Guards names every guard that fired: the strategy's own (head_guard,
	// head_gap, window_clamped) and Select's: min_k_fallback (the strategy chose
	// nothing and min_k filled the context) and tie_split (the cut falls
	// inside a run of equal scores, so which of them are kept follows the
	// tie-break rule: input order). Reason describes each.
	Guards      []string `json:"guards,omitempty"`
	Tokens      int      `json:"tokens"`
	TotalTokens int      `json:"total_tokens"`
}

// Selection is the result of Select.
type Selection struct {
	// IDs are the selected candidates' ids in the requested order.
	IDs []string `json:"ids"`
	// Indices are their input positions, in the same order.
	Indices []int `json:"indices"`
	K       int   `json:"k"`
	// Tokens counts what is sent: the selected passages, or, when Evidence
	// is set, their pruned texts.
	Tokens      int         `json:"tokens"`
	Explanation Explanation `json:"explanation"`
	// Evidence is set by a selector that prunes inside passages (package
	// evidence): Evidence[i] is what is sent of passage Indices[i]. Nil
	// means whole passages are sent.
	Evidence []Evidence `json:"evidence,omitempty"`
}

// Evidence is what a pruning selector keeps of one selected passage: its
// header and some of its sentences, as byte spans into the passage text and
// as the text that is sent.
type Evidence struct {
	// Header is the passage's context line (a title, a Markdown heading)
	// when one is sent, as byte offsets [start, end) into the passage.
	Header *[2]int `json:"header,omitempty"`
	// Title is the header sent when the passage's text has none of its
	// own and its source gave one (TextQuery.Headers: an index's document
	// title).
	Title string `json:"title,omitempty"`
	// Above are the lines of the passage's document above it that are sent
	// with it, after the Title (TextQuery.Above: its heading path, the
	// header of a table it starts inside), as sent: blank lines dropped,
	// spaces made single, but a space-aligned table's header keeps its
	// layout. Title and Above are the only text sent that is not the
	// passage's.
	Above string `json:"above,omitempty"`
	// Spans are the kept sentences, byte offsets [start, end) into the
	// passage, in document order, disjoint.
	Spans [][2]int `json:"spans"`
	// Text is what is sent: the Title, Above and the header (each when
	// sent, each followed by a line break), then the kept sentences in
	// document order, a gap between them marked by " … " (in text made of
	// lines, before a unit that starts its line, a line break and the
	// line's indent).
	Text string `json:"text"`
	// Tokens is the exact token count of Text; PassageTokens that of the
	// whole passage.
	Tokens        int `json:"tokens"`
	PassageTokens int `json:"passage_tokens"`
	// KeptScore is the score of the weakest kept sentence and DroppedScore
	// that of the best dropped one (nil when none was dropped): why the
	// cut fell where it did.
	KeptScore    float64  `json:"kept_score"`
	DroppedScore *float64 `json:"dropped_score,omitempty"`
	// Sentences is how many sentences the passage has (len(Spans) of them
	// were kept); Why says in words what was kept and why.
	Sentences int    `json:"sentences"`
	Why       string `json:"why"`
}

// Strategy decides where to cut a similarity curve. Implementations are pure
// functions of the curve (no I/O) and must not keep it.
type Strategy interface {
	Name() string
	// Params returns every parameter with the value in use, defaults included.
	Params() map[string]float64
	Cut(c *Curve) (Cut, error)
}

// Select applies a strategy and caps to a curve.
func Select(c *Curve, s Strategy, caps Caps, order Order) (Selection, error) {
	if c == nil || c.Len() == 0 {
		return Selection{}, invalidf("no candidates")
	}
	if s == nil {
		return Selection{}, invalidf("no strategy")
	}
	if err := caps.Validate(); err != nil {
		return Selection{}, err
	}
	cut, err := s.Cut(c)
	if err != nil {
		return Selection{}, fmt.Errorf("strategy %s: %w", s.Name(), err)
	}
	n := c.Len()
	if cut.Start < 0 || cut.End < cut.Start || cut.End > n {
		return Selection{}, fmt.Errorf("strategy %s returned an invalid band [%d, %d) of %d", s.Name(), cut.Start, cut.End, n)
	}
	start, end := cut.Start, cut.End
	var applied []string
	guards, reason := slices.Clone(cut.Guards), cut.Reason
	if caps.MinK > 0 && end-start < caps.MinK && end < n {
		if end == start {
			guards = append(guards, "min_k_fallback")
			reason += fmt.Sprintf("; the strategy selected nothing, so min_k=%d filled the context from rank %d (min_k=0 allows an empty selection)", caps.MinK, start)
		}
		end = min(n, start+caps.MinK)
		applied = append(applied, "min_k")
	}
	if caps.MaxK > 0 && end-start > caps.MaxK {
		end = start + caps.MaxK
		applied = append(applied, "max_k")
	}
	ranked := c.Top(min(n, end+1))[start:end] // one rank more: tieSplit reads it
	tokens := 0
	for i, idx := range ranked {
		t := c.TokensOf(idx)
		if caps.MaxTokens > 0 && tokens+t > caps.MaxTokens {
			ranked = ranked[:i]
			end = start + i
			applied = append(applied, "max_tokens")
			break
		}
		tokens += t
	}
	if note := tieSplit(c, start, end); note != "" {
		guards = append(guards, "tie_split")
		reason += "; " + note
	}
	ordered := arrange(ranked, order)
	sel := Selection{
		IDs:     make([]string, len(ordered)),
		Indices: ordered,
		K:       len(ordered),
		Tokens:  tokens,
		Explanation: Explanation{
			Strategy:    s.Name(),
			Params:      s.Params(),
			Caps:        caps,
			N:           n,
			StrategyK:   cut.End - cut.Start,
			Start:       start,
			K:           end - start,
			Decision:    cut.Decision,
			Reason:      reason,
			CapsApplied: applied,
			Guards:      guards,
			Tokens:      tokens,
			TotalTokens: c.TotalTokens(),
		},
	}
	for i, idx := range ordered {
		sel.IDs[i] = c.cands[idx].ID
	}
	return sel, nil
}

// tieSplit describes a selected band [start, end) whose edge falls inside a
// run of equal scores, or returns "". Strategies decide how many passages
// to keep from the scores alone, so that count never depends on the order
// ties are broken in; which of the tied passages fill it does, and the
// Curve's rule decides: equal scores rank in input order.
func tieSplit(c *Curve, start, end int) string {
	n := c.Len()
	if end <= start {
		return ""
	}
	top := c.Top(min(n, end+1))
	var v float64
	switch {
	case end < n && c.scores[top[end-1]] == c.scores[top[end]]:
		v = c.scores[top[end]]
	case start > 0 && c.scores[top[start-1]] == c.scores[top[start]]:
		v = c.scores[top[start]]
	default:
		return ""
	}
	tied, kept := 0, 0
	for _, x := range c.scores {
		if x == v {
			tied++
		}
	}
	for _, i := range top[start:end] {
		if c.scores[i] == v {
			kept++
		}
	}
	return fmt.Sprintf("the cut splits %d passages tied at score %.6g: %d of them kept, the first in input order (equal scores rank in input order)", tied, v, kept)
}

// arrange returns a fresh slice of the ranked input indices in the given order.
func arrange(ranked []int, order Order) []int {
	out := slices.Clone(ranked)
	if out == nil {
		out = []int{}
	}
	switch order {
	case DocumentOrder:
		slices.Sort(out)
	case EdgesOrder:
		// ranks 0,2,4,… from the front, then …,5,3,1 at the back.
		k := len(ranked)
		front, back := 0, k-1
		for r, idx := range ranked {
			if r%2 == 0 {
				out[front] = idx
				front++
			} else {
				out[back] = idx
				back--
			}
		}
	}
	return out
}
