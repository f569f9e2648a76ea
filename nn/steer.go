// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"fmt"
	"slices"
)

// Steering is a fixed intervention on a TinyMLLM's language model, the
// inference of multimodal task vectors: the outputs of chosen attention
// heads (the input of the attention out-projection) are replaced by fixed
// values at the last prompt position and at every position decoded after
// it. A model with TinyMLLM.Steer set applies it in every forward pass:
// Forward and Loss (from the position that predicts the first token the
// sequence's Loss marks, or at the last position when it marks none),
// Generate (the prompt's last position and every generated one), the
// batched engine (ForwardBatch, MeanLosses: as Forward, per sequence) and
// the key-value cache (Prefill: the prompt's last position; Extend: every
// new position). With Once, only the prompt's last position is patched.
// It changes no parameter.
//
// References:
//   - B. Huang, C. Mitra, A. Arbelle, L. Karlinsky, T. Darrell, R. Herzig,
//     "Multimodal Task Vectors Enable Many-Shot Multimodal In-Context
//     Learning", NeurIPS 2024, §3 (the intervention at the last token).
type Steering struct {
	// Heads are the patched heads of the language model's blocks, each
	// (Layer, Head) at most once.
	Heads []SteeredHead
	// Once patches the prompt's last position only (the first decoding
	// step), not the positions decoded after it.
	Once bool
}

// SteeredHead is one patched head: head Head of language-model block
// Layer outputs Value (the head width, Width/Heads floats).
type SteeredHead struct {
	Layer, Head int
	Value       []float32
}

// CheckSteering returns an error if s does not fit m: a layer or head out
// of range, a value of the wrong length or a head listed twice.
func (m *TinyMLLM) CheckSteering(s *Steering) error {
	if s == nil {
		return nil
	}
	L, H := len(m.LM.Blocks), m.Config.Heads
	dh := m.Config.Width / H
	seen := make(map[[2]int]bool)
	for _, h := range s.Heads {
		switch {
		case h.Layer < 0 || h.Layer >= L:
			return fmt.Errorf("nn: steered layer %d outside [0, %d)", h.Layer, L)
		case h.Head < 0 || h.Head >= H:
			return fmt.Errorf("nn: steered head %d outside [0, %d)", h.Head, H)
		case len(h.Value) != dh:
			return fmt.Errorf("nn: steered head (%d, %d) has %d values, want %d", h.Layer, h.Head, len(h.Value), dh)
		case seen[[2]int{h.Layer, h.Head}]:
			return fmt.Errorf("nn: head (%d, %d) steered twice", h.Layer, h.Head)
		}
		seen[[2]int{h.Layer, h.Head}] = true
	}
	return nil
}

// steerSpan returns the steered positions [from, end) of the expanded
// sequence s of T positions whose tokens sit at pos (Forward's pos): from
// the one that predicts the first token s.Loss marks, or the last one, to
// the end (to the next position under Once).
func (m *TinyMLLM) steerSpan(s *Sequence, pos []int, T int) (from, end int) {
	from = T - 1
	if i := slices.Index(s.Loss, true); i > 0 {
		from = pos[i] - 1
	}
	if m.Steer != nil && m.Steer.Once {
		return from, from + 1
	}
	return from, T
}

// steerHooks returns h with m.Steer added: in the language model, the
// steered heads of every row r with from[e] ≤ r < end[e] for some e are
// replaced after h's own patches (rows are those of the stacked sequences;
// from and end are absolute row indices). It returns h when m has no
// steering.
func (m *TinyMLLM) steerHooks(h *Hooks, from, end []int) *Hooks {
	if m.Steer == nil || len(m.Steer.Heads) == 0 {
		return h
	}
	var own func(string, int, Tensor) []HeadPatch
	out := &Hooks{}
	if h != nil {
		out.Observe, own = h.Observe, h.Heads
	}
	out.Heads = func(stack string, layer int, heads Tensor) []HeadPatch {
		var ps []HeadPatch
		if own != nil {
			ps = own(stack, layer, heads)
		}
		if stack != m.LM.Name {
			return ps
		}
		for _, sh := range m.Steer.Heads {
			if sh.Layer != layer {
				continue
			}
			for e := range from {
				for r := from[e]; r < end[e]; r++ {
					ps = append(ps, HeadPatch{Pos: r, Head: sh.Head, Value: sh.Value})
				}
			}
		}
		return ps
	}
	return out
}

// steerRows writes the steered heads of block l into the per-head outputs
// heads ([rows, width]) at rows from[e] to end[e] of each e: the key-value
// cache's form of steerHooks.
func (m *TinyMLLM) steerRows(l int, heads Tensor, from, end []int) {
	if m.Steer == nil {
		return
	}
	if m.Steer.Once {
		end = slices.Clone(end)
		for e := range end {
			end[e] = min(end[e], from[e]+1)
		}
	}
	D := heads.Cols()
	dh := D / m.Config.Heads
	for _, sh := range m.Steer.Heads {
		if sh.Layer != l {
			continue
		}
		for e := range from {
			for r := from[e]; r < end[e]; r++ {
				copy(heads.Data[r*D+sh.Head*dh:r*D+(sh.Head+1)*dh], sh.Value)
			}
		}
	}
}
