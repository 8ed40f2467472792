package evidence

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
)

// ModelVersion is the model file format this package writes. Version 1
// files (a logistic model over the first 14 features, no hop, no floor),
// version 2 files (no calibration map) and version 3 files (no models by
// kind of text) are still read, and score as they did. A map needs
// version 3 and models by kind (Kinds) version 4: a reader that predates
// them rejects the file instead of ignoring them.
const ModelVersion = 4

// The learners a model file may hold.
const (
	LearnerLogistic = "logistic"
	LearnerTrees    = "trees"
)

// Bounds a model file must respect (ParseModel reads untrusted files).
const (
	maxTrees     = 5000
	maxTreeDepth = 6
	// MaxHop bounds the passages the second hop may add.
	MaxHop     = 20
	maxAnchors = 20
	// MaxMinExpected bounds min_expected (an expected count of gold
	// units; 1,000 candidate passages hold far fewer).
	MaxMinExpected = 1000
)

// Model scores a sentence: p(it is gold evidence) from its features, by a
// logistic regression or by boosted trees, with the packing settings
// chosen on validation data beside it.
type Model struct {
	Version int `json:"version"`
	// Learner is LearnerLogistic or LearnerTrees (version 1: logistic).
	Learner string `json:"learner,omitempty"`
	// Features are the names (from FeatureNames) the learner reads, in
	// its order.
	Features []string `json:"features"`

	// The logistic learner: (x − Mean)/Scale, weighted, plus Bias.
	Mean    []float64 `json:"mean,omitempty"`
	Scale   []float64 `json:"scale,omitempty"`
	Weights []float64 `json:"weights,omitempty"`
	Bias    float64   `json:"bias,omitempty"`

	// Forest is the trees learner.
	Forest *Forest `json:"forest,omitempty"`

	// Passages is the default number of candidate passages (the best of
	// the curve); CostExponent β prices a sentence by p / tokens^β when
	// packing (0: by p alone; 1: by p per token); Neighbors 1 sends a
	// kept sentence's predecessor with it.
	Passages     int     `json:"passages"`
	CostExponent float64 `json:"cost_exponent"`
	Neighbors    int     `json:"neighbors"`
	// Hop is how many passages of the query outside the candidates the
	// second hop may add (0: no second hop): passages whose title one of
	// the Anchors best first-pass sentences names. Then every sentence is
	// scored again.
	Hop     int `json:"hop,omitempty"`
	Anchors int `json:"anchors,omitempty"`
	// Floor is the least probability a sentence needs to be sent (0:
	// none).
	Floor float64 `json:"floor,omitempty"`
	// Stop ends packing once the kept sentences hold this share of the
	// expected evidence (0: none; Options.Stop).
	Stop float64 `json:"stop,omitempty"`
	// MinExpected, when above 0, is the least expected evidence (the sum
	// of p over a question's candidate sentences: the model's expected
	// count of gold units among them) for the floor and the stop to cut:
	// below it the model has not found the evidence, its p are all small,
	// and cutting by them drops gold units, so the budget is filled by p
	// instead (Options.MinExpected; docs/evidence.md "How much, per
	// question"). A reader that predates it ignores it and always cuts:
	// what is sent changes, never the scores.
	MinExpected float64 `json:"min_expected,omitempty"`
	// Calibration, when set (version 3), maps the learner's probability
	// before packing, the floor and the stop read it (nil: the learner's
	// own); the second hop reads the learner's own.
	Calibration *Calibration `json:"calibration,omitempty"`
	// Kinds, when set (version 4), are the models that score the units of
	// the passages of a kind of text (KindTurns, KindTable; RouteOf says
	// which passage is which, from the units the splitter found in it),
	// each with its own features, learner and calibration, none with a
	// hop or Kinds of its own. Everything else is this model's: prose
	// passages and kinds without a model of their own, the candidates, the
	// hop and its anchors (read from prose passages only), the cost
	// exponent, the neighbours, the floor, the stop and MinExpected, and
	// Calibration, applied to every unit after its kind model's own map. A
	// text with none of these structures is scored exactly as without
	// Kinds.
	Kinds map[string]*Model `json:"kinds,omitempty"`
	// Blend, on a kind's model only, is the weight w (0…1) of the top
	// (prose) model in that kind's units' scores: their log-odds are
	// (1 − w)·the kind model's (through its map) + w·the top learner's,
	// then the top map (BlendLogits; docs/evidence.md "Blending the kind
	// and prose models"). 0: the kind's model alone. A reader that
	// predates it scores as with 0.
	Blend float64 `json:"blend,omitempty"`
	// Provenance says how the model was made (data, splits, command).
	Provenance map[string]string `json:"provenance,omitempty"`
}

