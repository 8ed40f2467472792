package evidencetrain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/eval"
	"github.com/ctxsel/ctxsel/evidence"
	"github.com/ctxsel/ctxsel/internal/plot"
)

// Calibration methods Calibrate takes besides evidence's two.
const (
	// CalibrationAuto fits both maps on one half of the validation
	// questions and keeps the one of lower Brier score on the other half.
	CalibrationAuto = "auto"
	// CalibrationNone measures only: no map is fitted.
	CalibrationNone = "none"
)

// FitIsotonic fits a monotone map from p to the rate of gold among
// sentences of that p by pool-adjacent-violators: sentences sorted by p
// (equal p pooled first: one p, one value), adjacent blocks merged while
// a block's gold rate is not above its predecessor's. Each block becomes a
// knot at its mean p and gold rate (Apply interpolates between them); more
// than the format's bound of blocks are merged pairwise, which keeps them
// increasing.
func FitIsotonic(p []float64, gold []bool) (*evidence.Calibration, error) {
	if err := checkPairs(p, gold); err != nil {
		return nil, err
	}
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] < p[idx[b]] })
	type block struct{ n, sumP, sumY float64 }
	rate := func(b block) float64 { return b.sumY / b.n }
	var st []block
	for k, i := range idx {
		y := 0.0
		if gold[i] {
			y = 1
		}
		if k > 0 && p[i] == p[idx[k-1]] {
			// a tie joins the block of the equal p (always the top one)
			top := &st[len(st)-1]
			top.n, top.sumP, top.sumY = top.n+1, top.sumP+p[i], top.sumY+y
		} else {
			st = append(st, block{1, p[i], y})
		}
		for len(st) > 1 && rate(st[len(st)-2]) >= rate(st[len(st)-1]) {
			a, b := st[len(st)-2], st[len(st)-1]
			st = st[:len(st)-1]
			st[len(st)-1] = block{a.n + b.n, a.sumP + b.sumP, a.sumY + b.sumY}
		}
	}
	for len(st) > maxKnots {
		var half []block
		for i := 0; i < len(st); i += 2 {
			b := st[i]
			if i+1 < len(st) {
				c := st[i+1]
				b = block{b.n + c.n, b.sumP + c.sumP, b.sumY + c.sumY}
			}
			half = append(half, b)
		}
		st = half
	}
	c := &evidence.Calibration{Method: evidence.CalibrationIsotonic}
	for _, b := range st {
		c.X = append(c.X, b.sumP/b.n)
		c.Y = append(c.Y, rate(b))
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("isotonic fit: %w", err)
	}
	return c, nil
}

// maxKnots is evidence's bound on an isotonic map's knots.
const maxKnots = 1000

// FitPlatt fits σ(a·logit(p) + b) by maximum likelihood (Newton's method
// on the two weights, a tiny ridge for separable data).
func FitPlatt(p []float64, gold []bool) (*evidence.Calibration, error) {
	if err := checkPairs(p, gold); err != nil {
		return nil, err
	}
	const ridge = 1e-6
	z := make([]float64, len(p))
	for i, v := range p {
		v = min(max(v, 1e-12), 1-1e-12)
		z[i] = math.Log(v / (1 - v))
	}
	a, b := 1.0, 0.0
	for range 100 {
		var g0, g1, h00, h01, h11 float64
		for i, x := range z {
			q := sigmoid(a*x + b)
			y := 0.0
			if gold[i] {
				y = 1
			}
			w := q * (1 - q)
			g0 += (q - y) * x
			g1 += q - y
			h00 += w * x * x
			h01 += w * x
			h11 += w
		}
		g0 += ridge * (a - 1)
		h00 += ridge
		h11 += ridge
		g1 += ridge * b
		det := h00*h11 - h01*h01
		if det <= 0 || math.IsNaN(det) {
			break
		}
		da, db := (h11*g0-h01*g1)/det, (h00*g1-h01*g0)/det
		a, b = a-da, b-db
		if math.Abs(da) < 1e-10 && math.Abs(db) < 1e-10 {
			break
		}
	}
	c := &evidence.Calibration{Method: evidence.CalibrationPlatt, A: a, B: b}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("Platt fit: %w", err)
	}
	return c, nil
}

