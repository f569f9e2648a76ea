// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Sampler chooses the next token from logits. TopK ≤ 1 is greedy decoding
// (the highest logit, lowest id on ties); otherwise the token is drawn from
// the softmax of the TopK highest logits divided by Temperature (default 1).
type Sampler struct {
	TopK        int
	Temperature float64
}

// Next returns the chosen token id. rng is used only when TopK > 1; it
// panics if rng is nil then.
func (s Sampler) Next(logits []float32, rng *rand.Rand) int {
	if s.TopK <= 1 {
		best := 0
		for i, v := range logits {
			if v > logits[best] {
				best = i
			}
		}
		return best
	}
	idx := make([]int, len(logits))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return logits[idx[a]] > logits[idx[b]] })
	k := min(s.TopK, len(idx))
	temp := s.Temperature
	if temp <= 0 {
		temp = 1
	}
	w := make([]float64, k)
	var sum float64
	for i := 0; i < k; i++ {
		w[i] = math.Exp((float64(logits[idx[i]]) - float64(logits[idx[0]])) / temp)
		sum += w[i]
	}
	u := rng.Float64() * sum
	for i := 0; i < k; i++ {
		u -= w[i]
		if u < 0 {
			return idx[i]
		}
	}
	return idx[k-1]
}

// Generate continues prompt by up to maxNew tokens and returns them (without
// the prompt). It stops after TokenEOS (which is included) or when the
// sequence reaches MaxLen; a prompt longer than MaxLen (visual tokens
// included) is an error. The images are encoded once; every step reruns
// the language model on the whole sequence, so hooks see every position at
// every step (DP-MTV patches the last position at each step). rng drives
// sampling and may be nil for greedy decoding. GenerateBatch decodes many
// prompts together with a KV cache, without hooks, about ten times faster.
func (m *TinyMLLM) Generate(prompt *Sequence, maxNew int, s Sampler, rng *rand.Rand, h *Hooks, vt VisualTransform) ([]int, error) {
	if err := m.Check(&Sequence{Tokens: prompt.Tokens, Images: prompt.Images}); err != nil {
		return nil, err
	}
	// Without hooks or steering, every pass runs on an inference tape
	// (infer.go), and the language model's last block on the last row
	// only, the one whose logits are read: the same bits.
	infer := h == nil && m.Steer == nil
	tape := func() *Tape {
		if infer {
			return newInferTape(m.packPeriod())
		}
		return NewTape(nil, nil)
	}
	t0 := tape()
	defer t0.Release()
	vis := make([]*Node, len(prompt.Images))
	nvis := 0
	for i, img := range prompt.Images {
		v, _ := m.EncodeImage(t0, img, i, false, h, vt)
		vis[i] = v.Tokens
		nvis += v.Tokens.Value.Rows() - 1
	}
	toks := append([]int(nil), prompt.Tokens...)
	if n := len(toks) + nvis; n > m.Config.MaxLen {
		return nil, fmt.Errorf("nn: prompt of %d tokens (with visual tokens) longer than the maximum %d", n, m.Config.MaxLen)
	}
	var out []int
	for len(out) < maxNew && len(toks)+nvis < m.Config.MaxLen {
		seq := Sequence{Tokens: toks, Images: prompt.Images}
		if infer {
			next, err := m.nextToken(&seq, vis, s, rng)
			if err != nil {
				return nil, err
			}
			toks = append(toks, next)
			out = append(out, next)
			if next == TokenEOS {
				break
			}
			continue
		}
		t := NewTape(nil, nil)
		if m.Steer != nil && len(out) > 0 {
			// The generated tokens are the answer: a steered model
			// patches from the prompt's last position on, as under a
			// key-value cache.
			seq.Loss = make([]bool, len(toks))
			for i := len(prompt.Tokens); i < len(toks); i++ {
				seq.Loss[i] = true
			}
		}
		hid, _, err := m.Forward(t, &seq, vis, h, vt)
		if err != nil {
			return nil, err
		}
		z := m.Logits(t, hid, []int{hid.Value.Rows() - 1})
		// The placeholder is not a word: it can never be generated.
		z.Value.Data[TokenImage] = float32(math.Inf(-1))
		next := s.Next(z.Value.Data, rng)
		toks = append(toks, next)
		out = append(out, next)
		if next == TokenEOS {
			break
		}
	}
	return out, nil
}

// nextToken is one step of Generate without hooks or steering: the token s
// chooses after seq, whose images' visual tokens are vis, from a forward
// pass on an inference tape whose last block runs on the last row only.
func (m *TinyMLLM) nextToken(seq *Sequence, vis []*Node, s Sampler, rng *rand.Rand) (int, error) {
	t := newInferTape(m.packPeriod())
	defer t.Release()
	x, _, err := m.embed(t, seq, vis, nil)
	if err != nil {
		return 0, err
	}
	T := x.Value.Rows()
	hid, _ := m.LM.forward(t, x, nil, &rowKeep{rows: []int{T - 1}, off: []int{0, 1}}, -1, nil)
	z := t.Affine(hid, t.Param(m.Tok), nil)
	// The placeholder is not a word: it can never be generated.
	z.Value.Data[TokenImage] = float32(math.Inf(-1))
	return s.Next(z.Value.Data, rng), nil
}
