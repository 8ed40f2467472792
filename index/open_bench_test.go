package index

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"testing"
	"time"
)

// TestOpenTiming times what a fresh process does before its first answer
// on an existing index: open it and run one hybrid query (a random unit
// vector and a text), for the index in CTXSEL_OPEN_INDEX, N times
// (CTXSEL_OPEN_RUNS, default 5), each with a new Dir (nothing cached but
// the operating system's page cache).
func TestOpenTiming(t *testing.T) {
	dir := os.Getenv("CTXSEL_OPEN_INDEX")
	if dir == "" {
		t.Skip("set CTXSEL_OPEN_INDEX=DIR to time opening an index")
	}
	ctx := context.Background()
	runs := 5
	if s := os.Getenv("CTXSEL_OPEN_RUNS"); s != "" {
		if n, err := parseInt(s); err == nil {
			runs = n
		}
	}
	var best, sum time.Duration
	for i := range runs {
		start := time.Now()
		d, err := OpenDir(dir, DirOptions{})
		if err != nil {
			t.Fatal(err)
		}
		st, err := d.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(uint64(i), 1))
		v := make([]float32, st.Config.Dim)
		var ss float64
		for j := range v {
			v[j] = float32(r.NormFloat64())
			ss += float64(v[j]) * float64(v[j])
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(ss))
		}
		opened := time.Since(start)
		hits, err := d.SearchQuery(ctx, Query{Vector: v, Text: "Who is Scrooge's clerk, and what is his name?", Limit: 100})
		if err != nil || len(hits) == 0 {
			t.Fatalf("%d hits, %v", len(hits), err)
		}
		el := time.Since(start)
		sum += el
		if i == 0 || el < best {
			best = el
		}
		t.Logf("run %d: open+stats %v, first hybrid query answered at %v (%d chunks: %.1f µs/chunk)", i, opened, el, st.Chunks, float64(el.Microseconds())/float64(st.Chunks))
		d.Close()
	}
	t.Logf("best %v, mean %v", best, sum/time.Duration(runs))
}

func parseInt(s string) (int, error) {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, os.ErrInvalid
		}
		n = n*10 + int(c-'0')
	}
	return n, nil
}