// Forest is a sum of regression trees on the log-odds scale: p =
// σ(Base + Σ leaf of each tree). Each tree is complete, of depth Depth,
// in heap order: internal node i (i < 2^Depth − 1) tests feature
// Feature[i] (an index into Model.Features; −1: no test, go left) as
// x ≤ Threshold[i] → child 2i+1, else 2i+2; leaf j holds Leaf[j].
type Forest struct {
	Depth int     `json:"depth"`
	Base  float64 `json:"base"`
	Trees []Tree  `json:"trees"`
}

// Tree is one tree of a Forest.
type Tree struct {
	Feature   []int     `json:"f"`
	Threshold []float64 `json:"t"`
	Leaf      []float64 `json:"v"`
}

// Prob is the model's probability that a sentence with features x (all of
// FeatureNames, in order) is gold, through its global calibration map if
// it has one (a passage's kind of text is not known here): the top
// model's, a prose sentence's (ProbOf reads a kind's model); NaN for a
// model that fails Validate.
func (m *Model) Prob(x []float64) float64 {
	return m.ProbOf(x, "")
}

// ProbOf is Prob for a unit of a passage routed to kind (RouteOf; "" or a
// kind without a model of its own: the top model): its kind model's
// learner and map, then the top model's map, as the selector scores it.
func (m *Model) ProbOf(x []float64, kind string) float64 {
	if err := m.Validate(); err != nil || len(x) != len(FeatureNames) {
		return math.NaN()
	}
	if sub := m.Kinds[kind]; sub != nil {
		return m.routedProb(sub, sub.learnerProb(x, sub.columns()), x, m.columns(), "", sub.Blend)
	}
	return m.prob(x, m.columns())
}

// routedProb is the p of a unit a kind's model sub scored raw (its
// learner's own probability): sub's map, the blend of weight w with the
// top learner's probability (features x, read at topCols), then the top
// map; textKind picks the maps' kind of text ("": none known).
func (m *Model) routedProb(sub *Model, raw float64, x []float64, topCols []int, textKind string, w float64) float64 {
	q := sub.calibrated(raw, textKind)
	if w > 0 {
		q = BlendLogits(q, m.learnerProb(x, topCols), w)
	}
	return m.calibrated(q, textKind)
}

// BlendLogits is the probability whose log-odds are (1 − w)·logit(pKind)
// + w·logit(pTop); pKind itself at w = 0. On log-odds, not probabilities:
// a forest's score is a sum of log-odds, so the blend of two forests is
// one forest with their leaves weighted, and each model's ordering counts
// by its weight whatever its scale (the prose model's p on chat are all
// small, 0.002–0.013, so a mixture of probabilities would leave the
// ranking to the kind's model at any w < 1).
func BlendLogits(pKind, pTop, w float64) float64 {
	if w == 0 {
		return pKind
	}
	return sigmoid((1-w)*logit(pKind) + w*logit(pTop))
}

// columns maps the model's features to their index in FeatureNames (of a
// valid model).
// Units are the structures a selector with this model reads unless told
// (units=…): DefaultUnits, and rows when the model reads unit_row (fitted
// with rows as units: a model fitted on prose scores a table's rows as
// units badly, docs/evidence.md "Which structures").
func (m *Model) Units() Structures {
	if slices.Contains(m.Features, "unit_row") {
		return DefaultUnits | RowUnits
	}
	for _, sub := range m.Kinds {
		if slices.Contains(sub.Features, "unit_row") {
			return DefaultUnits | RowUnits
		}
	}
	return DefaultUnits
}

