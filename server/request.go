package server

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/ctxsel/ctxsel"
)

// The two request shapes, /v1/select and /v1/ask, read with the decoder of
// decode.go.

// Presence bits of a candidate's optional fields.
const (
	hasScore = 1 << iota
	hasTokens
	hasText
	hasVector
)

type paramIn struct {
	name  string
	value float64
}

// commonRequest holds the fields /v1/select and /v1/ask share.
type commonRequest struct {
	query    string
	strategy string
	params   []paramIn
	order    string
	seen     uint16 // which keys were given, to refuse duplicates
}

// selectRequest is a decoded /v1/select body. Candidates decode straight
// into the form ctxsel takes; what only some requests carry (texts,
// vectors) lives in side slices made on first use, so a scored request
// allocates nothing for them.
type selectRequest struct {
	commonRequest
	queryVec []float64
	hasQVec  bool
	cands    []ctxsel.Candidate
	has      []uint8  // presence bits per candidate
	texts    []string // texts[i] of candidate i (shorter when the tail has none)
	vecSpan  [][2]int // candidate i's vector is vecs[off : off+len]
	vecs     []float64
	sorted   []float64 // buffer for the explanation's sorted scores
}

// Decoded requests are pooled: a 1,000-candidate request would otherwise
// allocate its candidate slices afresh, and at thousands of requests a
// second the collector, not the selection, sets the pace.
var selectPool = sync.Pool{New: func() any { return new(selectRequest) }}

func getSelectRequest() *selectRequest { return selectPool.Get().(*selectRequest) }

// putSelectRequest clears r (its strings point into a request body that
// must not be kept alive) and pools it, unless it grew unusually large.
func putSelectRequest(r *selectRequest) {
	if cap(r.cands) > 1<<16 || cap(r.vecs) > 1<<20 {
		return
	}
	clear(r.cands[:cap(r.cands)])
	clear(r.texts[:cap(r.texts)])
	clear(r.params[:cap(r.params)])
	*r = selectRequest{
		commonRequest: commonRequest{params: r.params[:0]},
		queryVec:      r.queryVec[:0],
		cands:         r.cands[:0],
		has:           r.has[:0],
		texts:         r.texts[:0],
		vecSpan:       r.vecSpan[:0],
		vecs:          r.vecs[:0],
		sorted:        r.sorted[:0],
	}
	selectPool.Put(r)
}

func (r *selectRequest) text(i int) string {
	if i < len(r.texts) {
		return r.texts[i]
	}
	return ""
}

func (r *selectRequest) vector(i int) []float64 {
	if i < len(r.vecSpan) {
		sp := r.vecSpan[i]
		return r.vecs[sp[0] : sp[0]+sp[1]]
	}
	return nil
}

type askRequest struct {
	commonRequest
	topN      int
	retriever string
}

// common decodes a key the selecting request shapes share; it reports false for
// keys it does not know.
func (d *decoder) common(key string, r *commonRequest, lim limits) (bool, error) {
	bit := uint16(0)
	switch key {
	case "query":
		bit = 1
	case "strategy":
		bit = 2
	case "params":
		bit = 4
	case "order":
		bit = 8
	default:
		return false, nil
	}
	if read, err := d.given(&r.seen, bit, key); !read {
		return true, err
	}
	p := top(key)
	var err error
	switch key {
	case "query":
		r.query, err = d.text(p, lim)
	case "strategy":
		r.strategy, err = d.str(p)
	case "order":
		r.order, err = d.str(p)
	case "params":
		err = d.params(r)
	}
	return true, err
}

func (d *decoder) params(r *commonRequest) error {
	p := top("params")
	if err := d.beginObject(p); err != nil {
		return err
	}
	for first := true; ; {
		key, ok, err := d.nextKey(p, &first)
		if err != nil || !ok {
			return err
		}
		kp := fpath{name: "params", idx: -1, sub: key}
		for _, q := range r.params {
			if q.name == key {
				return badField(kp.String(), "given twice")
			}
		}
		v, err := d.num(kp)
		if err != nil {
			return err
		}
		r.params = append(r.params, paramIn{name: key, value: v})
	}
}

