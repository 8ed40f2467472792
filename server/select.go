package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"mime"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/internal/vecmath"
)

// readBody reads a JSON request body of at most Config.MaxBodyBytes. A
// declared length over the limit is refused before a byte of the body is
// read; an undeclared (chunked) one is cut off at the limit. Every buffer it
// allocates is reserved from the server-wide budget (max_inflight_body_bytes)
// and held until the handler returns (wrap gives it back); a request over
// the budget gets 503.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) (string, error) {
	// Every route is wrapped, so w is the wrapper's; were it not, the body
	// would go unaccounted rather than never given back.
	sw, _ := w.(*statusWriter)
	if ct := r.Header.Get("Content-Type"); ct != "" {
		// Requiring JSON also keeps browsers on other sites from posting
		// here with a plain form: a JSON content type needs CORS approval.
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return "", &fieldError{Status: http.StatusUnsupportedMediaType, Field: "Content-Type",
				Msg: fmt.Sprintf("%q: send application/json", ct)}
		}
	}
	limit := s.cfg.MaxBodyBytes
	tooLarge := &fieldError{Status: http.StatusRequestEntityTooLarge, Field: "",
		Msg: fmt.Sprintf("request body over the limit of %d bytes", limit)}
	if r.ContentLength > limit {
		return "", tooLarge
	}
	alloc := func(n int) bool {
		if sw == nil {
			return true
		}
		if !s.bodies.take(int64(n)) {
			return false
		}
		sw.bodyHeld += int64(n)
		return true
	}
	busy := func() error {
		w.Header().Set("Retry-After", "1")
		// Without this, net/http would read on (up to 256 KB) to keep
		// the connection, waiting on a client that may be sending
		// slowly: the refusal is to be quick.
		w.Header().Set("Connection", "close")
		return &fieldError{Status: http.StatusServiceUnavailable, Field: "",
			Msg: "busy: request bodies in flight hold the server's memory budget for them (max_inflight_body_bytes); retry shortly"}
	}
	rd := http.MaxBytesReader(w, r.Body, limit)
	// Grow with what arrives rather than trusting the declared length:
	// a client that announces 16 MB and sends a byte a second must not get
	// 16 MB reserved. net/http ends the body at Content-Length, so reading
	// stops there without a last read for EOF.
	want := r.ContentLength // -1 when unknown (chunked)
	size := max(4096, min(want, 1<<20))
	if !alloc(int(size)) {
		return "", busy()
	}
	buf := make([]byte, 0, size)
	for want < 0 || int64(len(buf)) < want {
		if len(buf) == cap(buf) {
			ceiling := int(limit) + 1
			if want >= 0 {
				ceiling = int(want)
			}
			// The old buffer stays reserved too: it is garbage, but
			// garbage is memory until the collector runs.
			grow := min(cap(buf), ceiling-len(buf))
			if !alloc(len(buf) + grow) {
				return "", busy()
			}
			buf = slices.Grow(buf, grow)
		}
		n, err := rd.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			if want >= 0 && int64(len(buf)) < want {
				return "", badField("", "the request body ended after %d of %d bytes", len(buf), want)
			}
			break
		}
		if err != nil {
			return "", s.bodyReadError(r, err, tooLarge)
		}
	}
	if len(buf) == 0 {
		return "", badField("", "empty request body: send a JSON object")
	}
	// The decoder slices ids and texts out of this string. buf is this
	// request's own and is never written again, so viewing it as a string
	// is safe and saves copying the body. Whatever may outlive the request
	// (the token counter's cache, an embedder's) gets copies instead, so no
	// cache pins a whole body.
	return unsafe.String(unsafe.SliceData(buf), len(buf)), nil
}

// bodyReadError turns a failed body read into a client-facing error that
// names no socket address (net errors carry both ends'): 408 when the body
// did not arrive within read_timeout, 400 when the client broke off. The
// detail goes to the log.
func (s *Server) bodyReadError(r *http.Request, err error, tooLarge error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return tooLarge
	}
	s.log.Debug("reading a request body failed", "request_id", RequestID(r.Context()), "error", err.Error())
	var ne net.Error
	if errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return &fieldError{Status: http.StatusRequestTimeout, Field: "",
			Msg: fmt.Sprintf("the request body did not arrive within %s (read_timeout)", s.cfg.ReadTimeout)}
	}
	return &fieldError{Field: "", Msg: "reading the request body failed: the connection broke off before the body ended"}
}

