package evidence

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// The calibration maps a model file may hold.
const (
	CalibrationIsotonic = "isotonic"
	CalibrationPlatt    = "platt"
)

// maxKnots bounds an isotonic map's knots (ParseModel reads untrusted
// files; a fit thins its blocks to this many).
const maxKnots = 1000

// Calibration is a monotone map from the learner's probability to a
// calibrated one, fitted on validation data (evidencetrain.FitIsotonic,
// FitPlatt): the learner's probabilities drift with the genre of the
// text, and the floor and the stop read them as probabilities. The
// selector applies it before packing, the floor and the stop; the second
// hop reads the learner's own p (its anchor feature was learnt on it).
type Calibration struct {
	// Method is CalibrationIsotonic or CalibrationPlatt.
	Method string `json:"method"`
	// Isotonic: knots, X strictly increasing in [0, 1], Y non-decreasing
	// in [0, 1]; p is interpolated linearly between knots and held at the
	// end knots' Y outside them.
	X []float64 `json:"x,omitempty"`
	Y []float64 `json:"y,omitempty"`
	// Platt: σ(A·logit(p) + B), A > 0.
	A float64 `json:"a,omitempty"`
	B float64 `json:"b,omitempty"`
	// Fitted says on what (data, split, held-out choice).
	Fitted string `json:"fitted,omitempty"`
	// Kinds, when set, are maps for the sentences of passages of a kind
	// (TextKind: KindTurns, KindTable, KindProse), each with no Kinds of
	// its own; a kind without one takes this map.
	Kinds map[string]*Calibration `json:"kinds,omitempty"`
}

// The kinds of text TextKind tells apart, by the shape of their lines.
const (
	KindTurns = "turns" // a conversation or transcript, a speaker a line
	KindTable = "table" // holds a Markdown table
	KindProse = "prose"
)

// maxSpeaker is the longest speaker prefix ("Name: ") a turn line has.
const maxSpeaker = 40

// TextKind classifies a passage by its lines: KindTable when at least two
// lines are Markdown table rows ("| … |"), else KindTurns when at least
// three lines and 60 % of the non-empty ones open with a speaker ("Name:
// ", at most maxSpeaker bytes, no space before the colon's word start),
// else KindProse. Cheap and structural: the learner's probabilities drift
// with these kinds (docs/evidence.md).
func TextKind(text string) string {
	rows, turns, lines := 0, 0, 0
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		lines++
		if len(line) > 1 && line[0] == '|' && line[len(line)-1] == '|' {
			rows++
		}
		if i := strings.Index(line, ": "); i > 0 && i <= maxSpeaker && line[0] != ' ' && line[0] != '|' {
			turns++
		}
	}
	switch {
	case rows >= 2:
		return KindTable
	case turns >= 3 && 10*turns >= 6*lines:
		return KindTurns
	}
	return KindProse
}

// ApplyKind is Apply with the map of a kind of text when there is one.
func (c *Calibration) ApplyKind(p float64, kind string) float64 {
	if k := c.Kinds[kind]; k != nil {
		return k.Apply(p)
	}
	return c.Apply(p)
}

// Apply maps a learner probability to the calibrated one (of a valid
// map; p outside [0, 1] is clamped first).
func (c *Calibration) Apply(p float64) float64 {
	p = min(max(p, 0), 1)
	if c.Method == CalibrationPlatt {
		return sigmoid(c.A*logit(p) + c.B)
	}
	n := len(c.X)
	if p <= c.X[0] {
		return c.Y[0]
	}
	if p >= c.X[n-1] {
		return c.Y[n-1]
	}
	// the first knot above p: X[i-1] < p < X[i] or p == X[i-1]
	i, _ := slices.BinarySearch(c.X, p)
	if c.X[i] == p {
		return c.Y[i]
	}
	t := (p - c.X[i-1]) / (c.X[i] - c.X[i-1])
	return c.Y[i-1] + t*(c.Y[i]-c.Y[i-1])
}

// logitClamp keeps logit finite at p = 0 and 1.
const logitClamp = 1e-12

func logit(p float64) float64 {
	p = min(max(p, logitClamp), 1-logitClamp)
	return math.Log(p / (1 - p))
}

// Validate reports a map Apply cannot use: not monotone, outside [0, 1],
// not finite, or too large.
func (c *Calibration) Validate() error {
	if c == nil {
		return errors.New("calibration: nil")
	}
	for kind, k := range c.Kinds {
		if kind != KindTurns && kind != KindTable && kind != KindProse {
			return fmt.Errorf("calibration: kind %q, want %s, %s or %s", kind, KindTurns, KindTable, KindProse)
		}
		if k == nil || len(k.Kinds) != 0 {
			return fmt.Errorf("calibration: kind %s: nil or nested", kind)
		}
		if err := k.Validate(); err != nil {
			return fmt.Errorf("kind %s: %w", kind, err)
		}
	}
	switch c.Method {
	case CalibrationPlatt:
		if len(c.X) != 0 || len(c.Y) != 0 {
			return errors.New("calibration: a Platt map with knots")
		}
		if !finite(c.A) || !finite(c.B) || c.A <= 0 || c.A > 100 || math.Abs(c.B) > 100 {
			return fmt.Errorf("calibration: Platt a %v, b %v (want 0 < a ≤ 100, |b| ≤ 100)", c.A, c.B)
		}
	case CalibrationIsotonic:
		if c.A != 0 || c.B != 0 {
			return errors.New("calibration: an isotonic map with Platt weights")
		}
		if len(c.X) == 0 || len(c.X) != len(c.Y) || len(c.X) > maxKnots {
			return fmt.Errorf("calibration: %d knots with %d values (want 1…%d of each)", len(c.X), len(c.Y), maxKnots)
		}
		for i := range c.X {
			if !finite(c.X[i]) || !finite(c.Y[i]) || c.X[i] < 0 || c.X[i] > 1 || c.Y[i] < 0 || c.Y[i] > 1 {
				return fmt.Errorf("calibration: knot %d (%v, %v) outside [0, 1]", i, c.X[i], c.Y[i])
			}
			if i > 0 && (c.X[i] <= c.X[i-1] || c.Y[i] < c.Y[i-1]) {
				return fmt.Errorf("calibration: knot %d (%v, %v) after (%v, %v): not increasing", i, c.X[i], c.Y[i], c.X[i-1], c.Y[i-1])
			}
		}
	default:
		return fmt.Errorf("calibration: method %q, want %s or %s", c.Method, CalibrationIsotonic, CalibrationPlatt)
	}
	return nil
}

// passageKinds are the passages' kinds of text when the model's map has
// maps by kind (nil otherwise: nothing to read).
func passageKinds(m *Model, ps []passage) []string {
	byKind := func(m *Model) bool { return m.Calibration != nil && m.Calibration.Kinds != nil }
	if !byKind(m) && !slices.ContainsFunc(slices.Collect(maps.Values(m.Kinds)), byKind) {
		return nil
	}
	kinds := make([]string, len(ps))
	for i, p := range ps {
		kinds[i] = TextKind(p.text)
	}
	return kinds
}
