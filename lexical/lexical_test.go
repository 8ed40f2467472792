package lexical

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/internal/lexref"
)

func TestTerms(t *testing.T) {
	got := Terms("The Eiffel-Tower, in PARIS (1889) is tall; the tower!")
	want := []string{"eiffel", "tower", "paris", "1889", "tall", "tower"}
	if !slices.Equal(got, want) {
		t.Fatalf("Terms = %q, want %q", got, want)
	}
	if q := QueryTerms("tower of the tower paris"); !slices.Equal(q, []string{"tower", "paris"}) {
		t.Fatalf("QueryTerms = %q", q)
	}
}

// TestScoreByHand checks BM25 against the formula worked out by hand on a
// three-document corpus.
func TestScoreByHand(t *testing.T) {
	docs := [][]string{{"paris", "tower", "tower"}, {"london"}, {"paris", "london"}}
	got := Default.Score([]string{"tower", "paris"}, docs)
	avg := 6.0 / 3
	w := func(idf float64, tf, dl float64) float64 {
		return idf * tf * 2.2 / (tf + 1.2*(0.25+0.75*dl/avg))
	}
	idfTower := math.Log(1 + (3-1+0.5)/(1+0.5))
	idfParis := math.Log(1 + (3-2+0.5)/(2+0.5))
	want := []float64{w(idfTower, 2, 3) + w(idfParis, 1, 3), 0, w(idfParis, 1, 2)}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("doc %d: got %v want %v", i, got[i], want[i])
		}
	}
}

// TestScoreDeterministic: the same input gives bit-identical scores on every
// run (the old scorer summed in map order and drifted in the last bits).
func TestScoreDeterministic(t *testing.T) {
	var docs [][]string
	words := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"}
	for d := 0; d < 50; d++ {
		var doc []string
		for j := 0; j < 5+d%7; j++ {
			doc = append(doc, words[(d*j+j)%len(words)])
		}
		docs = append(docs, doc)
	}
	q := words
	first := Default.Score(q, docs)
	for r := 0; r < 50; r++ {
		again := Default.Score(q, docs)
		for i := range first {
			if math.Float64bits(first[i]) != math.Float64bits(again[i]) {
				t.Fatalf("run %d doc %d: %v != %v", r, i, again[i], first[i])
			}
		}
	}
}

func TestScoreEmpty(t *testing.T) {
	if s := Default.Score(nil, [][]string{{"a"}}); len(s) != 1 || s[0] != 0 {
		t.Fatalf("empty query: %v", s)
	}
	if s := Default.Score([]string{"a"}, nil); len(s) != 0 {
		t.Fatalf("no docs: %v", s)
	}
	if s := Default.Score([]string{"a"}, [][]string{{}, {}}); s[0] != 0 || s[1] != 0 {
		t.Fatalf("empty docs: %v", s)
	}
}

// trickyTexts are inputs where a tokenizer can go wrong: case-mapping
// special cases (İ lower-cases to i plus a combining dot, K the Kelvin sign
// to ASCII k, ǅ is title case), letters and digits outside ASCII, numbers
// that are neither (Ⅻ, ²), combining marks, invalid UTF-8, stop words in
// every case, and words at the 5-, 8- and 9-byte boundaries of the packed
// keys (Go's escapes spell the bytes).
var trickyTexts = []string{
	"", " ", "a", "A", "The", "THE", "tHe", "the", "thE.", "Which WHICH which", "whichx", "thes", "th", "xthe",
	"İstanbul İ i̇ ı I", "İS İT İN İ IS it", "\ufffd \ufffdthe\ufffd a\ufffdb", "Straße STRASSE ß ẞ", "Ⅻ ⅻ Ⅻx 12 ² ٣٤ ①", "e\u0301 é café CAFÉ", "\u212aelvin kelvin KELVIN",
	"ǅemal ǆ Ǆ", "ΟΔΟΣ οδος ὈΔΥΣΣΕΎΣ", "Ａｂｃ ａｂｃ", "\xff\xfeabc\x00def", "abc\x80", "naïve NAÏVE",
	"abcdefgh ABCDEFGH abcdefghi ABCDEFGHI AbCdEfGhIjKl abcdefg ABCDEFG", "x7Y 7 07 0 Z9z",
	"The Eiffel-Tower, in PARIS (1889) is tall; the tower!", "日本語のテキスト 東京 2024年", "ﬁne ﬂow Ǳ",
	"mixed ascii then ü at the end", "ü at the start then ascii", "\t\n\r\v\f a\u00a0b c\u2028d",
}

