package cache

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ctxsel/ctxsel/embed"
)

// fake is an embedder with a deterministic vector per (model, text).
type fake struct {
	id    string
	dim   int
	calls atomic.Int64
	mu    sync.Mutex
	sent  []string
	// bad, when set, replaces the vectors returned.
	bad func([][]float32) [][]float32
}

func (f *fake) ModelID() string { return f.id }

func (f *fake) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return f.vectors(ctx, texts, "")
}

func (f *fake) vectors(ctx context.Context, texts []string, salt string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.calls.Add(1)
	f.mu.Lock()
	f.sent = append(f.sent, texts...)
	f.mu.Unlock()
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = vecOf(f.id+salt, t, f.dim)
	}
	if f.bad != nil {
		out = f.bad(out)
	}
	return out, nil
}

func (f *fake) sentTexts() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.sent)
}

// queryFake embeds queries differently from passages.
type queryFake struct{ fake }

func (f *queryFake) EmbedQuery(ctx context.Context, texts []string) ([][]float32, error) {
	return f.vectors(ctx, texts, "#query")
}

func vecOf(model, text string, dim int) []float32 {
	v := make([]float32, dim)
	for j := range v {
		h := fnv.New64a()
		fmt.Fprintf(h, "%s\x00%s\x00%d", model, text, j)
		v[j] = float32(h.Sum64()%20001)/10000 - 1
	}
	return v
}

func words(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s %d", prefix, i)
	}
	return out
}

