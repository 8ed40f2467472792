package lexical_test

import (
	"fmt"

	"github.com/ctxsel/ctxsel/lexical"
)

func ExampleTerms() {
	fmt.Println(lexical.Terms("The Eiffel Tower is in PARIS, İstanbul is not."))
	// Output: [eiffel tower paris istanbul]
}

// A Vocab numbers terms as it meets them, the same terms Terms gives.
func ExampleVocab() {
	var v lexical.Vocab
	ids := v.AppendIDs(nil, "Tower of Paris, paris tower")
	fmt.Println(ids, v.Term(ids[1]), v.Len())
	// Output: [0 1 1 0] paris 2
}
