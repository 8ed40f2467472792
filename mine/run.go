package mine

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/internal/recordlog"
	"github.com/ctxsel/ctxsel/llm"
)

// RunOptions configure Run.
type RunOptions struct {
	Options
	// Workers mine records at once (default 4); the LLM clients' own
	// limiter bounds calls in flight.
	Workers int
	// MaxLLMTokens stops starting calls once the run (this process) has
	// used this many prompt+completion tokens (0: no cap). Records cut
	// off are not checkpointed: a later run resumes them.
	MaxLLMTokens int
	// Checkpoint is a record log of finished records (see
	// internal/recordlog); "" keeps none. A record whose result is in it,
	// under the same settings, is not mined again.
	Checkpoint string
	// Rewriter, with Rewrites > 0, asks for that many paraphrases of each
	// mined question (validated: non-empty, distinct, not the original).
	Rewriter llm.Client
	Rewrites int
	// Progress, when set, is told after every record.
	Progress func(Status)
	// Note receives a one-line notice when the checkpoint had to be cut or
	// rebuilt (a copy of what was dropped is kept beside it); default
	// slog.Warn.
	Note func(msg string)
}

// Status is a run's progress.
type Status struct {
	Done, Total, Dropped, Resumed int
	// Tokens are the LLM tokens this run spent (resumed records cost none).
	Tokens  int
	Elapsed time.Duration
}

// Summary is what a run did.
type Summary struct {
	Questions int `json:"questions"`
	Mined     int `json:"mined"`
	Dropped   int `json:"dropped"`
	// Resumed came from the checkpoint; Pending were not finished (the
	// token cap, or an error).
	Resumed int `json:"resumed"`
	Pending int `json:"pending"`
	Calls   int `json:"calls"`
	Tokens  int `json:"tokens"`
	// Rewrites are the kept paraphrases; RewritesRejected failed validation.
	Rewrites         int  `json:"rewrites"`
	RewritesRejected int  `json:"rewrites_rejected"`
	StoppedAtCap     bool `json:"stopped_at_cap"`
	// MeanGold and MeanCandidates are over mined records.
	MeanGold       float64 `json:"mean_gold"`
	MeanCandidates float64 `json:"mean_candidates"`
}

type budget struct {
	max  int64
	used atomic.Int64
}

func (b *budget) check() error {
	if b != nil && b.max > 0 && b.used.Load() >= b.max {
		return fmt.Errorf("%w (%d tokens)", llm.ErrTokenCap, b.max)
	}
	return nil
}

func (b *budget) spend(n int) {
	if b != nil {
		b.used.Add(int64(n))
	}
}

// checkpointID names what a checkpoint file holds.
const checkpointID = "ctxsel mine checkpoint v1"

// identity is what changes a record's mining besides the record.
func (o RunOptions) identity() string {
	s := fmt.Sprintf("k=%d threshold=%g judge=%s generator=%s template=%x", o.K, o.Threshold, o.Judge.Name(), describe(o.Generator), sha256.Sum256([]byte(o.Template)))
	if o.Rewrites > 0 {
		s += fmt.Sprintf(" rewrites=%d rewriter=%s", o.Rewrites, describe(o.Rewriter))
	}
	return s
}

func describe(c llm.Client) string {
	if c == nil {
		return ""
	}
	if id := llm.Identity(c); id != "" {
		return id
	}
	return c.Describe()
}

