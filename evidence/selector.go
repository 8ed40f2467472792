package evidence

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/score"
	"github.com/ctxsel/ctxsel/token"
)

// maxPassages bounds the candidate passages of one selection.
const maxPassages = 1000

// Options configure a Selector. Budget and Embedder are required.
type Options struct {
	// Budget is the tokens all pruned passages may take together, headers
	// and gap markers included (counted exactly, Counter's encoding).
	Budget int
	// Passages is how many of the curve's best passages are candidates
	// (0: the model's default). After ignores it: the strategy's passages
	// are the candidates.
	Passages int
	// NoHeader sends no header lines (header=0).
	NoHeader bool
	// Neighbors, when 1, sends a kept sentence's predecessor with it
	// (-1: the model's default, 0: never).
	Neighbors int
	// Hop is how many passages outside the candidates the second hop may
	// add (0: the model's default; HopOff: no second hop). Only passages
	// of the query join: composed after a strategy, none beyond its kept
	// set.
	Hop int
	// Floor is the least probability a sentence needs to be sent (0: the
	// model's default; FloorOff: none).
	Floor float64
	// Stop ends packing early once the kept sentences hold this share of
	// the expected evidence (the sum of p over every sentence that could
	// be sent) (0: the model's default; StopOff: none).
	Stop float64
	// MinExpected is the least expected evidence (the sum of p over the
	// candidate sentences) for the floor and the stop to cut: a question
	// whose candidates' p sum to less is packed without them, filling the
	// budget, because the model has not found its evidence (0: the
	// model's default; MinExpectedOff: the floor and the stop always cut).
	MinExpected float64
	// Blend is the top (prose) model's weight w in the scores of the units
	// routed to the turns model (Model.Blend, BlendLogits): 0: that
	// model's; BlendOff: none (the turns model alone).
	Blend float64
	// KeepRepeats sends repeats (dedup=0): a sentence whose text another
	// passage of its document sends, and a chunk's cut-off fragment of a
	// sentence another passage holds whole (repeats.go).
	KeepRepeats bool
	// Units are the line structures split into units (Split's kinds:
	// turns, rows, items, code, headings); prose sentences are always
	// read. 0: the model's (Model.Units).
	Units Structures
	// Whole holds the structures whose units are sent whole (the whole
	// parameter, ParseWhole): TurnUnits, a turn's (or cue's) sentences;
	// ItemUnits, a list item's; SentenceUnits alone, none. A group is
	// packed as one unit, at the sum of its sentences' p, for all their
	// tokens; its sentences are chosen one by one only when the whole no
	// longer fits. 0: DefaultWhole.
	Whole Structures
	// Run is the share of its value a kept turn lends the turns next to
	// it in its passage (the run parameter, runs.go): a meeting's relevant
	// turns come in runs. 0: DefaultRun; RunOff: none (run=0).
	Run float64
	// BroadRun is Run for the turns of a broad question (Broad: one that
	// asks for a discussion or a summary, whose evidence is a stretch of
	// a conversation). 0: DefaultBroadRun; BroadRunOff: none
	// (broad_run=0).
	BroadRun float64
	// BroadPrior is the neighbourhood prior w of a broad question's turns
	// (runs.go): before packing, each turn is worth its own value plus
	// w × its two neighbouring turns'. 0: DefaultBroadPrior; BroadPriorOff:
	// none (broad_prior=0).
	BroadPrior float64
	// BroadReach is how many turns on each side of a turn the
	// neighbourhood prior of a broad question reads (1 to MaxBroadReach;
	// 1: the two next to it). 0: DefaultBroadReach.
	BroadReach int
	// BroadDecay is how the neighbourhood prior's weights fall with
	// distance (runs.go, priorWeight): 0 < δ ≤ 1 weighs the turn d away
	// 1 − δ(d − 1)/BroadReach (δ = 1: linearly down to 1/BroadReach at
	// the reach's edge). 0: DefaultBroadDecay; BroadDecayOff: uniform
	// weights (broad_decay=0).
	BroadDecay float64
	// BroadPassage is the passage prior γ of a broad question's turns
	// (runs.go): before packing, each turn's value is multiplied by
	// 1 + γ × its passage's score among the candidates', normalised to
	// 0…1. 0: DefaultBroadPassage; BroadPassageOff: none (broad_passage=0).
	BroadPassage float64
	// BroadChunk is the chunk prior γ2 of a broad question's turns
	// (runs.go): before packing, each turn's value is multiplied by
	// 1 + γ2 × its passage's chunk value (the mean of its best turns'
	// model p) among the candidates', normalised to 0…1.
	// 0: DefaultBroadChunk; BroadChunkOff: none (broad_chunk=0).
	BroadChunk float64
	// BroadStretch is the share of the budget the stretch of a broad
	// question's turns may take (runs.go): before packing unit by unit,
	// the contiguous window of turns of one passage whose values sum
	// highest among those that fit in it is packed whole.
	// 0: DefaultBroadStretch; BroadStretchOff: none (broad_stretch=0).
	BroadStretch float64
	// Order of the pruned passages: ctxsel.RankOrder (by the passage's rank
	// in the curve) or ctxsel.DocumentOrder (input order). The query's
	// order is used when it asks for document order.
	Order ctxsel.Order
	// Embedder embeds the question and the sentences (normally the
	// embedded USE-lite model, wrapped in embed/cache, the model the
	// weights were fitted with).
	Embedder embed.Embedder
	// Caps are the spec's own caps (max_k: passages opened, max_tokens:
	// a lower budget); a query's caps tighten them. MinK is not
	// supported: a budget cannot promise passages.
	Caps ctxsel.Caps
	// Counter counts tokens; nil means token.Default.
	Counter token.Counter
	// Model scores sentences; nil means DefaultModel().
	Model *Model
	// Lexical and Dense override the sentence scorers; nil means
	// score.BM25 over the candidate sentences and score.Embedding with
	// Embedder (what the weights were fitted with).
	Lexical, Dense score.Scorer
	// Sentences, when set (ctxsel.DepSentences: ask supplies the index),
	// gives the sentence vectors stored with the passages, used instead of
	// embedding them (sentenceSimilarity); not with a Dense override.
	Sentences ctxsel.SentenceStore
}

