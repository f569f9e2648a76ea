// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/nn"
)

// BenchmarkSpartaSparseStep measures one step of SPARTA's sparse phase
// (the per-example gradients of a Poisson batch, masked to the kept rows,
// clipped, summed and noised by the Privatizer) against a step of all
// (plain DP-SGD on every tensor), on the small ViT with B = 64 examples of
// smoke fashion-cls, at 1%, 5% and 20% of each layer's rows trainable (the
// efficiency comparison of the paper's Figure 4). The row scores are drawn
// at random: the cost of a step depends on the mask's size, not on how it
// was chosen. B/op is the memory a step allocates.
//
// The kept rows are gathered into their own blocks (sparse_rows =
// gathered, the default): the weight gradients, the clip and the noise
// cover them only, while the forward pass and the input gradients still
// run through every row. Set SPARTA_SPARSE_ROWS=masked to measure the
// masked step (every row's gradient, multiplied by the mask).
func BenchmarkSpartaSparseStep(b *testing.B) {
	d, err := datasets.Build("fashion-cls", &datasets.Options{Scale: datasets.Smoke, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	const batch = 64
	for _, tc := range []struct {
		mask     string
		sparsity float64
	}{
		{maskAll, 1}, {maskSPARTA, 0.01}, {maskSPARTA, 0.05}, {maskSPARTA, 0.2},
	} {
		b.Run(fmt.Sprintf("%s/s=%g", tc.mask, tc.sparsity), func(b *testing.B) {
			cfg, err := nn.Preset("small", datasets.Vocab().Len())
			if err != nil {
				b.Fatal(err)
			}
			cfg.Classes = len(d.Classes)
			m, err := nn.NewViT(cfg)
			if err != nil {
				b.Fatal(err)
			}
			params := map[string]any{"mask": tc.mask, "sparsity": tc.sparsity, "batch_size": batch}
			if v := os.Getenv("SPARTA_SPARSE_ROWS"); v != "" {
				params["sparse_rows"] = v
			}
			h, err := ResolveAt("sparta", "small", 1, params)
			if err != nil {
				b.Fatal(err)
			}
			job := &Job{Model: m, Data: d, Hyper: h, Epsilon: 1, Delta: 1e-5, Seed: 1, Workers: 1}
			r, err := newViTRun(job)
			if err != nil {
				b.Fatal(err)
			}
			if err := r.setParams(); err != nil {
				b.Fatal(err)
			}
			// Random row scores in place of the scoring epoch.
			r.scoreLayout = nn.SetTrainable(r.model, r.scored)
			r.u = make([]float64, r.scoreLayout.Size)
			rng := rand.New(rand.NewPCG(1, 2))
			for i := range r.u {
				r.u[i] = rng.Float64()
			}
			if err := r.choose(); err != nil {
				b.Fatal(err)
			}
			ph := r.sparsePhase()
			layout := ph.layout(r.model)
			update, err := ph.update(layout, 7)
			if err != nil {
				b.Fatal(err)
			}
			idx := make([]int, batch)
			for i := range idx {
				idx[i] = i
			}
			g := make([]float32, layout.Size)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := update(0, idx, g); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(r.values()["sparta_trainable_fraction"], "trainable")
		})
	}
}
