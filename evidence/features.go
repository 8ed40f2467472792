package evidence

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/lexical"
)

// FeatureNames are a sentence's features, in order. The first 14 are
// version 1's (a version 1 model file reads those):
//
//	bm25_z            its BM25 over the candidate sentences, standardised over them
//	bm25_rel          its BM25 divided by the best sentence's (0 when none matches)
//	dense_z           its cosine similarity to the question, standardised
//	dense             its cosine similarity to the question
//	passage_z         its passage's score, standardised over the candidate passages
//	passage_gap       its passage's score less the best, in standard deviations of the whole curve
//	passage_rank      log(1 + its passage's rank in the curve)
//	first             1 for the first sentence after the header
//	position          log(1 + its index among the passage's sentences)
//	length            log(its tokens)
//	header_bm25_z     BM25 of its passage's header over the candidates' headers, standardised (0 without)
//	neighbour_bm25_z  the larger bm25_z of the sentences before and after it in its passage
//	bridge            the best match to the question (mean of bm25_z and dense_z) of a sentence
//	                  of another candidate passage that names its passage's header (a multi-hop link)
//	bridged           1 when such a sentence exists
//
// In a passage with sections inside (a chunk of several documents: a title
// line after a blank line, a Markdown heading), first, position, header_bm25_z,
// bridge, bridged, sentence_rank, passage_coverage, title_in_question,
// title_overlap, names_title, sentences, linked and anchor_p read the
// sentence's section and its heading where they read the passage and its
// title; a single paragraph is one section, so nothing changes for it.
// The rest:
//
//	dense_rel         its cosine similarity less the best candidate sentence's
//	sentence_rank     log(1 + its rank among its passage's sentences by bm25_z + dense_z)
//	coverage          the share of the question's terms it holds
//	coverage_idf      the same, each term weighted by its IDF over the candidate sentences
//	passage_coverage  coverage_idf of its whole passage, header included
//	title_in_question 1 when the question names its passage's title
//	title_overlap     the share of its passage's title's terms the question holds
//	date              1 when it holds a year or a month's name
//	date_question     1 when the question asks about time (when, born, died, earlier, …)
//	names_title       1 when it names another candidate passage's title
//	sentences         log(its passage's sentence count)
//	linked            1 when one of the second hop's anchors (the best first-pass
//	                  sentences of other passages) names its passage's title
//	anchor_p          the first-pass probability of the best such anchor (0 without)
//	hop_joined        1 when its passage joined the candidates by the second hop
//	unit_turn         1 for a sentence of a conversation's turn, a subtitle cue or a log line
//	unit_row          1 for a table's row
//	unit_item         1 for a sentence of a list item
//	unit_code         1 for a fenced code block
//	context_bm25_z    the best bm25_z of the context lines it is sent with (its turn's
//	                  "[time] Name:", its table's header, its heading path; 0 without)
//
// The turn-neighbour features read a turn's sentence with its neighbours
// in the conversation: in dialogue the answer is often the reply to (or the
// line before) the line that matches the question, and in a meeting the
// gold is a run of turns. A turn's match is the best, over its sentences,
// of the mean of bm25_z and dense_z; the neighbours are the turns next to
// it in its passage (as run= reads them: over context lines, not across a
// chunk's edge), 0 where there is none:
//
//	prev_turn_match      the match of the turn before its turn
//	next_turn_match      the match of the turn after its turn
//	turn_run             the mean match of the (up to four) turns within two of its turn
//	speaker_in_question  1 when the question names its turn's speaker (a word of the
//	                     turn's "Name:" prefix, times and brackets left out, or
//	                     of a Discord header's name)
//
// The unit and turn-neighbour features are 0 for prose (Split's
// sentences) and for every unit outside a turn: a model that does not name
// them (the embedded top model) scores prose as before.
var FeatureNames = []string{
	"bm25_z", "bm25_rel", "dense_z", "dense", "passage_z", "passage_gap", "passage_rank",
	"first", "position", "length", "header_bm25_z", "neighbour_bm25_z", "bridge", "bridged",
	"dense_rel", "sentence_rank", "coverage", "coverage_idf", "passage_coverage",
	"title_in_question", "title_overlap", "date", "date_question", "names_title", "sentences",
	"linked", "anchor_p", "hop_joined",
	"unit_turn", "unit_row", "unit_item", "unit_code", "context_bm25_z",
	"prev_turn_match", "next_turn_match", "turn_run", "speaker_in_question",
}