// resolveStrategy builds the strategy and caps of a strategy spec and the
// request's "params" object, and the spec string they amount to
// (parameters merged). Every parameter is checked here against its
// definition, so the error can name the field it came from: "strategy" for
// the spec string, "params.NAME" for the params object. deps are the
// operator's (Options.SelectorDeps: the band's policy).
func resolveStrategy(text string, params []paramIn, deps ctxsel.Deps) (ctxsel.Strategy, ctxsel.Caps, string, error) {
	fail := func(field string, err error) (ctxsel.Strategy, ctxsel.Caps, string, error) {
		return nil, ctxsel.Caps{}, "", badField(field, "%s", invalidMsg(err))
	}
	sp, err := ctxsel.ParseSpec(text)
	if err != nil {
		return fail("strategy", err)
	}
	def, ok := ctxsel.Lookup(sp.Name)
	if !ok {
		names := make([]string, 0)
		for _, d := range ctxsel.Defs() {
			names = append(names, d.Name)
		}
		return nil, ctxsel.Caps{}, "", badField("strategy", "unknown strategy %q (known: %s)", sp.Name, strings.Join(names, ", "))
	}
	for _, k := range slices.Sorted(maps.Keys(sp.Params)) {
		if err := checkParam(def, k, sp.Params[k]); err != nil {
			return fail("strategy", err)
		}
	}
	for _, p := range params {
		field := "params." + p.name
		key := strings.ToLower(p.name)
		if _, dup := sp.Params[key]; dup {
			return nil, ctxsel.Caps{}, "", badField(field, "also given in strategy %q", text)
		}
		if err := checkParam(def, key, p.value); err != nil {
			return fail(field, err)
		}
		sp.Params[key] = p.value
	}
	st, caps, err := ctxsel.NewWith(sp, deps)
	if err != nil {
		// What is left is a combination (head+tail, min_k > max_k).
		return fail("params", err)
	}
	return st, caps, sp.String(), nil
}

// checkParam checks one parameter as ctxsel.New will, so that the error can
// be attributed to its field.
func checkParam(def ctxsel.Def, name string, v float64) error {
	i := slices.IndexFunc(def.Params, func(p ctxsel.ParamDef) bool { return p.Name == name })
	var p ctxsel.ParamDef
	switch {
	case i >= 0: // a strategy's own parameter wins over a cap of the same name
		p = def.Params[i]
	default:
		j := slices.IndexFunc(ctxsel.CapParams, func(p ctxsel.ParamDef) bool { return p.Name == name })
		if j < 0 {
			known := make([]string, 0, len(def.Params)+len(ctxsel.CapParams))
			for _, p := range def.Params {
				known = append(known, p.Name)
			}
			for _, p := range ctxsel.CapParams {
				known = append(known, p.Name)
			}
			return fmt.Errorf("unknown parameter %q of strategy %s (known: %s)", name, def.Name, strings.Join(known, ", "))
		}
		p = ctxsel.CapParams[j]
	}
	if v < p.Min || v > p.Max || (p.MinExclusive && v == p.Min) {
		lo := "["
		if p.MinExclusive {
			lo = "("
		}
		return fmt.Errorf("%s=%v out of range %s%v, %v]", name, v, lo, p.Min, p.Max)
	}
	if p.Integer && v != math.Trunc(v) {
		return fmt.Errorf("%s=%v must be a whole number", name, v)
	}
	return nil
}

// selected is what a selection produced, ready to encode.
type selected struct {
	sel         ctxsel.Selection
	score       func(i int) float64 // score of the i-th selected passage
	totalTokens int
	sorted      []float64 // every score, highest first
}

func (s *Server) handleSelect(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	req := getSelectRequest()
	defer putSelectRequest(req)
	if err := decodeSelect(body, req, s.limits()); err != nil {
		s.writeFailure(w, r, err)
		return
	}
	res, err := s.selectRequest(r.Context(), req)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	s.metrics.selection(res.sel.K, res.sel.Tokens)
	bp := getBuf()
	defer putBuf(bp)
	b := append((*bp)[:0], '{')
	b = s.appendSelected(b, res)
	b = append(b, "}\n"...)
	*bp = b
	writeJSON(w, http.StatusOK, b)
}

