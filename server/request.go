package server

import (
	"strings"
	"sync"

	"github.com/ctxsel/ctxsel/internal/wire"
)

// The request shapes that select, /v1/select and /v1/ask (and rerank's
// common fields), read with internal/wire's decoder; a candidate is read by
// wire's candidate reader, which `ctxsel select` shares.

// decoder is wire's JSON reader with the request shapes of this package.
type decoder struct{ wire.Decoder }

func newDecoder(body string) decoder { return decoder{wire.NewDecoder(body)} }

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

// selectRequest is a decoded /v1/select body.
type selectRequest struct {
	commonRequest
	wire.Candidates
	queryVec []float64
	hasQVec  bool
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
	if r.Oversized() {
		return
	}
	r.Candidates.Reset()
	clear(r.params[:cap(r.params)])
	*r = selectRequest{
		commonRequest: commonRequest{params: r.params[:0]},
		Candidates:    r.Candidates,
		queryVec:      r.queryVec[:0],
		sorted:        r.sorted[:0],
	}
	selectPool.Put(r)
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
	if read, err := d.Given(&r.seen, bit, key); !read {
		return true, err
	}
	p := wire.Field(key)
	var err error
	switch key {
	case "query":
		r.query, err = d.Text(p, lim.Limits)
	case "strategy":
		r.strategy, err = d.Str(p)
	case "order":
		r.order, err = d.Str(p)
	case "params":
		err = d.params(r)
	}
	return true, err
}

func (d *decoder) params(r *commonRequest) error {
	p := wire.Field("params")
	if err := d.BeginObject(p); err != nil {
		return err
	}
	for first := true; ; {
		key, ok, err := d.NextKey(p, &first)
		if err != nil || !ok {
			return err
		}
		kp := wire.Path{Name: "params", Idx: -1, Sub: key}
		for _, q := range r.params {
			if q.name == key {
				return wire.Bad(kp.String(), "given twice")
			}
		}
		v, err := d.Num(kp)
		if err != nil {
			return err
		}
		r.params = append(r.params, paramIn{name: key, value: v})
	}
}

// decodeSelect decodes a /v1/select body into r.
func decodeSelect(body string, r *selectRequest, lim limits) error {
	d := newDecoder(body)
	var seen uint16
	return d.Object(func(key string) error {
		if known, err := d.common(key, &r.commonRequest, lim); known {
			return err
		}
		switch key {
		case "candidates":
			if seen&1 != 0 {
				return wire.Bad(key, "given twice")
			}
			seen |= 1
			return d.Candidates(&r.Candidates, lim.Limits)
		case "query_vector":
			read, err := d.Given(&seen, 2, key)
			if !read {
				return err
			}
			r.hasQVec = true
			r.queryVec, err = d.Floats(wire.Field(key), r.queryVec[:0], lim.MaxDim)
			return err
		}
		return wire.Bad(key, "unknown field (known: query, query_vector, candidates, strategy, params, order)")
	})
}

// decodeAsk decodes a /v1/ask body into r.
func decodeAsk(body string, r *askRequest, lim limits) error {
	d := newDecoder(body)
	var seen uint16
	return d.Object(func(key string) error {
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
			return wire.Bad(key, "unknown field (known: query, strategy, params, order, top_n, retriever)")
		}
		read, err := d.Given(&seen, bit, key)
		if !read {
			return err
		}
		if key == "top_n" {
			if r.topN, err = d.Count(wire.Field(key)); err == nil {
				err = lim.CheckTopN(key, r.topN)
			}
			return err
		}
		if r.retriever, err = d.Str(wire.Field(key)); err == nil && !knownRetriever(r.retriever) {
			err = wire.Bad(key, "unknown retriever %q (want dense, bm25 or hybrid)", r.retriever)
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