// V1Features are the features of a version 1 model: the first 14.
var V1Features = FeatureNames[:14]

// Indices of the features the second hop sets after the first pass.
const (
	featLinked  = 25
	featAnchorP = 26
	featJoined  = 27
)

// passage is one candidate passage split into units.
type passage struct {
	input  int // index into TextQuery.Texts
	rank   int // rank in the curve (0 = best)
	score  float64
	text   string
	units  Units
	header string // "" when none is sent
	// above are the lines of its document above it that it needs
	// (TextQuery.Above), sent after the header; "" when none is sent.
	above string
	// route is the kind of text whose model scores its units (RouteOf,
	// when the selector's model has a model for it; "": the top model).
	route string
	// title is its header's text, sent or not ("" when it has none): a
	// title line of its own, else the one the query's Headers give.
	title string
	// headerTokens are the tokens of the header and the line break after it.
	headerTokens int
	// aboveTokens are those of above and the line break after it: not
	// charged while packing, but no pick opens the passage that they
	// leave no room for
	aboveTokens int
	first, n    int // its sentences are sents[first : first+n]
	// The second hop: joined says it joined the candidates by the hop;
	// links maps each of its titles (titleKey: its own, its sections')
	// that an anchor names to the best such anchor's first-pass
	// probability.
	joined bool
	links  map[string]float64
}

// sentence is one evidence unit with its features and probability.
type sentence struct {
	passage int // index into the candidate passages
	index   int // among its passage's sentences
	span    [2]int
	text    string
	// tokens estimates what the sentence adds to its passage's text: its
	// own tokens and the joiner before it.
	tokens int
	terms  []string // lexical.Terms of text, for both passes' features
	kind   Kind
	// needs are the units (indices into the candidates' sentences) sent
	// with it: its context line and heading path (Units.Needs).
	needs []int
	x     []float64
	// p is the model's probability (calibrated when the model has a map),
	// what packing, the floor and the stop read; raw is the learner's own,
	// what the second hop reads (its features were learnt on it).
	p, raw float64
}

// candidates splits the candidate passages (input indices, best first) into
// units and returns them with their sentences in order, after ps and ss
// (passages split before: the second hop adds to the first pass's).
func (s *Selector) candidates(ctx context.Context, q ctxsel.TextQuery, ps []passage, ss []sentence, set []int, header bool) ([]passage, []sentence, error) {
	// A passage's rank is read from the whole curve (the pool when the
	// query is a composition's), as the model was fitted.
	whole, at := shape(q)
	rank := make(map[int]int, whole.Len())
	for r, idx := range whole.Top(whole.Len()) {
		rank[idx] = r
	}
	aboves, err := q.AboveFor(ctx, set) // read for these passages only
	if err != nil {
		return nil, nil, fmt.Errorf("evidence: %w", err)
	}
	for k, idx := range set {
		text := q.Texts[idx]
		if err := checkText(q.Curve.Candidate(idx).ID, text); err != nil {
			return nil, nil, err
		}
		var above string
		if aboves != nil {
			if above = aboves[k]; !utf8.ValidString(above) {
				return nil, nil, fmt.Errorf("%w: evidence: the lines above passage %q are not valid UTF-8", ctxsel.ErrInvalidInput, q.Curve.Candidate(idx).ID)
			}
		}
		u := splitUnits(text, s.units, tableAbove(above, text))
		if len(u.Sentences) == 0 {
			continue // empty: nothing to send
		}
		p := passage{input: idx, rank: rank[at(idx)], score: q.Curve.Candidate(idx).Score, text: text, units: u, first: len(ss), n: len(u.Sentences)}
		if kind := RouteOf(u); s.model.Kinds[kind] != nil {
			p.route = kind
		}
		if u.Header != nil {
			p.title = text[u.Header[0]:u.Header[1]]
		} else if q.Headers != nil {
			p.title = headerText(q.Headers[idx])
		}
		if p.title != "" && header {
			p.header = p.title
			p.headerTokens = s.counter.Count(p.header) + 1
		}
		if header {
			// not in headerTokens: packing values a passage's units as
			// before, where charging its lines above to its first unit
			// kept a mid-document chunk shut whose lines above are 40
			// tokens (the manual of docs/ask.md, its best-ranked chunk);
			// the exact count of the text sent includes them, and units
			// are given back until it fits
			p.above = aboveText(above)
			if p.above != "" {
				p.aboveTokens = s.counter.Count(p.above) + 1
			}
		}
		for j, sp := range u.Sentences {
			t := text[sp[0]:sp[1]]
			x := sentence{passage: len(ps), index: j, span: sp, text: t, tokens: s.counter.Count(t) + joinerTokens, terms: lexical.Terms(t), kind: u.Kind(j)}
			if u.Needs != nil {
				for _, k := range u.Needs[j] {
					x.needs = append(x.needs, p.first+k)
				}
			}
			ss = append(ss, x)
		}
		ps = append(ps, p)
	}
	return ps, ss, nil
}

