package vecmath

import (
	"math"
	"testing"
)

func TestCosine32(t *testing.T) {
	for _, c := range []struct {
		a, b []float32
		want float64
	}{
		{[]float32{1, 0}, []float32{1, 0}, 1},
		{[]float32{1, 0}, []float32{0, 2}, 0},
		{[]float32{1, 1}, []float32{-1, -1}, -1},
		{[]float32{3, 4}, []float32{4, 3}, 24.0 / 25},
		{[]float32{0, 0}, []float32{1, 0}, 0}, // zero vector
		{[]float32{1}, []float32{1, 0}, 0},    // lengths differ
	} {
		if got := Cosine32(c.a, c.b); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Cosine32(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	q := []float32{3, 4}
	if got, want := CosineNorm32(q, Norm32(q), []float32{4, 3}), Cosine32(q, []float32{4, 3}); got != want {
		t.Errorf("CosineNorm32 %v, Cosine32 %v", got, want)
	}
}

// Client vectors near the float64 limit neither overflow nor lose their
// direction.
func TestUnitAndCosineUnit(t *testing.T) {
	big := math.MaxFloat64 / 2
	q, ok := Unit([]float64{big, big})
	if !ok || math.Abs(q[0]-math.Sqrt2/2) > 1e-15 {
		t.Fatalf("Unit = %v, %v", q, ok)
	}
	c, ok := CosineUnit(q, []float64{big, 0})
	if !ok || math.Abs(c-math.Sqrt2/2) > 1e-15 {
		t.Fatalf("CosineUnit = %v, %v", c, ok)
	}
	if _, ok := Unit([]float64{0, 0}); ok {
		t.Fatal("zero vector has a unit")
	}
	if _, ok := CosineUnit(q, []float64{0, 0}); ok {
		t.Fatal("cosine with a zero vector")
	}
	if c, _ := CosineUnit(q, []float64{1, 1}); c > 1 {
		t.Fatalf("cosine %v above 1", c)
	}
	if got := F64([]float32{1.5, -2}); got[0] != 1.5 || got[1] != -2 {
		t.Fatalf("F64 = %v", got)
	}
}
