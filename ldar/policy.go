package ldar

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/internal/atomicfile"
)

// FormatName and FormatVersion identify a policy file: safetensors with
// metadata format=ctxsel-ldar-policy and version=1, the network size as
// JSON under "config", and free-form provenance (scorer, data, reward,
// command) under other keys.
const (
	FormatName    = "ctxsel-ldar-policy"
	FormatVersion = 1
)

// Policy is a trained band selector: it reads a similarity curve and
// returns the band of ranks to hand the reader.
type Policy struct {
	model *Model
	// Meta is the provenance stored in the file (scorer, data, reward, …).
	Meta map[string]string

	pool sync.Pool // *pass
}

// NewPolicy wraps a model (trained or fresh) as a policy.
func NewPolicy(m *Model, meta map[string]string) *Policy {
	if meta == nil {
		meta = map[string]string{}
	}
	return &Policy{model: m, Meta: meta}
}

// Model returns the policy's network.
func (p *Policy) Model() *Model { return p.model }

// Config returns the network's configuration.
func (p *Policy) Config() Config { return p.model.Cfg }

// Load reads a policy file.
func Load(path string) (*Policy, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("ldar: load policy: %w", err)
	}
	p, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("ldar: load policy %s: %w", path, err)
	}
	return p, nil
}

// Parse decodes a policy file's bytes. Every error about the content wraps
// ErrFormat.
func Parse(b []byte) (*Policy, error) {
	f, err := readSafetensors(b)
	if err != nil {
		return nil, err
	}
	m, err := modelFromFile(f, FormatName)
	if err != nil {
		return nil, err
	}
	return NewPolicy(m, f.Meta), nil
}

func modelFromFile(f *stFile, format string) (*Model, error) {
	if f.Meta["format"] != format {
		return nil, formatf("metadata format %q, want %q", f.Meta["format"], format)
	}
	if v := f.Meta["version"]; v != strconv.Itoa(FormatVersion) {
		return nil, formatf("version %q, this build reads %d", v, FormatVersion)
	}
	var cfg Config
	dec := json.NewDecoder(bytes.NewReader([]byte(f.Meta["config"])))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return nil, formatf("config: %v", err)
	}
	m, err := newModel(cfg)
	if err != nil {
		return nil, formatf("config: %v", err)
	}
	for _, t := range m.Tensors {
		w, ok := f.Tensors[t.Name]
		if !ok {
			return nil, formatf("tensor %q missing", t.Name)
		}
		if !equalInts(f.Shapes[t.Name], t.Shape) {
			return nil, formatf("tensor %q has shape %v, config wants %v", t.Name, f.Shapes[t.Name], t.Shape)
		}
		copy(t.W, w)
	}
	return m, nil
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (m *Model) tensorMaps() (names []string, shapes map[string][]int, data map[string][]float64) {
	shapes, data = map[string][]int{}, map[string][]float64{}
	for _, t := range m.Tensors {
		names = append(names, t.Name)
		shapes[t.Name] = t.Shape
		data[t.Name] = t.W
	}
	return names, shapes, data
}

func fileMeta(m *Model, format string, extra map[string]string) map[string]string {
	meta := map[string]string{}
	for k, v := range extra {
		meta[k] = v
	}
	cj, _ := json.Marshal(m.Cfg)
	meta["format"] = format
	meta["version"] = strconv.Itoa(FormatVersion)
	meta["config"] = string(cj)
	return meta
}

// WriteTo writes the policy file (F32 weights).
func (p *Policy) WriteTo(w io.Writer) (int64, error) {
	names, shapes, data := p.model.tensorMaps()
	var buf bytes.Buffer
	if err := writeSafetensors(&buf, fileMeta(p.model, FormatName, p.Meta), names, shapes, data, false); err != nil {
		return 0, err
	}
	return buf.WriteTo(w)
}

// Save writes the policy file atomically (a temporary file renamed into
// place).
func (p *Policy) Save(path string) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := p.WriteTo(w)
		return err
	})
}

// Prediction is the policy's decision on one curve.
type Prediction struct {
	// AlphaL, BetaL, AlphaD, BetaD are the two Beta distributions.
	AlphaL, BetaL, AlphaD, BetaD float64
	// QL and QU are the band's quantiles (Beta means at inference), in the
	// ascending convention of BandRanks.
	QL, QU float64
	// M is the number of ranks the band was placed on: min(N, window).
	M int
	// Start and End are the selected ranks [Start, End), rank 0 = best.
	Start, End int
}

// window returns how many ranks the policy reads for a curve of n.
func (c Config) window(n int) int {
	if c.Window <= 0 || c.Window > n {
		return n
	}
	return c.Window
}