// HopOff, FloorOff, StopOff, RunOff, BroadRunOff, BroadPriorOff,
// BroadPassageOff, MinExpectedOff and BlendOff turn the second hop, the
// floor, the early stop, the runs of turns (for every question; for broad
// ones), the neighbourhood and passage priors of broad questions' turns,
// the gate on the floor and the stop, and the blend off (Options.Hop,
// Options.Floor, Options.Stop, Options.Run, Options.BroadRun,
// Options.BroadPrior, Options.BroadPassage, Options.MinExpected,
// Options.Blend).
const (
	HopOff        = -1
	FloorOff      = -1
	StopOff       = -1
	RunOff        = -1
	BroadRunOff   = -1
	BroadPriorOff = -1
	// BroadPassageOff turns the passage prior off, BroadChunkOff the
	// chunk prior, BroadStretchOff the stretch, BroadDecayOff the prior's
	// decay (uniform weights).
	BroadPassageOff = -1
	BroadChunkOff   = -1
	BroadStretchOff = -1
	BroadDecayOff   = -1
	MinExpectedOff  = -1
	BlendOff        = -1
)

// Selector is the evidence TextSelector: it keeps sentences, not whole
// passages. It is safe for concurrent use.
type Selector struct {
	opt   Options
	model *Model
	cols  []int // the model's features' indices in FeatureNames
	// kindCols are cols of each of the model's models by kind (Kinds).
	kindCols map[string][]int
	units    Structures // the structures split into units (Options.Units, DefaultUnits for 0)
	whole    Structures // the structures whose units are sent whole (Options.Whole, DefaultWhole for 0)
	counter  token.Counter
	lexical  score.Scorer
	dense    score.Scorer
	passes   int
	nbrs     int
	hop      int
	floor    float64
	stop     float64
	minExp   float64
	blend    float64 // the turns-routed units' blend (Options.Blend)
}

var _ ctxsel.TextSelector = (*Selector)(nil)