func (m *Model) columns() []int {
	cols := make([]int, len(m.Features))
	for i, name := range m.Features {
		cols[i] = slices.Index(FeatureNames, name)
	}
	return cols
}

func (m *Model) prob(x []float64, cols []int) float64 {
	return m.calibrated(m.learnerProb(x, cols), "")
}

// calibrated maps a learner probability through the model's map, if any:
// the map of the sentence's passage's kind of text ("": none known).
func (m *Model) calibrated(p float64, kind string) float64 {
	if m.Calibration == nil {
		return p
	}
	return m.Calibration.ApplyKind(p, kind)
}

func (m *Model) learnerProb(x []float64, cols []int) float64 {
	if m.Forest != nil {
		return sigmoid(m.Forest.logit(x, cols))
	}
	z := m.Bias
	for i, c := range cols {
		z += m.Weights[i] * (x[c] - m.Mean[i]) / m.Scale[i]
	}
	return sigmoid(z)
}

func (f *Forest) logit(x []float64, cols []int) float64 {
	z := f.Base
	internal := 1<<f.Depth - 1
	for ti := range f.Trees {
		t := &f.Trees[ti]
		i := 0
		for i < internal {
			if fi := t.Feature[i]; fi >= 0 && x[cols[fi]] > t.Threshold[i] {
				i = 2*i + 2
			} else {
				i = 2*i + 1
			}
		}
		z += t.Leaf[i-internal]
	}
	return z
}

// Truncated returns a copy of a trees model keeping its first n trees
// (boosting adds trees in order, so a prefix is the model fitted with
// fewer rounds); a logistic model is returned as it is.
func (m *Model) Truncated(n int) *Model {
	if m.Forest == nil || n >= len(m.Forest.Trees) {
		return m
	}
	c := *m
	f := *m.Forest
	f.Trees = f.Trees[:n]
	c.Forest = &f
	return &c
}

