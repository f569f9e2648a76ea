// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"slices"
	"sync"
)

// VisualCache keeps the projected visual tokens of images across the steps
// of a fine-tuning run whose vision encoder and projector are frozen, so
// that the batched engine (batch.go) does not encode the same image again
// at every step. Set it in Options.Visual; TinyMLLM.PerSample and Gradient
// use it only on the batched engine and only when no tensor of the vision
// encoder or the projector is trainable, and give the same bits with it as
// without it (a cached token is the value the engine computed for that
// image, and every image's rows are computed alone, whatever else is on
// the tape).
//
// It can never serve a stale token. An entry is keyed by the SHA-256 of
// the image's values, so an image changed in place is a new key; and every
// call first compares the model and every value of the encoder's and the
// projector's tensors with those the entries were computed from, bit for
// bit, and empties the cache on any difference (a model changed or
// rebuilt, an update to a frozen tensor, new LoRA factors in the encoder).
// It holds at most the byte budget it was created with; once full it adds
// nothing more. It is safe for concurrent use.
type VisualCache struct {
	mu      sync.Mutex
	max     int64
	bytes   int64
	model   *TinyMLLM
	weights [][]float32
	scalars []float64
	tokens  map[[sha256.Size]byte]Tensor
}

// NewVisualCache returns an empty cache that holds at most maxBytes bytes
// of visual tokens.
func NewVisualCache(maxBytes int64) *VisualCache {
	return &VisualCache{max: maxBytes}
}

// Bytes returns the bytes of the visual tokens and of the copy of the
// frozen tensors the cache holds (0 for a nil cache).
func (c *VisualCache) Bytes() int64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.bytes
	for _, w := range c.weights {
		b += int64(4 * len(w))
	}
	return b
}

// visualParams returns the tensors the visual tokens depend on: the vision
// encoder's and the projector's.
func (m *TinyMLLM) visualParams() []*Param {
	ps := append(m.Vision.Params(), m.Proj1.Params()...)
	return append(ps, m.Proj2.Params()...)
}

// visualScalars returns the numbers besides tensors that the visual
// tokens depend on: the LoRA scales of the encoder's maps and the
// LayerNorms' epsilons.
func (m *TinyMLLM) visualScalars() []float64 {
	v := m.Vision
	s := []float64{v.Stack.LN.Eps, float64(v.PatchEmbed.LoRAScale), float64(m.Proj1.LoRAScale), float64(m.Proj2.LoRAScale)}
	for _, b := range v.Stack.Blocks {
		s = append(s, b.LN1.Eps, b.LN2.Eps)
		for _, lin := range []*Linear{b.Q, b.K, b.V, b.O, b.MLP.FC1, b.MLP.FC2} {
			s = append(s, float64(lin.LoRAScale))
		}
	}
	return s
}

// visualCache returns the cache of opt for m's batched engine after
// checking it against m (sync), or nil when there is none or when a tensor
// of the vision encoder or the projector is in l (trainable).
func (m *TinyMLLM) visualCache(l *Layout, opt *Options) *VisualCache {
	if opt == nil || opt.Visual == nil {
		return nil
	}
	ps := m.visualParams()
	for _, p := range ps {
		if l.Index(p) >= 0 {
			return nil
		}
	}
	opt.Visual.sync(m, ps, m.visualScalars())
	return opt.Visual
}

// sync empties the cache unless its entries were computed by m with the
// values ps and the numbers scalars hold now, and records those.
func (c *VisualCache) sync(m *TinyMLLM, ps []*Param, scalars []float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	same := c.model == m && len(c.weights) == len(ps) && slices.Equal(c.scalars, scalars)
	for i := 0; same && i < len(ps); i++ {
		same = bitsEqual32(c.weights[i], ps[i].Data)
	}
	if same {
		return
	}
	c.model, c.weights, c.scalars, c.tokens, c.bytes = m, make([][]float32, len(ps)), scalars, nil, 0
	for i, p := range ps {
		c.weights[i] = append([]float32(nil), p.Data...)
	}
}

// bitsEqual32 reports whether a and b hold the same bits.
func bitsEqual32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i, v := range a {
		if math.Float32bits(v) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// imageKey returns the SHA-256 of the bits of img.
func imageKey(img []float32) [sha256.Size]byte {
	buf := make([]byte, 4*len(img))
	for i, v := range img {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
	}
	return sha256.Sum256(buf)
}

// get returns the cached tokens of the image of key k.
func (c *VisualCache) get(k [sha256.Size]byte) (Tensor, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.tokens[k]
	return v, ok
}

// put adds a copy of the tokens v of the image of key k, unless the cache
// is full.
func (c *VisualCache) put(k [sha256.Size]byte, v Tensor) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.tokens[k]; ok || c.bytes+int64(4*len(v.Data)) > c.max {
		return
	}
	if c.tokens == nil {
		c.tokens = map[[sha256.Size]byte]Tensor{}
	}
	c.tokens[k] = Tensor{Shape: append([]int(nil), v.Shape...), Data: append([]float32(nil), v.Data...)}
	c.bytes += int64(4 * len(v.Data))
}