// selectRequest scores the candidates (given scores, cosine of given
// vectors, or cosine of embedded texts), counts tokens and selects.
func (s *Server) selectRequest(ctx context.Context, req *selectRequest) (selected, error) {
	how, err := s.resolveRequest(&req.commonRequest, ctxsel.DefaultSelectStrategy, ctxsel.StrategyKind|ctxsel.SelectorKind)
	if err != nil {
		return selected{}, err
	}
	cands := req.cands
	if len(cands) == 0 {
		return selected{}, badField("candidates", "no candidates: give at least one {\"id\", \"score\"}")
	}
	// How candidates are scored is decided by the first one; all must agree,
	// because a given score and a cosine are not on one scale.
	var mode uint8
	switch h0 := req.has[0]; {
	case h0&hasScore != 0:
		mode = hasScore
	case h0&hasVector != 0:
		mode = hasVector
	case h0&hasText != 0:
		mode = hasText
	default:
		return selected{}, badField("candidates[0]", `needs a "score", a "vector" (with "query_vector") or a "text" to embed`)
	}
	for i, h := range req.has {
		if h&mode == 0 {
			return selected{}, badField(fpath{name: "candidates", idx: i, sub: modeField(mode)}.String(),
				"missing: candidates[0] has a %s, so every candidate needs one", modeField(mode))
		}
		if h&hasScore != 0 && h&hasVector != 0 {
			return selected{}, badField(fpath{name: "candidates", idx: i, sub: "vector"}.String(), `give a "score" or a "vector", not both`)
		}
	}
	switch mode {
	case hasVector:
		if err := vectorScores(req); err != nil {
			return selected{}, err
		}
	case hasText:
		if err := s.textScores(ctx, req); err != nil {
			return selected{}, err
		}
	}
	if len(req.texts) > 0 {
		counter, err := s.tokenCounter()
		if err != nil {
			return selected{}, err
		}
		for i, h := range req.has {
			if h&hasTokens == 0 && h&hasText != 0 {
				// A copy: the counter caches texts, and a slice of the body
				// would pin the whole request in that cache.
				cands[i].Tokens = counter.Count(strings.Clone(req.text(i)))
			}
		}
	}
	if how.selector != nil {
		return s.selectTexts(ctx, req, cands, how)
	}
	res, err := selectCandidates(cands, how.st, how.caps, how.order, req.sorted[:0])
	req.sorted = res.sorted
	return res, err
}

// selectCandidates builds the curve and selects; the sorted scores for the
// explanation are appended to sorted (a reusable buffer, may be nil).
func selectCandidates(cands []ctxsel.Candidate, st ctxsel.Strategy, caps ctxsel.Caps, order ctxsel.Order, sorted []float64) (selected, error) {
	curve, err := ctxsel.NewCurve(cands)
	if err != nil {
		return selected{}, locate(cands, err)
	}
	sel, err := ctxsel.Select(curve, st, caps, order)
	if err != nil {
		if errors.Is(err, ctxsel.ErrInvalidInput) {
			return selected{}, badField("strategy", "%v", err)
		}
		return selected{}, fmt.Errorf("select: %w", err)
	}
	sorted = append(sorted, curve.Scores()...)
	sortDescending(sorted)
	return selected{sel: sel, score: func(i int) float64 { return curve.Candidate(sel.Indices[i]).Score },
		totalTokens: curve.TotalTokens(), sorted: sorted}, nil
}

// locate turns a NewCurve error into one naming the offending field. It only
// runs on failure, so valid requests do not pay for a second duplicate scan.
func locate(cands []ctxsel.Candidate, err error) error {
	seen := make(map[string]int, len(cands))
	for i, c := range cands {
		if j, dup := seen[c.ID]; dup {
			return badField(fpath{name: "candidates", idx: i, sub: "id"}.String(), "duplicate id %q (also candidates[%d])", c.ID, j)
		}
		seen[c.ID] = i
	}
	return badField("candidates", "%s", strings.TrimPrefix(err.Error(), ctxsel.ErrInvalidInput.Error()+": "))
}

func modeField(mode uint8) string {
	switch mode {
	case hasVector:
		return "vector"
	case hasText:
		return "text"
	}
	return "score"
}

// vectorScores sets each candidate's score to the cosine similarity of its
// vector with the query vector.
func vectorScores(req *selectRequest) error {
	if !req.hasQVec || len(req.queryVec) == 0 {
		return badField("query_vector", "missing: candidates given as vectors are scored by cosine similarity to query_vector")
	}
	q, ok := vecmath.Unit(req.queryVec)
	if !ok {
		return badField("query_vector", "zero-norm vector: cosine similarity is undefined")
	}
	for i := range req.cands {
		v := req.vector(i)
		field := fpath{name: "candidates", idx: i, sub: "vector"}
		if len(v) != len(q) {
			return badField(field.String(), "dimension %d, but query_vector has %d", len(v), len(q))
		}
		score, ok := vecmath.CosineUnit(q, v)
		if !ok {
			return badField(field.String(), "zero-norm vector: cosine similarity is undefined")
		}
		req.cands[i].Score = score
	}
	return nil
}