// joinerTokens is what the joiner before a sentence (a space, a line break
// or the gap marker " … ") is assumed to cost while packing; exact counts
// of the texts as sent settle the budget after.
const joinerTokens = 1

// denseScores is every sentence's similarity to the question: the one
// place the dense feature is computed (sentences embedded in one batched
// call through the selector's scorer, normally use-lite behind the
// embedding cache, or read from the vectors an index stored:
// sentenceSimilarity). known holds scores of this question's sentences
// computed before (the first pass's, for the second): only the others are
// scored, and known gains them.
func (s *Selector) denseScores(ctx context.Context, q ctxsel.TextQuery, ps []passage, texts []string, known map[string]float64) ([]float64, error) {
	out := make([]float64, len(texts))
	var todo []int // indices into texts not scored yet
	for i, t := range texts {
		if v, ok := known[t]; ok {
			out[i] = v
		} else {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return out, nil
	}
	got, err := s.sentenceSimilarity(ctx, q, ps, texts, todo)
	if err != nil {
		return nil, err
	}
	if len(got) != len(todo) {
		return nil, fmt.Errorf("%d dense scores for %d sentences", len(got), len(todo))
	}
	for j, i := range todo {
		out[i] = got[j]
		known[texts[i]] = got[j]
	}
	return out, nil
}

// lexicalScores is BM25 of texts (their terms given) against the question
// over those texts: lexical.Default unless the caller chose a scorer.
func (s *Selector) lexicalScores(ctx context.Context, question string, texts []string, terms [][]string) ([]float64, error) {
	if s.opt.Lexical == nil {
		return lexical.Default.Score(lexical.QueryTerms(question), terms), nil
	}
	return s.lexical.Score(ctx, question, texts)
}

// section is a run of a passage's sentences under one title: the
// passage's own (its first section) or a heading inside it (a chunk of
// several documents or sections). A single paragraph is one section.
type section struct {
	passage    int
	title, key string // key: titleKey, "" when too short to look for
	start, end int    // its sentences ss[start:end], its heading first
	heading    bool   // ss[start] is its heading
	anchorP    float64
}

// sections splits the candidates' sentences into sections; secOf[i] is
// sentence i's.
func sections(ps []passage, ss []sentence) (secs []section, secOf []int) {
	secOf = make([]int, len(ss))
	for pi, p := range ps {
		cur := section{passage: pi, title: p.title, start: p.first}
		for j := range p.n {
			g := p.first + j
			if p.units.Headings != nil && p.units.Headings[j] {
				cur.end = g
				secs = append(secs, cur)
				cur = section{passage: pi, title: ss[g].text, start: g, heading: true}
			}
			secOf[g] = len(secs)
		}
		cur.end = p.first + p.n
		secs = append(secs, cur)
	}
	for i := range secs {
		if k := titleKey(secs[i].title); utf8.RuneCountInString(k) >= minTitleKey {
			secs[i].key = k
		}
		if p := ps[secs[i].passage]; p.links != nil {
			secs[i].anchorP = p.links[secs[i].key]
		}
	}
	return secs, secOf
}

// features fills every sentence's features and probability; dense holds
// the sentences' similarities known so far (denseScores). Title, position
// and coverage features are read per section: in a single paragraph, its
// passage.
func (s *Selector) features(ctx context.Context, q ctxsel.TextQuery, ps []passage, ss []sentence, known map[string]float64) error {
	texts := make([]string, len(ss))
	terms := make([][]string, len(ss))
	for i, x := range ss {
		texts[i] = x.text
		terms[i] = x.terms
	}
	bm, err := s.lexicalScores(ctx, q.Question, texts, terms)
	if err != nil {
		return fmt.Errorf("sentence BM25: %w", err)
	}
	dense, err := s.denseScores(ctx, q, ps, texts, known)
	if err != nil {
		return fmt.Errorf("sentence similarity: %w", err)
	}
	if len(bm) != len(ss) || len(dense) != len(ss) {
		return fmt.Errorf("sentence scores: %d lexical and %d dense for %d sentences", len(bm), len(dense), len(ss))
	}
	secs, secOf := sections(ps, ss)
	headers := make([]string, len(secs))
	headerTerms := make([][]string, len(secs))
	for i, sc := range secs {
		headers[i] = sc.title
		headerTerms[i] = lexical.Terms(sc.title)
	}
	hb, err := s.lexicalScores(ctx, q.Question, headers, headerTerms)
	if err != nil {
		return fmt.Errorf("header BM25: %w", err)
	}
	lower := make([]string, len(ss))
	for i, x := range ss {
		lower[i] = strings.ToLower(x.text)
	}
	bmZ, denseZ, headerZ := zscores(bm), zscores(dense), zscores(hb)
	bridge, bridged := bridges(secs, secOf, lower, bmZ, denseZ)
	lq := newQuestionTerms(q.Question, terms)
	lowerQ := strings.ToLower(q.Question)
	dateQ := 0.0
	if asksTime(lq.terms) {
		dateQ = 1
	}

	best, bestDense := 0.0, math.Inf(-1)
	for i := range bm {
		best = max(best, bm[i])
		bestDense = max(bestDense, dense[i])
	}
	pscores := make([]float64, len(ps))
	for i, p := range ps {
		pscores[i] = p.score
	}
	passZ := zscores(pscores)
	// The gap to the best and the spread are the whole curve's (the pool's
	// when the query is a composition's): the model was fitted on whole
	// curves, where the candidates hold the best passage.
	whole, _ := shape(q)
	top := whole.Candidate(whole.Top(1)[0]).Score
	_, curveSD := meanSD(whole.Scores())

	// per section: the sentences' rank by bm25_z + dense_z, the coverage
	// of the whole section, its title against the question
	within := make([]float64, len(ss))
	secCov := make([]float64, len(secs))
	titleInQ, titleOverlap := make([]float64, len(secs)), make([]float64, len(secs))
	for si, sc := range secs {
		for a := sc.start; a < sc.end; a++ {
			r := 0
			for b := sc.start; b < sc.end; b++ {
				if bmZ[b]+denseZ[b] > bmZ[a]+denseZ[a] || (bmZ[b]+denseZ[b] == bmZ[a]+denseZ[a] && b < a) {
					r++
				}
			}
			within[a] = math.Log1p(float64(r))
		}
		all := append([]string(nil), headerTerms[si]...)
		for a := sc.start; a < sc.end; a++ {
			all = append(all, terms[a]...)
		}
		secCov[si] = lq.coverageIDF(all)
		if sc.key != "" && containsWord(lowerQ, sc.key) {
			titleInQ[si] = 1
		}
		titleOverlap[si] = lq.overlap(headerTerms[si])
	}

	nt := turnNeighbours(ps, ss, bmZ, denseZ, lowerQ)
	textKinds := passageKinds(s.model, ps)
	for i := range ss {
		x := &ss[i]
		p := ps[x.passage]
		si := secOf[i]
		sc := secs[si]
		rel := 0.0
		if best > 0 {
			rel = bm[i] / best
		}
		gap := 0.0
		if curveSD > 0 {
			gap = (p.score - top) / curveSD
		}
		// its place among its section's sentences (a heading is not one)
		local, count := i-sc.start, sc.end-sc.start
		if sc.heading {
			local, count = i-sc.start-1, count-1
		}
		first := 0.0
		if local == 0 {
			first = 1
		}
		nb := math.Inf(-1)
		if x.index > 0 {
			nb = bmZ[i-1]
		}
		if x.index < p.n-1 {
			nb = max(nb, bmZ[i+1])
		}
		if math.IsInf(nb, -1) {
			nb = 0
		}
		hz := 0.0
		if sc.title != "" {
			hz = headerZ[si]
		}
		date := 0.0
		if holdsDate(x.text) {
			date = 1
		}
		names := 0.0
		for sj, o := range secs {
			if sj != si && o.key != "" && containsWord(lower[i], o.key) {
				names = 1
				break
			}
		}
		linked, joined := 0.0, 0.0
		if sc.anchorP > 0 {
			linked = 1
		}
		if p.joined {
			joined = 1
		}
		tPrev, tNext, tRun, tSpeaker := nt.at(i)
		x.x = []float64{
			bmZ[i], rel, denseZ[i], dense[i], passZ[x.passage], gap, math.Log1p(float64(p.rank)),
			first, math.Log1p(float64(max(local, 0))), math.Log(float64(max(1, x.tokens-joinerTokens))), hz, nb,
			bridge[si], bridged[si],
			dense[i] - bestDense, within[i], lq.coverage(terms[i]), lq.coverageIDF(terms[i]), secCov[si],
			titleInQ[si], titleOverlap[si], date, dateQ, names, math.Log(float64(max(1, count))),
			linked, sc.anchorP, joined,
			unitIs(x.kind, Turn), unitIs(x.kind, Row), unitIs(x.kind, Item), unitIs(x.kind, Code), contextZ(x.needs, bmZ),
			tPrev, tNext, tRun, tSpeaker,
		}
		textKind := ""
		if textKinds != nil {
			textKind = textKinds[x.passage]
		}
		if sub := s.model.Kinds[p.route]; sub != nil {
			// a routed passage: its kind's learner and map, then the top map
			x.raw = sub.learnerProb(x.x, s.kindCols[p.route])
			x.p = s.model.routedProb(sub, x.raw, x.x, s.cols, textKind, s.blendOf(p.route))
		} else {
			x.raw = s.model.learnerProb(x.x, s.cols)
			x.p = s.model.calibrated(x.raw, textKind)
		}
		if x.kind == Context {
			x.p, x.raw = 0, 0 // sent only with a unit that needs it, never as evidence nor a hop's anchor
		}
	}
	return nil
}

// blendOf is the top model's weight in the scores of the units routed to
// kind (Options.Blend for turns, else the kind's model's Blend).
func (s *Selector) blendOf(kind string) float64 {
	if kind == KindTurns {
		return s.blend
	}
	if sub := s.model.Kinds[kind]; sub != nil {
		return sub.Blend
	}
	return 0
}

func unitIs(k, want Kind) float64 {
	if k == want {
		return 1
	}
	return 0
}

// contextZ is the best bm25_z of the units needs names (0 without).
func contextZ(needs []int, bmZ []float64) float64 {
	if len(needs) == 0 {
		return 0
	}
	best := math.Inf(-1)
	for _, k := range needs {
		best = max(best, bmZ[k])
	}
	return best
}

// turnFeatures are the turn-neighbour features of each candidate sentence
// (FeatureNames), 0 for a sentence outside a turn; all nil when no
// candidate is a turn's (prose allocates nothing for them).
type turnFeatures struct{ prev, next, run, speaker []float64 }

// at is sentence i's turn-neighbour features.
func (f turnFeatures) at(i int) (prev, next, run, speaker float64) {
	if f.prev == nil {
		return 0, 0, 0, 0
	}
	return f.prev[i], f.next[i], f.run[i], f.speaker[i]
}

// turnReach is how many turns on each side turn_run reads.
const turnReach = 2

// turnNeighbours computes the turn-neighbour features: each turn's match
// (the best mean of bm25_z and dense_z of its sentences), then, for every
// sentence of a turn, its neighbouring turns' matches and whether the
// question (lowerQ, lower-cased) names its speaker.
func turnNeighbours(ps []passage, ss []sentence, bmZ, denseZ []float64, lowerQ string) turnFeatures {
	n := len(ss)
	if !slices.ContainsFunc(ss, func(x sentence) bool { return x.kind == Turn }) {
		return turnFeatures{}
	}
	f := turnFeatures{prev: make([]float64, n), next: make([]float64, n), run: make([]float64, n), speaker: make([]float64, n)}
	type turn struct {
		span    [2]int
		match   float64
		speaker float64
	}
	ct := turnsAmong(ps, ss)
	turns := make([]turn, len(ct.spans))
	for ti, span := range ct.spans {
		t := turn{span: span, match: math.Inf(-1)}
		for j := span[0]; j < span[1]; j++ {
			t.match = max(t.match, (bmZ[j]+denseZ[j])/2)
		}
		if speakerNamed(ss, ss[span[0]].needs, lowerQ) {
			t.speaker = 1
		}
		turns[ti] = t
	}
	nbrs := ct.nbrs
	for ti, t := range turns {
		prev, next := nbrs[ti][0], nbrs[ti][1]
		var pm, nm, sum float64
		count := 0
		for k := range 2 {
			at := ti
			for d := 1; d <= turnReach; d++ {
				if at = nbrs[at][k]; at < 0 {
					break
				}
				sum += turns[at].match
				count++
			}
		}
		if prev >= 0 {
			pm = turns[prev].match
		}
		if next >= 0 {
			nm = turns[next].match
		}
		run := 0.0
		if count > 0 {
			run = sum / float64(count)
		}
		for j := t.span[0]; j < t.span[1]; j++ {
			f.prev[j], f.next[j], f.run[j], f.speaker[j] = pm, nm, run, t.speaker
		}
	}
	return f
}

// speakerNamed reports whether the question (lower-cased) names a word of
// the speaker in the turn prefix among needs (a Context unit): the
// prefix's words of two letters or more that start with a letter, left of
// its last colon, outside brackets and parentheses (times, dates); of a
// Discord header, its name's (not "Today at 9:41 PM"); of an IRC client's
// "<nick>", the nick's.
func speakerNamed(ss []sentence, needs []int, lowerQ string) bool {
	for _, k := range needs {
		if ss[k].kind != Context {
			continue
		}
		name := ss[k].text
		if m := discordName(name); m != "" {
			name = m
		} else if m := ircNickName(name); m != "" {
			name = m
		} else if c := strings.LastIndexByte(name, ':'); c >= 0 {
			name = name[:c]
		}
		var b strings.Builder // the name, bracketed parts blanked
		depth := 0
		for _, r := range name {
			switch {
			case r == '[' || r == '(':
				depth++
				r = ' '
			case r == ']' || r == ')':
				depth = max(0, depth-1)
				r = ' '
			case depth > 0:
				r = ' '
			}
			b.WriteRune(r)
		}
		words := strings.FieldsFunc(b.String(), func(r rune) bool {
			return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '-')
		})
		for _, w := range words {
			r, _ := utf8.DecodeRuneInString(w)
			if utf8.RuneCountInString(w) >= 2 && unicode.IsLetter(r) && containsWord(lowerQ, strings.ToLower(w)) {
				return true
			}
		}
	}
	return false
}

