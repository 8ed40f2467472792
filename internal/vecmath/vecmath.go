// Package vecmath is the module's one place for vector arithmetic on
// embeddings: dot products, norms and cosine similarity, accumulated in
// float64. Two kinds of input need two rules: embeddings are float32, whose
// squares cannot overflow a float64, so Cosine32 sums them directly;
// vectors a client sends are float64 and may hold values near the float64
// limit, so Unit and CosineUnit scale by the largest magnitude first.
package vecmath

import "math"

// Dot32 is the dot product of a and b (of equal length), summed in float64
// in index order.
func Dot32(a, b []float32) float64 {
	var dot float64
	for j := range a {
		dot += float64(a[j]) * float64(b[j])
	}
	return dot
}

// Norm32 is the Euclidean norm of v, summed in float64.
func Norm32(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

// Cosine32 is the cosine similarity of a and b: 0 when either is the zero
// vector or their lengths differ.
func Cosine32(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	return CosineNorm32(a, Norm32(a), b)
}

// CosineNorm32 is Cosine32(q, v) with q's norm computed once by the caller
// (one query against many vectors). q and v have the same length.
func CosineNorm32(q []float32, qNorm float64, v []float32) float64 {
	if d := qNorm * Norm32(v); d > 0 {
		return Dot32(v, q) / d
	}
	return 0
}

// F64 widens a float32 vector.
func F64(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// Unit returns v scaled to unit length, and false for the zero vector.
// Components are first divided by the largest magnitude, so squares of
// values near the float64 limit do not overflow.
func Unit(v []float64) ([]float64, bool) {
	m := 0.0
	for _, x := range v {
		m = max(m, math.Abs(x))
	}
	if m == 0 {
		return nil, false
	}
	out := make([]float64, len(v))
	ss := 0.0
	for i, x := range v {
		out[i] = x / m
		ss += out[i] * out[i]
	}
	n := math.Sqrt(ss)
	for i := range out {
		out[i] /= n
	}
	return out, true
}

// CosineUnit is the cosine of the unit vector q (from Unit) and v, in
// [-1, 1], scaled like Unit; false when v is the zero vector. q and v have
// the same length.
func CosineUnit(q, v []float64) (float64, bool) {
	m := 0.0
	for _, x := range v {
		m = max(m, math.Abs(x))
	}
	if m == 0 {
		return 0, false
	}
	dot, ss := 0.0, 0.0
	for i, x := range v {
		x /= m
		dot += q[i] * x
		ss += x * x
	}
	return max(-1, min(1, dot/math.Sqrt(ss))), true
}