// New checks the options and returns a Selector.
func New(opt Options) (*Selector, error) {
	if opt.Budget < 1 || opt.Budget > ctxsel.MaxIntParam {
		return nil, fmt.Errorf("%w: evidence: budget %d tokens: want at least 1", ctxsel.ErrInvalidInput, opt.Budget)
	}
	if opt.Passages < 0 || opt.Passages > maxPassages {
		return nil, fmt.Errorf("%w: evidence: passages=%d: want 1…%d", ctxsel.ErrInvalidInput, opt.Passages, maxPassages)
	}
	if opt.Neighbors < -1 || opt.Neighbors > 1 {
		return nil, fmt.Errorf("%w: evidence: neighbors=%d: want 0 or 1", ctxsel.ErrInvalidInput, opt.Neighbors)
	}
	if opt.Caps.MinK != 0 {
		return nil, fmt.Errorf("%w: evidence: min_k=%d: a token budget cannot promise passages", ctxsel.ErrInvalidInput, opt.Caps.MinK)
	}
	if err := opt.Caps.Validate(); err != nil {
		return nil, fmt.Errorf("evidence: %w", err)
	}
	if opt.Hop < HopOff || opt.Hop > MaxHop {
		return nil, fmt.Errorf("%w: evidence: hop=%d: want 0…%d", ctxsel.ErrInvalidInput, opt.Hop, MaxHop)
	}
	if !finite(opt.Floor) || (opt.Floor < 0 && opt.Floor != FloorOff) || opt.Floor >= 1 {
		return nil, fmt.Errorf("%w: evidence: floor=%v: want 0 ≤ floor < 1", ctxsel.ErrInvalidInput, opt.Floor)
	}
	if !finite(opt.Stop) || (opt.Stop < 0 && opt.Stop != StopOff) || opt.Stop >= 1 {
		return nil, fmt.Errorf("%w: evidence: stop=%v: want 0 ≤ stop < 1", ctxsel.ErrInvalidInput, opt.Stop)
	}
	if !finite(opt.MinExpected) || (opt.MinExpected < 0 && opt.MinExpected != MinExpectedOff) || opt.MinExpected > MaxMinExpected {
		return nil, fmt.Errorf("%w: evidence: min_expected=%v: want 0…%d", ctxsel.ErrInvalidInput, opt.MinExpected, MaxMinExpected)
	}
	if !finite(opt.Blend) || (opt.Blend < 0 && opt.Blend != BlendOff) || opt.Blend > 1 {
		return nil, fmt.Errorf("%w: evidence: blend=%v: want 0 ≤ blend ≤ 1", ctxsel.ErrInvalidInput, opt.Blend)
	}
	if opt.Whole&^(wholeable|SentenceUnits) != 0 {
		return nil, fmt.Errorf("%w: evidence: whole %#x: want turns or items", ctxsel.ErrInvalidInput, uint8(opt.Whole))
	}
	if !finite(opt.Run) || (opt.Run < 0 && opt.Run != RunOff) || opt.Run > 1 {
		return nil, fmt.Errorf("%w: evidence: run=%v: want 0 ≤ run ≤ 1", ctxsel.ErrInvalidInput, opt.Run)
	}
	if !finite(opt.BroadRun) || (opt.BroadRun < 0 && opt.BroadRun != BroadRunOff) || opt.BroadRun > 1 {
		return nil, fmt.Errorf("%w: evidence: broad_run=%v: want 0 ≤ broad_run ≤ 1", ctxsel.ErrInvalidInput, opt.BroadRun)
	}
	if !finite(opt.BroadPrior) || (opt.BroadPrior < 0 && opt.BroadPrior != BroadPriorOff) || opt.BroadPrior > 1 {
		return nil, fmt.Errorf("%w: evidence: broad_prior=%v: want 0 ≤ broad_prior ≤ 1", ctxsel.ErrInvalidInput, opt.BroadPrior)
	}
	if opt.BroadReach < 0 || opt.BroadReach > MaxBroadReach {
		return nil, fmt.Errorf("%w: evidence: broad_reach=%d: want 1…%d", ctxsel.ErrInvalidInput, opt.BroadReach, MaxBroadReach)
	}
	if !finite(opt.BroadDecay) || (opt.BroadDecay < 0 && opt.BroadDecay != BroadDecayOff) || opt.BroadDecay > 1 {
		return nil, fmt.Errorf("%w: evidence: broad_decay=%v: want 0 ≤ broad_decay ≤ 1", ctxsel.ErrInvalidInput, opt.BroadDecay)
	}
	if !finite(opt.BroadPassage) || (opt.BroadPassage < 0 && opt.BroadPassage != BroadPassageOff) || opt.BroadPassage > MaxBroadPassage {
		return nil, fmt.Errorf("%w: evidence: broad_passage=%v: want 0 ≤ broad_passage ≤ %d", ctxsel.ErrInvalidInput, opt.BroadPassage, MaxBroadPassage)
	}
	if !finite(opt.BroadChunk) || (opt.BroadChunk < 0 && opt.BroadChunk != BroadChunkOff) || opt.BroadChunk > MaxBroadChunk {
		return nil, fmt.Errorf("%w: evidence: broad_chunk=%v: want 0 ≤ broad_chunk ≤ %d", ctxsel.ErrInvalidInput, opt.BroadChunk, MaxBroadChunk)
	}
	if !finite(opt.BroadStretch) || (opt.BroadStretch < 0 && opt.BroadStretch != BroadStretchOff) || opt.BroadStretch > 1 {
		return nil, fmt.Errorf("%w: evidence: broad_stretch=%v: want 0 ≤ broad_stretch ≤ 1", ctxsel.ErrInvalidInput, opt.BroadStretch)
	}
	if opt.Order != ctxsel.RankOrder && opt.Order != ctxsel.DocumentOrder {
		return nil, fmt.Errorf("%w: evidence: order %s: want rank or document", ctxsel.ErrInvalidInput, opt.Order)
	}
	s := &Selector{opt: opt, model: opt.Model, counter: opt.Counter, lexical: opt.Lexical, dense: opt.Dense}
	if s.model == nil {
		s.model = DefaultModel()
	} else if err := s.model.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ctxsel.ErrInvalidInput, err)
	}
	if s.counter == nil {
		c, err := token.New(token.Default)
		if err != nil {
			return nil, fmt.Errorf("evidence: %w", err)
		}
		s.counter = c
	}
	if s.lexical == nil {
		s.lexical = &score.BM25{}
	}
	if s.dense == nil {
		if opt.Embedder == nil {
			return nil, fmt.Errorf("%w: evidence: no embedder for the sentences' similarity (the weights were fitted with use-lite)", ctxsel.ErrInvalidInput)
		}
		s.dense = score.NewEmbedding("sentences", opt.Embedder, score.EmbeddingOptions{})
	}
	s.passes = opt.Passages
	if s.passes == 0 {
		s.passes = s.model.Passages
	}
	s.nbrs = opt.Neighbors
	if s.nbrs < 0 {
		s.nbrs = s.model.Neighbors
	}
	switch s.hop = opt.Hop; s.hop {
	case 0:
		s.hop = s.model.Hop
	case HopOff:
		s.hop = 0
	}
	if s.hop > 0 && s.model.Anchors < 1 {
		return nil, fmt.Errorf("%w: evidence: hop=%d: the model has no anchors for a second hop", ctxsel.ErrInvalidInput, s.hop)
	}
	s.floor = setting(opt.Floor, FloorOff, s.model.Floor)
	s.stop = setting(opt.Stop, StopOff, s.model.Stop)
	s.minExp = setting(opt.MinExpected, MinExpectedOff, s.model.MinExpected)
	var turnsBlend float64
	if sub := s.model.Kinds[KindTurns]; sub != nil {
		turnsBlend = sub.Blend
	}
	s.blend = setting(opt.Blend, BlendOff, turnsBlend)
	s.units = opt.Units | SentenceUnits
	if opt.Units == 0 {
		s.units = s.model.Units()
	}
	if s.units&^AllUnits != 0 {
		return nil, fmt.Errorf("%w: evidence: units %#x: want structures of %s", ctxsel.ErrInvalidInput, uint8(opt.Units), strings.Join(unitWords, ", "))
	}
	s.whole = opt.Whole &^ SentenceUnits
	if opt.Whole == 0 {
		s.whole = DefaultWhole
	}
	s.cols = s.model.columns()
	for kind, sub := range s.model.Kinds {
		if s.kindCols == nil {
			s.kindCols = map[string][]int{}
		}
		s.kindCols[kind] = sub.columns()
	}
	return s, nil
}

// setting is the value in use of an option: the model's for 0, none (0)
// for its off sentinel, else the option's own.
func setting(v, off, model float64) float64 {
	switch v {
	case 0:
		return model
	case off:
		return 0
	}
	return v
}

// appendSetting appends name=v for a setting the options give: 0 for its
// off sentinel, nothing for 0 (the default).
func appendSetting(parts []string, name string, v, off float64) []string {
	switch {
	case v == off:
		return append(parts, name+"=0")
	case v > 0:
		return append(parts, name+"="+strconv.FormatFloat(v, 'g', -1, 64))
	}
	return parts
}

