// Package ldareval prepares labelled data for the LDAR band policy and
// measures it: pooled long contexts scored into training curves (cached on
// disk; the splits by question are package dataset's), and eval.Run reports
// of the band beside fixed top-k and the other strategies.
package ldareval

import (
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ctxsel/ctxsel"
	_ "github.com/ctxsel/ctxsel/cutoff" // the baselines Report measures
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/eval"
	"github.com/ctxsel/ctxsel/internal/atomicfile"
	"github.com/ctxsel/ctxsel/ldar"
	"github.com/ctxsel/ctxsel/score"
	"github.com/ctxsel/ctxsel/token"
)

// CurveSpec names one set of curves: a dataset file pooled to Pool
// passages with PoolSeed (the whole file is pooled, so a question's
// distractors do not depend on the split), scored by Scorer.
type CurveSpec struct {
	Path string
	// Records, when set, are the data instead of the file at Path (LaRA,
	// read and chunked by the caller); their curves are not cached, and a
	// set without any gold passage keeps every record (answers only).
	Records  []dataset.Record
	Pool     int
	PoolSeed uint64
	Scorer   string
	Encoding string
}

// Questions scores the pooled questions of spec (all records of the file;
// filter afterwards) into training questions, reading and writing a cache
// file under cacheDir ("" disables the cache). Records without gold are
// skipped by eval.Curves.
func Questions(ctx context.Context, spec CurveSpec, scorer score.Scorer, counter token.Counter, cacheDir string) ([]ldar.Question, error) {
	var cachePath string
	if cacheDir != "" && spec.Records == nil {
		b, err := os.ReadFile(spec.Path)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(b)
		h := sha256.Sum256(fmt.Appendf(nil, "%x|%d|%d|%s|%s|v2", sum, spec.Pool, spec.PoolSeed, spec.Scorer, spec.Encoding))
		cachePath = filepath.Join(cacheDir, "curves-"+hex.EncodeToString(h[:8])+".gob.gz")
		if qs, err := readCache(cachePath); err == nil {
			return qs, nil
		}
	}
	recs := spec.Records
	if recs == nil {
		var err error
		if recs, err = dataset.LoadFile(spec.Path); err != nil {
			return nil, err
		}
	}
	pooled, err := dataset.Pool(recs, spec.Pool, spec.PoolSeed)
	if err != nil {
		return nil, err
	}
	curves, _, err := eval.Curves(ctx, pooled, scorer, counter, 1)
	if err == nil && len(curves) == 0 && spec.Records != nil {
		curves, err = eval.CurvesAll(ctx, pooled, scorer, counter, 1)
	}
	if err != nil {
		return nil, err
	}
	qs := make([]ldar.Question, len(curves))
	for i, c := range curves {
		qs[i] = ldar.Question{ID: c.RecordID, Scores: c.Scores, Tokens: c.Tokens, Gold: c.Gold, Channels: c.Channels}
	}
	if cachePath != "" {
		if err := writeCache(cachePath, qs); err != nil {
			return nil, err
		}
	}
	return qs, nil
}

func readCache(path string) ([]ldar.Question, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	var qs []ldar.Question
	if err := gob.NewDecoder(zr).Decode(&qs); err != nil {
		return nil, err
	}
	return qs, nil
}

func writeCache(path string, qs []ldar.Question) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		zw := gzip.NewWriter(w)
		if err := gob.NewEncoder(zw).Encode(qs); err != nil {
			return err
		}
		return zw.Close()
	})
}

// SelectQuestions keeps the questions whose id is in ids, in order.
func SelectQuestions(qs []ldar.Question, ids map[string]bool) []ldar.Question {
	var out []ldar.Question
	for _, q := range qs {
		if ids[q.ID] {
			out = append(out, q)
		}
	}
	return out
}

// BaselineStrategies are measured beside the band: fixed top-k at several
// k, Adaptive-k and the knee.
var BaselineStrategies = []string{"topk:k=1", "topk:k=2", "topk:k=3", "topk:k=5", "topk:k=7", "topk:k=10", "topk:k=15", "topk:k=20", "budget:tokens=500", "budget:tokens=1000", "budget:tokens=2000", "adaptivek", "knee"}

// Report runs eval.Run on already pooled records with the baselines and
// the band strategy, using policy p for "band". Single scorers in base
// (dense, BM25) give every result its gain over the best single-scorer
// envelope.
func Report(ctx context.Context, recs []dataset.Record, scorer score.Scorer, counter token.Counter, p *ldar.Policy, base []score.Scorer, extra ...string) (*eval.Report, error) {
	var specs []string
	specs = append(specs, BaselineStrategies...)
	specs = append(specs, extra...)
	specs = append(specs, "band")
	rv := ctxsel.Resolver{Kinds: ctxsel.StrategyKind | ctxsel.RouteKind, Deps: ctxsel.DepsOf(map[string]any{ldar.DepPolicy: p})}
	resolved := make([]ctxsel.Resolved, 0, len(specs))
	for _, s := range specs {
		res, err := rv.Resolve(s)
		if err != nil {
			return nil, err
		}
		resolved = append(resolved, res)
	}
	return eval.Run(ctx, recs, scorer, eval.Options{Strategies: resolved, Counter: counter, Workers: 1, Baselines: base})
}
