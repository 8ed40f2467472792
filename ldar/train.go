package ldar

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/internal/atomicfile"
)

// TrainOptions configure Train. Zero values take the defaults noted.
type TrainOptions struct {
	// Config sizes the network (DefaultConfig when zero).
	Config Config `json:"config"`
	// Seed makes a run reproducible: initialisation, shuffling and band
	// sampling all derive from it (for a given Workers).
	Seed   uint64 `json:"seed"`
	Epochs int    `json:"epochs"` // default 20
	// Batch is the number of questions per gradient step (default 32).
	Batch int `json:"batch"`
	// Samples is how many bands are drawn per question per step
	// (default 16). With the label reward a sample costs nothing but the
	// reward, and the leave-one-out baseline below needs at least 2.
	Samples int `json:"samples"`
	// Baseline is "rloo" (default: each sample's advantage is its reward
	// minus the mean reward of the question's other samples) or "ema" (the
	// paper: reward minus an exponential moving average of batch rewards,
	// coefficient EMA).
	Baseline string  `json:"baseline"`
	EMA      float64 `json:"ema"` // default 0.5
	// Normalize divides each question's advantages by the standard
	// deviation of its sampled rewards (+0.01), as GRPO does.
	Normalize bool `json:"normalize"`
	// LR is Adam's learning rate (default 1e-3; the paper used 3e-4 with a
	// larger network).
	LR float64 `json:"lr"`
	// LRFinal is the learning rate at the last step as a fraction of LR,
	// reached by cosine decay (default 0.1; 1 keeps LR constant).
	LRFinal float64 `json:"lr_final"`
	// Entropy is the entropy-bonus coefficient at the first epoch, decaying
	// geometrically to EntropyEnd at the last (0 disables it).
	Entropy    float64 `json:"entropy"`
	EntropyEnd float64 `json:"entropy_end"`
	// ClipNorm clips the gradient's global norm (default 1; <0 disables).
	ClipNorm float64 `json:"clip_norm"`
	// Workers compute questions of a batch in parallel (default 1). Results
	// are reproducible for a given Workers.
	Workers int `json:"workers"`

	// Reward scores sampled bands (required).
	Reward Reward `json:"-"`
	// Progress, when set, is told after every step.
	Progress func(done, total int) `json:"-"`
	// Log, when set, receives each epoch's figures.
	Log func(EpochStats) `json:"-"`
	// Checkpoint, when set, is written atomically after every epoch; with
	// Resume an existing checkpoint there is continued from.
	Checkpoint string `json:"-"`
	Resume     bool   `json:"-"`
	// Meta is stored in the returned policy's file.
	Meta map[string]string `json:"-"`
}

func (o *TrainOptions) defaults() error {
	if o.Config == (Config{}) {
		o.Config = DefaultConfig
	}
	if o.Epochs == 0 {
		o.Epochs = 20
	}
	if o.Batch == 0 {
		o.Batch = 32
	}
	if o.Samples == 0 {
		o.Samples = 16
	}
	if o.Baseline == "" {
		o.Baseline = "rloo"
	}
	if o.EMA == 0 {
		o.EMA = 0.5
	}
	if o.LR == 0 {
		o.LR = 1e-3
	}
	if o.LRFinal == 0 {
		o.LRFinal = 0.1
	}
	if o.ClipNorm == 0 {
		o.ClipNorm = 1
	}
	if o.Workers == 0 {
		o.Workers = 1
	}
	switch {
	case o.Reward == nil:
		return errors.New("no reward")
	case o.Epochs < 0 || o.Batch < 1 || o.Samples < 1 || o.Workers < 1:
		return fmt.Errorf("epochs %d, batch %d, samples %d, workers %d: want epochs ≥ 0 and the rest ≥ 1", o.Epochs, o.Batch, o.Samples, o.Workers)
	case o.Baseline != "rloo" && o.Baseline != "ema":
		return fmt.Errorf("baseline %q: want rloo or ema", o.Baseline)
	case o.Baseline == "rloo" && o.Samples < 2:
		return errors.New("the rloo baseline needs samples ≥ 2")
	case !(o.LR > 0) || !(o.LRFinal > 0) || o.LRFinal > 1 || o.EMA < 0 || o.EMA > 1 || o.Entropy < 0 || o.EntropyEnd < 0:
		return fmt.Errorf("lr %v, ema %v, entropy %v→%v out of range", o.LR, o.EMA, o.Entropy, o.EntropyEnd)
	}
	return o.Config.validate()
}