func checkPairs(p []float64, gold []bool) error {
	if len(p) == 0 || len(p) != len(gold) {
		return fmt.Errorf("calibration fit: %d probabilities, %d labels", len(p), len(gold))
	}
	for _, v := range p {
		if math.IsNaN(v) || v < 0 || v > 1 {
			return fmt.Errorf("calibration fit: probability %v", v)
		}
	}
	return nil
}

// Bin is one bin of a reliability table.
type Bin struct {
	// Lo and Hi bound the bin's probabilities; MeanP is their mean and
	// Gold the share of gold sentences among the N in it.
	Lo, Hi, MeanP, Gold float64
	N                   int
}

// Reliability cuts sentences into bins equal in count (sorted by p; ties
// may cross a cut) and returns them with the expected calibration error:
// Σ over bins of N/total · |MeanP − Gold|.
func Reliability(p []float64, gold []bool, bins int) ([]Bin, float64) {
	n := len(p)
	if n == 0 || bins < 1 {
		return nil, math.NaN()
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] < p[idx[b]] })
	var out []Bin
	ece := 0.0
	for k := range bins {
		lo, hi := k*n/bins, (k+1)*n/bins
		if hi <= lo {
			continue
		}
		b := Bin{Lo: p[idx[lo]], Hi: p[idx[hi-1]], N: hi - lo}
		for _, i := range idx[lo:hi] {
			b.MeanP += p[i]
			if gold[i] {
				b.Gold++
			}
		}
		b.MeanP /= float64(b.N)
		b.Gold /= float64(b.N)
		ece += float64(b.N) / float64(n) * math.Abs(b.MeanP-b.Gold)
		out = append(out, b)
	}
	return out, ece
}

// Brier is the mean squared error of p against the labels.
func Brier(p []float64, gold []bool) float64 {
	s := 0.0
	for i, v := range p {
		y := 0.0
		if gold[i] {
			y = 1
		}
		s += (v - y) * (v - y)
	}
	return s / float64(len(p))
}

// FileCalibration is one file's calibration on its validation questions.
type FileCalibration struct {
	Name      string `json:"name"`
	Questions int    `json:"questions"`
	Sentences int    `json:"sentences"`
	Gold      int    `json:"gold"`
	// ECE and Reliability: the learner's own probabilities (any map the
	// model held is removed), every validation question.
	ECE         float64 `json:"ece"`
	Brier       float64 `json:"brier"`
	Reliability []Bin   `json:"reliability"`
	// TopECE is the ECE of each question's TopSentences most probable
	// sentences only; Expected is Σp ÷ gold sentences (ExpectedRatio).
	TopECE   float64 `json:"top_ece"`
	Expected float64 `json:"expected"`
	// HeldOut: on the questions of validation half 1 only, the learner's
	// ECE ("learner") and each method's map fitted on half 0 (of every
	// file together).
	HeldOutECE      map[string]float64 `json:"held_out_ece"`
	HeldOutTopECE   map[string]float64 `json:"held_out_top_ece"`
	HeldOutExpected map[string]float64 `json:"held_out_expected"`
	HeldOutBrier    map[string]float64 `json:"held_out_brier"`
	// Calibrated: the chosen map (fitted on every validation question) on
	// every validation question: in-sample.
	CalibratedECE         float64 `json:"calibrated_ece,omitempty"`
	CalibratedTopECE      float64 `json:"calibrated_top_ece,omitempty"`
	CalibratedExpected    float64 `json:"calibrated_expected,omitempty"`
	CalibratedReliability []Bin   `json:"calibrated_reliability,omitempty"`
}

