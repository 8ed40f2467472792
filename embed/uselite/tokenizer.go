package uselite

import (
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// wordBoundary is U+2581 LOWER ONE EIGHTH BLOCK, SentencePiece's marker for
// "a word starts here".
const wordBoundary = '\u2581'

// reservedPieces is how many leading vocabulary entries (unknown, <s>, </s>,
// extra_token_id_1..3) never take part in segmentation. Id 0 is the unknown
// piece.
const reservedPieces = 6

// tokenizer is a unigram SentencePiece segmenter that reproduces, id for id,
// the Viterbi tokenizer shipped with TF.js's universal-sentence-encoder (the
// one @energetic-ai/embeddings uses), quirks included:
//
//   - input is NFKC-normalised; a non-empty result gets a leading U+2581 and
//     every U+0020 (after normalisation) becomes U+2581. Nothing else (tabs,
//     newlines, other spaces) is touched, so those become unknown pieces.
//   - symbols are Unicode code points.
//   - from every position the trie yields each vocabulary piece that is a
//     prefix of the rest of the input; when none is, a one-symbol unknown
//     piece (id 0, score 0) stands in.
//   - lattice scores are float64 sums of piece scores; a candidate replaces
//     the best one at its end position when that best is exactly 0 (read as
//     "unset") or the candidate is >= it, candidates being visited by start
//     position ascending, so ties go to the later start.
//   - the vocabulary's null scores count as 0; of duplicated pieces the last
//     one wins.
//   - the backward pass steps back by the UTF-16 length of the chosen piece
//     (1 for the unknown piece).
//   - runs of consecutive unknown ids collapse into one.
//
// Invalid UTF-8 decodes as U+FFFD per bad byte, which is never a piece and
// so becomes id 0.
type tokenizer struct {
	pieces []string
	// stepBack[id] is the UTF-16 length of piece id (the TF.js backtrack step).
	stepBack []int32
	nodes    []trieNode
	// kids[nodes[i].first : nodes[i].first+nodes[i].count] are node i's
	// children, sorted by rune.
	kids []trieEdge
}

type trieNode struct {
	score        float64
	id           int32 // -1 when no piece ends here
	first, count int32
}

type trieEdge struct {
	r    rune
	node int32
}

// child returns the child of node along r, or -1.
func (t *tokenizer) child(node int32, r rune) int32 {
	nd := &t.nodes[node]
	kids := t.kids[nd.first : nd.first+nd.count]
	lo, hi := 0, len(kids)
	for hi-lo > 8 {
		mid := int(uint(lo+hi) >> 1)
		switch k := kids[mid]; {
		case k.r < r:
			lo = mid + 1
		case k.r > r:
			hi = mid
		default:
			return k.node
		}
	}
	for _, k := range kids[lo:hi] {
		if k.r == r {
			return k.node
		}
	}
	return -1
}

func newTokenizer(vocabJSON []byte) (*tokenizer, error) {
	var raw [][2]any
	if err := json.Unmarshal(vocabJSON, &raw); err != nil {
		return nil, fmt.Errorf("parse vocabulary: %w", err)
	}
	if len(raw) <= reservedPieces {
		return nil, fmt.Errorf("vocabulary has only %d pieces", len(raw))
	}
	t := &tokenizer{
		pieces:   make([]string, len(raw)),
		stepBack: make([]int32, len(raw)),
		nodes:    make([]trieNode, 1, 64*1024),
	}
	edges := make(map[uint64]int32, 64*1024) // parent<<21 | rune → child, while building
	t.nodes[0] = trieNode{id: -1}
	for id, e := range raw {
		piece, ok := e[0].(string)
		if !ok {
			return nil, fmt.Errorf("vocabulary entry %d: piece is %T, not a string", id, e[0])
		}
		var score float64
		switch s := e[1].(type) {
		case float64:
			score = s
		case nil: // JavaScript: null + x === x
		default:
			return nil, fmt.Errorf("vocabulary entry %d: score is %T", id, e[1])
		}
		t.pieces[id] = piece
		t.stepBack[id] = int32(len(utf16.Encode([]rune(piece))))
		if id >= reservedPieces {
			t.insert(edges, piece, score, int32(id))
		}
	}
	// Lay the edges out per parent, sorted by rune: keys sort by parent,
	// then rune.
	keys := make([]uint64, 0, len(edges))
	for key := range edges {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	t.kids = make([]trieEdge, len(keys))
	for i, key := range keys {
		t.kids[i] = trieEdge{r: rune(key & (1<<21 - 1)), node: edges[key]}
		p := &t.nodes[key>>21]
		if p.count == 0 {
			p.first = int32(i)
		}
		p.count++
	}
	if t.stepBack[0] < 1 {
		return nil, fmt.Errorf("vocabulary: unknown piece is empty")
	}
	return t, nil
}

func (t *tokenizer) insert(edges map[uint64]int32, piece string, score float64, id int32) {
	node := int32(0)
	n := 0
	for _, r := range piece {
		key := uint64(node)<<21 | uint64(r)
		child, ok := edges[key]
		if !ok {
			child = int32(len(t.nodes))
			t.nodes = append(t.nodes, trieNode{id: -1})
			edges[key] = child
		}
		node = child
		n++
	}
	if n == 0 {
		return
	}
	t.nodes[node].score = score
	t.nodes[node].id = id
}

// tokScratch holds the buffers one encode call needs, reused across calls.
type tokScratch struct {
	norm  []byte
	syms  []rune
	best  []float64
	words []int32
	ids   []int32
}

// encode appends the token ids of text to sc.ids[:0] and returns them.
func (t *tokenizer) encode(text string, sc *tokScratch) []int32 {
	sc.norm = norm.NFKC.AppendString(sc.norm[:0], text)
	sc.ids = sc.ids[:0]
	if len(sc.norm) == 0 {
		return sc.ids
	}
	syms := append(sc.syms[:0], wordBoundary)
	for b := sc.norm; len(b) > 0; {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		if r == ' ' {
			r = wordBoundary
		}
		syms = append(syms, r)
	}
	sc.syms = syms
	n := len(syms)

	best := grow(sc.best, n+1)
	words := grow(sc.words, n+1)
	sc.best, sc.words = best, words
	clear(best)
	clear(words)

	// Forward pass. Visiting start positions in ascending order and, from
	// each, end positions in ascending order delivers every end position's
	// candidates in the same order as TF.js (start ascending), and best[s] is
	// final before any edge leaves s.
	relax := func(s, e int, score float64, id int32) {
		v := score + best[s]
		if best[e] == 0 || v >= best[e] {
			best[e] = v
			words[e] = id
		}
	}
	for s := 0; s < n; s++ {
		node := int32(0)
		matched := false
		for e := s; e < n; e++ {
			child := t.child(node, syms[e])
			if child < 0 {
				break
			}
			node = child
			if nd := t.nodes[node]; nd.id >= 0 {
				matched = true
				relax(s, e+1, nd.score, nd.id)
			}
		}
		if !matched {
			relax(s, s+1, 0, 0)
		}
	}

	// Backward pass, then collapse runs of unknowns, then reverse.
	ids := sc.ids
	prevUnk := false
	for i := n; i > 0; {
		id := words[i]
		if !(prevUnk && id == 0) {
			ids = append(ids, id)
		}
		prevUnk = id == 0
		i -= int(t.stepBack[id])
	}
	for i, j := 0, len(ids)-1; i < j; i, j = i+1, j-1 {
		ids[i], ids[j] = ids[j], ids[i]
	}
	sc.ids = ids
	return ids
}

func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n, n+n/2)
}