// Name is the selector's spec: evidence:budget=N and every setting that
// differs from the defaults.
func (s *Selector) Name() string {
	parts := []string{"budget=" + strconv.Itoa(s.opt.Budget)}
	if s.opt.Passages != 0 {
		parts = append(parts, "passages="+strconv.Itoa(s.opt.Passages))
	}
	if s.opt.NoHeader {
		parts = append(parts, "header=0")
	}
	if s.opt.Neighbors >= 0 {
		parts = append(parts, "neighbors="+strconv.Itoa(s.opt.Neighbors))
	}
	switch {
	case s.opt.Hop == HopOff:
		parts = append(parts, "hop=0")
	case s.opt.Hop > 0:
		parts = append(parts, "hop="+strconv.Itoa(s.opt.Hop))
	}
	parts = appendSetting(parts, "floor", s.opt.Floor, FloorOff)
	parts = appendSetting(parts, "stop", s.opt.Stop, StopOff)
	parts = appendSetting(parts, "min_expected", s.opt.MinExpected, MinExpectedOff)
	parts = appendSetting(parts, "blend", s.opt.Blend, BlendOff)
	if s.opt.KeepRepeats {
		parts = append(parts, "dedup=0")
	}
	if s.opt.Units != 0 {
		parts = append(parts, "units="+s.units.String())
	}
	if s.opt.Whole != 0 {
		parts = append(parts, "whole="+wholeString(s.whole))
	}
	parts = appendSetting(parts, "run", s.opt.Run, RunOff)
	parts = appendSetting(parts, "broad_run", s.opt.BroadRun, BroadRunOff)
	parts = appendSetting(parts, "broad_prior", s.opt.BroadPrior, BroadPriorOff)
	if s.opt.BroadReach > 0 {
		parts = append(parts, "broad_reach="+strconv.Itoa(s.opt.BroadReach))
	}
	parts = appendSetting(parts, "broad_decay", s.opt.BroadDecay, BroadDecayOff)
	parts = appendSetting(parts, "broad_passage", s.opt.BroadPassage, BroadPassageOff)
	parts = appendSetting(parts, "broad_chunk", s.opt.BroadChunk, BroadChunkOff)
	parts = appendSetting(parts, "broad_stretch", s.opt.BroadStretch, BroadStretchOff)
	if s.opt.Order == ctxsel.DocumentOrder {
		parts = append(parts, "order=document")
	}
	if s.opt.Caps.MaxK > 0 {
		parts = append(parts, "max_k="+strconv.Itoa(s.opt.Caps.MaxK))
	}
	if s.opt.Caps.MaxTokens > 0 {
		parts = append(parts, "max_tokens="+strconv.Itoa(s.opt.Caps.MaxTokens))
	}
	return "evidence:" + strings.Join(parts, ",")
}

// run is the share a kept turn lends its neighbours (Options.Run):
// DefaultRun when the options do not say.
func (s *Selector) run() float64 { return setting(s.opt.Run, RunOff, DefaultRun) }

// broadRun is the share a kept turn lends its neighbours when the
// question is broad (Options.BroadRun): DefaultBroadRun when the options
// do not say.
func (s *Selector) broadRun() float64 {
	return setting(s.opt.BroadRun, BroadRunOff, DefaultBroadRun)
}

// broadPrior is the neighbourhood prior of a broad question's turns
// (Options.BroadPrior): DefaultBroadPrior when the options do not say.
func (s *Selector) broadPrior() float64 {
	return setting(s.opt.BroadPrior, BroadPriorOff, DefaultBroadPrior)
}

// broadReach is how far the neighbourhood prior of a broad question's
// turns reads (Options.BroadReach): DefaultBroadReach when the options do
// not say.
func (s *Selector) broadReach() int { return cmp.Or(s.opt.BroadReach, DefaultBroadReach) }

// broadDecay is how the neighbourhood prior's weights fall with distance
// (Options.BroadDecay): DefaultBroadDecay when the options do not say.
func (s *Selector) broadDecay() float64 {
	return setting(s.opt.BroadDecay, BroadDecayOff, DefaultBroadDecay)
}

// broadPassage is the passage prior of a broad question's turns
// (Options.BroadPassage): DefaultBroadPassage when the options do not say.
func (s *Selector) broadPassage() float64 {
	return setting(s.opt.BroadPassage, BroadPassageOff, DefaultBroadPassage)
}

// broadChunk is the chunk prior of a broad question's turns
// (Options.BroadChunk): DefaultBroadChunk when the options do not say.
func (s *Selector) broadChunk() float64 {
	return setting(s.opt.BroadChunk, BroadChunkOff, DefaultBroadChunk)
}

// broadStretch is the share of the budget a broad question's stretch of
// turns may take (Options.BroadStretch): DefaultBroadStretch when the
// options do not say.
func (s *Selector) broadStretch() float64 {
	return setting(s.opt.BroadStretch, BroadStretchOff, DefaultBroadStretch)
}

// broadDiffers says a broad question's turns are packed otherwise than
// the others' (broad_run, broad_prior, broad_passage, broad_chunk or
// broad_stretch in use).
func (s *Selector) broadDiffers() bool {
	return s.broadRun() != s.run() || s.broadPrior() > 0 || s.broadPassage() > 0 || s.broadChunk() > 0 || s.broadStretch() > 0
}

// String is Name: the canonical spec ctxsel.Resolve reports.
func (s *Selector) String() string { return s.Name() }

// Params are the settings in use, defaults included.
func (s *Selector) Params() map[string]float64 {
	h := 1.0
	if s.opt.NoHeader {
		h = 0
	}
	dedup := 1.0
	if s.opt.KeepRepeats {
		dedup = 0
	}
	ps := map[string]float64{"budget": float64(s.opt.Budget), "passages": float64(s.passes), "header": h,
		"neighbors": float64(s.nbrs), "cost_exponent": s.model.CostExponent, "hop": float64(s.hop), "floor": s.floor,
		"stop": s.stop, "min_expected": s.minExp, "dedup": dedup, "run": s.run()}
	if s.blend != 0 {
		ps["blend"] = s.blend // only where on: a model with no turns blend explains as before
	}
	if s.broadDiffers() { // only where on, likewise
		ps["broad_run"], ps["broad_prior"] = s.broadRun(), s.broadPrior()
		if r := s.broadReach(); r > 1 && s.broadPrior() > 0 { // only where it widens the prior
			ps["broad_reach"] = float64(r)
			if d := s.broadDecay(); d > 0 {
				ps["broad_decay"] = d
			}
		}
		if g := s.broadPassage(); g > 0 {
			ps["broad_passage"] = g
		}
		if g := s.broadChunk(); g > 0 {
			ps["broad_chunk"] = g
		}
		if st := s.broadStretch(); st > 0 {
			ps["broad_stretch"] = st
		}
	}
	return ps
}