// CalibrationResult is what Calibrate measured and fitted.
type CalibrationResult struct {
	// Model is From with the chosen map (nil when none was fitted).
	Model   *evidence.Model `json:"-"`
	Method  string          `json:"method"`
	Binning string          `json:"binning"`
	// Files are per data file; Pooled is every file's sentences together.
	Files  []FileCalibration `json:"files"`
	Pooled FileCalibration   `json:"pooled"`
}

// scored is one file's validation sentences: the learner's p, the label,
// and the validation half of the question.
type scored struct {
	name      string
	questions int
	p         []float64
	gold      []bool
	half      []int
	q         []int    // the question's running number (unique across files)
	kind      []string // its passage's evidence.TextKind
}

// TopSentences is how many of a question's most probable sentences the
// top-sentence error reads: about what a 500- to 1,000-token packing
// decides between, where the floor and the stop act.
const TopSentences = 30

// topOf keeps each question's TopSentences most probable sentences.
func topOf(p []float64, gold []bool, q []int) ([]float64, []bool) {
	by := map[int][]int{}
	for i, x := range q {
		by[x] = append(by[x], i)
	}
	var tp []float64
	var tg []bool
	for _, idx := range by {
		sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] > p[idx[b]] })
		for _, i := range idx[:min(TopSentences, len(idx))] {
			tp, tg = append(tp, p[i]), append(tg, gold[i])
		}
	}
	return tp, tg
}

// expectedRatio is Σp over the number of gold sentences: how much
// evidence the probabilities promise for each gold sentence there is (1
// when calibrated in the large; what the stop reads).
func expectedRatio(p []float64, gold []bool) float64 {
	sp, n := 0.0, 0
	for i, v := range p {
		sp += v
		if gold[i] {
			n++
		}
	}
	return sp / float64(n)
}

