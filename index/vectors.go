package index

import (
	"fmt"
	"math"
)

// Format is how the embedded index stores vector components.
type Format uint32

const (
	// F32 stores float32 components: exact, 4 bytes each.
	F32 Format = 1
	// F16 stores IEEE half-precision components: 2 bytes each, scores
	// within about 1e-3 of float32.
	F16 Format = 2
	// I8 stores int8 components with one float32 scale per vector
	// (symmetric, max-abs): 1 byte each, a quarter of the memory traffic.
	I8 Format = 3
)

// ParseFormat reads "f32", "f16" or "i8" ("" means f32).
func ParseFormat(s string) (Format, error) {
	switch s {
	case "", "f32", "float32":
		return F32, nil
	case "f16", "float16":
		return F16, nil
	case "i8", "int8":
		return I8, nil
	}
	return 0, invalidf("vector format %q: want f32, f16 or i8", s)
}

func (f Format) String() string {
	switch f {
	case F32:
		return "f32"
	case F16:
		return "f16"
	case I8:
		return "i8"
	}
	return fmt.Sprintf("Format(%d)", uint32(f))
}

// elemSize is the bytes per component.
func (f Format) elemSize() int {
	switch f {
	case F32:
		return 4
	case F16:
		return 2
	case I8:
		return 1
	}
	return 0
}

// matrix holds n vectors of dim components in one format, row-major.
type matrix struct {
	format Format
	dim, n int
	f32    []float32
	f16    []uint16
	i8     []int8
	scale  []float32 // I8 only: one per row
}

// newMatrix encodes unit vectors (each of length dim) in format f.
func newMatrix(f Format, dim int, vecs [][]float32) matrix {
	m := matrix{format: f, dim: dim, n: len(vecs)}
	switch f {
	case F32:
		m.f32 = make([]float32, 0, len(vecs)*dim)
		for _, v := range vecs {
			m.f32 = append(m.f32, v...)
		}
	case F16:
		m.f16 = make([]uint16, 0, len(vecs)*dim)
		for _, v := range vecs {
			for _, x := range v {
				m.f16 = append(m.f16, f32ToF16(x))
			}
		}
	case I8:
		m.i8 = make([]int8, 0, len(vecs)*dim)
		m.scale = make([]float32, 0, len(vecs))
		for _, v := range vecs {
			q, s := quantizeI8(v)
			m.i8 = append(m.i8, q...)
			m.scale = append(m.scale, s)
		}
	}
	return m
}

// row decodes vector r to float32 (for compaction and tests).
func (m *matrix) row(r int) []float32 {
	out := make([]float32, m.dim)
	lo := r * m.dim
	switch m.format {
	case F32:
		copy(out, m.f32[lo:lo+m.dim])
	case F16:
		for i := range out {
			out[i] = f16ToF32(m.f16[lo+i])
		}
	case I8:
		for i := range out {
			out[i] = float32(m.i8[lo+i]) * m.scale[r]
		}
	}
	return out
}

// scores computes out[i] = <q, row lo+i> for i < len(out).
func (m *matrix) scores(q []float32, lo int, out []float32) {
	if len(out) == 0 {
		return
	}
	d := m.dim
	switch m.format {
	case F32:
		dotF32(q, m.f32[lo*d:(lo+len(out))*d], out)
	case F16:
		dotF16(q, m.f16[lo*d:(lo+len(out))*d], out)
	case I8:
		dotI8(q, m.i8[lo*d:(lo+len(out))*d], out)
		for i, s := range m.scale[lo : lo+len(out)] {
			out[i] *= s
		}
	}
}

// quantizeI8 maps v to int8 with a per-vector scale: v ≈ q·s.
func quantizeI8(v []float32) ([]int8, float32) {
	var mx float32
	for _, x := range v {
		mx = max(mx, float32(math.Abs(float64(x))))
	}
	q := make([]int8, len(v))
	if mx == 0 {
		return q, 0
	}
	s := mx / 127
	for i, x := range v {
		q[i] = int8(max(-127, min(127, math.Round(float64(x/s)))))
	}
	return q, s
}

// f32ToF16 converts to IEEE 754 binary16, rounding to nearest even;
// overflow gives ±Inf (callers store unit vectors, which never overflow).
func f32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23&0xff) - 127 + 15
	mant := b & 0x7fffff
	switch {
	case b&0x7fffffff == 0:
		return sign
	case b>>23&0xff == 0xff: // Inf or NaN
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp >= 0x1f:
		return sign | 0x7c00
	case exp <= 0: // subnormal half (or zero)
		if exp < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint32(14 - exp)
		half := mant >> shift
		rem := mant & (1<<shift - 1)
		mid := uint32(1) << (shift - 1)
		if rem > mid || rem == mid && half&1 == 1 {
			half++
		}
		return sign | uint16(half)
	}
	half := uint32(exp)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || rem == 0x1000 && half&1 == 1 {
		half++ // may carry into the exponent, which is still correct
	}
	return sign | uint16(half)
}

// f16ToF32 converts IEEE 754 binary16 to float32 exactly.
func f16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0:
		if mant == 0 {
			return math.Float32frombits(sign)
		}
		// subnormal: normalise
		e := uint32(127 - 15 + 1)
		for mant&0x400 == 0 {
			mant <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (mant&0x3ff)<<13)
	case exp == 0x1f:
		return math.Float32frombits(sign | 0xff<<23 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}

// The portable kernels; kernels_amd64.go swaps in AVX2 ones when the CPU
// has them.

func dotF32Go(q, m []float32, out []float32) {
	d := len(q)
	for r := range out {
		v := m[r*d : r*d+d]
		var s0, s1, s2, s3 float32
		i := 0
		for ; i+4 <= d; i += 4 {
			s0 += q[i] * v[i]
			s1 += q[i+1] * v[i+1]
			s2 += q[i+2] * v[i+2]
			s3 += q[i+3] * v[i+3]
		}
		for ; i < d; i++ {
			s0 += q[i] * v[i]
		}
		out[r] = s0 + s1 + s2 + s3
	}
}

var f16Table = func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		t[i] = f16ToF32(uint16(i))
	}
	return &t
}()

func dotF16Go(q []float32, m []uint16, out []float32) {
	d := len(q)
	t := f16Table
	for r := range out {
		v := m[r*d : r*d+d]
		var s0, s1 float32
		i := 0
		for ; i+2 <= d; i += 2 {
			s0 += q[i] * t[v[i]]
			s1 += q[i+1] * t[v[i+1]]
		}
		for ; i < d; i++ {
			s0 += q[i] * t[v[i]]
		}
		out[r] = s0 + s1
	}
}

func dotI8Go(q []float32, m []int8, out []float32) {
	d := len(q)
	for r := range out {
		v := m[r*d : r*d+d]
		var s0, s1, s2, s3 float32
		i := 0
		for ; i+4 <= d; i += 4 {
			s0 += q[i] * float32(v[i])
			s1 += q[i+1] * float32(v[i+1])
			s2 += q[i+2] * float32(v[i+2])
			s3 += q[i+3] * float32(v[i+3])
		}
		for ; i < d; i++ {
			s0 += q[i] * float32(v[i])
		}
		out[r] = s0 + s1 + s2 + s3
	}
}

// kernel selection; overridden by kernels_amd64.go's init.
var (
	dotF32 = dotF32Go
	dotF16 = dotF16Go
	dotI8  = dotI8Go
	// kernelName says which kernels are in use (benchmarks report it).
	kernelName = "go"
)