// ircNickName is the nick of an IRC client's prefix ("alice" of "[10:02]
// <@alice>"); "" when the prefix names none that way.
func ircNickName(prefix string) string {
	if !strings.HasSuffix(prefix, ">") {
		return ""
	}
	i := strings.LastIndexByte(prefix, '<')
	if i < 0 {
		return ""
	}
	return strings.TrimLeft(prefix[i+1:len(prefix)-1], "@+%~&")
}

// minTitleKey is the shortest title (in runes) looked for in a text: a
// shorter one names too much by chance.
const minTitleKey = 3

// questionTerms are the question's distinct terms with their IDF over the
// candidate sentences.
type questionTerms struct {
	terms []string
	idf   map[string]float64
	total float64 // Σ idf
}

func newQuestionTerms(question string, sentTerms [][]string) questionTerms {
	qt := questionTerms{terms: lexical.QueryTerms(question), idf: map[string]float64{}}
	df := make(map[string]int, len(qt.terms))
	for _, t := range qt.terms {
		df[t] = 0
	}
	seen := map[string]bool{}
	for _, ts := range sentTerms {
		clear(seen)
		for _, t := range ts {
			if _, ok := df[t]; ok && !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
	}
	for _, t := range qt.terms {
		v := lexical.IDF(len(sentTerms), df[t])
		qt.idf[t] = v
		qt.total += v
	}
	return qt
}

// coverage is the share of the question's terms among terms.
func (q questionTerms) coverage(terms []string) float64 {
	if len(q.terms) == 0 {
		return 0
	}
	n := 0
	for _, t := range q.terms {
		if slices.Contains(terms, t) {
			n++
		}
	}
	return float64(n) / float64(len(q.terms))
}

// coverageIDF is coverage with each question term weighted by its IDF.
func (q questionTerms) coverageIDF(terms []string) float64 {
	if q.total == 0 {
		return 0
	}
	s := 0.0
	for _, t := range q.terms {
		if slices.Contains(terms, t) {
			s += q.idf[t]
		}
	}
	return s / q.total
}

// overlap is the share of the distinct terms of ts that the question holds.
func (q questionTerms) overlap(ts []string) float64 {
	if len(ts) == 0 {
		return 0
	}
	n, d := 0, 0
	for i, t := range ts {
		if slices.Contains(ts[:i], t) {
			continue
		}
		d++
		if slices.Contains(q.terms, t) {
			n++
		}
	}
	return float64(n) / float64(d)
}

// timeWords are question terms that ask about a date.
var timeWords = map[string]bool{
	"when": true, "year": true, "years": true, "born": true, "died": true, "die": true, "date": true,
	"earlier": true, "later": true, "older": true, "younger": true, "oldest": true, "youngest": true,
	"first": true, "age": true, "century": true, "founded": true, "established": true, "released": true,
	"old": true, "long": true,
}

func asksTime(terms []string) bool {
	for _, t := range terms {
		if timeWords[t] {
			return true
		}
	}
	return false
}

var months = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}

