//go:build amd64 && !purego

package uselite

import (
	"sync"

	"golang.org/x/sys/cpu"
)

// The int8 product on AMX (Intel's tile unit, Sapphire Rapids and later):
// TDPBUSD sums the same uint8·int8 products as vpdpbusd into exact int32,
// 16×16 sums of 64 products per instruction, and the epilogue is
// kern8VNNI's, so AMX's vectors are VNNI's bit for bit (TestReducedGemm,
// TestPrecisionKernelsAgree). The panels of q8Matrix are already in the
// layout a tile load reads (groups of 4 k rows, 128 bytes apart).

// In amx_amd64.s.
//
//go:noescape
func amxGemm8(kb int, u *uint8, lda int, mb int, rows int, b *int8, np int, c *float32, ldc int, sa *float32, scale *float32, corr *int32, relu bool, tmp *int32, cfg *byte, start int, bias *float32)

// amxConfig is the tile configuration amxGemm8 loads (LDTILECFG's 64-byte
// format, palette 1): tiles 0–7 of 16 rows × 64 bytes.
var amxConfig = func() (c [64]byte) {
	c[0] = 1
	for t := 0; t < 8; t++ {
		c[16+2*t] = 64 // bytes per row, little-endian uint16
		c[48+t] = 16   // rows
	}
	return c
}()

// amxUsable reports, once per process, whether the CPU has AMX and the OS
// lets this process use it (Linux asks for it with arch_prctl: the tile
// data is 8 KB more of saved state per thread that uses it). It is asked
// the first time an int8 product runs, not at start-up, so a process that
// never embeds in int8 never asks.
var amxUsable = sync.OnceValue(func() bool {
	return cpu.X86.HasAMXTile && cpu.X86.HasAMXInt8 && cpu.X86.HasAVX512F && amxPermit()
})

// amxKernel runs whole products on AMX and falls back to vnniKernel's tile
// where AMX cannot be used (kp not a multiple of 64, or no permission).
var amxKernel = &int8Kernel{name: "amx", mr: vnniKernel.mr, kern: vnniKernel.kern, whole: amxWhole, fallback: vnniKernel, usable: amxUsable}

// amxWhole computes gemm8's product with amxGemm8; false when it cannot.
func amxWhole(g *gemmScratch, m int, u []uint8, lda int, sa []float32, q *q8Matrix, corr []int32, c []float32, ldc int, start cStart, bias []float32, relu bool) bool {
	kp, n := q.kp, q.n
	if kp%64 != 0 || !amxUsable() {
		return false
	}
	if start != cAcc {
		_ = bias[n-1]
	}
	kb, np := kp/64, n/nr
	// Bounds checks: the assembly trusts these extents.
	_ = q.data[np*kp*nr-1]
	_, _ = q.scale[n-1], corr[n-1]
	_, _ = sa[m-1], c[(m-1)*ldc+n-1]
	// One block of rows at a time across all panels: its rows stay in L1
	// while the panels stream (measured 10–20 % faster than panel-outer on
	// the model's shapes with cold caches, BenchmarkGemm8).
	for i0 := 0; i0 < m; i0 += amxRows {
		r := min(amxRows, m-i0)
		a, ld := u[i0*lda:], lda
		if len(a) < (amxRows-1)*lda+kp {
			// The block reads 32 rows; where u ends before, its rows
			// run from a padded copy.
			if cap(g.amxA) < amxRows*kp {
				g.amxA = make([]uint8, amxRows*ffnDim)
			}
			pad := g.amxA[:amxRows*kp]
			for t := 0; t < r; t++ {
				copy(pad[t*kp:(t+1)*kp], a[t*lda:t*lda+kp])
			}
			a, ld = pad, kp
		}
		amxGemm8(kb, &a[0], ld, 1, r, &q.data[0], np, &c[i0*ldc], ldc, &sa[i0], &q.scale[0], &corr[0], relu, &g.amxTmp[0], &amxConfig[0], int(start), biasPtr(bias, start))
	}
	return true
}

func biasPtr(bias []float32, start cStart) *float32 {
	if start == cAcc {
		return nil
	}
	return &bias[0]
}
