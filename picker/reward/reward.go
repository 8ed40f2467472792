// Package reward is Context-Picker's reward, Eq. 6 of the paper (Zhu et
// al., ../shared/papers/context-picker.txt): a picker's answer scored
// against the gold ids, for an RL trainer (verl, TRL) to maximise. The
// server's /v1/reward endpoint serves it, and python/verl_reward.py calls
// that. It is training-only code: the picker itself (package picker) does
// not import it.
package reward

import (
	"fmt"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/picker"
)

// Params are Eq. 6's constants. The paper does not print its values;
// the defaults are ctxsel's: a penalty weight of one half and margins of
// three extra passages in stage I and one in stage II.
type Params struct {
	// Gamma weighs the over-selection penalty γ(|S|−|S_g|)/L_i.
	Gamma float64 `json:"gamma"`
	// Red1 and Red2 are the redundancy margins red_1 > red_2 of stages I
	// and II: L_i = |S_g| + red_i.
	Red1 int `json:"red1"`
	Red2 int `json:"red2"`
}

// DefaultParams are γ = 0.5, red_1 = 3, red_2 = 1.
var DefaultParams = Params{Gamma: 0.5, Red1: 3, Red2: 1}

// The range of γ and the red margins. Within |S| ≤ L the penalty's factor
// (|S|−|S_g|)/L lies in [−1, 1], so γ ≤ 1 keeps a valid answer's reward in
// [−1, 2], never below an invalid answer's −1: a larger γ would rank a
// valid pick under garbage (and 1.7e308 gave rewards of −8.5e307).
const (
	MinGamma = 0.0
	MaxGamma = 1.0
	MaxRed   = 1 << 20
)

// Validate reports parameters Eq. 6 does not allow.
func (p Params) Validate() error {
	switch {
	case !(p.Gamma >= MinGamma && p.Gamma <= MaxGamma):
		return invalidf("reward: gamma=%v must be in [%v, %v]", p.Gamma, MinGamma, MaxGamma)
	case p.Red2 < 0 || p.Red1 > MaxRed:
		return invalidf("reward: margins red1=%d red2=%d must be in 0..%d", p.Red1, p.Red2, MaxRed)
	case p.Red1 <= p.Red2:
		return invalidf("reward: red1=%d must exceed red2=%d (stage I is the looser)", p.Red1, p.Red2)
	}
	return nil
}

// Result is a reward with what it was made of.
type Result struct {
	Reward float64 `json:"reward"`
	Valid  bool    `json:"valid"`
	// Why says which case of Eq. 6 applied, with the figures.
	Why string `json:"why"`
	// Coverage is |S ∩ S_g| / |S_g| (valid outputs only).
	Coverage float64 `json:"coverage"`
	// Selected is |S|, Gold is |S_g| and Limit is L_i.
	Selected int `json:"selected"`
	Gold     int `json:"gold"`
	Limit    int `json:"limit"`
}

// Score scores a picker answer by Eq. 6 of the paper for a stage (1 or 2):
//
//	Cov(S, S_g) − γ(|S|−|S_g|)/L_i   if valid and |S| ≤ L_i
//	0                               if valid and |S| > L_i
//	−1                              if invalid
//
// with L_i = |S_g| + red_i. Validity is picker.Parse's against the offered ids.
// As written, a set smaller than the gold one earns a bonus γ(|S_g|−|S|)/L_i
// on top of its (lower) coverage; this follows the equation exactly.
// Bad input (no gold or offered ids, duplicates, a stage other than 1 or 2)
// is an error wrapping ctxsel.ErrInvalidInput.
func Score(output string, offered, gold []string, stage int, p Params) (Result, error) {
	if err := p.Validate(); err != nil {
		return Result{}, err
	}
	var red int
	switch stage {
	case 1:
		red = p.Red1
	case 2:
		red = p.Red2
	default:
		return Result{}, invalidf("reward: stage %d, want 1 or 2", stage)
	}
	if len(offered) == 0 {
		return Result{}, invalidf("reward: no offered ids")
	}
	if len(gold) == 0 {
		return Result{}, invalidf("reward: no gold ids")
	}
	byID := make(map[string]int, len(offered))
	for i, id := range offered {
		if _, dup := byID[id]; dup {
			return Result{}, invalidf("reward: offered id %q given twice", id)
		}
		byID[id] = i
	}
	golds := make(map[string]bool, len(gold))
	for _, id := range gold {
		if golds[id] {
			return Result{}, invalidf("reward: gold id %q given twice", id)
		}
		golds[id] = true
	}
	res := Result{Gold: len(gold), Limit: len(gold) + red}
	out, err := picker.Parse(output, byID)
	if err != nil {
		res.Reward, res.Why = -1, "invalid output: "+picker.Reason(err)
		return res, nil
	}
	res.Valid, res.Selected = true, len(out.IDs)
	hit := 0
	for _, id := range out.IDs {
		if golds[id] {
			hit++
		}
	}
	res.Coverage = float64(hit) / float64(len(gold))
	if res.Selected > res.Limit {
		res.Why = fmt.Sprintf("%d selected exceed the stage-%d limit L=%d (|S_g|=%d + red=%d): reward 0", res.Selected, stage, res.Limit, len(gold), red)
		return res, nil
	}
	res.Reward = res.Coverage - p.Gamma*float64(res.Selected-len(gold))/float64(res.Limit)
	res.Why = fmt.Sprintf("coverage %d/%d − γ=%g·(%d−%d)/L=%d", hit, len(gold), p.Gamma, res.Selected, len(gold), res.Limit)
	return res, nil
}

// invalidf is ctxsel.Invalidf: invalid input, described in words.
var invalidf = ctxsel.Invalidf
