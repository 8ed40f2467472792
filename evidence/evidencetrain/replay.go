package evidencetrain

import (
	"context"
	"strconv"
	"sync"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/evidence"
)

// prepCache keeps one scoring per question for the selectors that share
// it (the same model learner, candidates and hop): measuring many
// packings of a model scores each question once.
type prepCache struct {
	mu sync.Mutex
	by map[string]*prepEntry
}

type prepEntry struct {
	once sync.Once
	p    *evidence.Prepared
	err  error
}

func newPrepCache() *prepCache { return &prepCache{by: map[string]*prepEntry{}} }

// replay is a selector whose scorings come from its cache.
type replay struct {
	name  string
	sel   *evidence.Selector
	cache *prepCache
}

func (r *replay) Name() string { return r.name }

func (r *replay) SelectTexts(ctx context.Context, q ctxsel.TextQuery) (ctxsel.Selection, error) {
	if err := q.Validate(); err != nil {
		return ctxsel.Selection{}, err
	}
	top := q.Curve.Top(1)[0]
	key := q.Question + "\x00" + strconv.Itoa(q.Curve.Len()) + "\x00" + q.Curve.Candidate(0).ID + "\x00" + q.Curve.Candidate(top).ID
	r.cache.mu.Lock()
	e := r.cache.by[key]
	if e == nil {
		e = &prepEntry{}
		r.cache.by[key] = e
	}
	r.cache.mu.Unlock()
	e.once.Do(func() { e.p, e.err = r.sel.Prepare(ctx, q) })
	if e.err != nil {
		return ctxsel.Selection{}, e.err
	}
	return r.sel.SelectPrepared(ctx, q, e.p)
}
