package lexical

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
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

// TestTermsASCIIPath: the ASCII fast path splits exactly as the general
// one (lower-casing the text, then runs of letters and digits).
func TestTermsASCIIPath(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "aAbZz09 .,;-_'\"\t\nThe OF and Is x7Y"
	for range 2000 {
		b := make([]byte, r.IntN(80))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		s := string(b)
		if got, want := Terms(s), termsUnicode(s); !slices.Equal(got, want) {
			t.Fatalf("%q: %q, want %q", s, got, want)
		}
	}
}

func FuzzTerms(f *testing.F) {
	f.Add("The Quick brown FOX, 42 times!")
	f.Add("Ünïcode İstanbul straße")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Terms(s), termsUnicode(s); !slices.Equal(got, want) {
			t.Fatalf("%q: %q, want %q", s, got, want)
		}
	})
}