// Validate reports a model this package cannot use.
func (m *Model) Validate() error {
	if m == nil {
		return errors.New("evidence model: nil")
	}
	switch m.Version {
	case 1:
		if m.Learner != "" && m.Learner != LearnerLogistic {
			return fmt.Errorf("evidence model: version 1 holds a logistic model, not %q", m.Learner)
		}
		if m.Hop != 0 || m.Floor != 0 || m.Stop != 0 || m.MinExpected != 0 || m.Forest != nil || m.Calibration != nil {
			return errors.New("evidence model: version 1 has no hop, floor, stop, min_expected, trees or calibration")
		}
	case 2:
		if m.Calibration != nil {
			return errors.New("evidence model: version 2 has no calibration map (version 3 does)")
		}
	case 3, ModelVersion:
		if m.Calibration != nil {
			if err := m.Calibration.Validate(); err != nil {
				return fmt.Errorf("evidence model: %w", err)
			}
		}
	default:
		return fmt.Errorf("evidence model: version %d, want 1…%d", m.Version, ModelVersion)
	}
	if m.Kinds != nil && m.Version < ModelVersion {
		return fmt.Errorf("evidence model: version %d has no models by kind of text (version %d does)", m.Version, ModelVersion)
	}
	if err := m.validateKinds(); err != nil {
		return err
	}
	if m.Blend != 0 {
		// a kind's model's setting (validateKinds checks it there)
		return fmt.Errorf("evidence model: blend %v: only a kind's model has one (the top model's weight in its units' scores)", m.Blend)
	}
	if len(m.Features) == 0 || len(m.Features) > len(FeatureNames) {
		return fmt.Errorf("evidence model: %d features, want 1…%d", len(m.Features), len(FeatureNames))
	}
	for i, name := range m.Features {
		if !slices.Contains(FeatureNames, name) {
			return fmt.Errorf("evidence model: unknown feature %q", name)
		}
		if slices.Contains(m.Features[:i], name) {
			return fmt.Errorf("evidence model: feature %q twice", name)
		}
	}
	n := len(m.Features)
	learner := m.Learner
	if learner == "" {
		learner = LearnerLogistic
	}
	switch learner {
	case LearnerLogistic:
		if m.Forest != nil {
			return errors.New("evidence model: a logistic model with trees")
		}
		if len(m.Mean) != n || len(m.Scale) != n || len(m.Weights) != n {
			return fmt.Errorf("evidence model: want %d means, scales and weights, got %d, %d, %d", n, len(m.Mean), len(m.Scale), len(m.Weights))
		}
		for i := range n {
			if !finite(m.Mean[i]) || !finite(m.Weights[i]) || !finite(m.Scale[i]) || m.Scale[i] <= 0 {
				return fmt.Errorf("evidence model: feature %s: mean %v, scale %v, weight %v", m.Features[i], m.Mean[i], m.Scale[i], m.Weights[i])
			}
		}
		if !finite(m.Bias) {
			return fmt.Errorf("evidence model: bias %v", m.Bias)
		}
	case LearnerTrees:
		if m.Forest == nil {
			return errors.New("evidence model: a trees model without a forest")
		}
		if len(m.Mean) != 0 || len(m.Scale) != 0 || len(m.Weights) != 0 || m.Bias != 0 {
			return errors.New("evidence model: a trees model with logistic weights")
		}
		if err := m.Forest.validate(n); err != nil {
			return fmt.Errorf("evidence model: %w", err)
		}
	default:
		return fmt.Errorf("evidence model: learner %q, want %s or %s", m.Learner, LearnerLogistic, LearnerTrees)
	}
	if !finite(m.CostExponent) || m.CostExponent < 0 || m.CostExponent > 2 {
		return fmt.Errorf("evidence model: cost exponent %v (want 0…2)", m.CostExponent)
	}
	if m.Passages < 1 || m.Passages > maxPassages || m.Neighbors < 0 || m.Neighbors > 1 {
		return fmt.Errorf("evidence model: passages %d (want 1…%d), neighbors %d (want 0 or 1)", m.Passages, maxPassages, m.Neighbors)
	}
	if m.Hop < 0 || m.Hop > MaxHop || (m.Hop > 0 && (m.Anchors < 1 || m.Anchors > maxAnchors)) || m.Anchors < 0 || m.Anchors > maxAnchors {
		return fmt.Errorf("evidence model: hop %d (want 0…%d) with anchors %d (want 1…%d)", m.Hop, MaxHop, m.Anchors, maxAnchors)
	}
	if !finite(m.Floor) || m.Floor < 0 || m.Floor >= 1 {
		return fmt.Errorf("evidence model: floor %v (want 0 ≤ floor < 1)", m.Floor)
	}
	if !finite(m.Stop) || m.Stop < 0 || m.Stop >= 1 {
		return fmt.Errorf("evidence model: stop %v (want 0 ≤ stop < 1)", m.Stop)
	}
	if !finite(m.MinExpected) || m.MinExpected < 0 || m.MinExpected > MaxMinExpected {
		return fmt.Errorf("evidence model: min_expected %v (want 0…%d)", m.MinExpected, MaxMinExpected)
	}
	return nil
}

// RouteKinds are the kinds of text a model may hold a model for (Kinds),
// a new slice each call.
func RouteKinds() []string { return []string{KindTurns, KindTable} }

// validateKinds checks the models by kind: known kinds, each a valid model
// with no hop and no kinds of its own (one level).
func (m *Model) validateKinds() error {
	if m.Kinds == nil {
		return nil
	}
	if len(m.Kinds) == 0 {
		return errors.New("evidence model: an empty kinds map")
	}
	for kind, sub := range m.Kinds {
		if !slices.Contains(RouteKinds(), kind) {
			return fmt.Errorf("evidence model: kind %q, want one of %v", kind, RouteKinds())
		}
		if sub == nil {
			return fmt.Errorf("evidence model: kind %s: no model", kind)
		}
		if sub.Kinds != nil {
			return fmt.Errorf("evidence model: kind %s: a kind's model has no kinds of its own", kind)
		}
		if sub.Hop != 0 {
			return fmt.Errorf("evidence model: kind %s: hop %d (the second hop is the top model's; a kind's model has none)", kind, sub.Hop)
		}
		if !finite(sub.Blend) || sub.Blend < 0 || sub.Blend > 1 {
			return fmt.Errorf("evidence model: kind %s: blend %v (want 0 ≤ blend ≤ 1)", kind, sub.Blend)
		}
		w := *sub
		w.Blend = 0
		if err := w.Validate(); err != nil {
			return fmt.Errorf("evidence model: kind %s: %w", kind, err)
		}
	}
	return nil
}

