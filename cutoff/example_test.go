package cutoff_test

import (
	"fmt"

	"github.com/ctxsel/ctxsel/cutoff"
)

// The pure functions take scores in any order and cost O(n).
func ExampleAdaptiveK() {
	scores := []float64{0.31, 0.82, 0.30, 0.79, 0.28, 0.27, 0.25}
	r, err := cutoff.AdaptiveK(scores, cutoff.AdaptiveKParams{Tail: 0.1, Buffer: 1})
	if err != nil {
		panic(err)
	}
	fmt.Printf("k=%d: gap %.2f after rank %d\n", r.K, r.Gap, r.GapIndex)
	// Output: k=3: gap 0.48 after rank 1
}

func ExampleKnee() {
	r, _ := cutoff.Knee([]float64{0.9, 0.89, 0.88, 0.5, 0.49, 0.48}, 1)
	fmt.Println(r.K, r.Found)
	// Output: 3 true
}