func (p *Policy) getPass() *pass {
	if ps, ok := p.pool.Get().(*pass); ok {
		return ps
	}
	return &pass{}
}

// PredictTop runs the policy given a curve's best scores in descending
// order (at least min(n, window+1) of them) with their token counts (nil
// when unknown), and the mean and standard deviation of all n scores. A
// policy that reads score channels (Config.Channels > 0) sees them as
// zeros here: give it PredictChannels.
func (p *Policy) PredictTop(top []float64, tokens []int, n int, mean, std float64) Prediction {
	return p.predict(top, tokens, n, mean, std, nil, nil)
}

// predict runs the network; order (input indices of the ranks) and chans
// (each channel's N scores, input order) feed the channel features.
func (p *Policy) predict(top []float64, tokens []int, n int, mean, std float64, order []int, chans [][]float64) Prediction {
	cfg := p.model.Cfg
	m := cfg.window(n)
	ps := p.getPass()
	defer p.pool.Put(ps)
	ps.resize(cfg, m)
	nf := cfg.numFeatures()
	clear(ps.x)
	features(top, tokens, m, nf, mean, std, ps.x)
	if cfg.Channels > 0 && len(chans) >= cfg.Channels {
		channelFeatures(ps.x, nf, m, order, chans[:cfg.Channels])
	}
	p.model.forward(ps)
	return predictionFrom(ps.beta, m)
}

// PredictChannels runs the policy on scores in any order with their token
// counts (nil when unknown) and the component curves behind the scores
// (chans[j][i] is channel j's score of passage i; the policy reads the
// first Config.Channels of them and needs at least that many).
func (p *Policy) PredictChannels(scores []float64, tokens []int, chans [][]float64) (Prediction, error) {
	if len(chans) < p.model.Cfg.Channels {
		return Prediction{}, fmt.Errorf("the policy reads %d score channels, got %d", p.model.Cfg.Channels, len(chans))
	}
	for j, ch := range chans {
		if len(ch) != len(scores) {
			return Prediction{}, fmt.Errorf("channel %d has %d scores for %d passages", j, len(ch), len(scores))
		}
	}
	if len(scores) == 0 || (tokens != nil && len(tokens) != len(scores)) {
		return Prediction{}, fmt.Errorf("%d scores, %d token counts", len(scores), len(tokens))
	}
	top, tt, mean, std, order := p.ranked(scores, tokens)
	return p.predict(top, tt, len(scores), mean, std, order, chans), nil
}

func predictionFrom(beta []float64, m int) Prediction {
	pr := Prediction{AlphaL: beta[0], BetaL: beta[1], AlphaD: beta[2], BetaD: beta[3], M: m}
	pr.QL = pr.AlphaL / (pr.AlphaL + pr.BetaL)
	pr.QU = min(pr.QL+pr.AlphaD/(pr.AlphaD+pr.BetaD), 1)
	pr.Start, pr.End = BandRanks(m, pr.QL, pr.QU)
	return pr
}

// Predict runs the policy on scores in any order with their token counts
// (nil when unknown: the policy then sees passages of 0 tokens).
func (p *Policy) Predict(scores []float64, tokens []int) Prediction {
	if len(scores) == 0 || (tokens != nil && len(tokens) != len(scores)) {
		return Prediction{}
	}
	top, tt, mean, std, _ := p.ranked(scores, tokens)
	return p.PredictTop(top, tt, len(scores), mean, std)
}

// ranked is what the policy reads of a curve in any order: the scores and
// token counts (nil when unknown) of its window's best ranks, the curve's
// mean and std, and the input indices by rank.
func (p *Policy) ranked(scores []float64, tokens []int) (top []float64, tt []int, mean, std float64, order []int) {
	mean, std = curveStats(scores)
	order = ctxsel.Ranking(scores)
	m := min(len(scores), p.model.Cfg.window(len(scores))+1)
	top = make([]float64, m)
	if tokens != nil {
		tt = make([]int, m)
	}
	for r := range m {
		top[r] = scores[order[r]]
		if tokens != nil {
			tt[r] = tokens[order[r]]
		}
	}
	return top, tt, mean, std, order
}

//go:embed default.safetensors
var defaultPolicyFile []byte

var defaultPolicy = sync.OnceValues(func() (*Policy, error) {
	p, err := Parse(defaultPolicyFile)
	if err != nil {
		return nil, fmt.Errorf("ldar: embedded default policy: %w", err)
	}
	return p, nil
})

// Default returns the policy embedded in the binary.
func Default() (*Policy, error) { return defaultPolicy() }
