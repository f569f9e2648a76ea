// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pretrain

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/repro-dp/repro/nn"
)

// engineOnce caches engineFingerprint.
var engineOnce = sync.OnceValue(engineFingerprint)

// EngineFingerprint returns the fingerprint of the tensor engine's
// arithmetic on this machine, which every cache key hashes (see
// engineFingerprint): bases built where it differs are different bases.
// It is computed once per process, in a fraction of a second.
func EngineFingerprint() string { return engineOnce() }

// engineFingerprint returns the hex SHA-256 of the bits that packages nn and
// nn/optim compute for a fixed probe: a large matrix product on the CPU
// backend (every transpose), the gradient of a small TinyMLLM on one
// multimodal sequence, and one AdamW step on it. It is part of the cache
// key, so a change to the engine's arithmetic (a new summation order in a
// matrix product, another GELU, another initialisation) gives new keys
// instead of cached bases that a rebuild would no longer reproduce.
func engineFingerprint() string {
	h := sha256.New()
	put := func(xs []float32) {
		var b [4]byte
		for _, x := range xs {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
			h.Write(b[:])
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const m, n, k = 160, 300, 520
	a := make([]float32, m*k)
	b := make([]float32, k*n)
	for i := range a {
		a[i] = float32(rng.NormFloat64())
	}
	for i := range b {
		b[i] = float32(rng.NormFloat64())
	}
	for _, t := range []struct{ tA, tB bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		c := make([]float32, m*n)
		lda, ldb := k, n
		if t.tA {
			lda = m
		}
		if t.tB {
			ldb = k
		}
		nn.CPU{}.Gemm(t.tA, t.tB, m, n, k, 1, a, lda, b, ldb, 0, c, n)
		put(c)
	}

	cfg, err := nn.Preset("small", 64)
	if err != nil {
		panic("pretrain: engine probe: " + err.Error())
	}
	cfg.PEFT.Method, cfg.PEFT.Parts = "full", []string{"vision", "projector", "lm"}
	model, err := nn.NewTinyMLLM(cfg)
	if err != nil {
		panic("pretrain: engine probe: " + err.Error())
	}
	layout := nn.NewLayout(model.Params())
	img := make([]float32, cfg.Channels*cfg.ImageSize*cfg.ImageSize)
	for i := range img {
		img[i] = float32(rng.Float64())
	}
	seq := nn.Sequence{
		Tokens: []int{nn.TokenBOS, nn.TokenImage, 10, 11, 12, 13, nn.TokenEOS},
		Images: [][]float32{img},
		Loss:   []bool{false, false, false, false, true, true, true},
	}
	g, _, _, err := model.Gradient(layout, []nn.Sequence{seq, seq}, nil, nil, nil)
	if err != nil {
		panic("pretrain: engine probe: " + err.Error())
	}
	put(g)
	tr, err := newTrainer(layout, 1e-3, 1e-4, 0, 2, 0.01, 1)
	if err != nil {
		panic("pretrain: engine probe: " + err.Error())
	}
	tr.step(0, g, 2)
	put(layout.Values())
	return hex.EncodeToString(h.Sum(nil))
}
