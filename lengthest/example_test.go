package lengthest_test

import (
	"context"
	"fmt"

	"github.com/ctxsel/ctxsel/lengthest"
)

// The one-std rule picks the smallest budget whose mean is within one
// standard deviation of the best, comparing budgets as numbers.
func ExampleOneStd() {
	budgets, _ := lengthest.ParseBudgets("8000:40000:8000")
	means := []float64{0.21, 0.30, 0.33, 0.34, 0.32}
	var table []lengthest.Row
	for i, b := range budgets {
		table = append(table, lengthest.Row{Budget: b, Mean: means[i], Std: 0.02, N: 10})
	}
	est, best, _ := lengthest.OneStd(table)
	fmt.Println("best:", best.Budget, "estimate:", est)
	// Output: best: 32000 estimate: 24000
}

// Minimum Bayes Risk keeps the candidates that agree most with the others:
// the outlier is dropped. (qwen: F1 0.92 with llama, 0.40 with jamba, 0.20
// with the outlier; mean 0.51.)
func ExampleMBR() {
	kept, _ := lengthest.MBR(context.Background(), lengthest.RougeL{}, []lengthest.Candidate{
		{Model: "qwen", Text: "sales rose in the third quarter"},
		{Model: "llama", Text: "sales rose sharply in the third quarter"},
		{Model: "odd", Text: "the weather was pleasant"},
		{Model: "jamba", Text: "third quarter sales rose"},
	}, 2)
	for _, k := range kept {
		fmt.Printf("%s %.2f\n", k.Model, k.Utility)
	}
	// Output:
	// qwen 0.51
	// llama 0.49
}