// textScores embeds the candidates' texts and the query with the configured
// embedder and scores by cosine similarity.
func (s *Server) textScores(ctx context.Context, req *selectRequest) error {
	if s.embedder == nil {
		return badField("candidates[0].text", `this server has no embedder (started with --embedder none): send a "score" or a "vector" per candidate`)
	}
	if strings.TrimSpace(req.query) == "" {
		return badField("query", "missing: candidates given as text are scored against the embedded query")
	}
	texts := make([]string, len(req.cands))
	for i := range texts {
		texts[i] = strings.Clone(req.text(i)) // embedders may cache what they are given
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout.D())
	defer cancel()
	// The query first: a query that embeds to nothing is refused before
	// the passages are embedded, and under load the short query call
	// does not queue again behind other requests' passages (embedlimit.go).
	qv, err := embed.Queries(ctx, s.embedder, []string{strings.Clone(req.query)})
	if err == nil {
		_, err = embed.CheckVectors(qv, 1)
	}
	if err != nil {
		return embedFailure(err)
	}
	q, ok := vecmath.Unit(vecmath.F64(qv[0]))
	if !ok {
		return badField("query", "the embedder returned a zero vector for the query")
	}
	vecs, err := s.embedder.Embed(ctx, texts)
	if err == nil {
		_, err = embed.CheckVectors(vecs, len(texts))
	}
	if err != nil {
		return embedFailure(err)
	}
	for i, v := range vecs {
		if len(v) != len(q) {
			return &backendError{fmt.Errorf("passage vector dimension %d, query %d", len(v), len(q))}
		}
		score, ok := vecmath.CosineUnit(q, vecmath.F64(v))
		if !ok {
			score = 0 // an empty text embeds to nothing: as unrelated as can be
		}
		req.cands[i].Score = score
	}
	return nil
}

func embedFailure(err error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("embedder: %w", err)
	case errors.Is(err, ctxsel.ErrInvalidInput):
		return badField("candidates", "embedder: %v", err)
	}
	return &backendError{err}
}

// backendError is the embedder's own failure, which the client cannot fix:
// its text may name the backend's address, so writeFailure logs it and
// answers 502 with the request id.
type backendError struct{ err error }

func (e *backendError) Error() string { return "embedder failed: " + e.err.Error() }
func (e *backendError) Unwrap() error { return e.err }

// appendSelected appends the members of a selection response (without the
// enclosing braces): ids, indices, scores, k, tokens, total_tokens and the
// explanation.
func (s *Server) appendSelected(b []byte, res selected) []byte {
	sel := res.sel
	b = append(b, `"ids":[`...)
	for i, id := range sel.IDs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, id)
	}
	b = append(b, `],"indices":[`...)
	for i, idx := range sel.Indices {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendInt(b, idx)
	}
	b = append(b, `],"scores":[`...)
	for i := range sel.IDs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendFloat(b, res.score(i))
	}
	b = append(b, `],"k":`...)
	b = appendInt(b, sel.K)
	b = append(b, `,"tokens":`...)
	b = appendInt(b, sel.Tokens)
	b = append(b, `,"total_tokens":`...)
	b = appendInt(b, res.totalTokens)
	b = append(b, `,"explanation":`...)
	return s.appendExplanation(b, sel.Explanation, res.sorted)
}