// SelectTexts implements ctxsel.TextSelector: the best Passages passages
// of the curve are the candidates; after a strategy (q.Pool set, as
// ctxsel.Compose sets it) every passage the strategy kept is.
func (s *Selector) SelectTexts(ctx context.Context, q ctxsel.TextQuery) (ctxsel.Selection, error) {
	if err := s.check(ctx, q); err != nil {
		return ctxsel.Selection{}, err
	}
	q.Caps = tighter(s.opt.Caps, q.Caps)
	prep, err := s.prepare(ctx, q)
	if err != nil {
		return ctxsel.Selection{}, err
	}
	return s.selectFrom(ctx, q, prep)
}

// Prepared is a query's candidate sentences scored by a selector's model
// (Selector.Prepare): what several selectors that differ only in how they
// pack (budget, floor, neighbors, order, caps, the model's cost exponent)
// may share, to measure many packings of one scoring.
type Prepared struct {
	key      preparedKey
	question string
	ps       []passage
	ss       []sentence
	from     string
	set      int // first-pass candidates
	joined   int // passages the second hop added
	// repeats is the candidates' repeatIndex, built on first use (a
	// packing with dedup).
	repeats func() *repeatIndex
}

// preparedKey is what a scoring depends on: the learner (shared by copies
// of a model that differ only in packing settings), the candidates, the
// header and the hop.
type preparedKey struct {
	learner           any
	calibration       *Calibration // a copy with another map scores otherwise
	kinds             uintptr      // the models by kind (their map's identity; 0: none)
	blend             float64      // the turns-routed units' blend
	passes, hop, anch int
	header            bool
}

// ScoringKey is comparable and equal for selectors whose Prepare scorings
// are interchangeable (SelectPrepared takes one made by any of them): to
// group selectors that may share a scoring.
func (s *Selector) ScoringKey() any { return s.key() }

func (s *Selector) key() preparedKey {
	var learner any = s.model.Forest
	if s.model.Forest == nil {
		learner = &s.model.Weights[0]
	}
	var kinds uintptr
	if s.model.Kinds != nil {
		kinds = reflect.ValueOf(s.model.Kinds).Pointer()
	}
	return preparedKey{learner: learner, calibration: s.model.Calibration, kinds: kinds, blend: s.blend, passes: s.passes, hop: s.hop, anch: s.model.Anchors, header: !s.opt.NoHeader}
}

// Prepare scores the query's candidate sentences (both passes of the hop)
// without packing them: SelectPrepared packs. It keeps the probabilities,
// not the features (nor the terms they were read from).
func (s *Selector) Prepare(ctx context.Context, q ctxsel.TextQuery) (*Prepared, error) {
	if err := s.check(ctx, q); err != nil {
		return nil, err
	}
	p, err := s.prepare(ctx, q)
	if err != nil {
		return nil, err
	}
	for i := range p.ss {
		p.ss[i].x, p.ss[i].terms = nil, nil
	}
	return p, nil
}

// SelectPrepared is SelectTexts on a scoring Prepare made of the same
// query by a selector with the same model learner, candidates, header
// and hop (an error otherwise).
func (s *Selector) SelectPrepared(ctx context.Context, q ctxsel.TextQuery, p *Prepared) (ctxsel.Selection, error) {
	if err := s.check(ctx, q); err != nil {
		return ctxsel.Selection{}, err
	}
	if p == nil || p.key != s.key() || p.question != q.Question {
		return ctxsel.Selection{}, fmt.Errorf("evidence: %s: the prepared scoring is another selector's or another question's", s.Name())
	}
	q.Caps = tighter(s.opt.Caps, q.Caps)
	return s.selectFrom(ctx, q, p)
}

// prepare splits the candidates, scores their sentences, and runs the
// second hop.
func (s *Selector) prepare(ctx context.Context, q ctxsel.TextQuery) (*Prepared, error) {
	set, from := s.candidateSet(q)
	ps, ss, err := s.candidates(ctx, q, nil, nil, set, !s.opt.NoHeader)
	if err != nil {
		return nil, err
	}
	if len(ss) == 0 {
		return nil, noTextError{len(set)}
	}
	known := make(map[string]float64, len(ss))
	if err := s.features(ctx, q, ps, ss, known); err != nil {
		return nil, fmt.Errorf("evidence: %w", err)
	}
	prep := &Prepared{key: s.key(), question: q.Question, ps: ps, ss: ss, from: from, set: len(set)}
	if s.hop > 0 {
		if err := s.secondHop(ctx, q, set, prep, known); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("evidence: %w", err)
	}
	prep.repeats = sync.OnceValue(func() *repeatIndex { return newRepeatIndex(prep.ps, prep.ss) })
	return prep, nil
}

// secondHop marks the candidates the first pass's anchors name, adds up to
// s.hop passages of the query they name (split after the first pass's,
// which are not split again), and scores every sentence again.
func (s *Selector) secondHop(ctx context.Context, q ctxsel.TextQuery, set []int, prep *Prepared, known map[string]float64) error {
	links := hopLinks(q, prep.ps, prep.ss, anchors(prep.ps, prep.ss, s.model.Anchors))
	if len(links) == 0 {
		return nil
	}
	inSet := make(map[int]bool, len(set))
	for _, i := range set {
		inSet[i] = true
	}
	join := joinable(links, inSet, s.hop)
	added := make([]int, len(join))
	for i, l := range join {
		added[i] = l.input
	}
	ps, ss, err := s.candidates(ctx, q, prep.ps, prep.ss, added, !s.opt.NoHeader)
	if err != nil {
		return err
	}
	byInput := make(map[int]map[string]float64, len(links))
	for _, l := range links {
		byInput[l.input] = l.titles
	}
	for i := range ps {
		ps[i].links = byInput[ps[i].input]
		ps[i].joined = !inSet[ps[i].input]
	}
	// the units of routed passages (Model.Kinds) keep their first-pass
	// probabilities: their kind's model has no hop (and saw no hop's
	// features); the prose passages are the top model's to score again
	type scoredP struct{ p, raw float64 }
	var kept map[int]scoredP
	for i, x := range prep.ss {
		if prep.ps[x.passage].route != "" {
			if kept == nil {
				kept = map[int]scoredP{}
			}
			kept[i] = scoredP{x.p, x.raw}
		}
	}
	if err := s.features(ctx, q, ps, ss, known); err != nil {
		return fmt.Errorf("evidence: second hop: %w", err)
	}
	for i, v := range kept {
		ss[i].p, ss[i].raw = v.p, v.raw
	}
	prep.ps, prep.ss, prep.joined = ps, ss, len(join)
	return nil
}

