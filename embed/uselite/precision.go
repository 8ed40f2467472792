package uselite

import (
	"fmt"
	"strings"
)

// Precision is the arithmetic of the dense layers (the projections and
// feed-forward layers that hold 95 % of the model's multiply-adds).
// Attention, layer norms, pooling and the output layer stay float32 in every
// precision.
//
// Each reduced precision is defined by its operands and its arithmetic, not
// by a kernel: the fast kernels and the portable fallbacks compute the same
// vectors, bit for bit, so an index built on one machine is queried on
// another with identical query vectors.
type Precision int

const (
	// FP32 is the reference: float32 weights and activations, float32
	// fused multiply-adds. Its vectors match the TF.js model within 1e-5.
	FP32 Precision = iota + 1
	// BF16 rounds weights and inputs to bfloat16 (8 significant bits) and
	// accumulates in float32, in the order AVX512-BF16's vdpbf16ps does (each
	// pair's odd element first); twice float32's multiply-adds per
	// instruction. Elsewhere the float32 kernels run the same chain.
	BF16
	// Int8 quantizes each dense layer's weights per output column (symmetric,
	// 127 levels) and its input per row (per token: 127 levels each side of
	// zero, or 255 levels for the non-negative output of a ReLU), multiplies
	// and sums them exactly in 32-bit integers and rescales the sums to
	// float32. AVX512-VNNI's vpdpbusd does 64 multiply-adds per instruction,
	// four times float32 FMA; elsewhere the same integers are summed exactly
	// by the float32 kernels (in blocks short enough that no sum is rounded).
	Int8
)

// DefaultPrecision is what Options.Precision's zero value means (see
// docs/embedding.md for why).
const DefaultPrecision = Int8

// Precisions lists every precision, the default first.
var Precisions = []Precision{Int8, FP32, BF16}

func (p Precision) String() string {
	switch p {
	case FP32:
		return "fp32"
	case BF16:
		return "bf16"
	case Int8:
		return "int8"
	case 0:
		return "default"
	}
	return fmt.Sprintf("Precision(%d)", int(p))
}

// ParsePrecision reads "fp32", "bf16" or "int8" (case-insensitive; "" is
// DefaultPrecision).
func ParsePrecision(s string) (Precision, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "":
		return DefaultPrecision, nil
	case "fp32", "f32", "float32":
		return FP32, nil
	case "bf16", "bfloat16":
		return BF16, nil
	case "int8", "i8":
		return Int8, nil
	}
	return 0, fmt.Errorf("uselite: precision %q: want fp32, bf16 or int8", s)
}

// modelIDSuffix is what ModelID appends for p. FP32 appends nothing, so
// indexes and caches built before precisions existed stay valid.
func (p Precision) modelIDSuffix() string {
	if p == FP32 {
		return ""
	}
	return "+" + p.String()
}

// PrecisionOf reads the precision from a ModelID of this package: ok is
// false for another model's id.
func PrecisionOf(modelID string) (p Precision, ok bool) {
	if !strings.HasPrefix(modelID, weightsID+"+") {
		return 0, false
	}
	switch {
	case strings.HasSuffix(modelID, "+int8"):
		return Int8, true
	case strings.HasSuffix(modelID, "+bf16"):
		return BF16, true
	}
	return FP32, true
}
