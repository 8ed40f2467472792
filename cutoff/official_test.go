package cutoff

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/ctxsel/ctxsel"
)

// The reference below restates the official Adaptive-k code
// (megagonlabs/adaptive-k-retrieval, retriever.py: find_threshold_* and
// adaptive_retrieve) in plain Go, statement by statement, from a reading of
// it: torch.diff is next − current, argmin takes the first minimum, slices
// gaps[cut:-tail] (gaps[cut:] when tail is 0), and retrieve_more adds an int
// or multiplies by a float. It knows nothing of the fast paths.

// official is one configuration of the official Retriever.
type official struct {
	strategy          string // largest_gap, moving_avg, 2diff_spike
	window            int
	headInt, tailInt  bool // ignore_extreme(_tail) given as int (a count) rather than float
	head, tail        float64
	ignoreBelowMedian bool
	moreInt           bool
	more              float64 // retrieve_more; 0 = None
	f32               bool    // float32 tensors (faiss similarities)
}

// val is what the official code computes in: float32 tensors or float64.
func (o official) val(x float64) float64 {
	if o.f32 {
		return float64(float32(x))
	}
	return x
}

// sub is torch's subtraction in the tensor's dtype.
func (o official) sub(a, b float64) float64 {
	if o.f32 {
		return float64(float32(a) - float32(b))
	}
	return a - b
}

func (o official) cuts(n int) (cut, tail int) {
	t, tInt := o.tail, o.tailInt
	if o.ignoreBelowMedian {
		t, tInt = 0.5, false
	}
	if o.headInt {
		cut = int(o.head)
	} else {
		cut = int(float64(n-1) * o.head)
	}
	if tInt {
		tail = int(t)
	} else {
		tail = int(float64(n-1) * t)
	}
	return cut, tail
}

// argminFrom is torch.argmin(x[cut:len−tail]) + cut; ok is false where
// torch would raise on an empty tensor.
func argminFrom(x []float64, cut, tail int) (int, bool) {
	end := len(x) - tail
	if tail == 0 {
		end = len(x)
	}
	if cut >= end || cut < 0 {
		return 0, false
	}
	best := cut
	for i := cut; i < end; i++ {
		if x[i] < x[best] {
			best = i
		}
	}
	return best, true
}

// threshold is find_threshold on the descending arr; tensor says whether the
// result is a tensor (largest_gap, moving_avg) or a Python int (a spike).
func (o official) threshold(arr []float64) (t int, tensor, ok bool) {
	n := len(arr)
	cut, tail := o.cuts(n)
	switch o.strategy {
	case "largest_gap":
		gaps := make([]float64, n-1)
		for i := range gaps {
			gaps[i] = o.sub(arr[i+1], arr[i])
		}
		t, ok = argminFrom(gaps, cut, tail)
		return t, true, ok
	case "moving_avg":
		w := o.window
		k := 1 / float64(w)
		if o.f32 {
			k = float64(float32(1) / float32(w))
		}
		avg := make([]float64, n-w+1)
		for j := range avg {
			acc := 0.0
			for q := range w {
				if o.f32 {
					acc = float64(float32(acc) + float32(float32(arr[j+q])*float32(k)))
				} else {
					acc += float64(arr[j+q] * k)
				}
			}
			avg[j] = acc
		}
		gaps := make([]float64, len(avg)-1)
		for i := range gaps {
			gaps[i] = o.sub(avg[i+1], avg[i])
		}
		t, ok = argminFrom(gaps, cut, tail)
		return t, true, ok
	}
	// 2diff_spike
	end := n - tail
	if tail == 0 {
		end = n
	}
	if cut >= end {
		return 0, false, false
	}
	a := arr[cut:end]
	var d1, d2 []float64
	for i := 0; i+1 < len(a); i++ {
		d1 = append(d1, o.sub(a[i+1], a[i]))
	}
	for i := 0; i+1 < len(d1); i++ {
		d2 = append(d2, o.sub(d1[i+1], d1[i]))
	}
	cm := math.Inf(1)
	for i := 0; i+1 < len(d2); i++ {
		cm = min(cm, d2[i])
		if d2[i+1] > 0 && cm < 0 {
			return i + 1 + 1 + cut, false, true
		}
	}
	return -1, true, false // the fallback: compared separately
}

// chunks is how many passages adaptive_retrieve returns for threshold t:
// retrieve_more applied, then every i <= t.
func (o official) chunks(n, t int, tensor bool) int {
	if o.more != 0 {
		if o.moreInt {
			t += int(o.more)
		} else if tensor && o.f32 {
			t = int(float32(float32(t) * float32(o.more)))
		} else {
			t = int(float64(t) * o.more)
		}
	}
	return min(n, t+1)
}