// checkTerms fails unless Terms and Vocab.AppendIDs (a fresh Vocab and the
// shared v) give what the reference tokenizer (lexref: Terms as it was
// before the fast path) gives.
func checkTerms(t *testing.T, v *Vocab, s string) {
	t.Helper()
	want := lexref.Terms(s)
	if got := Terms(s); !slices.Equal(got, want) || (got == nil) != (want == nil) {
		t.Fatalf("Terms(%q) = %q, want %q", s, got, want)
	}
	for _, voc := range []*Vocab{new(Vocab), v} {
		ids := voc.AppendIDs([]uint32{7}, s)
		if len(ids) != len(want)+1 || ids[0] != 7 {
			t.Fatalf("AppendIDs(%q) = %v, want %d ids after the 7", s, ids, len(want))
		}
		for i, id := range ids[1:] {
			if int(id) >= voc.Len() || voc.Term(id) != want[i] {
				t.Fatalf("AppendIDs(%q)[%d] = %d, want %q", s, i, id, want[i])
			}
		}
	}
}

func TestTermsTricky(t *testing.T) {
	v := new(Vocab)
	for _, s := range trickyTexts {
		checkTerms(t, v, s)
		checkTerms(t, v, strings.ToUpper(s))
		checkTerms(t, v, s+" "+strings.ToLower(s))
	}
}

// TestTermsRandom: random texts over ASCII and non-ASCII letters, digits,
// marks and punctuation, one Vocab shared by all (so it grows and meets
// every term again).
func TestTermsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ascii := []rune("aAbBzZ09 .,;-_'\"\t\nThe OF and Is x7Y which")
	other := []rune("İıßẞⅫⅻ²٣éÉ\u0301\u212aǅΣσςＡ日\u00a0\ufffd")
	v := new(Vocab)
	for n := range 20000 {
		b := make([]rune, r.IntN(80))
		for i := range b {
			b[i] = ascii[r.IntN(len(ascii))]
			if n%3 == 0 && r.IntN(20) == 0 || n%3 == 1 && r.IntN(3) == 0 {
				b[i] = other[r.IntN(len(other))]
			}
		}
		checkTerms(t, v, string(b))
	}
}

// TestStopWords: every stop word is dropped in every case, and no other
// word of up to three letters or digits is, nor any 4- or 5-letter word.
func TestStopWords(t *testing.T) {
	if ref := lexref.StopWords(); len(ref) != len(stopWords) {
		t.Fatalf("%d stop words, the reference has %d", len(stopWords), len(ref))
	} else {
		for _, w := range ref {
			if !stopWords[w] {
				t.Fatalf("reference stop word %q missing", w)
			}
		}
	}
	for w := range stopWords {
		for _, c := range []string{w, strings.ToUpper(w), strings.ToUpper(w[:1]) + w[1:]} {
			if got := Terms(c + " keep"); !slices.Equal(got, []string{"keep"}) {
				t.Fatalf("Terms(%q) = %q", c+" keep", got)
			}
		}
	}
	const alnum = "abcdefghijklmnopqrstuvwxyz0123456789"
	var words []string
	for _, a := range alnum {
		words = append(words, string(a))
		for _, b := range alnum {
			words = append(words, string(a)+string(b))
			for _, c := range alnum {
				words = append(words, string(a)+string(b)+string(c))
			}
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 200000 {
		b := make([]byte, 4+r.IntN(2))
		for i := range b {
			b[i] = 'a' + byte(r.IntN(26))
		}
		words = append(words, string(b))
	}
	for _, w := range words {
		if got, want := len(Terms(w)) == 0, stopWords[w]; got != want {
			t.Fatalf("%q: dropped %v, a stop word %v", w, got, want)
		}
	}
}

// TestVocabGrowth: ids are dense, in order of first appearance, and stable
// while the table grows past many resizes.
func TestVocabGrowth(t *testing.T) {
	var v Vocab
	var ids []uint32
	for i := range 100000 {
		ids = v.AppendIDs(ids[:0], fmt.Sprintf("w%d W%d longerterm%d", i, i/2, i/3))
		if len(ids) != 3 {
			t.Fatalf("row %d: ids %v", i, ids)
		}
		for k, want := range []string{fmt.Sprintf("w%d", i), fmt.Sprintf("w%d", i/2), fmt.Sprintf("longerterm%d", i/3)} {
			if v.Term(ids[k]) != want {
				t.Fatalf("row %d term %d: %q, want %q", i, k, v.Term(ids[k]), want)
			}
		}
	}
	seen := map[string]bool{}
	for id := range v.Len() {
		if seen[v.Term(uint32(id))] {
			t.Fatalf("term %q numbered twice", v.Term(uint32(id)))
		}
		seen[v.Term(uint32(id))] = true
	}
	if v.Len() != 100000+100000/3+1 {
		t.Fatalf("%d terms", v.Len())
	}
}

var fuzzVocab = new(Vocab)

func FuzzTerms(f *testing.F) {
	f.Add("The Quick brown FOX, 42 times!")
	f.Add("Ünïcode İstanbul straße")
	f.Add("")
	for _, s := range trickyTexts {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkTerms(t, fuzzVocab, s)
	})
}
