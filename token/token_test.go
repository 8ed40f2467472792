package token

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func TestKnownIDs(t *testing.T) {
	// Ids published by OpenAI's tiktoken for these encodings.
	cases := []struct {
		enc, text string
		ids       []uint
	}{
		{"cl100k_base", "hello world", []uint{15339, 1917}},
		{"cl100k_base", "tiktoken is great!", []uint{83, 1609, 5963, 374, 2294, 0}},
		{"o200k_base", "hello world", []uint{24912, 2375}},
	}
	for _, tc := range cases {
		c, err := New(tc.enc)
		if err != nil {
			t.Fatal(err)
		}
		ids, err := c.Encode(tc.text)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids, tc.ids) {
			t.Errorf("%s %q: ids %v, want %v", tc.enc, tc.text, ids, tc.ids)
		}
		if n := c.Count(tc.text); n != len(tc.ids) {
			t.Errorf("%s %q: count %d, want %d", tc.enc, tc.text, n, len(tc.ids))
		}
	}
}

func TestDefaultAndUnknown(t *testing.T) {
	c, err := New("")
	if err != nil || c.Encoding() != "cl100k_base" {
		t.Fatalf("default: %v %v", c, err)
	}
	if _, err := New("r50k"); err == nil {
		t.Fatal("unknown encoding accepted")
	}
}

func TestCountConcurrentAndCached(t *testing.T) {
	c, _ := New(Default)
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 50)
	want := c.Count(text)
	if want < 400 || want > 600 {
		t.Fatalf("implausible count %d for 450 words", want)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				if got := c.Count(text); got != want {
					t.Errorf("goroutine %d iteration %d: %d != %d", g, i, got, want)
				}
				c.Count(text[:i*7])
			}
		}()
	}
	wg.Wait()
}

func FuzzCount(f *testing.F) {
	for _, s := range []string{"", "héllo 世界 🙂", "\xff\xfe", "a\tb\nc", strings.Repeat("x", 300)} {
		f.Add(s)
	}
	c, _ := New(Default)
	f.Fuzz(func(t *testing.T, s string) {
		n := c.Count(s)
		if n < 0 || n > len(s) {
			t.Fatalf("count %d for %d bytes", n, len(s))
		}
		if utf8.ValidString(s) {
			ids, err := c.Encode(s)
			if err != nil || len(ids) != n {
				t.Fatalf("encode %d ids (%v), count %d", len(ids), err, n)
			}
			back, err := c.Decode(ids)
			if err != nil || back != s {
				t.Fatalf("round trip %q → %q (%v)", s, back, err)
			}
		}
	})
}