// Calibrate scores every validation sentence of opt.Data with opt.From's
// learner (its candidate passages and hop, any map it holds removed),
// measures the learner's calibration per file, and, unless method is
// CalibrationNone, fits one map on every file's validation questions
// together (with byKind, also one per evidence.TextKind of the sentence's
// passage that has enough data). With CalibrationAuto, both methods are fitted on validation
// half 0 (FoldOf(id, 2)) and the one of lower pooled Brier score on half
// 1 is kept, then fitted again on both halves. Train questions are not
// read; test questions never are.
func Calibrate(ctx context.Context, opt Options, method string, bins int, byKind bool) (*CalibrationResult, error) {
	if opt.From == nil {
		return nil, errors.New("evidence calibrate: no model (From)")
	}
	switch method {
	case CalibrationAuto, CalibrationNone, evidence.CalibrationIsotonic, evidence.CalibrationPlatt:
	default:
		return nil, fmt.Errorf("evidence calibrate: method %q, want %s, %s, %s or %s", method, CalibrationAuto, evidence.CalibrationIsotonic, evidence.CalibrationPlatt, CalibrationNone)
	}
	if opt.Folds > 1 {
		return nil, errors.New("evidence calibrate: folds: a map is fitted on the fixed validation split")
	}
	if bins < 2 {
		return nil, fmt.Errorf("evidence calibrate: %d bins, want at least 2", bins)
	}
	opt.defaults()
	raw := *opt.From
	raw.Calibration = nil
	var files []scored
	qOffset := 0
	for _, path := range opt.Data {
		f, err := scoreValidation(ctx, path, opt, &raw, qOffset)
		if err != nil {
			return nil, err
		}
		if opt.Log != nil {
			fmt.Fprintf(opt.Log, "calibrate: %s: %d validation questions, %d sentences scored\n", f.name, f.questions, len(f.p))
		}
		files = append(files, f)
		qOffset += f.questions
	}
	var all scored
	all.name = "pooled"
	for _, f := range files {
		all.questions += f.questions
		all.p, all.gold, all.half, all.q, all.kind = append(all.p, f.p...), append(all.gold, f.gold...), append(all.half, f.half...), append(all.q, f.q...), append(all.kind, f.kind...)
	}
	if len(all.p) == 0 {
		return nil, errors.New("evidence calibrate: no validation sentence")
	}
	res := &CalibrationResult{Method: method, Binning: fmt.Sprintf("%d bins of equal count", bins)}
	// the held-out choice: fit on half 0 of every file, measure on half 1
	half0 := all.part(0)
	maps := map[string]*evidence.Calibration{}
	if method != CalibrationNone {
		for _, m := range []string{evidence.CalibrationIsotonic, evidence.CalibrationPlatt} {
			if method != CalibrationAuto && method != m {
				continue
			}
			c, err := fitScored(m, half0, byKind)
			if err != nil {
				return nil, fmt.Errorf("evidence calibrate: half 0: %w", err)
			}
			maps[m] = c
		}
	}
	measure := func(f scored) FileCalibration {
		fc := FileCalibration{Name: f.name, Questions: f.questions, Sentences: len(f.p), HeldOutECE: map[string]float64{}, HeldOutBrier: map[string]float64{},
			HeldOutTopECE: map[string]float64{}, HeldOutExpected: map[string]float64{}}
		for _, g := range f.gold {
			if g {
				fc.Gold++
			}
		}
		fc.Reliability, fc.ECE = Reliability(f.p, f.gold, bins)
		fc.Brier = Brier(f.p, f.gold)
		tp, tg := topOf(f.p, f.gold, f.q)
		_, fc.TopECE = Reliability(tp, tg, bins)
		fc.Expected = expectedRatio(f.p, f.gold)
		h1 := f.part(1)
		if len(h1.p) > 0 {
			held := func(name string, p []float64) {
				_, fc.HeldOutECE[name] = Reliability(p, h1.gold, bins)
				tp, tg := topOf(p, h1.gold, h1.q)
				_, fc.HeldOutTopECE[name] = Reliability(tp, tg, bins)
				fc.HeldOutExpected[name] = expectedRatio(p, h1.gold)
				fc.HeldOutBrier[name] = Brier(p, h1.gold)
			}
			held("learner", h1.p)
			for m, c := range maps {
				held(m, apply(c, h1))
			}
		}
		return fc
	}
	for _, f := range files {
		res.Files = append(res.Files, measure(f))
	}
	res.Pooled = measure(all)
	if method == CalibrationNone {
		return res, nil
	}
	chosen := method
	if method == CalibrationAuto {
		chosen = evidence.CalibrationIsotonic
		if res.Pooled.HeldOutBrier[evidence.CalibrationPlatt] < res.Pooled.HeldOutBrier[evidence.CalibrationIsotonic] {
			chosen = evidence.CalibrationPlatt
		}
	}
	c, err := fitScored(chosen, all, byKind)
	if err != nil {
		return nil, fmt.Errorf("evidence calibrate: %w", err)
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.name
	}
	kinds := ""
	if byKind {
		kinds = " (and by kind of text)"
	}
	c.Fitted = fmt.Sprintf("%s%s on the validation sentences of %s (validation questions of dataset.SplitOf seed %d, pool %d, %d questions, %d sentences; test never read); chosen %s",
		chosen, kinds, strings.Join(names, ","), opt.SplitSeed, opt.Pool, all.questions, len(all.p), choiceText(method, res.Pooled))
	res.Method = chosen
	for i := range res.Files {
		calibratedFigures(&res.Files[i], c, files[i], bins)
	}
	calibratedFigures(&res.Pooled, c, all, bins)
	m := *opt.From
	m.Version, m.Calibration = max(m.Version, 3), c // a map needs version 3
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("evidence calibrate: %w", err)
	}
	res.Model = &m
	return res, nil
}

func choiceText(method string, pooled FileCalibration) string {
	if method != CalibrationAuto {
		return "by --calibrate"
	}
	return fmt.Sprintf("by Brier score on validation half 1 of maps fitted on half 0 (isotonic %.5f, Platt %.5f, none %.5f)",
		pooled.HeldOutBrier[evidence.CalibrationIsotonic], pooled.HeldOutBrier[evidence.CalibrationPlatt], pooled.HeldOutBrier["learner"])
}