func (f *Forest) validate(features int) error {
	if f.Depth < 1 || f.Depth > maxTreeDepth {
		return fmt.Errorf("tree depth %d, want 1…%d", f.Depth, maxTreeDepth)
	}
	if len(f.Trees) == 0 || len(f.Trees) > maxTrees {
		return fmt.Errorf("%d trees, want 1…%d", len(f.Trees), maxTrees)
	}
	if !finite(f.Base) {
		return fmt.Errorf("base %v", f.Base)
	}
	internal := 1<<f.Depth - 1
	for ti, t := range f.Trees {
		if len(t.Feature) != internal || len(t.Threshold) != internal || len(t.Leaf) != internal+1 {
			return fmt.Errorf("tree %d: want %d tests, %d thresholds and %d leaves, got %d, %d, %d", ti, internal, internal, internal+1, len(t.Feature), len(t.Threshold), len(t.Leaf))
		}
		for i, fi := range t.Feature {
			if fi < -1 || fi >= features || !finite(t.Threshold[i]) {
				return fmt.Errorf("tree %d node %d: feature %d (want −1…%d), threshold %v", ti, i, fi, features-1, t.Threshold[i])
			}
		}
		for _, v := range t.Leaf {
			if !finite(v) || math.Abs(v) > 100 {
				return fmt.Errorf("tree %d: leaf %v", ti, v)
			}
		}
	}
	return nil
}

// ParseModel reads a model file (JSON, version 1 to 4) and validates it.
func ParseModel(b []byte) (*Model, error) {
	var m Model
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("evidence model: %w", err)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return &m, nil
}

// Marshal writes the model as JSON: indented, each tree on one line (the
// kinds' models too).
func (m *Model) Marshal() ([]byte, error) {
	if m.Forest == nil && m.Kinds == nil {
		return json.MarshalIndent(m, "", "  ")
	}
	c := *m
	c.Forest, c.Kinds = nil, nil
	head, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		return nil, err
	}
	var b []byte
	b = append(b, head[:len(head)-2]...) // drop "\n}"
	if m.Kinds != nil {
		b = append(b, ",\n  \"kinds\": {"...)
		for i, kind := range slices.Sorted(maps.Keys(m.Kinds)) {
			sub, err := m.Kinds[kind].Marshal()
			if err != nil {
				return nil, fmt.Errorf("kind %s: %w", kind, err)
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = fmt.Appendf(b, "\n    %s: ", jsonText(kind))
			b = append(b, bytes.ReplaceAll(sub, []byte("\n"), []byte("\n    "))...)
		}
		b = append(b, "\n  }"...)
	}
	if m.Forest == nil {
		return append(b, "\n}"...), nil
	}
	b = fmt.Appendf(b, ",\n  \"forest\": {\n    \"depth\": %d,\n    \"base\": %s,\n    \"trees\": [", m.Forest.Depth, jsonText(m.Forest.Base))
	for i, t := range m.Forest.Trees {
		line, err := json.Marshal(t)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n      "...)
		b = append(b, line...)
	}
	b = append(b, "\n    ]\n  }\n}"...)
	return b, nil
}

// jsonText is v as JSON writes it (a string or a finite float: no error).
func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

//go:embed model.json
var defaultModelJSON []byte

var defaultModel = sync.OnceValues(func() (*Model, error) { return ParseModel(defaultModelJSON) })

// DefaultModel is the embedded model (model.json), fitted and tuned as
// docs/evidence.md describes.
func DefaultModel() *Model {
	m, err := defaultModel()
	if err != nil {
		panic("evidence: the embedded model is broken: " + err.Error()) // a build defect, caught by tests
	}
	return m
}

func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