// params maps the official configuration onto AdaptiveKParams.
func (o official) params() AdaptiveKParams {
	p := AdaptiveKParams{BelowMedian: o.ignoreBelowMedian, Float32: o.f32}
	if o.headInt {
		p.HeadN = int(o.head)
	} else {
		p.Head = o.head
	}
	if o.tailInt {
		p.TailN = int(o.tail)
	} else {
		p.Tail = o.tail
	}
	if o.more != 0 {
		if o.moreInt {
			p.Buffer = int(o.more)
		} else {
			p.Factor = o.more
		}
	}
	return p
}

func randomOfficial(r *rand.Rand, n int) official {
	o := official{strategy: []string{"largest_gap", "moving_avg", "2diff_spike"}[r.IntN(3)], window: 1 + r.IntN(4)}
	if r.IntN(2) == 0 {
		o.headInt, o.head = true, float64(r.IntN(max(1, n/3)))
	} else {
		o.head = []float64{0, 0.05, 0.2}[r.IntN(3)]
	}
	if r.IntN(2) == 0 {
		o.tailInt, o.tail = true, float64(r.IntN(max(1, n/3)))
	} else {
		o.tail = []float64{0, 0.1, 0.3}[r.IntN(3)]
	}
	o.ignoreBelowMedian = r.IntN(4) == 0
	switch r.IntN(3) {
	case 0:
		o.moreInt, o.more = true, float64(r.IntN(6))
	case 1:
		o.more = []float64{0.5, 1.5, 2, 1.1}[r.IntN(4)]
	}
	o.f32 = r.IntN(2) == 0
	return o
}

// checkOfficial compares one configuration on one curve; it reports whether
// the case was comparable (the official code would not raise).
func checkOfficial(t *testing.T, scores []float64, o official) bool {
	t.Helper()
	n := len(scores)
	if n < 2 || (o.strategy == "moving_avg" && n <= o.window) {
		return false
	}
	p := o.params()
	if p.validate() != nil || checkFloat32(scores, p) != nil {
		return false
	}
	arr := make([]float64, n)
	for i, x := range scores {
		arr[i] = o.val(x)
	}
	slices.Sort(arr)
	slices.Reverse(arr)
	th, tensor, ok := o.threshold(arr)
	var gotK, gotIdx int
	switch o.strategy {
	case "largest_gap":
		r, err := AdaptiveK(scores, p)
		if err != nil {
			t.Fatal(err)
		}
		gotK, gotIdx = r.K, r.GapIndex
		if ok && r.Clamped {
			t.Fatalf("clamped a window the official code searches: %+v", r)
		}
	case "moving_avg":
		r, err := MovingAvg(scores, o.window, p)
		if err != nil {
			t.Fatal(err)
		}
		gotK, gotIdx = r.K, r.GapIndex
	default:
		r, err := SecondDiffSpike(scores, p)
		if err != nil {
			t.Fatal(err)
		}
		if th < 0 && ok == false && tensor { // no spike: the fallback
			cut, tail := o.cuts(n)
			if r.Spike {
				t.Fatalf("spike found where the official code has none: %+v", r)
			}
			if cut != 0 || tail != 0 {
				return false // the official fallback re-trims (documented difference)
			}
			o.strategy = "largest_gap"
			th, tensor, ok = o.threshold(arr)
		} else if ok && !r.Spike {
			t.Fatalf("no spike where the official code finds one at %d: %+v", th, r)
		}
		gotK, gotIdx = r.K, r.GapIndex
	}
	if !ok {
		return false
	}
	if want := o.chunks(n, th, tensor); gotK != want || gotIdx != th {
		t.Fatalf("scores %v\n%+v: k=%d threshold=%d, official k=%d threshold=%d", scores, o, gotK, gotIdx, want, th)
	}
	return true
}

func TestOfficialOptionsMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 6))
	compared := map[string]int{}
	for range 6000 {
		n := 2 + r.IntN(60)
		s := randomScores(r, n)
		if r.IntN(4) == 0 { // near-ties that float32 merges
			for i := range s {
				s[i] = 0.5 + float64(r.IntN(8))*1e-9
			}
		}
		o := randomOfficial(r, n)
		if checkOfficial(t, s, o) {
			compared[o.strategy]++
		}
	}
	for _, st := range []string{"largest_gap", "moving_avg", "2diff_spike"} {
		if compared[st] < 500 {
			t.Errorf("%s: only %d comparable cases", st, compared[st])
		}
	}
}

