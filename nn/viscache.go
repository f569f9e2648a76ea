// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"math"
	"slices"
	"sync"
	"unsafe"
)

// VisualCache keeps the projected visual tokens of images across the steps
// of a fine-tuning run whose vision encoder and projector are frozen, so
// that the batched engine (batch.go) does not encode the same image again
// at every step. Set it in Options.Visual; TinyMLLM.PerSample, Gradient
// and MeanLosses use it only on the batched engine and only when no tensor of the vision
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
//
// For the one-tape-per-example path with a visual transform (Dual-Priv's,
// which acts on the encoder's output), it keeps instead the encoder's
// outputs and [CLS] attention rows (TinyMLLM.LossCached), under the same
// keys and the same checks.
type VisualCache struct {
	mu      sync.Mutex
	max     int64
	bytes   int64
	model   *TinyMLLM
	weights [][]float32
	scalars []float64
	tokens  map[[sha256.Size]byte]Tensor
	// encoded holds the encoder's outputs for TinyMLLM.LossCached.
	encoded map[[sha256.Size]byte]encoded
}

// encoded is the vision encoder's output for one image: its n+1 tokens
// and the [CLS] attention rows a VisualTransform reads.
type encoded struct{ tokens, clsAttn Tensor }

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
// tokens depend on: the LoRA scales of the encoder's maps, the
// LayerNorms' epsilons and the block whose [CLS] attention is kept.
func (m *TinyMLLM) visualScalars() []float64 {
	v := m.Vision
	s := []float64{v.Stack.LN.Eps, float64(v.PatchEmbed.LoRAScale), float64(m.Proj1.LoRAScale), float64(m.Proj2.LoRAScale), float64(m.clsLayerIx)}
	for _, b := range v.Stack.Blocks {
		s = append(s, b.LN1.Eps, b.LN2.Eps)
		for _, lin := range []*Linear{b.Q, b.K, b.V, b.O, b.MLP.FC1, b.MLP.FC2} {
			s = append(s, float64(lin.LoRAScale))
		}
	}
	return s
}

// VisualCacheFor returns the cache of opt after checking it against m
// (sync: it empties itself if anything it depends on changed), or nil when
// there is none or when a tensor of the vision encoder or the projector is
// in l (trainable). The batched engine calls it once per call; a caller of
// LossCached calls it once per step, before the step's LossCached calls.
func (m *TinyMLLM) VisualCacheFor(l *Layout, opt *Options) *VisualCache {
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
	c.model, c.weights, c.scalars, c.tokens, c.encoded, c.bytes = m, make([][]float32, len(ps)), scalars, nil, nil, 0
	for i, p := range ps {
		c.weights[i] = append([]float32(nil), p.Data...)
	}
}

// bitsEqual32 reports whether a and b hold the same bits: their bytes
// compared by bytes.Equal (the runtime's vectorised comparison; the
// packed-weight cache compares every frozen weight once a call).
func bitsEqual32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 {
		return true
	}
	return bytes.Equal(unsafe.Slice((*byte)(unsafe.Pointer(&a[0])), 4*len(a)), unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), 4*len(b)))
}

// imageKey returns the SHA-256 of the bits of img.
func imageKey(img []float32) [sha256.Size]byte {
	// The little-endian bytes of the values, hashed 1 KiB at a time: no
	// allocation per image on the training path.
	h := sha256.New()
	var buf [1024]byte
	for len(img) > 0 {
		n := min(len(img), len(buf)/4)
		for i, v := range img[:n] {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
		}
		h.Write(buf[:4*n])
		img = img[n:]
	}
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
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

// getEncoded returns the cached encoder output of the image of key k.
func (c *VisualCache) getEncoded(k [sha256.Size]byte) (encoded, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.encoded[k]
	return e, ok
}

// putEncoded adds a copy of the encoder output e of the image of key k,
// unless the cache is full, and returns the copy (e itself when full).
func (c *VisualCache) putEncoded(k [sha256.Size]byte, e encoded) encoded {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.encoded[k]; ok {
		return old
	}
	n := int64(4 * (len(e.tokens.Data) + len(e.clsAttn.Data)))
	if c.bytes+n > c.max {
		return e
	}
	if c.encoded == nil {
		c.encoded = map[[sha256.Size]byte]encoded{}
	}
	e = encoded{e.tokens.Clone(), e.clsAttn.Clone()}
	c.encoded[k] = e
	c.bytes += n
	return e
}

// LossCached is Loss without hooks, for the one-tape-per-example path with
// a visual transform (Dual-Priv's): the vision encoder's output for an
// image vc holds (its tokens and [CLS] attention) is taken from it, and
// the others are encoded and added to it; the transform and the projector
// run on every call. Since a cached output holds the bits the encoder
// computed for that image, the loss and its gradients are those of Loss,
// bit for bit. vc must come from VisualCacheFor for this step; with vc nil,
// or with dropout in training (t.Train), it is Loss.
func (m *TinyMLLM) LossCached(t *Tape, s *Sequence, vt VisualTransform, vc *VisualCache) (*Node, error) {
	if vc == nil || t.Train && m.Config.Dropout > 0 || s.Loss == nil || !slices.Contains(s.Loss, true) {
		return m.Loss(t, s, nil, vt)
	}
	if err := m.Check(s); err != nil {
		return nil, err
	}
	vis := make([]*Node, len(s.Images))
	for i, img := range s.Images {
		k := imageKey(img)
		e, ok := vc.getEncoded(k)
		var enc *Node
		if ok {
			enc = t.Input(e.tokens, false)
		} else {
			var probs Tensor
			enc, probs = m.Vision.Forward(t, m.Vision.imageNode(t, img, false), m.clsLayerIx, nil)
			e = vc.putEncoded(k, encoded{enc.Value, clsRows(probs)})
		}
		vis[i] = m.project(t, enc, e.clsAttn, i, vt, nil)
	}
	return m.loss(t, s, vis, nil, vt)
}