func (s *Server) appendExplanation(b []byte, e ctxsel.Explanation, sorted []float64) []byte {
	b = append(b, `{"strategy":`...)
	b = appendString(b, e.Strategy)
	b = append(b, `,"params":{`...)
	for i, k := range slices.Sorted(maps.Keys(e.Params)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = appendFloat(b, e.Params[k])
	}
	b = append(b, `},"caps":{"min_k":`...)
	b = appendInt(b, e.Caps.MinK)
	b = append(b, `,"max_k":`...)
	b = appendInt(b, e.Caps.MaxK)
	b = append(b, `,"max_tokens":`...)
	b = appendInt(b, e.Caps.MaxTokens)
	b = append(b, `},"n":`...)
	b = appendInt(b, e.N)
	b = append(b, `,"strategy_k":`...)
	b = appendInt(b, e.StrategyK)
	b = append(b, `,"start":`...)
	b = appendInt(b, e.Start)
	b = append(b, `,"k":`...)
	b = appendInt(b, e.K)
	// cut is the first rank not selected; band is the selected rank range.
	b = append(b, `,"cut":`...)
	b = appendInt(b, e.Start+e.K)
	b = append(b, `,"band":{"start":`...)
	b = appendInt(b, e.Start)
	b = append(b, `,"end":`...)
	b = appendInt(b, e.Start+e.K)
	b = append(b, `},"decision":{"kind":`...)
	d := e.Decision
	b = appendString(b, d.Kind)
	b = append(b, `,"rank":`...)
	b = appendInt(b, d.Rank)
	b = append(b, `,"value":`...)
	b = appendFloat(b, d.Value)
	if d.Above != nil {
		b = append(b, `,"above":`...)
		b = appendFloat(b, *d.Above)
	}
	if d.Below != nil {
		b = append(b, `,"below":`...)
		b = appendFloat(b, *d.Below)
	}
	if d.SearchFrom != nil {
		b = append(b, `,"search_from":`...)
		b = appendInt(b, *d.SearchFrom)
	}
	if d.SearchTo != nil {
		b = append(b, `,"search_to":`...)
		b = appendInt(b, *d.SearchTo)
	}
	b = append(b, `},"reason":`...)
	b = appendString(b, e.Reason)
	b = append(b, `,"caps_applied":[`...)
	for i, c := range e.CapsApplied {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, c)
	}
	b = append(b, `],"guards":[`...)
	for i, g := range e.Guards {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, g)
	}
	b = append(b, `],"tokens":`...)
	b = appendInt(b, e.Tokens)
	b = append(b, `,"total_tokens":`...)
	b = appendInt(b, e.TotalTokens)
	b = append(b, `,"curve":`...)
	b = s.appendCurve(b, sorted, e)
	return append(b, '}')
}

// appendCurve appends the curve summary: n, min, max, mean and the sorted
// scores for plotting. Past MaxCurvePoints the scores are sampled evenly,
// always keeping the ranks either side of the cut, the band and the
// decision, and "ranks" says which rank each point is.
func (s *Server) appendCurve(b []byte, sorted []float64, e ctxsel.Explanation) []byte {
	n := len(sorted)
	b = append(b, `{"n":`...)
	b = appendInt(b, n)
	if n > 0 {
		sum := 0.0
		for _, x := range sorted {
			sum += x
		}
		mean := sum / float64(n)
		if math.IsInf(sum, 0) { // scores near ±MaxFloat64
			mean = 0
			for _, x := range sorted {
				mean += x / float64(n)
			}
		}
		b = append(b, `,"min":`...)
		b = appendFloat(b, sorted[n-1])
		b = append(b, `,"max":`...)
		b = appendFloat(b, sorted[0])
		b = append(b, `,"mean":`...)
		b = appendFloat(b, mean)
	}
	var ranks []int
	if n > s.cfg.MaxCurvePoints {
		end := e.Start + e.K
		ranks = sampleRanks(n, s.cfg.MaxCurvePoints, []int{0, n - 1, e.Start - 1, e.Start, end - 1, end, e.Decision.Rank, e.Decision.Rank + 1})
	}
	b = append(b, `,"sampled":`...)
	b = strconv.AppendBool(b, ranks != nil)
	b = append(b, `,"scores":[`...)
	if ranks == nil {
		for i, x := range sorted {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendFloat(b, x)
		}
		return append(b, "]}"...)
	}
	for i, r := range ranks {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendFloat(b, sorted[r])
	}
	b = append(b, `],"ranks":[`...)
	for i, r := range ranks {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendInt(b, r)
	}
	return append(b, "]}"...)
}

// sampleRanks picks at most maxPoints ranks of n: the keep ranks (those in
// range) and evenly spaced ones, sorted and distinct.
func sampleRanks(n, maxPoints int, keep []int) []int {
	m := maxPoints - len(keep)
	out := make([]int, 0, maxPoints)
	for i := range m {
		out = append(out, int(math.Round(float64(i)*float64(n-1)/float64(m-1))))
	}
	for _, k := range keep {
		if k >= 0 && k < n {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// sortDescending sorts finite numbers highest first. It sorts them as
// integers whose order is theirs, reversed (sign bit flipped for positives,
// every bit for negatives, then complemented): an integer sort skips the NaN
// handling of a float sort, and the profile of /v1/select under 64 clients
// had the float sort at a tenth of the server's CPU. The keys live in the
// numbers' own memory, so nothing is allocated.
func sortDescending(x []float64) {
	keys := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
	for i, f := range x {
		b := math.Float64bits(f)
		if b>>63 != 0 {
			b = ^b
		} else {
			b |= 1 << 63
		}
		keys[i] = ^b
	}
	slices.Sort(keys)
	for i, k := range keys {
		b := ^k
		if b>>63 != 0 {
			b &^= 1 << 63
		} else {
			b = ^b
		}
		x[i] = math.Float64frombits(b)
	}
}
