package answer_test

import (
	"context"
	"fmt"

	"github.com/ctxsel/ctxsel/answer"
)

// Score one answer with the lexical judges a --judge flag selects.
func Example() {
	it := answer.Item{Question: "Where is the Eiffel Tower?", Prediction: "It stands in Paris, France.", Gold: []string{"Paris"}}
	for _, spec := range []string{"em", "subem", "f1"} {
		j, err := answer.ParseJudge(spec, nil)
		if err != nil {
			panic(err)
		}
		v, _ := j.Judge(context.Background(), it)
		fmt.Printf("%s %.2f\n", j.Name(), v.Score)
	}
	// Output:
	// em 0.00
	// subem 1.00
	// f1 0.33
}