func fitMap(method string, p []float64, gold []bool) (*evidence.Calibration, error) {
	if method == evidence.CalibrationPlatt {
		return FitPlatt(p, gold)
	}
	return FitIsotonic(p, gold)
}

func apply(c *evidence.Calibration, s scored) []float64 {
	out := make([]float64, len(s.p))
	for i, v := range s.p {
		out[i] = c.ApplyKind(v, s.kind[i])
	}
	return out
}

func calibratedFigures(fc *FileCalibration, c *evidence.Calibration, f scored, bins int) {
	cp := apply(c, f)
	fc.CalibratedReliability, fc.CalibratedECE = Reliability(cp, f.gold, bins)
	tp, tg := topOf(cp, f.gold, f.q)
	_, fc.CalibratedTopECE = Reliability(tp, tg, bins)
	fc.CalibratedExpected = expectedRatio(cp, f.gold)
}

// part is the sentences of validation half h.
func (s scored) part(h int) scored {
	out := scored{name: s.name}
	for i, x := range s.half {
		if x == h {
			out.p, out.gold, out.q, out.kind, out.half = append(out.p, s.p[i]), append(out.gold, s.gold[i]), append(out.q, s.q[i]), append(out.kind, s.kind[i]), append(out.half, h)
		}
	}
	return out
}

// Least gold sentences and sentences a kind of text needs for a map of
// its own (else the global map serves it).
const (
	minKindGold      = 20
	minKindSentences = 2000
)

// fitScored fits a map on s: one for all, and with byKind one per kind of
// text that has enough data.
func fitScored(method string, s scored, byKind bool) (*evidence.Calibration, error) {
	c, err := fitMap(method, s.p, s.gold)
	if err != nil || !byKind {
		return c, err
	}
	for _, kind := range []string{evidence.KindTurns, evidence.KindTable, evidence.KindProse} {
		var p []float64
		var y []bool
		gold := 0
		for i, k := range s.kind {
			if k == kind {
				p, y = append(p, s.p[i]), append(y, s.gold[i])
				if s.gold[i] {
					gold++
				}
			}
		}
		if gold < minKindGold || len(p) < minKindSentences {
			continue
		}
		k, err := fitMap(method, p, y)
		if err != nil {
			return nil, fmt.Errorf("kind %s: %w", kind, err)
		}
		if c.Kinds == nil {
			c.Kinds = map[string]*evidence.Calibration{}
		}
		c.Kinds[kind] = k
	}
	return c, nil
}

// scoreValidation reads one file's validation questions as Train does
// (limit, sample, pool, split) and scores their candidate sentences.
func scoreValidation(ctx context.Context, path string, opt Options, m *evidence.Model, qOffset int) (scored, error) {
	out := scored{name: filepath.Base(path)}
	recs, err := dataset.LoadFile(path)
	if err != nil {
		return out, err
	}
	if opt.Limit > 0 && len(recs) > opt.Limit {
		recs = recs[:opt.Limit]
	}
	recs = sample(recs, opt.Sample)
	pooled, err := dataset.Pool(recs, opt.Pool, opt.PoolSeed)
	if err != nil {
		return out, err
	}
	val := dataset.FilterSplit(pooled, dataset.SplitValidation, opt.SplitSeed)
	val = slices.DeleteFunc(val, func(r dataset.Record) bool { return !r.HasSpans() })
	curves, _, err := eval.Curves(ctx, val, opt.Scorer, opt.Base.Counter, opt.Workers)
	if err != nil {
		return out, err
	}
	o := opt.Base
	o.Budget, o.Model = 1, m
	sel, err := evidence.New(o)
	if err != nil {
		return out, err
	}
	for qi, r := range val {
		q, err := TextQuery(r, curves[qi])
		if err != nil {
			return out, err
		}
		fs, err := sel.Features(ctx, q)
		if err != nil {
			return out, fmt.Errorf("evidence calibrate: %s %s: %w", out.name, r.ID, err)
		}
		h := FoldOf(r.ID, 2)
		kinds := map[int]string{}
		for _, f := range fs {
			k, ok := kinds[f.Passage]
			if !ok {
				k = evidence.TextKind(r.Passages[f.Passage].Text)
				kinds[f.Passage] = k
			}
			out.kind = append(out.kind, k)
			out.p = append(out.p, f.P)
			out.gold = append(out.gold, GoldSentence(r.Passages[f.Passage].GoldSpans, f.Span))
			out.half = append(out.half, h)
			out.q = append(out.q, qOffset+out.questions)
		}
		out.questions++
	}
	return out, nil
}

