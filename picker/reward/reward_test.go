package reward_test

import (
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/picker/reward"
)

// Every expected reward is worked out by hand from Eq. 6 with γ = 0.5,
// red_1 = 3, red_2 = 1 and gold {a, b}: L_1 = 5, L_2 = 3.
func TestRewardEq6(t *testing.T) {
	offered := []string{"a", "b", "c", "d", "e", "f", "g"}
	gold := []string{"a", "b"}
	ids := func(s ...string) string {
		b, _ := json.Marshal(map[string]any{"rationale": "r", "ids": s})
		return string(b)
	}
	for _, tc := range []struct {
		name   string
		out    string
		stage  int
		reward float64
		valid  bool
	}{
		{"exact gold, stage 1: 1 − 0.5·0/5", ids("a", "b"), 1, 1, true},
		{"exact gold, stage 2: 1 − 0.5·0/3", ids("b", "a"), 2, 1, true},
		{"one extra, stage 1: 1 − 0.5·1/5", ids("a", "b", "c"), 1, 0.9, true},
		{"one extra, stage 2: 1 − 0.5·1/3", ids("a", "b", "c"), 2, 1 - 1.0/6, true},
		{"two extra, stage 2: 4 > L_2 = 3", ids("a", "b", "c", "d"), 2, 0, true},
		{"two extra, stage 1: 1 − 0.5·2/5", ids("a", "b", "c", "d"), 1, 0.8, true},
		{"three extra, stage 1 (|S| = L_1): 1 − 0.5·3/5", ids("a", "b", "c", "d", "e"), 1, 0.7, true},
		{"four extra, stage 1: 6 > L_1 = 5", ids("a", "b", "c", "d", "e", "f"), 1, 0, true},
		{"half the gold, stage 2: 0.5 − 0.5·(1−2)/3", ids("a"), 2, 0.5 + 1.0/6, true},
		{"no gold, stage 1: 0 − 0.5·(1−2)/5", ids("c"), 1, 0.1, true},
		{"half the gold and one wrong, stage 2: 0.5 − 0.5·0/3", ids("a", "g"), 2, 0.5, true},
		{"unknown id", ids("a", "z"), 1, -1, false},
		{"empty set", ids(), 2, -1, false},
		{"not JSON", "a, b", 1, -1, false},
	} {
		r, err := reward.Score(tc.out, offered, gold, tc.stage, reward.DefaultParams)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if math.Abs(r.Reward-tc.reward) > 1e-12 || r.Valid != tc.valid {
			t.Fatalf("%s: reward %v valid %v (%s), want %v", tc.name, r.Reward, r.Valid, r.Why, tc.reward)
		}
	}
	// γ = 0 leaves coverage alone.
	if r, _ := reward.Score(ids("a", "c", "d"), offered, gold, 1, reward.Params{Gamma: 0, Red1: 3, Red2: 1}); r.Reward != 0.5 {
		t.Fatalf("γ=0: %v", r.Reward)
	}
	for name, call := range map[string]func() error{
		"stage 3": func() error {
			_, err := reward.Score(ids("a"), offered, gold, 3, reward.DefaultParams)
			return err
		},
		"no gold": func() error {
			_, err := reward.Score(ids("a"), offered, nil, 1, reward.DefaultParams)
			return err
		},
		"no offered": func() error { _, err := reward.Score(ids("a"), nil, gold, 1, reward.DefaultParams); return err },
		"dup offered": func() error {
			_, err := reward.Score(ids("a"), []string{"a", "a"}, gold, 1, reward.DefaultParams)
			return err
		},
		"red1 ≤ red2": func() error {
			_, err := reward.Score(ids("a"), offered, gold, 1, reward.Params{Gamma: 1, Red1: 1, Red2: 1})
			return err
		},
		"negative γ": func() error {
			_, err := reward.Score(ids("a"), offered, gold, 1, reward.Params{Gamma: -1, Red1: 2, Red2: 1})
			return err
		},
		"NaN γ": func() error {
			_, err := reward.Score(ids("a"), offered, gold, 1, reward.Params{Gamma: math.NaN(), Red1: 2})
			return err
		},
		"dup gold ids": func() error {
			_, err := reward.Score(ids("a"), offered, []string{"a", "a"}, 1, reward.DefaultParams)
			return err
		},
	} {
		if err := call(); !errors.Is(err, ctxsel.ErrInvalidInput) {
			t.Fatalf("%s: err %v", name, err)
		}
	}
}

// Reward never panics on any output, and stays within Eq. 6's range:
// −1 when invalid, else in [0 − γ·…, 1 + γ] and 0 past the limit.
func FuzzReward(f *testing.F) {
	for _, s := range []string{`{"ids":["a","b"]}`, `{"ids":["a","b","c","d","e","f","g"]}`, "```json\n{\"ids\":[\"c\"]}\n```", `{"ids":[]}`, "x"} {
		f.Add(s, 1)
		f.Add(s, 2)
	}
	offered := []string{"a", "b", "c", "d", "e", "f", "g"}
	f.Fuzz(func(t *testing.T, out string, stage int) {
		r, err := reward.Score(out, offered, []string{"a", "b"}, stage, reward.DefaultParams)
		if stage != 1 && stage != 2 {
			if !errors.Is(err, ctxsel.ErrInvalidInput) {
				t.Fatalf("stage %d: %v", stage, err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case !r.Valid && r.Reward != -1:
			t.Fatalf("invalid with reward %v", r.Reward)
		case r.Valid && r.Selected > r.Limit && r.Reward != 0:
			t.Fatalf("over the limit with reward %v", r.Reward)
		case r.Valid && (r.Reward < -1 || r.Reward > 1+reward.DefaultParams.Gamma):
			t.Fatalf("reward %v out of range", r.Reward)
		}
	})
}