// tighter combines the spec's caps with a query's: the smaller of the
// non-zero maxima, the query's minimum.
func tighter(own, q ctxsel.Caps) ctxsel.Caps {
	lower := func(a, b int) int {
		if a == 0 || (b != 0 && b < a) {
			return b
		}
		return a
	}
	return ctxsel.Caps{MinK: q.MinK, MaxK: lower(own.MaxK, q.MaxK), MaxTokens: lower(own.MaxTokens, q.MaxTokens)}
}

// candidateSet is the candidate passages (input indices, best first) and
// how the explanation calls them.
func (s *Selector) candidateSet(q ctxsel.TextQuery) ([]int, string) {
	if q.Pool != nil {
		return q.Curve.Top(q.Curve.Len()), fmt.Sprintf("the %d passages the strategy kept", q.Curve.Len())
	}
	set := q.Curve.Top(min(s.passes, q.Curve.Len()))
	return set, fmt.Sprintf("the best %d passages of %d", len(set), q.Curve.Len())
}

// shape is the curve a passage's rank and the spread of the scores are
// read from: the whole pool when q is a composition's (the model was
// fitted on whole curves), else q's own.
func shape(q ctxsel.TextQuery) (c *ctxsel.Curve, index func(i int) int) {
	if q.Pool != nil {
		return q.Pool, func(i int) int { return q.PoolIndex[i] }
	}
	return q.Curve, func(i int) int { return i }
}

func (s *Selector) check(ctx context.Context, q ctxsel.TextQuery) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("evidence: %w", err)
	}
	if err := q.Validate(); err != nil {
		return fmt.Errorf("evidence: %w", err)
	}
	if strings.TrimSpace(q.Question) == "" {
		return fmt.Errorf("%w: evidence: empty question", ctxsel.ErrInvalidInput)
	}
	if !utf8.ValidString(q.Question) {
		return fmt.Errorf("%w: evidence: the question is not valid UTF-8", ctxsel.ErrInvalidInput)
	}
	return nil
}

// noTextError is the error for candidates that hold no text.
type noTextError struct{ passages int }

func (e noTextError) Error() string {
	return fmt.Sprintf("%v: evidence: the %d candidate passages hold no text", ctxsel.ErrInvalidInput, e.passages)
}

func (e noTextError) Unwrap() error { return ctxsel.ErrInvalidInput }

func checkText(id, text string) error {
	if !utf8.ValidString(text) {
		return fmt.Errorf("%w: evidence: passage %q is not valid UTF-8", ctxsel.ErrInvalidInput, id)
	}
	return nil
}

// selectFrom packs a prepared scoring of q's candidates.
func (s *Selector) selectFrom(ctx context.Context, q ctxsel.TextQuery, prep *Prepared) (ctxsel.Selection, error) {
	if err := ctx.Err(); err != nil {
		return ctxsel.Selection{}, fmt.Errorf("evidence: %w", err)
	}
	budget := s.opt.Budget
	if q.Caps.MaxTokens > 0 && q.Caps.MaxTokens < budget {
		budget = q.Caps.MaxTokens
	}
	ps, ss := prep.ps, prep.ss
	set := packSettings{budget: budget, beta: s.model.CostExponent, floor: s.floor, stop: s.stop, neighbors: s.nbrs,
		maxOpen: q.Caps.MaxK, whole: s.whole, run: s.run()}
	broad := s.broadDiffers() && Broad(q.Question) && slices.ContainsFunc(ss, func(x sentence) bool { return x.kind == Turn })
	if broad {
		set.run, set.prior, set.reach, set.passage, set.stretch = s.broadRun(), s.broadPrior(), s.broadReach(), s.broadPassage(), s.broadStretch()
		set.decay, set.chunk = s.broadDecay(), s.broadChunk()
	}
	expected, gated := s.gate(ss)
	if gated {
		set.floor, set.stop = 0, 0
	}
	var repeats *repeatIndex
	if !s.opt.KeepRepeats {
		repeats = prep.repeats()
	}
	pk := pack(ps, ss, set, repeats, s.counter)
	if len(pk.order) == 0 && set.floor > 0 {
		// nothing reached the floor: the best that fits is sent all the same
		set.floor = 0
		pk = pack(ps, ss, set, repeats, s.counter)
		pk.floorWaived = true
	}
	if len(pk.order) == 0 {
		return ctxsel.Selection{}, tooLong(q, ps, ss, budget)
	}
	order := s.opt.Order
	if q.Order == ctxsel.DocumentOrder {
		order = ctxsel.DocumentOrder
	}
	var kept []int // candidate passages sent
	for pi := range ps {
		if pk.opened[pi] {
			kept = append(kept, pi)
		}
	}
	slices.SortFunc(kept, func(a, b int) int {
		if order == ctxsel.DocumentOrder {
			return ps[a].input - ps[b].input
		}
		return ps[a].rank - ps[b].rank
	})
	sel := ctxsel.Selection{K: len(kept)}
	oversized := 0
	for _, x := range ss {
		if x.tokens > budget {
			oversized++
		}
	}
	for _, pi := range kept {
		p := ps[pi]
		ev := ctxsel.Evidence{Spans: pk.spans[pi], Text: pk.texts[pi], Tokens: pk.tokens[pi], PassageTokens: q.Curve.TokensOf(p.input), KeptScore: 1}
		if p.header != "" {
			if p.units.Header != nil {
				h := *p.units.Header
				ev.Header = &h
			} else {
				ev.Title = p.header
			}
		}
		ev.Above = p.above
		repeats := 0
		for j := range p.n {
			x := ss[p.first+j]
			if pk.kept[p.first+j] {
				if x.kind != Context { // a context line is no evidence of its own
					ev.KeptScore = min(ev.KeptScore, x.p)
				}
			} else if pk.repeat != nil && pk.repeat[p.first+j] {
				repeats++
			} else if x.kind == Context || (pk.unsendable != nil && pk.unsendable[p.first+j]) {
				continue // a context line is no evidence of its own; a fragment is never sent from here
			} else if ev.DroppedScore == nil || x.p > *ev.DroppedScore {
				v := x.p
				ev.DroppedScore = &v
			}
		}
		ev.Sentences = p.n
		ev.Why = passageWhy(ev, p.rank, repeats, p.units.Kinds != nil, p.route)
		sel.Indices = append(sel.Indices, p.input)
		sel.IDs = append(sel.IDs, q.Curve.Candidate(p.input).ID)
		sel.Evidence = append(sel.Evidence, ev)
		sel.Tokens += ev.Tokens
	}
	sel.Explanation = s.explain(q, ps, ss, pk, set, broad, budget, prep, oversized, expected, gated)
	sel.Explanation.Tokens = sel.Tokens
	return sel, nil
}