func TestOfficialOptionsHandComputed(t *testing.T) {
	// float64 gaps .25 and .250000000001: the second wins; float32 rounds
	// 0.5 − 1e-12 to 0.5, the gaps tie, and the first wins, as in torch.
	s := []float64{1, 0.75, 0.5 - 1e-12}
	for _, tc := range []struct {
		f32   bool
		wantI int
	}{{false, 1}, {true, 0}} {
		r, err := AdaptiveK(s, AdaptiveKParams{Float32: tc.f32})
		if err != nil || r.GapIndex != tc.wantI {
			t.Errorf("float32=%v: gap index %d (%v), want %d", tc.f32, r.GapIndex, err, tc.wantI)
		}
	}
	// retrieve_more 2.1 with the cut at index 30: the official code holds the
	// index as a torch tensor, so int(30 × 2.1) is taken in float32 (62.999998)
	// and keeps 63; in float64 (63.000000000000007) it keeps 64.
	long := make([]float64, 100)
	for r := range long {
		long[r] = float64(200 - r)
		if r > 30 {
			long[r] = float64(100 - r)
		}
	}
	for _, tc := range []struct {
		f32   bool
		wantK int
	}{{false, 64}, {true, 63}} {
		r, err := AdaptiveK(long, AdaptiveKParams{Factor: 2.1, Float32: tc.f32})
		if err != nil || r.GapIndex != 30 || r.K != tc.wantK {
			t.Errorf("factor 2.1 float32=%v: %+v (%v), want k=%d after gap 30", tc.f32, r, err, tc.wantK)
		}
	}
	// Exact binary values, one cliff after rank 3 (37 → 20).
	ten := []float64{40, 39, 38, 37, 20, 19, 18, 17, 16, 15}
	cases := []struct {
		name string
		f    func() (int, int, error)
		k, i int
	}{
		// head_n=4 skips gaps 0..3, so the cliff is out of reach: the gaps
		// of 1 tie and the first searched (index 4) wins.
		{"head_n", func() (int, int, error) {
			r, err := AdaptiveK(ten, AdaptiveKParams{HeadN: 4})
			return r.K, r.GapIndex, err
		}, 5, 4},
		// tail_n=6 leaves gap indices [0, 3): the cliff (index 3) is excluded.
		{"tail_n", func() (int, int, error) {
			r, err := AdaptiveK(ten, AdaptiveKParams{TailN: 6})
			return r.K, r.GapIndex, err
		}, 1, 0},
		// below the median: int(9·0.5) = 4 tail gaps replace tail 0.9, and
		// the window [0, 5) keeps the cliff.
		{"ignore_below_median", func() (int, int, error) {
			r, err := AdaptiveK(ten, AdaptiveKParams{Tail: 0.9, BelowMedian: true})
			return r.K, r.GapIndex, err
		}, 4, 3},
		// retrieve_more 2.5 as a float: int(3·2.5) = 7, keep 8.
		{"factor", func() (int, int, error) {
			r, err := AdaptiveK(ten, AdaptiveKParams{Factor: 2.5})
			return r.K, r.GapIndex, err
		}, 8, 3},
		// window 2 over 40 39 38 34 20 19 …: drops (s[j] − s[j+2])/2 are
		// 1, 2.5, 9, 7.5, 1, …: j* = 2, and the official rule keeps j* + 1.
		{"moving_avg window 2", func() (int, int, error) {
			r, err := MovingAvg([]float64{40, 39, 38, 34, 20, 19, 18, 17, 16, 15}, 2, AdaptiveKParams{})
			return r.K, r.GapIndex, err
		}, 3, 2},
		// d1 = −1 −1 −1 −17 −1 …, d2 = 0 0 −16 16 0 …: at i = 2 the running
		// minimum is −16 < 0 and d2[3] = 16 > 0, so t = 2 + 2 = 4: ranks 0..4.
		{"2diff_spike", func() (int, int, error) {
			r, err := SecondDiffSpike(ten, AdaptiveKParams{})
			return r.K, r.GapIndex, err
		}, 5, 4},
		// a straight line has no spike: the largest gap (the first of equal
		// gaps) decides.
		{"2diff_spike fallback", func() (int, int, error) {
			r, err := SecondDiffSpike([]float64{5, 4, 3, 2, 1}, AdaptiveKParams{Buffer: 1})
			return r.K, r.GapIndex, err
		}, 2, 0},
	}
	for _, tc := range cases {
		k, i, err := tc.f()
		if err != nil || k != tc.k || i != tc.i {
			t.Errorf("%s: k=%d index=%d err=%v, want k=%d index=%d", tc.name, k, i, err, tc.k, tc.i)
		}
	}
}

