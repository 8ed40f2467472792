package main

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/ctxsel/ctxsel"
)

// TestSelectLineBound: a stdin line longer than the server's body limit is
// refused with a message naming the line and the limit (exit 2), after
// reading no more than the limit past the line's start.
func TestSelectLineBound(t *testing.T) {
	good := `{"id":"a","score":0.9,"tokens":3}` + "\n"
	huge := `{"id":"b","score":0.5,"text":"` + strings.Repeat("x", int(maxLineBytes)) + `"}` + "\n"
	code, out, errs := runCLI(t, good+huge, "select", "--strategy", "topk:k=1")
	want := "line 2 of the input is longer than 16777216 bytes, the limit"
	if code != 2 || out != "" || !strings.Contains(errs, want) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// the reader stops at the limit: counting what it reads
	counter := &countingReader{r: strings.NewReader(good + huge)}
	if _, _, _, err := readCandidates(counter, "cl100k_base"); err == nil {
		t.Fatal("no error")
	}
	if limit := int64(len(good)) + maxLineBytes + 64<<10; counter.n > limit {
		t.Errorf("read %d bytes, want at most %d", counter.n, limit)
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// FuzzLineBound: the bound passes every input whose lines all fit,
// unchanged, and refuses (as invalid input) every one with a longer line,
// however the reads split it.
func FuzzLineBound(f *testing.F) {
	f.Add([]byte("ab\ncd\n"), int64(2), true)
	f.Add([]byte("abc\n"), int64(2), false)
	f.Add([]byte("\n\n\nabcd"), int64(3), true)
	f.Add([]byte(""), int64(0), false)
	f.Fuzz(func(t *testing.T, in []byte, bound int64, oneByte bool) {
		if bound < 0 || bound > 1<<20 {
			return
		}
		var r io.Reader = bytes.NewReader(in)
		if oneByte {
			r = iotest.OneByteReader(r)
		}
		got, err := io.ReadAll(&lineBound{r: r, max: bound, line: 1})
		longest := 0
		for _, l := range bytes.Split(in, []byte("\n")) {
			longest = max(longest, len(l))
		}
		if int64(longest) > bound {
			if !errors.Is(err, ctxsel.ErrInvalidInput) {
				t.Fatalf("a %d-byte line under a bound of %d: %v", longest, bound, err)
			}
			return
		}
		if err != nil || !bytes.Equal(got, in) {
			t.Fatalf("lines of at most %d bytes under a bound of %d: %v", longest, bound, err)
		}
	})
}