// gate reports the expected evidence of the candidate sentences ss (the
// sum of their p) and whether it is under MinExpected, so that the floor
// and the stop do not cut: where the model expects less than that many
// gold units among all the candidates, it has not found the evidence
// (text unlike what it was fitted on, whose p are all small), and a
// floor or a share of Σp chosen where p are calibrated drops gold units
// by noise; the budget is filled by p instead. Where it is confident
// (prose like its training data) they cut as before.
func (s *Selector) gate(ss []sentence) (expected float64, gated bool) {
	if s.minExp == 0 || (s.floor == 0 && s.stop == 0) {
		return 0, false
	}
	for _, x := range ss {
		if x.kind != Context {
			expected += x.p
		}
	}
	return expected, expected < s.minExp
}

// passageWhy says what was kept of a passage and why, in words; repeats
// are its sentences another passage sends; units says the passage was cut
// into units of line structure (turns, rows, … and their context lines),
// not only sentences; route names the kind of text whose model scored it
// ("": the top model's, not said).
func passageWhy(ev ctxsel.Evidence, rank, repeats int, units bool, route string) string {
	what := "sentences"
	switch {
	case route != "":
		what = "units (context lines included; scored by the " + route + " model)"
	case units:
		what = "units (context lines included)"
	}
	kept := fmt.Sprintf("kept %d of %d %s of the passage ranked %d", len(ev.Spans), ev.Sentences, what, rank)
	switch {
	case repeats == 1:
		kept += "; 1 more is sent from another passage"
	case repeats > 1:
		kept += fmt.Sprintf("; %d more are sent from another passage", repeats)
	}
	if ev.DroppedScore == nil {
		return kept + fmt.Sprintf(" (all; weakest p=%.3f)", ev.KeptScore)
	}
	return kept + fmt.Sprintf(" (weakest kept p=%.3f, best left out p=%.3f)", ev.KeptScore, *ev.DroppedScore)
}

// tooLong is the error for a budget no sentence fits in.
func tooLong(q ctxsel.TextQuery, ps []passage, ss []sentence, budget int) error {
	// what a sentence needs of the budget to be sent alone
	alone := func(x sentence) int { return x.tokens + ps[x.passage].headerTokens + ps[x.passage].aboveTokens }
	short := 0
	for i, x := range ss {
		if i == 0 || alone(x) < alone(ss[short]) {
			short = i
		}
	}
	x := ss[short]
	p := ps[x.passage]
	what := fmt.Sprintf("its shortest sentence, in passage %q, takes %d tokens", q.Curve.Candidate(p.input).ID, x.tokens-joinerTokens)
	if p.n == 1 {
		what = fmt.Sprintf("the shortest, passage %q, is one sentence of %d tokens", q.Curve.Candidate(p.input).ID, x.tokens-joinerTokens)
	}
	switch {
	case p.aboveTokens > 0:
		what += fmt.Sprintf(" (%d more for its header and the lines above it)", p.headerTokens+p.aboveTokens)
	case p.headerTokens > 0:
		what += fmt.Sprintf(" (%d more for its header)", p.headerTokens)
	}
	return fmt.Errorf("%w: evidence: no sentence of the %d candidate passages fits in the budget of %d tokens: %s; raise the budget, send whole passages (a passage strategy), or split such text before selecting",
		ctxsel.ErrInvalidInput, len(ps), budget, what)
}

