// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/repro-dp/repro/methods"
	"github.com/repro-dp/repro/nn"
)

// A Mechanism is how a method releases the update of one batch of B
// examples. The zero value releases the raw mean gradient (non-private
// training, FedAvg's client update after one local step).
type Mechanism struct {
	// Rule, when it has clip norms, clips every per-example gradient:
	// jointly (nn.Flat) or per group (per-modality clipping, Rap-FT's
	// partitions). No clip norms: no clipping and no noise.
	Rule nn.ClipRule
	// Sigma are the noise multipliers of Rule's groups (the noise on group
	// g has standard deviation Sigma[g]·Rule.C[g] before the division by
	// B); nil or zeros add no noise.
	Sigma []float64
	// Keep, when in (0, 1), is Dual-Priv's update ratio P_K: only the
	// ⌈Keep·J⌉ of the J trainable tensors with the largest ℓ₂ norm of the
	// privatised gradient are released, the others are zero (Dual-Priv
	// Mechanism 2 ranks by the raw norm, as methods.DualPriv does). 0 or
	// 1 releases every tensor.
	Keep float64
	// Mask, when not nil, is an element mask over the layout (SPARTA's
	// fixed row mask, nn.Layout.RowMask): masked-out coordinates are
	// removed from every per-example gradient before clipping and are zero
	// in the release (no noise is released for them).
	Mask []float32
	// Seed seeds the noise (the stream of methods.NewPrivatizer).
	Seed uint64
}

// Release returns the update that m releases for the per-example gradients
// grads of one batch over layout l: the mean of the clipped gradients
// plus Gaussian noise, normalised by the batch size B = len(grads), and
// masked to the kept blocks. The clipping and noise are
// methods.Privatizer's, the mechanism every private method runs. grads are
// not modified. It returns an error for an empty batch or a bad
// mechanism.
func Release(l *nn.Layout, grads [][]float32, m Mechanism) ([]float32, error) {
	if len(grads) == 0 {
		return nil, fmt.Errorf("gia: release of an empty batch")
	}
	for i, g := range grads {
		if len(g) != l.Size {
			return nil, fmt.Errorf("gia: gradient %d has %d values, layout %d", i, len(g), l.Size)
		}
	}
	if m.Keep < 0 || m.Keep > 1 || math.IsNaN(m.Keep) {
		return nil, fmt.Errorf("gia: update ratio %v outside [0, 1]", m.Keep)
	}
	if m.Mask != nil && len(m.Mask) != l.Size {
		return nil, fmt.Errorf("gia: mask of %d values, layout %d", len(m.Mask), l.Size)
	}
	cp := make([][]float32, len(grads))
	for i, g := range grads {
		cp[i] = slices.Clone(g)
		if m.Mask != nil {
			nn.ApplyMask(cp[i], m.Mask)
		}
	}
	out := make([]float32, l.Size)
	if len(m.Rule.C) == 0 {
		nn.Sum(out, cp)
		inv := 1 / float64(len(grads))
		for j, v := range out {
			out[j] = float32(float64(v) * inv)
		}
	} else {
		sigma := m.Sigma
		if sigma == nil {
			sigma = make([]float64, len(m.Rule.C))
		}
		p, err := methods.NewPrivatizer(m.Rule, sigma, float64(len(grads)), m.Seed)
		if err != nil {
			return nil, fmt.Errorf("gia: %w", err)
		}
		p.Privatize(out, cp)
		if m.Mask != nil {
			nn.ApplyMask(out, m.Mask)
		}
	}
	if m.Keep > 0 && m.Keep < 1 {
		pruneBlocks(l, out, m.Keep)
	}
	return out, nil
}

// pruneBlocks zeroes all but the ⌈keep·J⌉ blocks of g with the largest ℓ₂
// norm (ties by index), as Dual-Priv's Algorithm 1, lines 12–15.
func pruneBlocks(l *nn.Layout, g []float32, keep float64) {
	j := len(l.Params)
	norms := make([]float64, j)
	for i := range j {
		norms[i] = norm(l.Block(g, i))
	}
	k := max(1, int(math.Ceil(float64(keep*float64(j))-1e-9)))
	order := make([]int, j)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(norms[b], norms[a]) })
	for _, i := range order[min(k, j):] {
		clear(l.Block(g, i))
	}
}

func norm(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(float64(v) * float64(v))
	}
	return math.Sqrt(s)
}

// block returns the released gradient of the parameter named name, or nil
// when it is not in the layout (frozen, so not released).
func block(l *nn.Layout, g []float32, p *nn.Param) []float32 {
	if p == nil {
		return nil
	}
	i := l.Index(p)
	if i < 0 {
		return nil
	}
	return l.Block(g, i)
}

// PerModality returns the clip rule of Sec-MMFL's per-modality mechanism
// on layout l: tensors named "image.*" form group 0 and every other tensor
// (text encoder and head) group 1, clipped to cImage and cText; pair it
// with one noise multiplier per group in Mechanism.Sigma.
func PerModality(l *nn.Layout, cImage, cText float64) nn.ClipRule {
	part := l.Parts(func(p *nn.Param) int {
		if strings.HasPrefix(p.Name, "image.") {
			return 0
		}
		return 1
	})
	return nn.ClipRule{Part: part, C: []float64{cImage, cText}}
}