// EpochStats are one epoch's learning-curve figures.
type EpochStats struct {
	Epoch int `json:"epoch"`
	// TrainReward is the mean reward of the bands sampled during the epoch.
	TrainReward float64 `json:"train_reward"`
	// ValReward, ValRecall, ValTokens and ValK are the deterministic policy's
	// (Beta means) mean reward, recall, tokens and passages on the
	// validation questions (0 without them).
	ValReward float64 `json:"val_reward"`
	ValRecall float64 `json:"val_recall"`
	ValTokens float64 `json:"val_tokens"`
	ValK      float64 `json:"val_k"`
	// MsPerStep is the mean wall time of a gradient step.
	MsPerStep float64 `json:"ms_per_step"`
}

// item is a question prepared for the policy: features and rank order of
// its top window.
type item struct {
	q     Question
	m     int
	order []int // input indices of ranks 0..m-1
	x     []float64
	total int
	gold  int
}

func prepare(qs []Question, cfg Config) ([]item, error) {
	out := make([]item, len(qs))
	for i, q := range qs {
		if err := q.validate(); err != nil {
			return nil, err
		}
		n := len(q.Scores)
		m := cfg.window(n)
		idx := ctxsel.Ranking(q.Scores)
		top := make([]float64, min(n, m+1))
		tokens := make([]int, len(top))
		for r := range top {
			top[r] = q.Scores[idx[r]]
			tokens[r] = q.Tokens[idx[r]]
		}
		mean, std := curveStats(q.Scores)
		nf := cfg.numFeatures()
		it := item{q: q, m: m, order: idx[:m:m], x: make([]float64, m*nf), gold: q.GoldCount()}
		features(top, tokens, m, nf, mean, std, it.x)
		if cfg.Channels > 0 {
			if len(q.Channels) < cfg.Channels {
				return nil, fmt.Errorf("question %q: %d score channels, the policy reads %d", q.ID, len(q.Channels), cfg.Channels)
			}
			channelFeatures(it.x, nf, m, idx, q.Channels[:cfg.Channels])
		}
		for _, t := range q.Tokens {
			it.total += t
		}
		out[i] = it
	}
	return out, nil
}

func (it *item) band(qL, qU float64) Band {
	s, e := BandRanks(it.m, qL, qU)
	b := Band{QL: qL, QU: qU, Start: s, End: e, Indices: it.order[s:e], Total: it.total}
	for _, i := range b.Indices {
		b.Tokens += it.q.Tokens[i]
	}
	return b
}

// trainState is what a checkpoint holds besides the tensors.
type trainState struct {
	Epoch   int          `json:"epoch"` // epochs completed
	Step    int          `json:"step"`
	EMA     float64      `json:"ema_baseline"`
	BestVal float64      `json:"best_val"`
	BestEp  int          `json:"best_epoch"`
	History []EpochStats `json:"history"`
	Options string       `json:"options"`
}

const checkpointFormat = "ctxsel-ldar-checkpoint"

type adam struct {
	m, v grads
	t    int
}

