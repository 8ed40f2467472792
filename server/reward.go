package server

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ctxsel/ctxsel/internal/wire"
	"github.com/ctxsel/ctxsel/picker/reward"
)

// rewardRequest is a /v1/reward request: a picker answer scored by Eq. 6
// of Context-Picker against the ids it was offered and the gold ids.
type rewardRequest struct {
	output        string
	offered, gold []string
	stage         int
	gamma         *float64
	red1, red2    *int
	seen          uint16
	hasOutput     bool
	hasStage      bool
}

// decodeReward reads a /v1/reward body with the request decoder, so that a
// key given twice, data after the object and a value of the wrong type are
// refused naming the field, as on every other route.
func decodeReward(body string, r *rewardRequest, lim limits) error {
	d := newDecoder(body)
	return d.Object(func(key string) error {
		var bit uint16
		switch key {
		case "output":
			bit = 1
		case "offered":
			bit = 2
		case "gold":
			bit = 4
		case "stage":
			bit = 8
		case "gamma":
			bit = 16
		case "red1":
			bit = 32
		case "red2":
			bit = 64
		default:
			return wire.Bad(key, "unknown field (known: output, offered, gold, stage, gamma, red1, red2)")
		}
		read, err := d.Given(&r.seen, bit, key)
		if !read {
			return err
		}
		p := wire.Field(key)
		switch key {
		case "output":
			r.output, err = d.Text(p, lim.Limits)
			r.hasOutput = err == nil
		case "offered":
			r.offered, err = d.ids(p, lim)
		case "gold":
			r.gold, err = d.ids(p, lim)
		case "stage":
			r.stage, err = d.Count(p)
			r.hasStage = err == nil
		case "gamma":
			var g float64
			if g, err = d.Num(p); err == nil {
				r.gamma = &g
			}
		case "red1", "red2":
			var n int
			if n, err = d.Count(p); err == nil {
				if key == "red1" {
					r.red1 = &n
				} else {
					r.red2 = &n
				}
			}
		}
		return err
	})
}

// ids reads an array of ids: non-empty, valid UTF-8 strings, at most
// max_candidates of them.
func (d *decoder) ids(p wire.Path, lim limits) ([]string, error) {
	var out []string
	err := d.Array(p, func(int) error {
		ep := wire.Path{Name: p.Name, Idx: len(out)}
		if len(out) == lim.MaxCandidates {
			return lim.TooMany(p.String(), len(out)+1, "ids")
		}
		id, err := d.Text(ep, lim.Limits)
		if err != nil {
			return err
		}
		if id == "" {
			return wire.Bad(ep.String(), "empty id")
		}
		out = append(out, id)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// rewardOp serves POST /v1/reward: the reward hook of an RL trainer
// (verl, TRL) calls it with each sampled picker answer. It does no I/O
// beyond the request and calls no model.
func (s *Server) rewardOp(_ context.Context, body string, b []byte) ([]byte, error) {
	var req rewardRequest
	if err := decodeReward(body, &req, s.limits()); err != nil {
		return nil, err
	}
	p := reward.DefaultParams
	if req.gamma != nil {
		p.Gamma = *req.gamma
	}
	if req.red1 != nil {
		p.Red1 = *req.red1
	}
	if req.red2 != nil {
		p.Red2 = *req.red2
	}
	if err := checkReward(&req, p); err != nil {
		return nil, err
	}
	res, err := reward.Score(req.output, req.offered, req.gold, req.stage, p)
	if err != nil {
		return nil, err
	}
	j, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	return append(append(b, j...), '\n'), nil
}

// checkReward refuses what reward.Score would, naming the field.
func checkReward(req *rewardRequest, p reward.Params) error {
	dup := func(field string, ids []string) error {
		at := make(map[string]int, len(ids))
		for i, id := range ids {
			if j, ok := at[id]; ok {
				return wire.Bad(fmt.Sprintf("%s[%d]", field, i), "%q given twice (also %s[%d])", id, field, j)
			}
			at[id] = i
		}
		return nil
	}
	switch {
	case !req.hasOutput:
		return wire.Bad("output", "missing: the picker's answer text")
	case !req.hasStage:
		return wire.Bad("stage", "missing: 1 or 2")
	case req.stage != 1 && req.stage != 2:
		return wire.Bad("stage", "%d: want 1 or 2", req.stage)
	case len(req.offered) == 0:
		return wire.Bad("offered", "missing: the ids the picker was offered")
	case len(req.gold) == 0:
		return wire.Bad("gold", "missing: the gold ids")
	case !(p.Gamma >= reward.MinGamma && p.Gamma <= reward.MaxGamma):
		return wire.Bad("gamma", "%v: must be in [%v, %v]", p.Gamma, reward.MinGamma, reward.MaxGamma)
	case p.Red1 > reward.MaxRed:
		return wire.Bad("red1", "%d: must be at most %d", p.Red1, reward.MaxRed)
	case p.Red1 <= p.Red2:
		field := "red1"
		if req.red2 != nil {
			field = "red2"
		}
		return wire.Bad(field, "red1=%d must exceed red2=%d (stage I is the looser)", p.Red1, p.Red2)
	}
	if err := dup("offered", req.offered); err != nil {
		return err
	}
	return dup("gold", req.gold)
}
