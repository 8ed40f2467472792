package ctxsel_test

import (
	"errors"
	"testing"

	"github.com/ctxsel/ctxsel"
	_ "github.com/ctxsel/ctxsel/cutoff"
)

func TestDefaultStrategyName(t *testing.T) {
	curve, err := ctxsel.NewScoreCurve([]float64{0.9, 0.88, 0.5, 0.49, 0.48, 0.2, 0.19, 0.1, 0.05, 0.01})
	if err != nil {
		t.Fatal(err)
	}
	want, wantCaps, err := ctxsel.Parse(ctxsel.DefaultStrategy)
	if err != nil {
		t.Fatal(err)
	}
	got, caps, err := ctxsel.Parse(ctxsel.DefaultName)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name() != want.Name() || caps != wantCaps {
		t.Fatalf("default is %s %+v, want %s %+v", got.Name(), caps, want.Name(), wantCaps)
	}
	a, _ := ctxsel.Select(curve, got, caps, ctxsel.RankOrder)
	b, _ := ctxsel.Select(curve, want, wantCaps, ctxsel.RankOrder)
	if a.K != b.K || a.Explanation.Reason != b.Explanation.Reason {
		t.Fatalf("default selected %d (%s), %s selected %d", a.K, a.Explanation.Reason, ctxsel.DefaultStrategy, b.K)
	}
	// its own parameters win, and are checked like any others
	_, caps, err = ctxsel.Parse("default:max_k=2")
	if err != nil || caps.MaxK != 2 {
		t.Fatalf("default:max_k=2: %+v, %v", caps, err)
	}
	if _, _, err := ctxsel.Parse("default:nonsense=1"); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("default:nonsense=1: %v", err)
	}
}