// Train learns a band policy by policy gradient on the questions in train,
// reporting validation figures on val each epoch (val may be empty). It
// returns the policy of the epoch with the best validation reward (the last
// epoch without val) and the learning curve.
func Train(ctx context.Context, train, val []Question, opt TrainOptions) (*Policy, []EpochStats, error) {
	if err := opt.defaults(); err != nil {
		return nil, nil, fmt.Errorf("ldar: train: %w", err)
	}
	if len(train) == 0 {
		return nil, nil, errors.New("ldar: train: no training questions")
	}
	tr, err := prepare(train, opt.Config)
	if err != nil {
		return nil, nil, fmt.Errorf("ldar: train: %w", err)
	}
	va, err := prepare(val, opt.Config)
	if err != nil {
		return nil, nil, fmt.Errorf("ldar: validation: %w", err)
	}
	optJSON, _ := json.Marshal(opt)
	model, err := NewModel(opt.Config, opt.Seed)
	if err != nil {
		return nil, nil, err
	}
	best, _ := NewModel(opt.Config, opt.Seed)
	ad := &adam{m: model.newGrads(), v: model.newGrads()}
	st := trainState{BestVal: math.Inf(-1), BestEp: -1, Options: string(optJSON)}
	if opt.Resume && opt.Checkpoint != "" {
		ok, err := loadCheckpoint(opt.Checkpoint, model, best, ad, &st)
		if err != nil {
			return nil, nil, err
		}
		if ok && st.Options != string(optJSON) {
			return nil, nil, fmt.Errorf("ldar: checkpoint %s was written with other options:\n  %s\nnow:\n  %s", opt.Checkpoint, st.Options, optJSON)
		}
	}
	steps := (len(tr) + opt.Batch - 1) / opt.Batch
	total := steps * opt.Epochs

	W := opt.Workers
	type worker struct {
		ps  pass
		g   grads
		sum float64
		n   int
		err error
	}
	ws := make([]*worker, W)
	for i := range ws {
		ws[i] = &worker{g: model.newGrads()}
	}
	gsum := model.newGrads()
	G := opt.Samples
	for epoch := st.Epoch; epoch < opt.Epochs; epoch++ {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		ent := opt.Entropy
		if opt.Entropy > 0 && opt.EntropyEnd > 0 && opt.Epochs > 1 {
			ent = opt.Entropy * math.Pow(opt.EntropyEnd/opt.Entropy, float64(epoch)/float64(opt.Epochs-1))
		}
		perm := rand.New(rand.NewPCG(opt.Seed, uint64(epoch)+1)).Perm(len(tr))
		var rewardSum float64
		var rewardN int
		began := time.Now()
		for s := range steps {
			batch := perm[s*opt.Batch : min(len(perm), (s+1)*opt.Batch)]
			B := float64(len(batch))
			var wg sync.WaitGroup
			for w := range ws {
				wk := ws[w]
				wk.g.zero()
				wk.sum, wk.n, wk.err = 0, 0, nil
				wg.Add(1)
				go func() {
					defer wg.Done()
					rewards := make([]float64, G)
					samples := make([][2]float64, G)
					for bi := w; bi < len(batch); bi += W {
						it := &tr[batch[bi]]
						rng := rand.New(rand.NewPCG(opt.Seed^0x5eed, uint64(epoch)<<40|uint64(s)<<20|uint64(bi)))
						wk.ps.resize(opt.Config, it.m)
						copy(wk.ps.x, it.x)
						model.forward(&wk.ps)
						b := wk.ps.beta
						for gi := range G {
							qL := sampleBeta(rng, b[0], b[1])
							qD := sampleBeta(rng, b[2], b[3])
							samples[gi] = [2]float64{qL, qD}
							r, err := opt.Reward.Reward(ctx, it.q, it.band(qL, min(qL+qD, 1)))
							if err != nil {
								wk.err = err
								return
							}
							rewards[gi] = r
							wk.sum += r
							wk.n++
						}
						var dbeta [4]float64
						rsum := 0.0
						for _, r := range rewards {
							rsum += r
						}
						scale := 1.0
						if opt.Normalize && G > 1 {
							mu := rsum / float64(G)
							v := 0.0
							for _, r := range rewards {
								v += (r - mu) * (r - mu)
							}
							scale = 1 / (math.Sqrt(v/float64(G)) + 0.01)
						}
						for gi := range G {
							adv := rewards[gi] - st.EMA
							if opt.Baseline == "rloo" {
								adv = rewards[gi] - (rsum-rewards[gi])/float64(G-1)
							}
							adv *= scale
							if adv == 0 {
								continue
							}
							gaL, gbL := betaLogPDFGrad(samples[gi][0], b[0], b[1])
							gaD, gbD := betaLogPDFGrad(samples[gi][1], b[2], b[3])
							c := -adv / (B * float64(G))
							dbeta[0] += c * gaL
							dbeta[1] += c * gbL
							dbeta[2] += c * gaD
							dbeta[3] += c * gbD
						}
						if ent > 0 {
							eaL, ebL := betaEntropyGrad(b[0], b[1])
							eaD, ebD := betaEntropyGrad(b[2], b[3])
							dbeta[0] -= ent / B * eaL
							dbeta[1] -= ent / B * ebL
							dbeta[2] -= ent / B * eaD
							dbeta[3] -= ent / B * ebD
						}
						model.backward(&wk.ps, dbeta, wk.g)
					}
				}()
			}
			wg.Wait()
			gsum.zero()
			batchSum, batchN := 0.0, 0
			for _, wk := range ws {
				if wk.err != nil {
					return nil, nil, fmt.Errorf("ldar: reward: %w", wk.err)
				}
				gsum.add(wk.g)
				batchSum += wk.sum
				batchN += wk.n
			}
			rewardSum += batchSum
			rewardN += batchN
			if opt.Baseline == "ema" {
				st.EMA = opt.EMA*st.EMA + (1-opt.EMA)*batchSum/float64(batchN)
			}
			frac := float64(st.Step) / float64(max(total-1, 1))
			lr := opt.LR * (opt.LRFinal + (1-opt.LRFinal)*0.5*(1+math.Cos(math.Pi*min(frac, 1))))
			ad.step(model, gsum, lr, opt.ClipNorm)
			st.Step++
			if opt.Progress != nil {
				opt.Progress(epoch*steps+s+1, total)
			}
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
		}
		es := EpochStats{Epoch: epoch + 1, TrainReward: rewardSum / float64(max(rewardN, 1)),
			MsPerStep: float64(time.Since(began).Microseconds()) / 1000 / float64(steps)}
		if len(va) > 0 {
			r, err := validate(ctx, model, va, opt.Reward)
			if err != nil {
				return nil, nil, err
			}
			es.ValReward, es.ValRecall, es.ValTokens, es.ValK = r[0], r[1], r[2], r[3]
		}
		st.History = append(st.History, es)
		st.Epoch = epoch + 1
		score := es.ValReward
		if len(va) == 0 {
			score = float64(epoch) // the last epoch wins
		}
		if score > st.BestVal {
			st.BestVal, st.BestEp = score, epoch+1
			for i, t := range model.Tensors {
				copy(best.Tensors[i].W, t.W)
			}
		}
		if opt.Log != nil {
			opt.Log(es)
		}
		if opt.Checkpoint != "" {
			if err := saveCheckpoint(opt.Checkpoint, model, best, ad, &st); err != nil {
				return nil, nil, err
			}
		}
	}
	if st.BestEp < 0 { // zero epochs
		best = model
	}
	meta := map[string]string{}
	for k, v := range opt.Meta {
		meta[k] = v
	}
	meta["best_epoch"] = fmt.Sprint(st.BestEp)
	hj, _ := json.Marshal(st.History)
	meta["history"] = string(hj)
	return NewPolicy(best, meta), st.History, nil
}

