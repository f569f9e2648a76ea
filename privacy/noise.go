// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package privacy

import (
	crand "crypto/rand"
	"hash/fnv"
	"math"
	"math/rand/v2"
)

// Noise is a stream of Gaussian noise. A seeded stream (NewNoise) is
// reproducible bit for bit: the same seed and purpose give the same draws on
// every platform and whatever GOMAXPROCS is. Seeded noise is for
// reproducible research only: whoever knows the seed can remove the noise,
// so it must not protect a production release; use NewSecureNoise there.
// A Noise is not safe for concurrent use; give each goroutine its own
// stream.
type Noise struct {
	r *rand.Rand
}

// NewNoise returns the noise stream for seed and purpose, a short name such
// as "dpsgd/gradient" or "dualpriv/fusion". Each purpose gets its own
// independent stream, rand.New(rand.NewPCG(seed, h)) with h the 64-bit
// FNV-1a hash of purpose, so adding a new consumer of noise never shifts the
// draws of another.
func NewNoise(seed uint64, purpose string) *Noise {
	return &Noise{r: rand.New(rand.NewPCG(seed, StreamID(purpose)))}
}

// StreamID returns the PCG stream number NewNoise uses for purpose: the
// 64-bit FNV-1a hash of the name.
func StreamID(purpose string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(purpose))
	return h.Sum64()
}

// NewSecureNoise returns a noise stream from a ChaCha8 generator seeded with
// 32 bytes from crypto/rand. Its draws cannot be reproduced. It returns an
// error only if crypto/rand fails.
func NewSecureNoise() (*Noise, error) {
	var seed [32]byte
	if _, err := crand.Read(seed[:]); err != nil {
		return nil, err
	}
	return &Noise{r: rand.New(rand.NewChaCha8(seed))}, nil
}

// Normal returns one draw from N(0, 1).
func (n *Noise) Normal() float64 { return n.r.NormFloat64() }

// AddGaussian adds independent N(0, sigma²) draws to every element of dst,
// in index order. It panics if sigma is negative, NaN or infinite.
func (n *Noise) AddGaussian(dst []float64, sigma float64) {
	if !(sigma >= 0) || math.IsInf(sigma, 1) {
		panic("privacy: invalid noise standard deviation")
	}
	for i := range dst {
		dst[i] += float64(sigma * n.r.NormFloat64())
	}
}

// AddGaussian32 is AddGaussian for float32 slices: each draw is made in
// float64 and rounded once when added.
func (n *Noise) AddGaussian32(dst []float32, sigma float64) {
	if !(sigma >= 0) || math.IsInf(sigma, 1) {
		panic("privacy: invalid noise standard deviation")
	}
	for i := range dst {
		dst[i] = float32(float64(dst[i]) + float64(sigma*n.r.NormFloat64()))
	}
}
