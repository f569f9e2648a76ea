// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"strings"
	"time"
)

// Meter accumulates the cost of training steps so that methods can be
// compared: wall time per step and peak bytes of training state per step.
// The zero value is ready to use. A Meter is not safe for concurrent use.
type Meter struct {
	Steps   int
	Total   time.Duration
	Longest time.Duration
	// PeakBytes is the largest Stats.PeakBytes seen plus the extra bytes
	// (parameters, optimizer moments, noise buffers) reported with it.
	PeakBytes int64
}

// Add records one step that took d and held s's training state plus extra
// bytes the engine does not count (ModelBytes of the model, an optimizer's
// moment vectors).
func (m *Meter) Add(d time.Duration, s Stats, extra int64) {
	m.Steps++
	m.Total += d
	m.Longest = max(m.Longest, d)
	m.PeakBytes = max(m.PeakBytes, s.PeakBytes()+extra)
}

// PerStep returns the mean wall time of a step (0 before any step).
func (m *Meter) PerStep() time.Duration {
	if m.Steps == 0 {
		return 0
	}
	return m.Total / time.Duration(m.Steps)
}

// LayerOf returns the layer a parameter name belongs to: the prefix up to
// and including the block index for transformer blocks
// ("lm.blocks.2.attn.q.lora_a" → "lm.blocks.2"), the module of a weight,
// bias or LoRA factor ("projector.fc1.weight" → "projector.fc1",
// "head.bias" → "head", so a layer's weight and bias are one group), and
// the name without its last component for other names of three or more
// components; a two-component tensor that is not a weight or bias is a
// layer of its own ("lm.tok" → "lm.tok").
func LayerOf(name string) string {
	if i := strings.Index(name, ".blocks."); i >= 0 {
		rest := name[i+len(".blocks."):]
		if j := strings.IndexByte(rest, '.'); j >= 0 {
			return name[:i+len(".blocks.")+j]
		}
		return name
	}
	j := strings.LastIndexByte(name, '.')
	if j < 0 {
		return name
	}
	switch name[j+1:] {
	case "weight", "bias", "lora_a", "lora_b":
		return name[:j]
	}
	if strings.Count(name, ".") > 1 {
		return name[:j]
	}
	return name
}

// Groups assigns every parameter of l to the group named by key, numbered
// in order of first appearance, and returns the part index of every element
// (for ClipRule.Part) and the group names. Per-layer clipping is
// Groups(l, func(p *Param) string { return LayerOf(p.Name) }); per-modality
// clipping keys on the name's first component.
func (l *Layout) Groups(key func(p *Param) string) (parts []int32, names []string) {
	ix := map[string]int{}
	parts = l.Parts(func(p *Param) int {
		k := key(p)
		i, ok := ix[k]
		if !ok {
			i = len(names)
			ix[k] = i
			names = append(names, k)
		}
		return i
	})
	return parts, names
}
