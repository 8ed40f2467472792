package ctxsel_test

import (
	"errors"
	"math"
	"testing"

	"github.com/ctxsel/ctxsel"
)

func TestCandidateChannels(t *testing.T) {
	cands := []ctxsel.Candidate{{ID: "a", Score: 1, Channels: []float64{0.5, 3}}, {ID: "b", Score: 2, Channels: []float64{0.7, 1}}}
	c, err := ctxsel.NewCurve(cands)
	if err != nil {
		t.Fatal(err)
	}
	cands[0].Channels[0] = 99 // not retained
	if c.NumChannels() != 2 || c.Channel(0)[0] != 0.5 || c.Channel(1)[1] != 1 {
		t.Fatalf("channels %d: %v %v", c.NumChannels(), c.Channel(0), c.Channel(1))
	}
	for _, bad := range [][]ctxsel.Candidate{
		{{ID: "a", Score: 1, Channels: []float64{1}}, {ID: "b", Score: 2}},
		{{ID: "a", Score: 1}, {ID: "b", Score: 2, Channels: []float64{1}}},
		{{ID: "a", Score: 1, Channels: []float64{math.NaN()}}},
		{{ID: "a", Score: 1, Channels: []float64{math.Inf(1)}}},
	} {
		if _, err := ctxsel.NewCurve(bad); !errors.Is(err, ctxsel.ErrInvalidInput) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	plain, _ := ctxsel.NewScoreCurve([]float64{1, 2})
	if plain.NumChannels() != 0 {
		t.Fatal("a plain curve has channels")
	}
}
