// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"fmt"
	"slices"

	"github.com/repro-dp/repro/internal/parallel"
)

// MeanLosses writes the loss of every sequence of batch under m to out (len
// batch): the mean next-token cross-entropy over the tokens its Loss marks,
// as Loss computes it with the visual transform vt (nil: none), without
// gradients. It computes them on up to workers
// goroutines (0 means GOMAXPROCS), each sequence on its own, so the results
// do not depend on workers. It returns the error of the lowest-indexed
// sequence that fails, and an error for a sequence that marks no token. It
// panics if len(out) != len(batch).
//
// This is the one per-example loss of the project: membership inference
// and evaluation call it, and zeroth-order training calls
// TinyMLLM.MeanLosses, which gives its bits on the batched engine.
func MeanLosses(m *TinyMLLM, batch []Sequence, vt VisualTransform, workers int, out []float64) error {
	if len(out) != len(batch) {
		panic("nn: MeanLosses: len(out) != len(batch)")
	}
	return parallel.For(len(batch), workers, func(i int) error {
		ls, _, err := m.TokenLosses(&batch[i], nil, vt)
		if err == nil && len(ls) == 0 {
			err = fmt.Errorf("nn: sequence %d marks no loss token", i)
		}
		if err != nil {
			return err
		}
		s := 0.0
		for _, l := range ls {
			s += l
		}
		out[i] = s / float64(len(ls))
		return nil
	})
}

// lossGroup is the number of consecutive sequences TinyMLLM.MeanLosses
// puts on one batched tape.
const lossGroup = 8

// MeanLosses is the package function MeanLosses without a visual
// transform, on the batched engine: groups of lossGroup consecutive
// sequences share one tape (ForwardBatch), and with the cache
// opt.Visual, when no tensor of the vision encoder or the projector is in
// l, the visual tokens of the images it holds come from it (see
// VisualCache). Every sequence's rows, its logits and so its loss have the
// bits of the package function (see the top of batch.go), so the result is
// the same bits for any opt.Workers (0: GOMAXPROCS) and with or without the
// cache. If a group has an invalid sequence, it returns what the package
// function returns for the whole batch. It panics if len(out) !=
// len(batch).
func (m *TinyMLLM) MeanLosses(l *Layout, batch []Sequence, opt *Options, out []float64) error {
	if len(out) != len(batch) {
		panic("nn: MeanLosses: len(out) != len(batch)")
	}
	workers := 0
	if opt != nil {
		workers = opt.Workers
	}
	vc := m.VisualCacheFor(l, opt)
	// The groups share the packed weights, checked once a call; the
	// tensors of l (perturbed from call to call by DPZO) are not cached.
	scope := newPackScope(l)
	groups := (len(batch) + lossGroup - 1) / lossGroup
	// With a PassShare, the groups keep (the first call since its Reset)
	// or read the values that l leaves shared.
	var sh *PassShare
	var lv shareLevels
	fill := false
	if opt != nil && opt.Share != nil && m.Steer == nil {
		if lv = m.shareLevels(l); lv.embed {
			sh = opt.Share
			fill = sh.begin(m, l, batch, groups)
		}
	}
	err := parallel.For(groups, workers, func(g int) error {
		from, to := g*lossGroup, min((g+1)*lossGroup, len(batch))
		var ts *tapeShare
		if sh != nil {
			ts = &tapeShare{g: &sh.groups[g], lv: lv, fill: fill}
		}
		return m.meanLossesGroup(batch[from:to], vc, scope, ts, out[from:to])
	})
	if err != nil {
		if sh != nil {
			sh.Reset()
		}
		return MeanLosses(m, batch, nil, workers, out)
	}
	if fill {
		sh.filled = true
	}
	return nil
}

// meanLossesSteered is meanLossesGroup for a steered model, on an
// ordinary tape with every row of the language model.
func (m *TinyMLLM) meanLossesSteered(batch []Sequence, vc *VisualCache, out []float64) error {
	t := NewTape(nil, nil)
	hid, off, pos, err := m.forwardBatch(t, batch, vc)
	if err != nil {
		return err
	}
	var rows, targets, ends []int
	for e := range batch {
		s := &batch[e]
		for i, l := range s.Loss {
			if l {
				if pos[e][i] < 1 {
					return fmt.Errorf("nn: sequence %d marks its first token", e)
				}
				rows = append(rows, off[e]+pos[e][i]-1)
				targets = append(targets, s.Tokens[i])
			}
		}
		ends = append(ends, len(rows))
	}
	meanRows(rowLosses(m.Logits(t, hid, rows).Value, targets), ends, out)
	return nil
}

// meanRows sets out[e] to the mean of losses[ends[e−1]:ends[e]] (from 0
// for e = 0), summed in order.
func meanRows(losses []float64, ends []int, out []float64) {
	r := 0
	for e, end := range ends {
		s, n := 0.0, end-r
		for ; r < end; r++ {
			s += losses[r]
		}
		out[e] = s / float64(n)
	}
}

// meanLossesGroup writes the mean losses of batch, one batched tape with
// the packed weights of scope and the group's part of a PassShare (ts,
// nil without one), to out; it fails where an example is invalid or marks
// no loss token.
func (m *TinyMLLM) meanLossesGroup(batch []Sequence, vc *VisualCache, scope *packScope, ts *tapeShare, out []float64) error {
	for i := range batch {
		if !slices.Contains(batch[i].Loss, true) {
			return fmt.Errorf("nn: sequence %d marks no loss token", i)
		}
	}
	if m.Steer != nil {
		return m.meanLossesSteered(batch, vc, out)
	}
	t := newInferTape(scope)
	defer t.Release()
	t.share = ts
	hid, _, _, keep, targets, err := m.forwardRows(t, batch, vc, true)
	if err != nil {
		return err
	}
	// hid holds the rows that predict the marked tokens only (see
	// forwardRows): the logits of every one of its rows.
	losses := rowLosses(t.Affine(hid, t.Param(m.Tok), nil).Value, targets)
	ends := keep.off[1:]
	meanRows(losses, ends, out)
	return nil
}