// holdsDate reports a year (a run of four digits from 1000 to 2099) or a
// month's name (capitalised) in text.
func holdsDate(text string) bool {
	run := 0
	for i := 0; i <= len(text); i++ {
		if i < len(text) && text[i] >= '0' && text[i] <= '9' {
			run++
			continue
		}
		if run == 4 && (text[i-4] == '1' || (text[i-4] == '2' && text[i-3] == '0')) {
			return true
		}
		run = 0
	}
	for _, m := range months {
		if containsWord(text, m) {
			return true
		}
	}
	return false
}

// containsWord reports whether text holds phrase with no letter or digit
// right before or after it.
func containsWord(text, phrase string) bool {
	if phrase == "" {
		return false
	}
	for from := 0; from < len(text); {
		i := strings.Index(text[from:], phrase)
		if i < 0 {
			return false
		}
		i += from
		j := i + len(phrase)
		before, _ := utf8.DecodeLastRuneInString(text[:i])
		after, _ := utf8.DecodeRuneInString(text[j:])
		if (i == 0 || !isWordRune(before)) && (j == len(text) || !isWordRune(after)) {
			return true
		}
		_, w := utf8.DecodeRuneInString(text[i:])
		from = i + w
	}
	return false
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// bridges finds multi-hop links: a section whose title key (less a
// trailing parenthesis: "Ed Wood (film)" → "ed wood") is named in a
// sentence (lower: the sentences lower-cased) of another section. bridge
// is the best such mention's match to the question (the mean of its bm25_z
// and dense_z), bridged 1 when there is one; both 0 otherwise.
func bridges(secs []section, secOf []int, lower []string, bmZ, denseZ []float64) (bridge, bridged []float64) {
	bridge, bridged = make([]float64, len(secs)), make([]float64, len(secs))
	for si, sc := range secs {
		if sc.key == "" {
			continue
		}
		best := math.Inf(-1)
		for i := range lower {
			if secOf[i] != si && strings.Contains(lower[i], sc.key) {
				best = max(best, (bmZ[i]+denseZ[i])/2)
			}
		}
		if !math.IsInf(best, -1) {
			bridge[si], bridged[si] = best, 1
		}
	}
	return bridge, bridged
}

// titleKey is a header as a name to look for: lower case, without Markdown
// '#' marks or a trailing parenthesis.
func titleKey(h string) string {
	h = strings.TrimSpace(strings.TrimLeft(h, "# "))
	if i := strings.LastIndex(h, " ("); i > 0 && strings.HasSuffix(h, ")") {
		h = h[:i]
	}
	return strings.ToLower(strings.TrimSpace(h))
}

// zscores standardises v (all 0 when it does not vary).
func zscores(v []float64) []float64 {
	m, sd := meanSD(v)
	out := make([]float64, len(v))
	if sd == 0 {
		return out
	}
	for i, x := range v {
		out[i] = (x - m) / sd
	}
	return out
}

func meanSD(v []float64) (float64, float64) {
	if len(v) == 0 {
		return 0, 0
	}
	m := 0.0
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	s := 0.0
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return m, math.Sqrt(s / float64(len(v)))
}