func mustOpen(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func checkVecs(t *testing.T, model string, texts []string, got [][]float32) {
	t.Helper()
	if len(got) != len(texts) {
		t.Fatalf("got %d vectors for %d texts", len(got), len(texts))
	}
	for i, tx := range texts {
		if want := vecOf(model, tx, len(got[i])); len(got[i]) == 0 || !slices.Equal(got[i], want) {
			t.Fatalf("vector for %q is wrong: %v", tx, got[i])
		}
	}
}

func logFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+fileExt))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRoundTripAndNoSecondCall(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	f := &fake{id: "m1", dim: 16}
	s := mustOpen(t, dir)
	e := Wrap(f, s)
	if e.ModelID() != "m1" {
		t.Fatalf("ModelID = %q", e.ModelID())
	}
	in := words("alpha", 50)
	got, err := e.Embed(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	checkVecs(t, "m1", in, got)
	if f.calls.Load() != 1 {
		t.Fatalf("%d inner calls, want 1", f.calls.Load())
	}
	got, err = e.Embed(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	checkVecs(t, "m1", in, got)
	if f.calls.Load() != 1 {
		t.Fatalf("second call reached the inner embedder (%d calls)", f.calls.Load())
	}
	if st := s.Stats(); st.Hits != 50 || st.Misses != 50 || st.Vectors != 50 || st.Models != 1 {
		t.Fatalf("stats %+v", st)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Embed(ctx, in); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v, want ErrClosed", err)
	}

	// A new store (a new process) answers from disk.
	f2 := &fake{id: "m1", dim: 16}
	s2 := mustOpen(t, dir)
	if st := s2.Stats(); st.Vectors != 50 || st.RecoveredBytes != 0 {
		t.Fatalf("reopened stats %+v", st)
	}
	got, err = Wrap(f2, s2).Embed(ctx, append(in, "new one"))
	if err != nil {
		t.Fatal(err)
	}
	checkVecs(t, "m1", append(in, "new one"), got)
	if s := f2.sentTexts(); !slices.Equal(s, []string{"new one"}) {
		t.Fatalf("inner got %q, want only the miss", s)
	}
}

func TestDedupWithinCall(t *testing.T) {
	f := &fake{id: "m", dim: 4}
	e := Wrap(f, mustOpen(t, t.TempDir()))
	in := []string{"a", "b", "a", "", "b", "a", ""}
	got, err := e.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkVecs(t, "m", in, got)
	if s := f.sentTexts(); !slices.Equal(s, []string{"a", "b", ""}) {
		t.Fatalf("inner got %q, want each distinct text once", s)
	}
	got[0][0] = 42 // callers own their vectors
	if got[2][0] == 42 || got[5][0] == 42 {
		t.Fatal("repeated texts share one slice")
	}
	again, _ := e.Embed(context.Background(), []string{"a"})
	if again[0][0] == 42 {
		t.Fatal("mutating a returned vector changed the cache")
	}
}

func TestModelsDoNotCollide(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	in := words("shared", 10)
	fa, fb := &fake{id: "model-a", dim: 8}, &fake{id: "model-b", dim: 8}
	for range 2 {
		for _, f := range []*fake{fa, fb} {
			got, err := Wrap(f, s).Embed(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			checkVecs(t, f.id, in, got)
		}
	}
	if fa.calls.Load() != 1 || fb.calls.Load() != 1 {
		t.Fatalf("calls %d, %d; want 1 each", fa.calls.Load(), fb.calls.Load())
	}
	if n := len(logFiles(t, dir)); n != 2 {
		t.Fatalf("%d files, want one per model", n)
	}
	// A different dimension under another ModelID is fine.
	fc := &fake{id: "model-c", dim: 3}
	got, err := Wrap(fc, s).Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkVecs(t, "model-c", in, got)
}

func TestQueriesCachedApart(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	f := &queryFake{fake{id: "e5", dim: 8}}
	e := Wrap(f, s)
	in := []string{"what is a cache"}
	p, err := e.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	q, err := embed.Queries(context.Background(), e, in)
	if err != nil {
		t.Fatal(err)
	}
	checkVecs(t, "e5", in, p)
	checkVecs(t, "e5#query", in, q)
	q2, _ := embed.Queries(context.Background(), e, in)
	checkVecs(t, "e5#query", in, q2)
	if f.calls.Load() != 2 {
		t.Fatalf("%d inner calls, want 2", f.calls.Load())
	}
	// Without EmbedQuery, queries share the passage cache.
	plain := &fake{id: "plain", dim: 8}
	pe := Wrap(plain, s)
	if _, err := pe.Embed(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	q3, err := embed.Queries(context.Background(), pe, in)
	if err != nil {
		t.Fatal(err)
	}
	checkVecs(t, "plain", in, q3)
	if plain.calls.Load() != 1 {
		t.Fatalf("%d inner calls, want 1", plain.calls.Load())
	}
}

func TestBadInnerVectorsNotStored(t *testing.T) {
	for name, bad := range map[string]func([][]float32) [][]float32{
		"count": func(v [][]float32) [][]float32 { return v[:len(v)-1] },
		"NaN":   func(v [][]float32) [][]float32 { v[0][1] = float32(math.NaN()); return v },
		"Inf":   func(v [][]float32) [][]float32 { v[1][0] = float32(math.Inf(-1)); return v },
		"dims":  func(v [][]float32) [][]float32 { v[1] = v[1][:3]; return v },
		"empty": func(v [][]float32) [][]float32 { v[0] = nil; return v },
	} {
		t.Run(name, func(t *testing.T) {
			s := mustOpen(t, t.TempDir())
			f := &fake{id: "m", dim: 4, bad: bad}
			if got, err := Wrap(f, s).Embed(context.Background(), []string{"x", "y"}); err == nil {
				t.Fatalf("got %v, want an error", got)
			}
			if st := s.Stats(); st.Vectors != 0 {
				t.Fatalf("%d vectors stored from a bad answer", st.Vectors)
			}
		})
	}
}

func TestDimensionChangeUnderSameModelID(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	if _, err := Wrap(&fake{id: "m", dim: 4}, s).Embed(context.Background(), []string{"a"}); err != nil {
		t.Fatal(err)
	}
	_, err := Wrap(&fake{id: "m", dim: 5}, s).Embed(context.Background(), []string{"a", "b"})
	if err == nil || !strings.Contains(err.Error(), "dimension") {
		t.Fatalf("err = %v, want a dimension error", err)
	}
}

func TestContextCancelled(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := &fake{id: "m", dim: 4}
	if _, err := Wrap(f, s).Embed(ctx, []string{"a"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if f.calls.Load() != 0 {
		t.Fatal("inner called with a cancelled context")
	}
}

// writeRecords creates a cache with n single-text records for model "m"
// (dim 8) and returns the directory, the file and each record's offset.
func writeRecords(t *testing.T, n int) (dir, file string, offsets []int64, texts []string) {
	t.Helper()
	dir = t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	e := Wrap(&fake{id: "m", dim: 8}, s)
	texts = words("rec", n)
	for _, tx := range texts {
		if _, err := e.Embed(context.Background(), []string{tx}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	files := logFiles(t, dir)
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	hdr := int64(headerLen(ns{kindPassage, "m"}))
	for i := range n {
		offsets = append(offsets, hdr+int64(i*recordSize(8)))
	}
	fi, _ := os.Stat(files[0])
	if fi.Size() != hdr+int64(n*recordSize(8)) {
		t.Fatalf("file size %d, want %d", fi.Size(), hdr+int64(n*recordSize(8)))
	}
	return dir, files[0], offsets, texts
}

// verify opens dir and checks that every text answers with its right
// vector, counting how many had to be recomputed.
func verify(t *testing.T, dir string, texts []string) (s *Store, recomputed int) {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	f := &fake{id: "m", dim: 8}
	got, err := Wrap(f, s).Embed(context.Background(), texts)
	if err != nil {
		s.Close()
		t.Fatal(err)
	}
	checkVecs(t, "m", texts, got)
	return s, len(f.sentTexts())
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestTornTailEveryOffset(t *testing.T) {
	_, file, offsets, texts := writeRecords(t, 4)
	last := offsets[len(offsets)-1]
	fi, _ := os.Stat(file)
	for cut := last; cut < fi.Size(); cut++ {
		dir := t.TempDir()
		p := filepath.Join(dir, filepath.Base(file))
		copyFile(t, file, p)
		if err := os.Truncate(p, cut); err != nil {
			t.Fatal(err)
		}
		s, recomputed := verify(t, dir, texts)
		if got := s.Recovered(); got != cut-last {
			t.Fatalf("cut at %d: Recovered() = %d, want %d", cut, got, cut-last)
		}
		if recomputed != 1 {
			t.Fatalf("cut at %d: %d texts recomputed, want 1", cut, recomputed)
		}
		s.Close()
		// The repaired file is whole again: nothing to recover, nothing to recompute.
		s, recomputed = verify(t, dir, texts)
		if s.Recovered() != 0 || recomputed != 0 {
			t.Fatalf("cut at %d: after repair Recovered %d, recomputed %d", cut, s.Recovered(), recomputed)
		}
		s.Close()
	}
}

func TestTornHeader(t *testing.T) {
	_, file, offsets, texts := writeRecords(t, 1)
	for cut := int64(1); cut < offsets[0]; cut++ {
		dir := t.TempDir()
		p := filepath.Join(dir, filepath.Base(file))
		copyFile(t, file, p)
		if err := os.Truncate(p, cut); err != nil {
			t.Fatal(err)
		}
		s, recomputed := verify(t, dir, texts)
		if s.Recovered() != cut || recomputed != 1 {
			t.Fatalf("cut at %d: Recovered %d, recomputed %d", cut, s.Recovered(), recomputed)
		}
		s.Close()
	}
}

func TestGarbageTail(t *testing.T) {
	_, file, offsets, texts := writeRecords(t, 3)
	for name, tail := range map[string][]byte{
		"zeros":         make([]byte, 4096),
		"garbage":       []byte("\x01\x02 not a record at all, just noise \xff\xfe"),
		"partial magic": {0xD3, 0xA5},
		"bad dim":       append(append([]byte{0xD3, 0xA5, 0xE1, 0xC7}, make([]byte, 32)...), 0xff, 0xff, 0xff, 0xff),
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, filepath.Base(file))
			copyFile(t, file, p)
			fh, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			fh.Write(tail)
			fh.Close()
			s, recomputed := verify(t, dir, texts)
			defer s.Close()
			if s.Recovered() != int64(len(tail)) || recomputed != 0 {
				t.Fatalf("Recovered %d (want %d), recomputed %d", s.Recovered(), len(tail), recomputed)
			}
			_ = offsets
		})
	}
}

func TestCorruptMiddleDetected(t *testing.T) {
	_, file, offsets, texts := writeRecords(t, 5)
	orig, _ := os.ReadFile(file)
	mid := offsets[2]
	for i := mid; i < offsets[3]; i++ {
		dir := t.TempDir()
		p := filepath.Join(dir, filepath.Base(file))
		b := slices.Clone(orig)
		b[i] ^= 0x10
		os.WriteFile(p, b, 0o644)
		s, err := OpenWith(dir, Options{FailOnCorrupt: true})
		var ce *CorruptError
		if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
			if s != nil {
				s.Close()
			}
			t.Fatalf("flip at %d: err = %v, want a CorruptError", i, err)
		}
		if ce.Path != p || ce.Offset != mid || !strings.Contains(err.Error(), p) {
			t.Fatalf("flip at %d: %v (offset %d), want path %s offset %d", i, err, ce.Offset, p, mid)
		}

		// By default it is quarantined, with a note, and the store carries
		// on, never serving a wrong vector.
		var notes []string
		s, err = OpenWith(dir, Options{Note: func(m string) { notes = append(notes, m) }})
		if err != nil {
			t.Fatal(err)
		}
		if q := s.Stats().Quarantined; len(q) != 1 || !strings.HasPrefix(q[0], p+".corrupt-") || len(notes) != 1 {
			t.Fatalf("quarantined %v, notes %v", q, notes)
		}
		f := &fake{id: "m", dim: 8}
		got, err := Wrap(f, s).Embed(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		checkVecs(t, "m", texts, got)
		if sent := f.sentTexts(); !slices.Equal(sent, texts[2:3]) {
			t.Fatalf("flip at %d: recomputed %q, want only the damaged record's text", i, sent)
		}
		s.Close()
		s, recomputed := verify(t, dir, texts)
		if recomputed != 0 {
			t.Fatalf("after quarantine and refill, %d recomputed", recomputed)
		}
		s.Close()
	}
}

func TestCorruptLastRecordDropped(t *testing.T) {
	_, file, offsets, texts := writeRecords(t, 3)
	orig, _ := os.ReadFile(file)
	for i := offsets[2]; i < int64(len(orig)); i++ {
		dir := t.TempDir()
		b := slices.Clone(orig)
		b[i] ^= 0x01
		os.WriteFile(filepath.Join(dir, filepath.Base(file)), b, 0o644)
		s, recomputed := verify(t, dir, texts) // verify fails on any wrong vector
		if recomputed != 1 {
			t.Fatalf("flip at %d: %d recomputed, want 1", i, recomputed)
		}
		s.Close()
	}
}

func TestCorruptHeaderDetected(t *testing.T) {
	_, file, offsets, _ := writeRecords(t, 2)
	orig, _ := os.ReadFile(file)
	for i := range offsets[0] {
		dir := t.TempDir()
		b := slices.Clone(orig)
		b[i] ^= 0x04
		os.WriteFile(filepath.Join(dir, filepath.Base(file)), b, 0o644)
		s, err := OpenWith(dir, Options{FailOnCorrupt: true})
		if err == nil {
			s.Close()
			t.Fatalf("flip at %d: header damage not detected", i)
		}
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.Offset != 0 {
			t.Fatalf("flip at %d: %v", i, err)
		}
	}
}

func TestMisnamedFileDetected(t *testing.T) {
	_, file, _, _ := writeRecords(t, 2)
	dir := t.TempDir()
	copyFile(t, file, filepath.Join(dir, strings.Repeat("0", 32)+fileExt))
	if _, err := OpenWith(dir, Options{FailOnCorrupt: true}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("err = %v, want ErrCorrupt", err)
	}
	// By default the misnamed file is moved aside and Open succeeds.
	s, err := OpenWith(dir, Options{Note: func(string) {}})
	if err != nil {
		t.Fatalf("default Open: %v", err)
	}
	defer s.Close()
	if q := s.Stats().Quarantined; len(q) != 1 {
		t.Fatalf("quarantined %v", q)
	}
}

func TestUnrelatedFilesIgnored(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.log"), []byte("hello"), 0o644)
	os.WriteFile(filepath.Join(dir, "README"), []byte("hello"), 0o644)
	os.Mkdir(filepath.Join(dir, strings.Repeat("a", 32)+fileExt), 0o755)
	s := mustOpen(t, dir)
	if st := s.Stats(); st.Models != 0 || st.RecoveredBytes != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestConcurrentEmbed(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	f := &fake{id: "m", dim: 8}
	qf := &queryFake{fake{id: "q", dim: 8}}
	e, qe := Wrap(f, s), Wrap(qf, s)
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for r := range 20 {
				in := words("w", 10+(g*7+r)%40) // heavily overlapping texts
				got, err := e.Embed(context.Background(), in)
				if err != nil {
					t.Error(err)
					return
				}
				checkVecs(t, "m", in, got)
				q, err := embed.Queries(context.Background(), qe, in[:5])
				if err != nil {
					t.Error(err)
					return
				}
				checkVecs(t, "q#query", in[:5], q)
				_ = s.Stats()
			}
		})
	}
	wg.Wait()
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2, recomputed := verify(t, dir, words("w", 49))
	defer s2.Close()
	if recomputed != 0 || s2.Recovered() != 0 {
		t.Fatalf("reopen: recomputed %d, recovered %d", recomputed, s2.Recovered())
	}
}

// Two stores on one directory behave like two processes: appends never
// interleave, and each adopts the other's records when it next appends.
func TestTwoStoresOneDir(t *testing.T) {
	dir := t.TempDir()
	a, b := mustOpen(t, dir), mustOpen(t, dir)
	fa, fb := &fake{id: "m", dim: 8}, &fake{id: "m", dim: 8}
	ea, eb := Wrap(fa, a), Wrap(fb, b)
	var wg sync.WaitGroup
	for i, e := range []embed.Embedder{ea, eb} {
		wg.Go(func() {
			for r := range 30 {
				in := words(fmt.Sprintf("s%d-r%d", i, r), 5)
				if _, err := e.Embed(context.Background(), in); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	// b's next append reads what a wrote, so b now answers a's texts.
	if _, err := eb.Embed(context.Background(), []string{"trigger"}); err != nil {
		t.Fatal(err)
	}
	before := fb.calls.Load()
	got, err := eb.Embed(context.Background(), words("s0-r29", 5))
	if err != nil {
		t.Fatal(err)
	}
	checkVecs(t, "m", words("s0-r29", 5), got)
	if fb.calls.Load() != before {
		t.Fatal("b did not adopt a's records")
	}
	a.Close()
	b.Close()
	var all []string
	for i := range 2 {
		for r := range 30 {
			all = append(all, words(fmt.Sprintf("s%d-r%d", i, r), 5)...)
		}
	}
	s, recomputed := verify(t, dir, all)
	defer s.Close()
	if recomputed != 0 || s.Recovered() != 0 {
		t.Fatalf("recomputed %d, recovered %d", recomputed, s.Recovered())
	}
}

// TestHelperProcess is a child process for TestProcesses, not a test.
func TestHelperProcess(t *testing.T) {
	dir, who := os.Getenv("CTXSEL_CACHE_HELPER_DIR"), os.Getenv("CTXSEL_CACHE_HELPER_ID")
	if dir == "" {
		t.Skip("helper process only")
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	e := Wrap(&fake{id: "m", dim: 8}, s)
	if os.Getenv("CTXSEL_CACHE_HELPER_SHARED") != "" {
		who = "shared" // every process embeds the same texts
	}
	for r := range 50 {
		if _, err := e.Embed(context.Background(), words(who+"-"+strconv.Itoa(r), 4)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	var cmds []*exec.Cmd
	for i := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "CTXSEL_CACHE_HELPER_DIR="+dir, "CTXSEL_CACHE_HELPER_ID=p"+strconv.Itoa(i))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("helper: %v", err)
		}
	}
	var all []string
	for i := range 3 {
		for r := range 50 {
			all = append(all, words("p"+strconv.Itoa(i)+"-"+strconv.Itoa(r), 4)...)
		}
	}
	s, recomputed := verify(t, dir, all)
	defer s.Close()
	if recomputed != 0 || s.Recovered() != 0 {
		t.Fatalf("recomputed %d, recovered %d", recomputed, s.Recovered())
	}
}

// TestProcessesDoNotDuplicate: three processes embedding the same texts
// into one directory store each vector once (issue 14: three concurrent
// evals wrote 6.65 MB where 2.30 MB sufficed).
func TestProcessesDoNotDuplicate(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	var cmds []*exec.Cmd
	for i := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "CTXSEL_CACHE_HELPER_DIR="+dir, "CTXSEL_CACHE_HELPER_ID=p"+strconv.Itoa(i), "CTXSEL_CACHE_HELPER_SHARED=1")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("helper: %v", err)
		}
	}
	files := logFiles(t, dir)
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	fi, err := os.Stat(files[0])
	if err != nil {
		t.Fatal(err)
	}
	want := int64(headerLen(ns{kindPassage, "m"})) + int64(50*4*recordSize(8))
	if fi.Size() != want {
		t.Fatalf("cache file is %d bytes, want exactly %d (each of 200 vectors once)", fi.Size(), want)
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := Open(""); err == nil {
		t.Fatal("empty dir accepted")
	}
	file := filepath.Join(t.TempDir(), "plain-file")
	os.WriteFile(file, nil, 0o644)
	if _, err := Open(file); err == nil {
		t.Fatal("a file accepted as directory")
	}
}

// Every cut or rebuild says so once and keeps a copy of what it dropped:
// a damaged last record (which looks like a torn tail) and a file
// overwritten with garbage.
func TestDamageNotedWithCopy(t *testing.T) {
	_, file, offsets, texts := writeRecords(t, 3)
	orig, _ := os.ReadFile(file)
	open := func(dir string) (*Store, []string) {
		var notes []string
		s, err := OpenWith(dir, Options{Note: func(m string) { notes = append(notes, m) }})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Wrap(&fake{id: "m", dim: 8}, s).Embed(context.Background(), texts); err != nil {
			t.Fatal(err)
		}
		return s, notes
	}
	for name, damage := range map[string]func([]byte) []byte{
		"last record": func(b []byte) []byte { b[offsets[2]+10] ^= 0x01; return b },
		"garbage":     func(b []byte) []byte { return []byte(strings.Repeat("garbage!", len(b)/8)) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, filepath.Base(file))
			damaged := damage(slices.Clone(orig))
			os.WriteFile(p, damaged, 0o644)
			s, notes := open(dir)
			q := s.Stats().Quarantined
			s.Close()
			if len(notes) != 1 || len(q) != 1 {
				t.Fatalf("notes %q, quarantined %v", notes, q)
			}
			kept, err := os.ReadFile(q[0])
			if err != nil || !strings.HasSuffix(string(damaged), string(kept)) || len(kept) == 0 {
				t.Fatalf("the copy %s does not hold what was dropped: %v", q[0], err)
			}
			if s, notes := open(dir); len(notes) != 0 {
				s.Close()
				t.Fatalf("noted again: %q", notes)
			} else {
				s.Close()
			}
		})
	}
}