// validate returns the deterministic policy's mean reward, recall, tokens
// and k over items.
func validate(ctx context.Context, m *Model, items []item, rw Reward) ([4]float64, error) {
	var out [4]float64
	ps := &pass{}
	for i := range items {
		it := &items[i]
		ps.resize(m.Cfg, it.m)
		copy(ps.x, it.x)
		m.forward(ps)
		pr := predictionFrom(ps.beta, it.m)
		b := it.band(pr.QL, pr.QU)
		r, err := rw.Reward(ctx, it.q, b)
		if err != nil {
			return out, fmt.Errorf("ldar: validation reward: %w", err)
		}
		hit := 0
		for _, j := range b.Indices {
			if it.q.Gold[j] {
				hit++
			}
		}
		out[0] += r
		if it.gold > 0 {
			out[1] += float64(hit) / float64(it.gold)
		}
		out[2] += float64(b.Tokens)
		out[3] += float64(len(b.Indices))
	}
	for i := range out {
		out[i] /= float64(len(items))
	}
	return out, nil
}

func (a *adam) step(m *Model, g grads, lr, clip float64) {
	const b1, b2, eps = 0.9, 0.999, 1e-8
	if clip > 0 {
		norm := 0.0
		for _, t := range g {
			for _, v := range t {
				norm += v * v
			}
		}
		norm = math.Sqrt(norm)
		if norm > clip {
			s := clip / norm
			for _, t := range g {
				for i := range t {
					t[i] *= s
				}
			}
		}
	}
	a.t++
	c1 := 1 - math.Pow(b1, float64(a.t))
	c2 := 1 - math.Pow(b2, float64(a.t))
	for ti, t := range m.Tensors {
		gm, gv, gg := a.m[ti], a.v[ti], g[ti]
		for i := range t.W {
			gm[i] = b1*gm[i] + (1-b1)*gg[i]
			gv[i] = b2*gv[i] + (1-b2)*gg[i]*gg[i]
			// gradient ascent on the objective = descent on the loss
			t.W[i] -= lr * (gm[i] / c1) / (math.Sqrt(gv[i]/c2) + eps)
		}
	}
}