// Run mines every record, Workers at a time, and returns the output
// records in input order: each mined record (gold = its mined set,
// provenance in meta.mined) followed by its rewrites (ids "<id>#rw<n>",
// the same passages and gold, meta.mined.group = the original's id).
// Dropped records are left out and counted. On the token cap it returns
// what was finished, Summary.StoppedAtCap, and an error wrapping
// llm.ErrTokenCap.
func Run(ctx context.Context, recs []dataset.Record, ro RunOptions) ([]dataset.Record, Summary, error) {
	var err error
	if ro.Options, err = ro.Options.withDefaults(); err != nil {
		return nil, Summary{}, err
	}
	if ro.Rewrites < 0 || ro.Rewrites > 50 {
		return nil, Summary{}, fmt.Errorf("%w: mine: rewrites=%d must be in 0..50", ctxsel.ErrInvalidInput, ro.Rewrites)
	}
	if ro.Rewrites > 0 && ro.Rewriter == nil {
		return nil, Summary{}, fmt.Errorf("%w: mine: rewrites need a rewriter LLM", ctxsel.ErrInvalidInput)
	}
	if ro.Workers <= 0 {
		ro.Workers = 4
	}
	bud := &budget{max: int64(ro.MaxLLMTokens)}
	ro.Options.budget = bud
	id := ro.identity()
	key := func(recID string) recordlog.Key { return sha256.Sum256([]byte(id + "\x00" + recID)) }

	done := map[recordlog.Key]Provenance{}
	var log *recordlog.Log
	if ro.Checkpoint != "" {
		log, err = recordlog.Open(ro.Checkpoint, checkpointID, recordlog.Options{Note: ro.Note, Valid: json.Valid}, func(r recordlog.Record) {
			var p Provenance
			if json.Unmarshal(r.Payload, &p) == nil {
				done[r.Key] = p
			}
		})
		if err != nil {
			return nil, Summary{}, fmt.Errorf("mine: checkpoint: %w", err)
		}
		defer log.Close()
	}

	provs := make([]*Provenance, len(recs))
	sum := Summary{Questions: len(recs)}
	start := time.Now()
	var mu sync.Mutex
	status := Status{Total: len(recs)}
	report := func(p *Provenance, resumed bool) {
		status.Done++
		if p.Dropped {
			status.Dropped++
		}
		if resumed {
			status.Resumed++
		}
		status.Tokens = int(bud.used.Load())
		status.Elapsed = time.Since(start)
		if ro.Progress != nil {
			ro.Progress(status)
		}
	}
	var todo []int
	for i, r := range recs {
		if p, ok := done[key(r.ID)]; ok {
			provs[i] = &p
			sum.Resumed++
			report(&p, true)
			continue
		}
		todo = append(todo, i)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan int)
	var firstErr error
	var wg sync.WaitGroup
	for range ro.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				p, err := Record(ctx, recs[i], ro.Options)
				if err == nil && !p.Dropped && ro.Rewrites > 0 {
					var rej, tok int
					p.Rewrites, rej, tok, err = rewrite(ctx, ro.Rewriter, recs[i].Question, ro.Rewrites, bud)
					p.Calls++
					p.PromptTokens += tok
					mu.Lock()
					sum.RewritesRejected += rej
					mu.Unlock()
				}
				if err == nil && log != nil {
					var b []byte
					if b, err = json.Marshal(p); err == nil {
						_, err = log.Append([]recordlog.Record{{Key: key(recs[i].ID), Payload: b}}, nil)
					}
					if err != nil {
						err = fmt.Errorf("checkpoint: %w", err)
					}
				}
				mu.Lock()
				if err != nil {
					if firstErr == nil || (errors.Is(firstErr, llm.ErrTokenCap) && !errors.Is(err, llm.ErrTokenCap)) {
						firstErr = fmt.Errorf("record %q: %w", recs[i].ID, err)
					}
					if !errors.Is(err, llm.ErrTokenCap) {
						cancel()
					}
				} else {
					provs[i] = &p
					sum.Calls += p.Calls
					report(&p, false)
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for _, i := range todo {
		if bud.check() != nil {
			break
		}
		select {
		case jobs <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	sum.Tokens = int(bud.used.Load())

	var out []dataset.Record
	var gold, cands float64
	for i, p := range provs {
		if p == nil {
			sum.Pending++
			continue
		}
		if p.Dropped {
			sum.Dropped++
			continue
		}
		sum.Mined++
		gold += float64(len(p.Gold))
		cands += float64(len(p.Candidates))
		rec, err := Mined(recs[i], *p)
		if err != nil {
			return nil, sum, err
		}
		out = append(out, rec)
		for j, q := range p.Rewrites {
			rw := rec
			rw.ID = fmt.Sprintf("%s#rw%d", recs[i].ID, j+1)
			rw.Question = q
			out = append(out, rw)
			sum.Rewrites++
		}
	}
	if sum.Mined > 0 {
		sum.MeanGold, sum.MeanCandidates = gold/float64(sum.Mined), cands/float64(sum.Mined)
	}
	if firstErr != nil {
		sum.StoppedAtCap = errors.Is(firstErr, llm.ErrTokenCap)
		return out, sum, fmt.Errorf("mine: %w", firstErr)
	}
	if sum.Pending > 0 && bud.check() != nil {
		sum.StoppedAtCap = true
		return out, sum, fmt.Errorf("mine: %w: %d records left for a later run", bud.check(), sum.Pending)
	}
	if err := ctx.Err(); err != nil {
		return out, sum, fmt.Errorf("mine: %w", err)
	}
	return out, sum, nil
}
