package relevance_test

import (
	"fmt"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/relevance"
)

// A model is fitted on labelled curves (here two toy questions whose gold
// passage leads the second channel) and cuts a new curve.
func Example() {
	q := func(gold int) relevance.Question {
		n := 8
		qs := relevance.Question{Scores: make([]float64, n), Tokens: make([]int, n), Gold: make([]bool, n), Channels: [][]float64{make([]float64, n), make([]float64, n)}}
		for i := range n {
			qs.Scores[i] = float64(n - i)
			qs.Tokens[i] = 100
			qs.Channels[0][i] = float64(n - i)
			qs.Channels[1][i] = float64((i * 5) % n)
		}
		qs.Gold[gold] = true
		qs.Channels[1][gold] = 20
		return qs
	}
	m, err := relevance.Fit([]relevance.Question{q(2), q(5), q(3), q(6)}, relevance.FitOptions{Channels: 2})
	if err != nil {
		panic(err)
	}
	var cands []ctxsel.Candidate
	test := q(4)
	for i := range test.Scores {
		cands = append(cands, ctxsel.Candidate{ID: fmt.Sprint("p", i), Score: test.Scores[i], Tokens: test.Tokens[i],
			Channels: []float64{test.Channels[0][i], test.Channels[1][i]}})
	}
	c, _ := ctxsel.NewCurve(cands)
	sel, err := ctxsel.Select(c, m.Strategy(0.5), ctxsel.Caps{}, ctxsel.RankOrder)
	if err != nil {
		panic(err)
	}
	fmt.Println(sel.IDs)
	// Output: [p0 p1 p2 p3 p4]
}
