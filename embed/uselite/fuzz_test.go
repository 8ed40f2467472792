package uselite

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"sort"
	"sync"
	"testing"
	"unicode/utf16"

	"golang.org/x/text/unicode/norm"
)

// literalTokenizer follows the TF.js tokenizer step by step (trie of maps,
// a lattice of per-end-position maps keyed by start position, JavaScript's
// ascending integer-key iteration), as an independent check on the
// optimised tokenizer.
type literalTokenizer struct {
	pieces []string
	root   *litNode
}

type litNode struct {
	children map[rune]*litNode
	end      bool
	key      []rune
	score    float64
	index    int
}

var (
	litOnce sync.Once
	litTok  *literalTokenizer
)

func loadLiteral(t testing.TB) *literalTokenizer {
	litOnce.Do(func() {
		var raw [][2]any
		if err := json.Unmarshal(vocabJSON, &raw); err != nil {
			panic(err)
		}
		lt := &literalTokenizer{root: &litNode{children: map[rune]*litNode{}}}
		for i, e := range raw {
			p := e[0].(string)
			lt.pieces = append(lt.pieces, p)
			if i < reservedPieces {
				continue
			}
			score, _ := e[1].(float64) // null → 0
			node := lt.root
			syms := []rune(p)
			for j, r := range syms {
				c := node.children[r]
				if c == nil {
					c = &litNode{children: map[rune]*litNode{}, key: append(slices.Clone(node.key), r)}
					node.children[r] = c
				}
				node = c
				if j == len(syms)-1 {
					node.end, node.score, node.index = true, score, i
				}
			}
		}
		litTok = lt
	})
	return litTok
}

func (lt *literalTokenizer) encode(text string) []int {
	s := norm.NFKC.String(text)
	if len(s) > 0 {
		b := []rune{wordBoundary}
		for _, r := range s {
			if r == ' ' {
				r = wordBoundary
			}
			b = append(b, r)
		}
		s = string(b)
	}
	symbols := []rune(s)
	type piece struct {
		key   []rune
		score float64
		index int
	}
	nodes := make([]map[int][]piece, len(symbols)+1)
	words := make([]int, len(symbols)+1)
	best := make([]float64, len(symbols)+1)
	for i := range nodes {
		nodes[i] = map[int][]piece{}
	}
	for i := range symbols {
		ss := symbols[i:]
		var matches []piece
		node := lt.root.children[ss[0]]
		for j := 0; j < len(ss) && node != nil; j++ {
			if node.end {
				matches = append(matches, piece{node.key, node.score, node.index})
			}
			if j+1 < len(ss) {
				node = node.children[ss[j+1]]
			} else {
				node = nil
			}
		}
		if len(matches) == 0 {
			matches = append(matches, piece{[]rune{ss[0]}, 0, 0})
		}
		for _, m := range matches {
			end := i + len(m.key)
			nodes[end][i] = append(nodes[end][i], m)
		}
	}
	for end := range nodes {
		starts := make([]int, 0, len(nodes[end]))
		for s := range nodes[end] {
			starts = append(starts, s)
		}
		sort.Ints(starts)
		for _, s := range starts {
			for _, w := range nodes[end][s] {
				score := w.score + best[end-len(w.key)]
				if best[end] == 0 || score >= best[end] {
					best[end] = score
					words[end] = w.index
				}
			}
		}
	}
	var results []int
	for iter := len(words) - 1; iter > 0; {
		results = append(results, words[iter])
		iter -= len(utf16.Encode([]rune(lt.pieces[words[iter]])))
	}
	var merged []int
	prevUnk := false
	for _, id := range results {
		if !(prevUnk && id == 0) {
			merged = append(merged, id)
		}
		prevUnk = id == 0
	}
	slices.Reverse(merged)
	return merged
}

var fuzzSeeds = []string{
	"", " ", "hello world", "The cat sat on the mat.", "\t\n\r", "\xff\xfe\xfd",
	"Ünïcödé façade — naïve café, 東京 and emoji 🙂 test!", "a\u00a0b", "ｆｕｌｌｗｉｄｔｈ",
	"10:30 :) ://x ”5 :-)", "----------------................", "e\u0301", "\u2581\u2581x",
}

func FuzzTokenize(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	m := newModel(f, Options{Workers: 1})
	lt := loadLiteral(f)
	f.Fuzz(func(t *testing.T, text string) {
		ids := m.Tokenize(text)
		if again := m.Tokenize(text); !slices.Equal(ids, again) {
			t.Fatalf("not deterministic: %v vs %v", ids, again)
		}
		for i, id := range ids {
			if id < 0 || id >= len(m.w.tok.pieces) || (id > 0 && id < reservedPieces) {
				t.Fatalf("id %d out of range", id)
			}
			if i > 0 && id == 0 && ids[i-1] == 0 {
				t.Fatalf("consecutive unknowns in %v", ids)
			}
		}
		if (len(ids) == 0) != (len(norm.NFKC.String(text)) == 0) {
			t.Fatalf("%q: %d ids", text, len(ids))
		}
		// Invalid UTF-8 reads as U+FFFD per bad byte in both.
		if want := lt.encode(text); !slices.Equal(ids, want) {
			t.Fatalf("%q: ids %v, literal port %v", text, ids, want)
		}
	})
}

func FuzzEmbed(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	m := newModel(f, Options{Workers: 1})
	f.Fuzz(func(t *testing.T, text string) {
		v, err := m.Embed(context.Background(), []string{text, text})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(v[0], v[1]) {
			t.Fatal("not deterministic")
		}
		var ss float64
		for _, x := range v[0] {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("non-finite component %v", x)
			}
			ss += float64(x) * float64(x)
		}
		if math.Abs(ss-1) > 1e-5 {
			t.Fatalf("squared norm %v", ss)
		}
	})
}