func (s *Selector) explain(q ctxsel.TextQuery, ps []passage, ss []sentence, pk *packing, set packSettings, broad bool, budget int, prep *Prepared, oversized int, expected float64, gated bool) ctxsel.Explanation {
	name, from, candidates := s.Name(), prep.from, prep.set
	candTokens := 0
	for _, p := range ps {
		candTokens += q.Curve.TokensOf(p.input)
	}
	nOpen := 0
	included := "headers and gap markers included"
	for pi, o := range pk.opened {
		if o {
			nOpen++
			if ps[pi].above != "" {
				included = "headers, the lines above passages and gap markers included"
			}
		}
	}
	priceOf := "score"
	switch s.model.CostExponent {
	case 0:
	case 1:
		priceOf = "score per token"
	default:
		priceOf = fmt.Sprintf("score per token^%g", s.model.CostExponent)
	}
	if prep.joined > 0 {
		from += fmt.Sprintf(", and %d the second hop added, named by the best first-pass sentences", prep.joined)
	}
	reason := fmt.Sprintf("kept %d of %d sentences from %d of %d candidate passages (%s; %d tokens): %d of %d budget tokens (%s); sentences chosen by %s",
		len(pk.order), len(ss), nOpen, candidates+prep.joined, from, candTokens, pk.total, budget, included, priceOf)
	switch {
	case gated:
		reason += fmt.Sprintf("; neither the floor nor the stop cut: the candidates' p sum to %.3f, under min_expected=%g (the model has not found the evidence)", expected, s.minExp)
	case pk.floorWaived:
		reason += fmt.Sprintf("; none scored p ≥ %g (the floor), so the best were sent without it", s.floor)
	case s.floor > 0:
		reason += fmt.Sprintf(" among those with p ≥ %g (the floor)", s.floor)
	}
	if g := wholeGroups(ps, ss, s.whole); slices.ContainsFunc(g, func(sp [2]int) bool { return sp[1]-sp[0] > 1 }) {
		reason += fmt.Sprintf("; the sentences of a %s chosen together, at the sum of their p (whole=%s)", strings.ReplaceAll(wholeString(s.whole), "|", " or "), wholeString(s.whole))
	}
	switch {
	case broad:
		settings, by := fmt.Sprintf("broad_run=%g, broad_prior=%g", set.run, set.prior), "the turns next to theirs"
		if set.prior > 0 && set.reach > 1 {
			settings += fmt.Sprintf(", broad_reach=%d", set.reach)
			by = fmt.Sprintf("the turns up to %d away from theirs", set.reach)
			if set.decay > 0 {
				settings += fmt.Sprintf(", broad_decay=%g", set.decay)
				by = fmt.Sprintf("the turns up to %d away from theirs (the nearer weighing more)", set.reach)
			}
		}
		if set.passage > 0 {
			settings += fmt.Sprintf(", broad_passage=%g", set.passage)
		}
		if set.chunk > 0 {
			settings += fmt.Sprintf(", broad_chunk=%g", set.chunk)
		}
		switch {
		case set.passage > 0 && set.chunk > 0:
			by += " and their passage's retrieval score and best turns' p"
		case set.passage > 0:
			by += " and their passage's retrieval score"
		case set.chunk > 0:
			by += " and their passage's best turns' p"
		}
		if set.stretch > 0 {
			settings += fmt.Sprintf(", broad_stretch=%g", set.stretch)
		}
		reason += fmt.Sprintf("; the question asks for a discussion or a summary, so its turns were packed as runs (%s)", settings)
		if pk.stretched > 0 {
			reason += fmt.Sprintf(": first the stretch of contiguous turns whose p sum highest within %d tokens (%d sentences)", int(set.stretch*float64(set.budget)), pk.stretched)
			if pk.lent > 0 {
				reason += fmt.Sprintf(", and %d of the kept sentences were valued above their own p by %s", pk.lent, by)
			}
		} else if pk.lent > 0 {
			reason += fmt.Sprintf(": %d of the kept sentences were valued above their own p by %s", pk.lent, by)
		}
	case pk.lent > 0:
		reason += fmt.Sprintf("; %d of them were lent value by a kept turn next to theirs (run=%g)", pk.lent, s.run())
	}
	if pk.stopped {
		reason += fmt.Sprintf("; stopped once the kept sentences held %.1f%% of the expected evidence (stop=%g: their p sum to %.3f of %.3f)",
			100*pk.keptP/pk.expected, s.stop, pk.keptP, pk.expected)
	}
	d := ctxsel.Decision{Kind: "evidence", Rank: len(pk.order) - 1, Value: float64(budget)}
	last := ss[pk.lastKept]
	d.Above = &last.p
	reason += fmt.Sprintf("; the last kept scored p=%.3f (%d tokens)", last.p, last.tokens-joinerTokens)
	if pk.firstDropped >= 0 {
		drop := ss[pk.firstDropped]
		d.Below = &drop.p
		reason += fmt.Sprintf(", the best left out p=%.3f (%d tokens)", drop.p, drop.tokens-joinerTokens)
		if drop.p < s.floor && !gated {
			reason += " (below the floor)"
		}
	}
	var guards []string
	if oversized > 0 {
		guards = append(guards, "oversized_sentence")
		reason += fmt.Sprintf("; %d sentences are longer than the budget and could not be sent", oversized)
	}
	if n := countTrue(pk.repeat); n > 0 {
		reason += fmt.Sprintf("; %d sentences not sent again: their text (or the whole sentence a chunk's edge cut) is sent from another passage of their document", n)
	}
	if pk.fixups > 0 {
		reason += fmt.Sprintf("; %d sentences given back when the exact count of the texts crossed the budget", pk.fixups)
	}
	var applied []string
	if q.Caps.MaxTokens > 0 && q.Caps.MaxTokens < s.opt.Budget {
		applied = append(applied, "max_tokens")
		reason += fmt.Sprintf("; max_tokens=%d lowered the budget of %d", q.Caps.MaxTokens, s.opt.Budget)
	}
	if q.Caps.MaxK > 0 && nOpen == q.Caps.MaxK {
		applied = append(applied, "max_k")
	}
	return ctxsel.Explanation{Strategy: name, Params: s.Params(), Caps: q.Caps, N: q.Curve.Len(), StrategyK: nOpen, K: nOpen,
		Decision: d, Reason: reason, CapsApplied: applied, Guards: guards, TotalTokens: q.Curve.TotalTokens()}
}

// SentenceFeatures is one candidate sentence as the model sees it: where it
// is and its features (FeatureNames order). For fitting a Model.
type SentenceFeatures struct {
	// Passage is the passage's input index (into TextQuery.Texts).
	Passage int
	// Span is the sentence's byte offsets into that passage.
	Span [2]int
	// Kind is its unit's kind (Split: a prose sentence, a turn's
	// sentence, a row, …); Context units have P 0 and are never gold.
	Kind     Kind
	Tokens   int
	Features []float64
	// P is the selector's model's probability for it.
	P float64
	// Route is the kind of text whose model scored it (Model.Kinds,
	// RouteOf); "": the top model.
	Route string
}

// Features returns the features of the sentences of the selector's
// candidate passages (the best Passages of the curve, and with the second
// hop the passages it added, scored again), passage by passage in rank
// order (added passages last), sentences in document order.
func (s *Selector) Features(ctx context.Context, q ctxsel.TextQuery) ([]SentenceFeatures, error) {
	if err := s.check(ctx, q); err != nil {
		return nil, err
	}
	q.Caps = tighter(s.opt.Caps, q.Caps)
	prep, err := s.prepare(ctx, q)
	if err != nil {
		if errors.As(err, new(noTextError)) {
			return nil, nil
		}
		return nil, err
	}
	out := make([]SentenceFeatures, len(prep.ss))
	for i, x := range prep.ss {
		out[i] = SentenceFeatures{Passage: prep.ps[x.passage].input, Span: x.span, Kind: x.kind, Tokens: x.tokens - joinerTokens, Features: x.x, P: x.p,
			Route: prep.ps[x.passage].route}
	}
	return out, nil
}

func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}
