package answer

// Summary aggregates verdicts: the mean over valid ones, and how many were
// invalid (reported as judge_invalid, never folded into the mean).
type Summary struct {
	N       int     `json:"n"`
	Valid   int     `json:"valid"`
	Invalid int     `json:"judge_invalid"`
	Mean    float64 `json:"mean"` // over valid verdicts; 0 when none
}

// Summarize aggregates vs.
func Summarize(vs []Verdict) Summary {
	s := Summary{N: len(vs)}
	sum := 0.0
	for _, v := range vs {
		if v.Invalid {
			s.Invalid++
			continue
		}
		s.Valid++
		sum += v.Score
	}
	if s.Valid > 0 {
		s.Mean = sum / float64(s.Valid)
	}
	return s
}
