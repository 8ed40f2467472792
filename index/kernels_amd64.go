//go:build amd64 && !purego

package index

import "golang.org/x/sys/cpu"

// AVX2+FMA kernels (kernels_amd64.s). Each computes, for rows r in
// [0, rows), out[r] = <q, row r> where rows are dim components apart; dim
// must be a positive multiple of 8.

//go:noescape
func dotF32AVX2(q *float32, m *float32, dim, rows int, out *float32)

//go:noescape
func dotF16AVX2(q *float32, m *uint16, dim, rows int, out *float32)

//go:noescape
func dotI8AVX2(q *float32, m *int8, dim, rows int, out *float32)

func init() {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA {
		return
	}
	kernelName = "avx2"
	dotF32 = func(q, m []float32, out []float32) {
		if len(q)%8 != 0 || len(out) == 0 || len(m) < len(q)*len(out) {
			dotF32Go(q, m, out)
			return
		}
		dotF32AVX2(&q[0], &m[0], len(q), len(out), &out[0])
	}
	dotI8 = func(q []float32, m []int8, out []float32) {
		if len(q)%8 != 0 || len(out) == 0 || len(m) < len(q)*len(out) {
			dotI8Go(q, m, out)
			return
		}
		dotI8AVX2(&q[0], &m[0], len(q), len(out), &out[0])
	}
	if cpu.X86.HasF16C {
		dotF16 = func(q []float32, m []uint16, out []float32) {
			if len(q)%8 != 0 || len(out) == 0 || len(m) < len(q)*len(out) {
				dotF16Go(q, m, out)
				return
			}
			dotF16AVX2(&q[0], &m[0], len(q), len(out), &out[0])
		}
	}
}
