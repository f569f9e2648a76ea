// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"fmt"
	"slices"
	"strings"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/nn"
)

var (
	_ Effector = SPARTA{}
	_ Effector = DPMTV{}
)

// Effective implements Effector: the sparsity as the rows (mask sparta)
// or weights (the element masks) that the mask keeps of each maskable
// layer of the preset's ViT or CNN (the model hyperparameter) at scale (keepCount of its rows or
// elements), as "rows kept: 2 of 16 (q, k, v, o), 7 of 64 (fc1)".
// Nothing for the masks that take no sparsity (all, last, dpbitfit).
func (SPARTA) Effective(task, scale string, h Hyper) map[string]string {
	mask := h.String("mask")
	unit := "weights"
	switch mask {
	case maskSPARTA:
		unit = "rows"
	case maskAll, maskLast, maskBitFit:
		return nil
	}
	cfg, err := nn.Preset(scale, datasets.Vocab().Len())
	if err != nil {
		return nil
	}
	cfg.Classes = 2 // the head is not maskable
	var params []*nn.Param
	if isCNN(h.String("model")) {
		c, err := nn.NewCNN(cfg)
		if err != nil {
			return nil
		}
		params = c.Params()
	} else {
		v, err := nn.NewViT(cfg)
		if err != nil {
			return nil
		}
		params = v.Params()
	}
	s := h.Float("sparsity")
	type count struct{ kept, of int }
	var order []count
	layers := map[count][]string{}
	for _, p := range maskable(params, h.List("layers")) {
		n := len(p.Data)
		if mask == maskSPARTA {
			n = p.Rows()
		}
		c := count{keepCount(s, n), n}
		if !slices.Contains(order, c) {
			order = append(order, c)
		}
		if l := layerOf(p); !slices.Contains(layers[c], l) {
			layers[c] = append(layers[c], l)
		}
	}
	if len(order) == 0 {
		return nil
	}
	parts := make([]string, len(order))
	for i, c := range order {
		parts[i] = fmt.Sprintf("%d of %d (%s)", c.kept, c.of, strings.Join(layers[c], ", "))
	}
	return map[string]string{"sparsity": unit + " kept per layer: " + strings.Join(parts, ", ")}
}

// Effective implements Effector: on the icl task, the chunk count and the
// shots as the counts a run uses, where 0 means every one available
// (chunks: the private episodes less the validation episodes of private
// selection; shots: an episode's demonstrations at scale), so that 0 and
// the count it stands for are one setting.
func (DPMTV) Effective(task, scale string, h Hyper) map[string]string {
	if task != "icl" {
		return nil
	}
	sc, err := datasets.ParseScale(scale)
	if err != nil {
		return nil
	}
	sz, err := datasets.TaskSizes(task, sc)
	if err != nil {
		return nil
	}
	k := h.Int("chunks")
	if k == 0 {
		k = sz.Private
		if h.String("selection") == selectPrivate {
			k -= h.Int("val_records")
		}
	}
	n := h.Int("shots")
	if n == 0 {
		n = datasets.ICLShots(sc)
	}
	return map[string]string{
		"chunks": fmt.Sprintf("K = %d chunks", k),
		"shots":  fmt.Sprintf("N = %d demonstrations per chunk", n),
	}
}
