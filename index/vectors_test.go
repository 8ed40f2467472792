package index

import (
	"math"
	"math/rand/v2"
	"testing"
)

func randUnit(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return Normalize(v)
}

// TestKernels checks every kernel in use against a float64 reference, for
// dimensions that exercise the 32-wide loop, the 8-wide tail and the
// portable fallback.
func TestKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, dim := range []int{8, 24, 32, 40, 384, 512, 7, 513} {
		const n = 37
		vecs := make([][]float32, n)
		for i := range vecs {
			vecs[i] = randUnit(r, dim)
		}
		q := randUnit(r, dim)
		for _, f := range []Format{F32, F16, I8} {
			m := newMatrix(f, dim, vecs)
			got := make([]float32, n)
			m.scores(q, 0, got)
			goRef := make([]float32, n)
			switch f {
			case F32:
				dotF32Go(q, m.f32, goRef)
			case F16:
				dotF16Go(q, m.f16, goRef)
			case I8:
				dotI8Go(q, m.i8, goRef)
				for i := range goRef {
					goRef[i] *= m.scale[i]
				}
			}
			tol := map[Format]float64{F32: 1e-5, F16: 2e-3, I8: 2e-2}[f]
			for i := range n {
				var exact float64
				for j := range dim {
					exact += float64(q[j]) * float64(vecs[i][j])
				}
				// the stored vector's own value, decoded
				var stored float64
				row := m.row(i)
				for j := range dim {
					stored += float64(q[j]) * float64(row[j])
				}
				if math.Abs(float64(got[i])-stored) > 1e-5 || math.Abs(float64(goRef[i])-stored) > 1e-5 {
					t.Fatalf("%s dim %d row %d: kernel %v, go %v, decoded %v", f, dim, i, got[i], goRef[i], stored)
				}
				if math.Abs(stored-exact) > tol {
					t.Fatalf("%s dim %d row %d: decoded %v, exact %v", f, dim, i, stored, exact)
				}
			}
			// offsets into the matrix
			part := make([]float32, 5)
			m.scores(q, 30, part)
			for i := range part {
				if part[i] != got[30+i] {
					t.Fatalf("%s: offset scores differ", f)
				}
			}
		}
	}
	t.Logf("kernels: %s", kernelName)
}

func TestF16(t *testing.T) {
	// exact round trips of every half value
	for h := 0; h < 1<<16; h++ {
		f := f16ToF32(uint16(h))
		if math.IsNaN(float64(f)) {
			continue
		}
		if back := f32ToF16(f); back != uint16(h) {
			t.Fatalf("%04x -> %v -> %04x", h, f, back)
		}
	}
	cases := map[float32]uint16{0: 0, 1: 0x3c00, -2: 0xc000, 65504: 0x7bff, 1e6: 0x7c00, 5.96046448e-08: 0x0001,
		1.0009765625: 0x3c01, 1.00048828125: 0x3c00 /* tie to even */, 1.00146484375: 0x3c02}
	for f, want := range cases {
		if got := f32ToF16(f); got != want {
			t.Errorf("f32ToF16(%v) = %04x, want %04x", f, got, want)
		}
	}
	if h := f32ToF16(float32(math.NaN())); h&0x7c00 != 0x7c00 || h&0x3ff == 0 {
		t.Errorf("NaN -> %04x", h)
	}
}