func FuzzOfficialOptions(f *testing.F) {
	f.Add([]byte{9, 9, 8, 1, 1, 0, 3, 2, 2}, uint16(0), 0.05, 0.1)
	f.Add(make([]byte, 80), uint16(0xffff), 0.0, 0.0)
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0xe0, 0x3f, 1, 2, 3}, uint16(0x1234), 0.3, 0.0)
	f.Fuzz(func(t *testing.T, raw []byte, bits uint16, head, tail float64) {
		s := scoresFrom(raw)
		if len(s) > 400 {
			s = s[:400]
		}
		o := official{strategy: []string{"largest_gap", "moving_avg", "2diff_spike", "largest_gap"}[bits&3],
			window: 1 + int(bits>>2&3), headInt: bits&16 != 0, tailInt: bits&32 != 0, ignoreBelowMedian: bits&64 != 0,
			f32: bits&128 != 0, moreInt: bits&256 != 0, head: head, tail: tail}
		if o.headInt {
			o.head = float64(int(math.Abs(math.Mod(head, 50))))
		}
		if o.tailInt {
			o.tail = float64(int(math.Abs(math.Mod(tail, 50))))
		}
		if bits&512 != 0 {
			o.more = float64(bits>>10&7) + 0.5*float64(bits>>13&1)
			if o.moreInt {
				o.more = math.Trunc(o.more)
			}
		}
		p := o.params()
		// Every entry point accepts or rejects without panicking, and k stays in [1, n].
		for _, k := range []func() (int, error){
			func() (int, error) { r, err := AdaptiveK(s, p); return r.K, err },
			func() (int, error) { r, err := AdaptiveKReference(s, p); return r.K, err },
			func() (int, error) { r, err := MovingAvg(s, o.window, p); return r.K, err },
			func() (int, error) { r, err := SecondDiffSpike(s, p); return r.K, err },
		} {
			if got, err := k(); err == nil && len(s) > 0 && (got < 1 || got > len(s)) {
				t.Fatalf("k=%d outside [1, %d] for %+v", got, len(s), o)
			}
		}
		if a, err1 := AdaptiveK(s, p); err1 == nil {
			if b, _ := AdaptiveKReference(s, p); a != b {
				t.Fatalf("fast %+v reference %+v", a, b)
			}
		}
		checkOfficial(t, s, o)
	})
}

// TestRegisteredDefaultsAreOfficial: the strategies as a user names them,
// with no parameter given ("adaptivek", "moving_avg", "2diff_spike", what
// `ctxsel eval --strategies adaptivek` builds), cut where the official code
// does with the paper's settings (run_qa.sh: --retrieval_strategy
// largest_gap --ignore_extreme_tail 0.1 --retrieve_more 5) — on random
// curves and on curves whose largest gap follows rank 0, the case ctxsel's
// head_guard option changes.
func TestRegisteredDefaultsAreOfficial(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 1))
	headCases := map[string]int{}
	for _, st := range []string{"largest_gap", "moving_avg", "2diff_spike"} {
		o := official{strategy: st, window: 3, tail: 0.1, moreInt: true, more: 5}
		spec := map[string]string{"largest_gap": "adaptivek", "moving_avg": "moving_avg", "2diff_spike": "2diff_spike"}[st]
		strategy, caps, err := ctxsel.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3000 {
			n := 2 + r.IntN(80)
			s := randomScores(r, n)
			if i%3 == 0 { // one passage far above the rest: the largest gap follows rank 0
				s[r.IntN(n)] = slices.Max(s) + 10*(1+r.Float64())*(slices.Max(s)-slices.Min(s)+1)
			}
			if st == "moving_avg" && n <= o.window {
				continue
			}
			arr := slices.Clone(s)
			slices.Sort(arr)
			slices.Reverse(arr)
			th, tensor, ok := o.threshold(arr)
			if st == "2diff_spike" && !ok && tensor && th < 0 { // no spike: the official fallback on the trimmed curve
				continue
			}
			if !ok {
				continue
			}
			want := o.chunks(n, th, tensor)
			cands := make([]ctxsel.Candidate, n)
			for j, x := range s {
				cands[j] = ctxsel.Candidate{ID: strconv.Itoa(j), Score: x, Tokens: 1}
			}
			curve, err := ctxsel.NewCurve(cands)
			if err != nil {
				t.Fatal(err)
			}
			sel, err := ctxsel.Select(curve, strategy, caps, ctxsel.RankOrder)
			if err != nil {
				t.Fatal(err)
			}
			if sel.K != want {
				t.Fatalf("%s on %v: k=%d, the official code keeps %d (threshold %d); %s", spec, s, sel.K, want, th, sel.Explanation.Reason)
			}
			if slices.Contains(sel.Explanation.Guards, "head_guard") {
				t.Fatalf("%s: the head guard fired by default: %s", spec, sel.Explanation.Reason)
			}
			if th == 0 && st != "2diff_spike" {
				headCases[spec]++
			}
		}
	}
	for _, spec := range []string{"adaptivek", "moving_avg"} {
		if headCases[spec] < 300 {
			t.Errorf("%s: only %d curves with the official cut at rank 0", spec, headCases[spec])
		}
	}
}
