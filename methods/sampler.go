// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"math/rand/v2"

	"github.com/repro-dp/repro/privacy"
)

// Streams are the purpose names of a run's random streams. Each is an
// independent stream rand.NewPCG(seed, privacy.StreamID(name)) of the job's
// seed, so adding a consumer never shifts the draws of another.
const (
	StreamSampler   = "methods/sampler"
	StreamNoise     = "methods/gradient-noise"
	StreamDirection = "methods/dpzo-direction"
	StreamLoRA      = "methods/lora-init"
)

// Poisson is the Poisson sampler of DP-SGD: every step, each of N examples
// is included independently with probability Q, as the accountant's
// PoissonGaussian event assumes (Abadi et al. 2016; Mironov, Talwar & Zhang
// 2019). The batch size is random, with mean Q·N.
type Poisson struct {
	N   int
	Q   float64
	rng *rand.Rand
}

// NewPoisson returns a Poisson sampler over n examples at rate q that draws
// from the job stream StreamSampler of seed.
func NewPoisson(n int, q float64, seed uint64) *Poisson {
	return &Poisson{N: n, Q: q, rng: rand.New(rand.NewPCG(seed, privacy.StreamID(StreamSampler)))}
}

// Next appends the indices of the next batch, in increasing order, to dst
// and returns it. Each index costs one uniform draw, so the stream advances
// by N draws per batch whatever the batch is.
func (p *Poisson) Next(dst []int) []int {
	for i := range p.N {
		if p.rng.Float64() < p.Q {
			dst = append(dst, i)
		}
	}
	return dst
}