func saveCheckpoint(path string, model, best *Model, ad *adam, st *trainState) error {
	names, shapes, data := model.tensorMaps()
	all := slices.Clone(names)
	for _, pre := range []string{"best.", "adam.m.", "adam.v."} {
		for ti, n := range names {
			k := pre + n
			all = append(all, k)
			shapes[k] = model.Tensors[ti].Shape
			switch pre {
			case "best.":
				data[k] = best.Tensors[ti].W
			case "adam.m.":
				data[k] = ad.m[ti]
			default:
				data[k] = ad.v[ti]
			}
		}
	}
	sj, _ := json.Marshal(st)
	meta := fileMeta(model, checkpointFormat, map[string]string{"state": string(sj), "adam_t": fmt.Sprint(ad.t)})
	return atomicfile.Write(path, func(w io.Writer) error {
		return writeSafetensors(w, meta, all, shapes, data, true)
	})
}

// loadCheckpoint restores a checkpoint into model, best and ad; false when
// there is none yet.
func loadCheckpoint(path string, model, best *Model, ad *adam, st *trainState) (bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("ldar: resume: %w", err)
	}
	f, err := readSafetensors(b)
	if err != nil {
		return false, fmt.Errorf("ldar: resume %s: %w", path, err)
	}
	m, err := modelFromFile(f, checkpointFormat)
	if err != nil {
		return false, fmt.Errorf("ldar: resume %s: %w", path, err)
	}
	if m.Cfg != model.Cfg {
		return false, fmt.Errorf("ldar: resume %s: network %+v, want %+v", path, m.Cfg, model.Cfg)
	}
	for ti, t := range model.Tensors {
		copy(t.W, m.Tensors[ti].W)
		for _, x := range []struct {
			pre string
			dst []float64
		}{{"best.", best.Tensors[ti].W}, {"adam.m.", ad.m[ti]}, {"adam.v.", ad.v[ti]}} {
			src, ok := f.Tensors[x.pre+t.Name]
			if !ok || len(src) != len(x.dst) {
				return false, fmt.Errorf("ldar: resume %s: tensor %s%s missing or mis-sized", path, x.pre, t.Name)
			}
			copy(x.dst, src)
		}
	}
	if err := json.Unmarshal([]byte(f.Meta["state"]), st); err != nil {
		return false, fmt.Errorf("ldar: resume %s: state: %w", path, err)
	}
	if _, err := fmt.Sscan(f.Meta["adam_t"], &ad.t); err != nil {
		return false, fmt.Errorf("ldar: resume %s: adam_t: %w", path, err)
	}
	return true, nil
}