// decodeSelect decodes a /v1/select body into r.
func decodeSelect(body string, r *selectRequest, lim limits) error {
	d := decoder{s: body}
	var seen uint16
	return d.object(func(key string) error {
		if known, err := d.common(key, &r.commonRequest, lim); known {
			return err
		}
		switch key {
		case "candidates":
			if seen&1 != 0 {
				return badField(key, "given twice")
			}
			seen |= 1
			return d.candidates(r, lim)
		case "query_vector":
			read, err := d.given(&seen, 2, key)
			if !read {
				return err
			}
			r.hasQVec = true
			r.queryVec, err = d.floats(top(key), r.queryVec[:0], lim.maxDim)
			return err
		}
		return badField(key, "unknown field (known: query, query_vector, candidates, strategy, params, order)")
	})
}

// decodeAsk decodes a /v1/ask body into r.
func decodeAsk(body string, r *askRequest, lim limits) error {
	d := decoder{s: body}
	var seen uint16
	return d.object(func(key string) error {
		if known, err := d.common(key, &r.commonRequest, lim); known {
			return err
		}
		var bit uint16
		switch key {
		case "top_n":
			bit = 1
		case "retriever":
			bit = 2
		default:
			return badField(key, "unknown field (known: query, strategy, params, order, top_n, retriever)")
		}
		read, err := d.given(&seen, bit, key)
		if !read {
			return err
		}
		if key == "top_n" {
			if r.topN, err = d.count(top(key)); err == nil {
				err = lim.checkTopN(key, r.topN)
			}
			return err
		}
		if r.retriever, err = d.str(top(key)); err == nil && !knownRetriever(r.retriever) {
			err = badField(key, "unknown retriever %q (want dense, bm25 or hybrid)", r.retriever)
		}
		return err
	})
}

// knownRetriever reports the retrievers an Asker takes (as
// index.ParseRetriever reads them; "" leaves the choice to the Asker), so
// that an unknown one is refused naming its field before any work.
func knownRetriever(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "dense", "bm25", "hybrid":
		return true
	}
	return false
}

// object reads a request body's top-level object, handing each key to
// field, which reads its value, then checks nothing follows the object.
func (d *decoder) object(field func(key string) error) error {
	if err := d.beginObject(fpath{idx: -1}); err != nil {
		return requestNotObject(err)
	}
	for first := true; ; {
		key, ok, err := d.nextKey(fpath{idx: -1}, &first)
		if err != nil {
			return err
		}
		if !ok {
			return d.end()
		}
		if err := field(key); err != nil {
			return err
		}
	}
}

// given records key (its bit in *seen), refusing it a second time, and
// reports whether a value follows to be read: null means not given.
func (d *decoder) given(seen *uint16, bit uint16, key string) (bool, error) {
	if *seen&bit != 0 {
		return false, badField(key, "given twice")
	}
	*seen |= bit
	return !d.null(), nil
}

func requestNotObject(err error) error {
	var fe *fieldError
	if errors.As(err, &fe) && fe.Field == "" && !strings.HasPrefix(fe.Msg, "malformed") {
		fe.Msg = "the request body " + fe.Msg
	}
	return err
}

// floats reads an array of finite numbers, appending to dst.
func (d *decoder) floats(p fpath, dst []float64, maxLen int) ([]float64, error) {
	if err := d.beginArray(p); err != nil {
		return dst, err
	}
	n := 0
	for first := true; ; {
		ok, err := d.nextElem(p, &first)
		if err != nil || !ok {
			return dst, err
		}
		if n == maxLen {
			return dst, &fieldError{Status: 413, Field: p.String(), Msg: fmt.Sprintf("more than %d components", maxLen)}
		}
		v, err := d.num(p)
		if err != nil {
			var fe *fieldError
			if errors.As(err, &fe) {
				fe.Msg = fmt.Sprintf("component %d: %s", n, fe.Msg)
			}
			return dst, err
		}
		dst = append(dst, v)
		n++
	}
}

