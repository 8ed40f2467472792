package chunk_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/index/indextest"
	"github.com/ctxsel/ctxsel/token"
)

func tok(t testing.TB) *token.Tiktoken {
	t.Helper()
	tk, err := token.New("")
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// the repeats " the", which cl100k_base encodes as exactly one token per
// repeat (4 bytes each).
func the(n int) string { return strings.Repeat(" the", n) }

// checkChunks verifies the invariants every chunker promises.
func checkChunks(t testing.TB, tk chunk.Tokenizer, doc, text string, cs []chunk.Chunk, limit int) {
	t.Helper()
	prevStart := -1
	for i, c := range cs {
		if c.Doc != doc || c.Index != i {
			t.Fatalf("chunk %d: doc %q index %d", i, c.Doc, c.Index)
		}
		if c.Start < 0 || c.End > len(text) || c.Start >= c.End {
			t.Fatalf("chunk %d: bad span [%d, %d) of %d", i, c.Start, c.End, len(text))
		}
		if text[c.Start:c.End] != c.Text {
			t.Fatalf("chunk %d: text[%d:%d] = %q, chunk text %q", i, c.Start, c.End, text[c.Start:c.End], c.Text)
		}
		if c.CharStart != utf8.RuneCountInString(text[:c.Start]) || c.CharEnd != utf8.RuneCountInString(text[:c.End]) {
			t.Fatalf("chunk %d: char offsets [%d, %d) wrong", i, c.CharStart, c.CharEnd)
		}
		if !utf8.ValidString(c.Text) {
			t.Fatalf("chunk %d: invalid UTF-8 %q", i, c.Text)
		}
		if n := tk.Count(c.Text); n != c.Tokens {
			t.Fatalf("chunk %d: Tokens %d, exact count %d", i, c.Tokens, n)
		}
		if limit > 0 && c.Tokens > limit {
			t.Fatalf("chunk %d: %d tokens over the limit %d", i, c.Tokens, limit)
		}
		if c.Start < prevStart {
			t.Fatalf("chunk %d starts at %d, before chunk %d (%d)", i, c.Start, i-1, prevStart)
		}
		if strings.TrimSpace(c.Text) == "" {
			t.Fatalf("chunk %d is blank", i)
		}
		if c.ID() != chunk.ChunkID(doc, i) {
			t.Fatalf("chunk %d id %q", i, c.ID())
		}
		prevStart = c.Start
	}
	// coverage: every non-space character lies in some chunk
	covered := make([]bool, len(text))
	for _, c := range cs {
		for j := c.Start; j < c.End; j++ {
			covered[j] = true
		}
	}
	for j, r := range text {
		if !unicode.IsSpace(r) && !covered[j] {
			t.Fatalf("byte %d (%q) is in no chunk", j, r)
		}
	}
}

func TestTokenWindows(t *testing.T) {
	tk := tok(t)
	ctx := context.Background()
	type win struct{ from, to int } // token positions
	cases := []struct {
		name          string
		n             int // tokens of the(n)
		size, overlap int
		want          []win
	}{
		{"empty", 0, 600, 100, nil},
		{"one short window", 10, 600, 100, []win{{0, 10}}},
		{"exactly one window", 600, 600, 100, []win{{0, 600}}},
		{"one token over", 601, 600, 100, []win{{0, 600}, {500, 601}}},
		{"two exact windows", 1100, 600, 100, []win{{0, 600}, {500, 1100}}},
		{"last short window", 1101, 600, 100, []win{{0, 600}, {500, 1100}, {1000, 1101}}},
		{"no overlap", 25, 10, 0, []win{{0, 10}, {10, 20}, {20, 25}}},
		{"big overlap", 12, 10, 9, []win{{0, 10}, {1, 11}, {2, 12}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := chunk.NewTokens(tk, tc.size, tc.overlap)
			if err != nil {
				t.Fatal(err)
			}
			text := the(tc.n)
			cs, err := c.Chunk(ctx, "d", text)
			if err != nil {
				t.Fatal(err)
			}
			checkChunks(t, tk, "d", text, cs, tc.size)
			if len(cs) != len(tc.want) {
				t.Fatalf("%d chunks, want %d: %+v", len(cs), len(tc.want), cs)
			}
			for i, w := range tc.want {
				if cs[i].Start != 4*w.from || cs[i].End != 4*w.to || cs[i].Tokens != w.to-w.from {
					t.Errorf("chunk %d: bytes [%d,%d) %d tokens, want tokens [%d,%d)", i, cs[i].Start, cs[i].End, cs[i].Tokens, w.from, w.to)
				}
			}
			// consecutive windows overlap by exactly `overlap` tokens
			for i := 1; i < len(cs); i++ {
				if got := tk.Count(text[cs[i].Start:cs[i-1].End]); cs[i].Start < cs[i-1].End && got != tc.overlap {
					t.Errorf("windows %d and %d overlap by %d tokens, want %d", i-1, i, got, tc.overlap)
				}
			}
		})
	}
}

func TestTokenWindowsUnicode(t *testing.T) {
	tk := tok(t)
	// byte-level tokens: emoji and rare CJK split into several tokens, so
	// raw window boundaries can fall inside a character.
	text := strings.Repeat("naïve café 😀🎉 日本語の文章です。 ẞ𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ", 40)
	for _, size := range []int{8, 9, 13, 50} {
		c, err := chunk.NewTokens(tk, size, size/3)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := c.Chunk(context.Background(), "u", text)
		if err != nil {
			t.Fatal(err)
		}
		checkChunks(t, tk, "u", text, cs, size)
		if len(cs) < 2 {
			t.Fatalf("size %d: %d chunks", size, len(cs))
		}
	}
}

func TestEmptyAndInvalid(t *testing.T) {
	tk := tok(t)
	chunkers := []chunk.Chunker{}
	for _, spec := range []string{"tokens", "sentences", "semantic"} {
		c, err := chunk.Parse(spec, tk, indextest.HashEmbedder{})
		if err != nil {
			t.Fatal(err)
		}
		chunkers = append(chunkers, c)
	}
	for _, c := range chunkers {
		for _, text := range []string{"", " \n\t ", "\u00a0\u2003"} {
			cs, err := c.Chunk(context.Background(), "e", text)
			if err != nil || len(cs) != 0 {
				t.Errorf("%s on %q: %v, %v", c.Spec(), text, cs, err)
			}
		}
		if _, err := c.Chunk(context.Background(), "bad", "ok \xff\xfe"); !errors.Is(err, ctxsel.ErrInvalidInput) {
			t.Errorf("%s: invalid UTF-8 gave %v", c.Spec(), err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := c.Chunk(ctx, "x", "Some text. More text here."); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: cancelled context gave %v", c.Spec(), err)
		}
	}
}

func TestSplitSentences(t *testing.T) {
	cases := []struct {
		text string
		want []string
	}{
		{"", nil},
		{"One. Two! Three?", []string{"One.", "Two!", "Three?"}},
		{"  Leading space.  Trailing space.  ", []string{"Leading space.", "Trailing space."}},
		{"Mr. Smith met Dr. Who at 3.15 p.m. today. Then he left.", []string{"Mr. Smith met Dr. Who at 3.15 p.m. today.", "Then he left."}},
		{"J. R. R. Tolkien wrote it. It sold.", []string{"J. R. R. Tolkien wrote it.", "It sold."}},
		{`He said "Stop." She stopped.`, []string{`He said "Stop."`, "She stopped."}},
		{"Really?! Yes... Fine.", []string{"Really?!", "Yes...", "Fine."}},
		{"A Title\n\nThe body starts here\nand goes on. Next.", []string{"A Title", "The body starts here\nand goes on.", "Next."}},
		{"Para one\n  \t\nPara two", []string{"Para one", "Para two"}},
		{"你好。世界！好的", []string{"你好。", "世界！", "好的"}},
		{"e.g. this is one. (And this.) Next", []string{"e.g. this is one.", "(And this.)", "Next"}},
		{"No terminal at all", []string{"No terminal at all"}},
		// abbreviations, dotted initialisms and decimals
		{"He moved to the U.S. in 1990 and paid $3.50 a day. Then Dr. Li came.", []string{"He moved to the U.S. in 1990 and paid $3.50 a day.", "Then Dr. Li came."}},
		{"It opened at 9 a.m. on Monday. Ph.D. students came.", []string{"It opened at 9 a.m. on Monday.", "Ph.D. students came."}},
		{"Pi is 3.14159. E is 2.718.", []string{"Pi is 3.14159.", "E is 2.718."}},
		{"Andrew Jaspan, (b. 1952) is an editor. Rostker v. Goldberg was a case.", []string{"Andrew Jaspan, (b. 1952) is an editor.", "Rostker v. Goldberg was a case."}},
		// quotes
		{`“It rains.” He left. 'Go!' she said.`, []string{"“It rains.”", "He left.", "'Go!' she said."}},
		// a title line, a Markdown heading and list items end at a single line break
		{"Ed Wood (film)\nEd Wood is a 1994 film. It stars Johnny Depp.", []string{"Ed Wood (film)", "Ed Wood is a 1994 film.", "It stars Johnny Depp."}},
		{"Tere Mere Phere\n\"Tere Mere Phere\" is a 2011 film.", []string{"Tere Mere Phere", "\"Tere Mere Phere\" is a 2011 film."}},
		{"# Install\nRun the script. Then wait.", []string{"# Install", "Run the script.", "Then wait."}},
		{"Steps:\n1. Open the box\n2. Take the cable\n- a bullet\n* another", []string{"Steps:", "1. Open the box", "2. Take the cable", "- a bullet", "* another"}},
		{"10. Tenth item. Still it.", []string{"10. Tenth item.", "Still it."}},
		// wrapped prose goes on across a single line break
		{"The treaty was signed by\nFrance and Spain in 1659. Peace followed.", []string{"The treaty was signed by\nFrance and Spain in 1659.", "Peace followed."}},
		{"A long sentence that runs on and on across the page width here\nContinues. Done.", []string{"A long sentence that runs on and on across the page width here\nContinues.", "Done."}},
		// non-English punctuation
		{"यह एक वाक्य है। यह दूसरा है।", []string{"यह एक वाक्य है।", "यह दूसरा है।"}},
		{"هل أنت بخير؟ نعم.", []string{"هل أنت بخير؟", "نعم."}},
		{"东京．大阪。", []string{"东京．", "大阪。"}},
		{"Wow‼ Really⁇ Yes.", []string{"Wow‼", "Really⁇", "Yes."}},
	}
	for _, tc := range cases {
		spans := chunk.SplitSentences(tc.text)
		var got []string
		for _, s := range spans {
			got = append(got, tc.text[s[0]:s[1]])
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("SplitSentences(%q)\n got %q\nwant %q", tc.text, got, tc.want)
		}
	}
}

func TestSentencesChunker(t *testing.T) {
	tk := tok(t)
	sents := []string{
		"The quick brown fox jumps over the lazy dog.",
		"It was the best of times, it was the worst of times.",
		"Call me Ishmael.",
		"All happy families are alike; each unhappy family is unhappy in its own way.",
	}
	text := strings.Join(sents, " ")
	c, err := chunk.NewSentences(tk, 25)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := c.Chunk(context.Background(), "s", text)
	if err != nil {
		t.Fatal(err)
	}
	checkChunks(t, tk, "s", text, cs, 25)
	// every chunk starts and ends on a sentence boundary
	bounds := map[int]bool{}
	for _, s := range chunk.SplitSentences(text) {
		bounds[s[0]], bounds[s[1]] = true, true
	}
	for _, ch := range cs {
		if !bounds[ch.Start] || !bounds[ch.End] {
			t.Errorf("chunk %d %q cuts a sentence", ch.Index, ch.Text)
		}
	}
	if len(cs) < 2 || len(cs) > len(sents) {
		t.Fatalf("%d chunks: %+v", len(cs), cs)
	}
	// with a generous limit everything is one chunk
	big, _ := chunk.NewSentences(tk, 1000)
	cs, _ = big.Chunk(context.Background(), "s", text)
	if len(cs) != 1 || cs[0].Text != text {
		t.Fatalf("one chunk expected, got %+v", cs)
	}
}

func TestSentenceLongerThanLimit(t *testing.T) {
	tk := tok(t)
	long := "This sentence goes on" + the(100) + "."
	text := "Short one. " + long + " Short two."
	c, _ := chunk.NewSentences(tk, 30)
	cs, err := c.Chunk(context.Background(), "l", text)
	if err != nil {
		t.Fatal(err)
	}
	checkChunks(t, tk, "l", text, cs, 30)
	if cs[0].Text != "Short one." || cs[len(cs)-1].Text != "Short two." {
		t.Fatalf("short sentences not kept whole: first %q last %q", cs[0].Text, cs[len(cs)-1].Text)
	}
	inner := cs[1 : len(cs)-1]
	if len(inner) < 4 {
		t.Fatalf("long sentence in %d windows", len(inner))
	}
	// the windows tile the long sentence exactly, no overlap
	if inner[0].Start != strings.Index(text, long) || inner[len(inner)-1].End != strings.Index(text, long)+len(long) {
		t.Fatalf("windows do not tile the long sentence")
	}
	for i := 1; i < len(inner); i++ {
		if inner[i].Start != inner[i-1].End {
			t.Fatalf("windows %d and %d: gap or overlap", i-1, i)
		}
	}
}

// topicEmbedder gives sentences about cats one direction and sentences about
// cars another.
type topicEmbedder struct{}

func (topicEmbedder) ModelID() string { return "topics" }
func (topicEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		switch {
		case strings.Contains(t, "cat"):
			out[i] = []float32{1, 0, 0}
		case strings.Contains(t, "car"):
			out[i] = []float32{0, 1, 0}
		default:
			out[i] = []float32{0.8, 0.6, 0} // cosine 0.8 to cats, 0.6 to cars
		}
	}
	return out, nil
}

func TestSemantic(t *testing.T) {
	tk := tok(t)
	text := "My cat sleeps. The cat purrs. Something else. The car is red. A car needs fuel. My cat again."
	c, err := chunk.NewSemantic(tk, topicEmbedder{}, 0.75, 600)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := c.Chunk(context.Background(), "t", text)
	if err != nil {
		t.Fatal(err)
	}
	checkChunks(t, tk, "t", text, cs, 600)
	var got []string
	for _, ch := range cs {
		got = append(got, ch.Text)
	}
	want := []string{"My cat sleeps. The cat purrs. Something else.", "The car is red. A car needs fuel.", "My cat again."}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	// threshold 0.9: "Something else." (0.8 to cats) splits off too
	c, _ = chunk.NewSemantic(tk, topicEmbedder{}, 0.9, 0)
	cs, _ = c.Chunk(context.Background(), "t", text)
	if len(cs) != 4 || cs[1].Text != "Something else." {
		t.Fatalf("threshold 0.9: %+v", cs)
	}
	// the token cap still applies inside a topic
	c, _ = chunk.NewSemantic(tk, topicEmbedder{}, 0.75, 8)
	cs, _ = c.Chunk(context.Background(), "t", text)
	checkChunks(t, tk, "t", text, cs, 8)
	if len(cs) <= 3 {
		t.Fatalf("max_tokens=8 should split topics further: %d chunks", len(cs))
	}
}

func TestParse(t *testing.T) {
	tk := tok(t)
	good := map[string]string{
		"":                                    "tokens:overlap=100,size=600",
		"tokens":                              "tokens:overlap=100,size=600",
		"tokens:size=256,overlap=32":          "tokens:overlap=32,size=256",
		"sentences:max_tokens=300":            "sentences:max_tokens=300",
		"semantic":                            "semantic:max_tokens=600,threshold=0.75",
		"semantic:threshold=0.6,max_tokens=0": "semantic:max_tokens=0,threshold=0.6",
	}
	for spec, want := range good {
		c, err := chunk.Parse(spec, tk, indextest.HashEmbedder{})
		if err != nil {
			t.Errorf("%q: %v", spec, err)
			continue
		}
		if c.Spec() != want {
			t.Errorf("%q: spec %q, want %q", spec, c.Spec(), want)
		}
		// Spec round-trips
		c2, err := chunk.Parse(c.Spec(), tk, indextest.HashEmbedder{})
		if err != nil || c2.Spec() != c.Spec() {
			t.Errorf("%q: round trip %v %v", spec, c2, err)
		}
	}
	bad := []string{"tokens:size=4", "tokens:overlap=600", "tokens:size=10.5", "tokens:bogus=1",
		"sentences:max_tokens=-1", "semantic:threshold=2", "frobnicate", "tokens:size=1e12", "a,b"}
	for _, spec := range bad {
		if _, err := chunk.Parse(spec, tk, indextest.HashEmbedder{}); !errors.Is(err, ctxsel.ErrInvalidInput) {
			t.Errorf("%q: want invalid input, got %v", spec, err)
		}
	}
	if _, err := chunk.Parse("semantic", tk, nil); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Errorf("semantic without embedder: %v", err)
	}
}
