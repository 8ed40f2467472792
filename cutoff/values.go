package cutoff

import (
	"math"
	"slices"
	"sync"
)

// Scratch buffers: the fast paths need a little working memory per call, and
// pooling it keeps them allocation-free in steady state.
var floatPool = sync.Pool{New: func() any { s := make([]float64, 0, 1024); return &s }}

func getFloats(n int) *[]float64 {
	p := floatPool.Get().(*[]float64)
	if cap(*p) < n {
		*p = make([]float64, n)
	}
	*p = (*p)[:n]
	return p
}

func putFloats(p *[]float64) { floatPool.Put(p) }

// histBins is the most bins of the value histograms the fast paths use to
// find ranks and gaps in a few sequential passes instead of sorting.
const histBins = 2048

// binsFor scales the histogram to the input: about four values a bin.
func binsFor(n int) int { return min(histBins, max(16, n/4)) }

// binOf maps x in [lo, hi] to one of nb bins, highest values in bin 0. It
// is monotone in x, so bins are ordered by value.
func binOf(x, hi, scale float64, nb int) int {
	j := int((hi - x) * scale)
	if j >= nb {
		j = nb - 1
	}
	return j
}

// rankValue returns the value of rank r (0 = highest) among v, whose minimum
// and maximum are lo and hi. A histogram pass finds the bin holding rank r; a
// selection among that bin's values finishes. v is not modified.
func rankValue(v []float64, r int, lo, hi float64) float64 {
	if lo == hi {
		return lo
	}
	nb := binsFor(len(v))
	scale := float64(nb) / (hi - lo)
	if math.IsInf(scale, 0) || math.IsInf(hi-lo, 0) {
		return quickRank(v, r)
	}
	var counts [histBins]int32
	for _, x := range v {
		counts[binOf(x, hi, scale, nb)]++
	}
	bin, before := binOfRank(counts[:nb], r)
	return rankInBin(v, bin, int(counts[bin]), r-before, hi, scale, nb)
}

// binOfRank returns the bin (of a histogram, highest values in bin 0)
// holding rank r, and how many values rank above that bin.
func binOfRank(counts []int32, r int) (bin, before int) {
	for ; bin < len(counts)-1 && before+int(counts[bin]) <= r; bin++ {
		before += int(counts[bin])
	}
	return bin, before
}

// rankInBin returns the value of rank r among the size values of v that
// fall in one bin.
func rankInBin(v []float64, bin, size, r int, hi, scale float64, nb int) float64 {
	buf := getFloats(size)
	defer putFloats(buf)
	in := (*buf)[:0]
	for _, x := range v {
		if binOf(x, hi, scale, nb) == bin {
			in = append(in, x)
		}
	}
	return selectDesc(in, r)
}

func quickRank(v []float64, r int) float64 {
	buf := getFloats(len(v))
	defer putFloats(buf)
	copy(*buf, v)
	return selectDesc(*buf, r)
}

// selectDesc partially orders v so that v[r] holds the value of rank r
// (descending), everything before it is >= and everything after is <=.
// Quickselect with a median-of-three pivot: expected O(len(v)).
func selectDesc(v []float64, r int) float64 {
	lo, hi := 0, len(v)-1
	for hi-lo > 16 {
		mid := lo + (hi-lo)/2
		if v[mid] > v[lo] {
			v[mid], v[lo] = v[lo], v[mid]
		}
		if v[hi] > v[mid] {
			v[hi], v[mid] = v[mid], v[hi]
			if v[mid] > v[lo] {
				v[mid], v[lo] = v[lo], v[mid]
			}
		}
		pivot := v[mid]
		i, j := lo, hi
		for i <= j {
			for v[i] > pivot {
				i++
			}
			for pivot > v[j] {
				j--
			}
			if i <= j {
				v[i], v[j] = v[j], v[i]
				i++
				j--
			}
		}
		switch {
		case r <= j:
			hi = j
		case r >= i:
			lo = i
		default:
			return v[r]
		}
	}
	sortDesc(v[lo : hi+1])
	return v[r]
}

func sortDesc(v []float64) {
	slices.Sort(v)
	slices.Reverse(v)
}

// minMax returns the extremes of finite values.
func minMax(v []float64) (lo, hi float64) {
	lo, hi = v[0], v[0]
	for _, x := range v {
		if x < lo {
			lo = x
		}
		if x > hi {
			hi = x
		}
	}
	return lo, hi
}

// prefix grows a descending-sorted prefix of a score multiset on demand, so a
// strategy that usually stops near the top never sorts the whole curve.
type prefix struct {
	buf    []float64 // buf[:sorted] descending; buf[sorted:] all <= buf[sorted-1]
	sorted int
}

// extend makes at least m leading values sorted (clamped to len(buf)): it
// finds the value of the last wanted rank, moves everything above it (and
// enough equal values) to the front in one pass, and sorts only those.
func (p *prefix) extend(m int) {
	n := len(p.buf)
	m = min(m, n)
	if m <= p.sorted {
		return
	}
	rest := p.buf[p.sorted:]
	want := m - p.sorted
	if want < len(rest) {
		lo, hi := minMax(rest)
		t := rankValue(rest, want-1, lo, hi)
		above := 0
		for _, x := range rest {
			if x > t {
				above++
			}
		}
		equal := want - above // values equal to t that belong in front
		w := 0
		for i, x := range rest {
			if x > t || (x == t && equal > 0) {
				if x == t {
					equal--
				}
				rest[w], rest[i] = rest[i], rest[w]
				w++
			}
		}
	}
	sortDesc(rest[:want])
	p.sorted = m
}
