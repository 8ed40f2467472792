package evidencetrain

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/ctxsel/ctxsel/evidence"
)

// TreeOptions configure FitTrees. Zero values take the defaults.
type TreeOptions struct {
	// Trees is the number of boosting rounds (default 200).
	Trees int
	// Depth of every tree (default 3).
	Depth int
	// Rate is the learning rate, each tree's shrinkage (default 0.1).
	Rate float64
	// L2 is the penalty on leaf values (default 1).
	L2 float64
	// MinHessian is the least summed Hessian (weight · p(1−p)) a child
	// must hold for a split (default 1).
	MinHessian float64
	// Bins bounds the candidate thresholds per feature (default 64): the
	// quantiles of its values.
	Bins int
}

func (o *TreeOptions) defaults() {
	if o.Trees <= 0 {
		o.Trees = 200
	}
	if o.Depth <= 0 {
		o.Depth = 3
	}
	if o.Rate <= 0 {
		o.Rate = 0.1
	}
	if o.L2 <= 0 {
		o.L2 = 1
	}
	if o.MinHessian <= 0 {
		o.MinHessian = 1
	}
	if o.Bins <= 1 || o.Bins > 256 {
		o.Bins = 64
	}
}

// FitTrees fits gradient-boosted regression trees of the log-odds of the
// label on the named features (logistic loss, second-order steps, L2 on
// the leaves), thresholds at the quantiles of each feature's values. It
// is deterministic: no sampling, ties broken by feature and threshold
// order. The first n trees of the result are the model fitted with n
// rounds (evidence.Model.Truncated). Packing settings are the embedded
// model's; set them after.
func FitTrees(rows Rows, features []string, opt TreeOptions) (*evidence.Model, error) {
	cols, err := rows.check(features)
	if err != nil {
		return nil, fmt.Errorf("trees fit: %w", err)
	}
	opt.defaults()
	if opt.Depth > 6 {
		return nil, fmt.Errorf("trees fit: depth %d, want at most 6", opt.Depth)
	}
	n, d := len(rows.X), len(cols)
	// thresholds per feature and each row's bin: bin b holds x ≤ cuts[b]
	cuts := make([][]float64, d)
	bins := make([][]uint8, d)
	vals := make([]float64, n)
	for j, c := range cols {
		for i, x := range rows.X {
			vals[i] = x[c]
		}
		cuts[j] = quantileCuts(vals, opt.Bins)
		bins[j] = make([]uint8, n)
		for i, v := range vals {
			bins[j][i] = uint8(sort.SearchFloat64s(cuts[j], v))
		}
	}
	y := make([]float64, n)
	pos, wsum := 0.0, 0.0
	for i, l := range rows.Y {
		if l {
			y[i] = 1
			pos += rows.weight(i)
		}
		wsum += rows.weight(i)
	}
	base := math.Log(pos / (wsum - pos))
	f := make([]float64, n)
	for i := range f {
		f[i] = base
	}
	forest := &evidence.Forest{Depth: opt.Depth, Base: base}
	g, h := make([]float64, n), make([]float64, n)
	node := make([]int32, n) // each row's node at the current level
	internal := 1<<opt.Depth - 1
	nb := opt.Bins + 1
	gh := make([]float64, 2*nb)
	for range opt.Trees {
		for i := range n {
			p := sigmoid(f[i])
			w := rows.weight(i)
			g[i], h[i] = w*(p-y[i]), w*p*(1-p)
			node[i] = 0
		}
		t := evidence.Tree{Feature: make([]int, internal), Threshold: make([]float64, internal), Leaf: make([]float64, internal+1)}
		for level := range opt.Depth {
			first, count := 1<<level-1, 1<<level
			// the rows of each node of this level
			members := make([][]int32, count)
			for i := range n {
				if k := int(node[i]) - first; k >= 0 && k < count {
					members[k] = append(members[k], int32(i))
				}
			}
			for k, rs := range members {
				at := first + k
				t.Feature[at] = -1
				var G, H float64
				for _, i := range rs {
					G += g[i]
					H += h[i]
				}
				bestGain, bestF, bestB := 1e-9, -1, 0
				parent := G * G / (H + opt.L2)
				for j := range d {
					clear(gh)
					bj := bins[j]
					for _, i := range rs {
						b := int(bj[i])
						gh[2*b] += g[i]
						gh[2*b+1] += h[i]
					}
					var gl, hl float64
					for b := 0; b < len(cuts[j])-1; b++ {
						gl += gh[2*b]
						hl += gh[2*b+1]
						hr := H - hl
						if hl < opt.MinHessian || hr < opt.MinHessian {
							continue
						}
						gr := G - gl
						if gain := gl*gl/(hl+opt.L2) + gr*gr/(hr+opt.L2) - parent; gain > bestGain {
							bestGain, bestF, bestB = gain, j, b
						}
					}
				}
				if bestF >= 0 {
					t.Feature[at], t.Threshold[at] = bestF, cuts[bestF][bestB]
				}
				for _, i := range rs {
					if bestF >= 0 && int(bins[bestF][i]) > bestB {
						node[i] = int32(2*at + 2)
					} else {
						node[i] = int32(2*at + 1)
					}
				}
			}
		}
		// leaves: a Newton step each, shrunk
		G, H := make([]float64, internal+1), make([]float64, internal+1)
		for i := range n {
			l := int(node[i]) - internal
			G[l] += g[i]
			H[l] += h[i]
		}
		for l := range t.Leaf {
			if H[l] > 0 {
				t.Leaf[l] = math.Max(-50, math.Min(50, -opt.Rate*G[l]/(H[l]+opt.L2)))
			}
		}
		for i := range n {
			f[i] += t.Leaf[int(node[i])-internal]
		}
		forest.Trees = append(forest.Trees, t)
	}
	m := &evidence.Model{Version: evidence.ModelVersion, Learner: evidence.LearnerTrees, Features: slices.Clone(features), Forest: forest}
	withDefaults(m)
	return m, m.Validate()
}

// quantileCuts returns up to bins thresholds splitting vals into runs of
// about equal size: distinct values, ascending, the largest value last
// (so every value falls in a bin).
func quantileCuts(vals []float64, bins int) []float64 {
	s := slices.Clone(vals)
	slices.Sort(s)
	if distinct := slices.Compact(slices.Clone(s)); len(distinct) <= bins {
		return distinct
	}
	var cuts []float64
	for b := 1; b < bins; b++ {
		v := s[b*len(s)/bins]
		if len(cuts) == 0 || v > cuts[len(cuts)-1] {
			cuts = append(cuts, v)
		}
	}
	if last := s[len(s)-1]; cuts[len(cuts)-1] < last {
		cuts = append(cuts, last)
	}
	return cuts
}