// WriteReliabilityPlot draws each file's reliability table as a standalone
// SVG: the gold rate of each bin against its mean probability, both on log
// axes (most sentences are far below 1 %), the learner's solid, the map's
// (when fitted) dashed, beside the diagonal a calibrated model lies on.
func WriteReliabilityPlot(w io.Writer, res *CalibrationResult, title string) error {
	const (
		width, height          = 760, 520
		left, right, top, bott = 70, 200, 40, 60
		lo                     = -4.0 // log10 of the axes' least value
	)
	pw, ph := float64(width-left-right), float64(height-top-bott)
	pos := func(v float64) float64 { return (math.Log10(max(v, math.Pow(10, lo))) - lo) / -lo }
	x := func(v float64) float64 { return float64(left) + pw*pos(v) }
	y := func(v float64) float64 { return float64(top) + ph*(1-pos(v)) }
	svg := plot.New(width, height, 12, true)
	svg.El(`%s<text x="%d" y="22" font-size="15">%s</text>`, plot.Background, left, plot.Esc(title))
	for e := lo; e <= 0; e++ {
		v := math.Pow(10, e)
		svg.El(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="#e5e5e5"/><text x="%.1f" y="%.1f" text-anchor="middle">%g</text>`, x(v), top, x(v), float64(top)+ph, x(v), float64(top)+ph+16, v)
		svg.El(`<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e5e5e5"/><text x="%d" y="%.1f" text-anchor="end">%g</text>`, left, y(v), float64(left)+pw, y(v), left-6, y(v)+4, v)
	}
	svg.El(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#888" stroke-dasharray="2 3"/>`, x(1e-4), y(1e-4), x(1), y(1))
	svg.El(`<text x="%.1f" y="%d" text-anchor="middle">mean p(evidence) of the bin (%s; log scale)</text>`, float64(left)+pw/2, height-18, plot.Esc(res.Binning))
	svg.El(`<text transform="translate(18 %.1f) rotate(-90)" text-anchor="middle">share of gold sentences in the bin (log scale)</text>`, float64(top)+ph/2)
	palette := []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"}
	line := func(bins []Bin, colour, dash string) {
		pts := plot.Points(len(bins), func(i int) (float64, float64) { return x(bins[i].MeanP), y(bins[i].Gold) })
		svg.El(`<polyline fill="none" stroke="%s" stroke-width="1.8" stroke-dasharray="%s" points="%s"/>`, colour, dash, pts)
	}
	for i, f := range res.Files {
		c := palette[i%len(palette)]
		line(f.Reliability, c, "none")
		if len(f.CalibratedReliability) > 0 {
			line(f.CalibratedReliability, c, "6 4")
		}
		ly := float64(top) + 10 + 18*float64(i)
		svg.El(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" stroke-width="2"/><text x="%d" y="%.1f">%s (ECE %.4f)</text>`,
			width-right+10, ly, width-right+30, ly, c, width-right+34, ly+4, plot.Esc(strings.TrimSuffix(f.Name, ".jsonl.gz")), f.ECE)
	}
	if res.Model != nil {
		ly := float64(top) + 10 + 18*float64(len(res.Files))
		svg.El(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#333" stroke-width="2" stroke-dasharray="6 4"/><text x="%d" y="%.1f">with the %s map</text>`,
			width-right+10, ly, width-right+30, ly, width-right+34, ly+4, plot.Esc(res.Method))
	}
	if err := svg.End(w); err != nil {
		return fmt.Errorf("write reliability plot: %w", err)
	}
	return nil
}