func (d *decoder) candidates(r *selectRequest, lim limits) error {
	p := top("candidates")
	if err := d.beginArray(p); err != nil {
		return err
	}
	// Size the slices once instead of growing them through ten copies:
	// every candidate is an object (metadata objects only overestimate),
	// and counting one byte is a vectorised scan.
	if est := min(lim.maxCandidates, strings.Count(d.s[d.pos:], "{")); cap(r.cands) < est {
		r.cands = make([]ctxsel.Candidate, 0, est)
		r.has = make([]uint8, 0, est)
	}
	for first := true; ; {
		ok, err := d.nextElem(p, &first)
		if err != nil || !ok {
			return err
		}
		i := len(r.cands)
		if i == lim.maxCandidates {
			return &fieldError{Status: 413, Field: "candidates", Msg: fmt.Sprintf("more than %d candidates", lim.maxCandidates)}
		}
		r.cands = append(r.cands, ctxsel.Candidate{})
		r.has = append(r.has, 0)
		if err := d.candidate(r, i, lim); err != nil {
			return err
		}
	}
}

func (d *decoder) candidate(r *selectRequest, i int, lim limits) error {
	p := fpath{name: "candidates", idx: i}
	c := &r.cands[i]
	if err := d.beginObject(p); err != nil {
		return err
	}
	haveID := false
	for first := true; ; {
		key, ok, err := d.nextKey(p, &first)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		kp := fpath{name: "candidates", idx: i, sub: key}
		var bit uint8
		switch key {
		case "id":
			if haveID {
				return badField(kp.String(), "given twice")
			}
			haveID = true
			d.ws()
			switch d.peek() {
			case '"':
				d.replaced = false
				c.ID, err = d.str(kp)
				// U+FFFD in place of invalid UTF-8 would come back as an
				// id the caller cannot match.
				if err == nil && d.replaced {
					err = badField(kp.String(), "not valid UTF-8 (ids come back as they were sent, so they must be UTF-8 text)")
				}
			case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
				// Numeric ids are kept as written, as the CLI keeps them.
				c.ID, err = d.numLiteral(kp)
			default:
				err = d.typeErr(kp, "a string or a number")
			}
			if err != nil {
				return err
			}
			if c.ID == "" {
				return badField(kp.String(), "empty id")
			}
			continue
		case "score":
			bit = hasScore
		case "tokens":
			bit = hasTokens
		case "text":
			bit = hasText
		case "vector":
			bit = hasVector
		default:
			// Callers pass their own metadata along (titles, urls, gold
			// labels): unknown candidate fields are ignored, unless they
			// look like a misspelt field of a candidate.
			if want, typo := MisspeltCandidateField(key); typo {
				return badField(kp.String(), "unknown field: did you mean %q? (other fields are ignored as metadata: rename it if it is yours)", want)
			}
			if err := d.skip(kp, 0); err != nil {
				return err
			}
			continue
		}
		if r.has[i]&bit != 0 {
			return badField(kp.String(), "given twice")
		}
		if d.null() {
			continue
		}
		r.has[i] |= bit
		switch bit {
		case hasScore:
			c.Score, err = d.num(kp)
		case hasTokens:
			c.Tokens, err = d.count(kp)
		case hasText:
			var text string
			text, err = d.text(kp, lim)
			if cap(r.texts) == 0 {
				r.texts = make([]string, 0, cap(r.cands))
			}
			for len(r.texts) <= i {
				r.texts = append(r.texts, "")
			}
			r.texts[i] = text
		case hasVector:
			off := len(r.vecs)
			r.vecs, err = d.floats(kp, r.vecs, lim.maxDim)
			if cap(r.vecSpan) == 0 {
				r.vecSpan = make([][2]int, 0, cap(r.cands))
			}
			for len(r.vecSpan) <= i {
				r.vecSpan = append(r.vecSpan, [2]int{})
			}
			r.vecSpan[i] = [2]int{off, len(r.vecs) - off}
		}
		if err != nil {
			return err
		}
	}
	if !haveID {
		return badField(p.String()+".id", "missing")
	}
	return nil
}
