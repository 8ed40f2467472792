package fusion

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestZScoreByHand(t *testing.T) {
	// a = [1,2,3]: mean 2, std sqrt(2/3); b = [10,10,40]: mean 20, std sqrt(200).
	got, err := Fuse(ZScore, 0.5, []float64{1, 2, 3}, []float64{10, 10, 40})
	if err != nil {
		t.Fatal(err)
	}
	sa, sb := math.Sqrt(2.0/3), math.Sqrt(200)
	want := []float64{0.5*(-1/sa) + 0.5*(-10/sb), 0.5*0 + 0.5*(-10/sb), 0.5*(1/sa) + 0.5*(20/sb)}
	for i := range want {
		if !near(got[i], want[i]) {
			t.Fatalf("%d: got %v want %v", i, got[i], want[i])
		}
	}
}

func TestMinMaxAndAlphaEnds(t *testing.T) {
	a, b := []float64{0.2, 0.6, 1.0}, []float64{5, 1, 3}
	got, _ := Fuse(MinMax, 1, a, b)
	for i, w := range []float64{0, 0.5, 1} {
		if !near(got[i], w) {
			t.Fatalf("alpha=1: %v", got)
		}
	}
	got, _ = Fuse(MinMax, 0, a, b)
	for i, w := range []float64{1, 0, 0.5} {
		if !near(got[i], w) {
			t.Fatalf("alpha=0: %v", got)
		}
	}
}

func TestRRFTiesByIndex(t *testing.T) {
	r := Reciprocal([]float64{0.5, 0.9, 0.5, 0.1}, 60)
	want := []float64{1.0 / 62, 1.0 / 61, 1.0 / 63, 1.0 / 64}
	for i := range want {
		if !near(r[i], want[i]) {
			t.Fatalf("got %v want %v", r, want)
		}
	}
}

func TestFlatAndBadInput(t *testing.T) {
	z := Standardize([]float64{3, 3, 3})
	for _, v := range z {
		if v != 0 {
			t.Fatalf("flat list: %v", z)
		}
	}
	if _, err := Fuse(ZScore, 0.5, []float64{1}, []float64{1, 2}); err == nil {
		t.Fatal("length mismatch accepted")
	}
	if _, err := Fuse(ZScore, math.NaN(), []float64{1}, []float64{1}); err == nil {
		t.Fatal("NaN alpha accepted")
	}
	if _, err := ParseMethod("sum"); err == nil {
		t.Fatal("unknown method accepted")
	}
}
