package server

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/ctxsel/ctxsel/picker"
)

// rewardRequest is a /v1/reward request: a picker answer scored by Eq. 6
// of Context-Picker against the ids it was offered and the gold ids.
type rewardRequest struct {
	Output  *string  `json:"output"`
	Offered []string `json:"offered"`
	Gold    []string `json:"gold"`
	Stage   int      `json:"stage"`
	Gamma   *float64 `json:"gamma"`
	Red1    *int     `json:"red1"`
	Red2    *int     `json:"red2"`
}

// handleReward serves POST /v1/reward: the reward hook of an RL trainer
// (verl, TRL) calls it with each sampled picker answer. It does no I/O
// beyond the request and calls no model.
func (s *Server) handleReward(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	var req rewardRequest
	dec := json.NewDecoder(bytes.NewReader([]byte(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		s.writeFailure(w, r, badField("", "request body: %v", err))
		return
	}
	switch {
	case req.Output == nil:
		s.writeFailure(w, r, badField("output", "missing: the picker's answer text"))
		return
	case len(req.Offered) > s.cfg.MaxCandidates:
		s.writeFailure(w, r, badField("offered", "%d ids exceed the limit of %d", len(req.Offered), s.cfg.MaxCandidates))
		return
	case len(req.Gold) > s.cfg.MaxCandidates:
		s.writeFailure(w, r, badField("gold", "%d ids exceed the limit of %d", len(req.Gold), s.cfg.MaxCandidates))
		return
	}
	p := picker.DefaultRewardParams
	if req.Gamma != nil {
		p.Gamma = *req.Gamma
	}
	if req.Red1 != nil {
		p.Red1 = *req.Red1
	}
	if req.Red2 != nil {
		p.Red2 = *req.Red2
	}
	res, err := picker.Reward(*req.Output, req.Offered, req.Gold, req.Stage, p)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	b, err := json.Marshal(res)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, append(b, '\n'))
}
