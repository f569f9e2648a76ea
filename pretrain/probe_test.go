// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pretrain

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/nn"
)

// TestFitSoftmax checks the probe's regression on data whose answer is
// known: three well-separated Gaussian clusters in 5 dimensions (centres 4
// apart along three axes, sd 0.5, so the Bayes error is below 10⁻⁸) are
// classified perfectly, and labels drawn independently of the features
// are predicted at about chance on fresh data (3 classes, 3,000 held-out
// points: the accuracy's sd is 0.0086, the test allows 6 sd).
func TestFitSoftmax(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	draw := func(n int, random bool) ([][]float64, []int) {
		x, y := make([][]float64, n), make([]int, n)
		for i := range x {
			y[i] = rng.IntN(3)
			x[i] = make([]float64, 5)
			for j := range x[i] {
				x[i][j] = 0.5 * rng.NormFloat64()
			}
			if !random {
				x[i][y[i]] += 4
			}
		}
		return x, y
	}
	x, y := draw(600, false)
	p := fitSoftmax(x, y, 3)
	hx, hy := draw(3000, false)
	if got := p.accuracy(hx, hy); got != 1 {
		t.Errorf("separable clusters: held-out accuracy %v, want 1", got)
	}
	x, y = draw(600, true)
	p = fitSoftmax(x, y, 3)
	hx, hy = draw(3000, true)
	if got := p.accuracy(hx, hy); got < 1.0/3-6*0.0086 || got > 1.0/3+6*0.0086 {
		t.Errorf("labels independent of the features: held-out accuracy %v, want 1/3 ± 0.052", got)
	}
}

// TestPatchCells checks the patches of each scene cell, worked out by
// hand: with 7-pixel patches (small) the 4×4 grid gives each 14×14 cell a
// 2×2 block of patches (rows 1-based after [CLS]); with 14-pixel patches
// (smoke) one patch a cell; 4-pixel patches (7×7) do not divide the cells
// evenly.
func TestPatchCells(t *testing.T) {
	for _, tc := range []struct {
		patch int
		want  [4][]int
	}{
		{7, [4][]int{{1, 2, 5, 6}, {3, 4, 7, 8}, {9, 10, 13, 14}, {11, 12, 15, 16}}},
		{14, [4][]int{{1}, {2}, {3}, {4}}},
	} {
		got, err := patchCells(nn.Config{ImageSize: 28, Patch: tc.patch})
		if err != nil {
			t.Fatalf("patch %d: %v", tc.patch, err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("patch %d (-want +got):\n%s", tc.patch, diff)
		}
	}
	if _, err := patchCells(nn.Config{ImageSize: 28, Patch: 4}); err == nil {
		t.Error("patch 4: no error, want one (cells of 3 and 4 patch columns)")
	}
}

// TestProbeScenes runs the probes on an untrained smoke model: the pixel
// probe reads each cell's colour and shape from the rendering, which is a
// fixed RGB colour on black (it must be near perfect), and every probe
// reports its features' sizes.
func TestProbeScenes(t *testing.T) {
	if testing.Short() {
		t.Skip("fits eight probes (about 10 s on a quiet core)")
	}
	d, err := datasets.Build("shapes-vqa"+datasets.TuneSuffix, &datasets.Options{Scale: datasets.Smoke, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := nn.Preset("smoke", datasets.Vocab().Len())
	if err != nil {
		t.Fatal(err)
	}
	m, err := nn.NewTinyMLLM(cfg)
	if err != nil {
		t.Fatal(err)
	}
	probes, err := ProbeScenes(m, d.Private, d.Test)
	if err != nil {
		t.Fatal(err)
	}
	dims := map[string]int{"pixels": 3 * 14 * 14, "encoder": cfg.VisionWidth, "tokens": cfg.Width, "init-encoder": cfg.VisionWidth}
	if len(probes) != 2*len(dims) {
		t.Fatalf("got %d probes, want %d", len(probes), 2*len(dims))
	}
	for _, p := range probes {
		if p.Dims != dims[p.Features] {
			t.Errorf("%s %s: %d features, want %d", p.Features, p.Target, p.Dims, dims[p.Features])
		}
		if p.Features == "pixels" && p.Held < 0.95 {
			t.Errorf("pixels %s: held-out accuracy %v, want ≥ 0.95", p.Target, p.Held)
		}
		if p.Chance <= 0 || p.Chance >= 1 {
			t.Errorf("%s %s: chance %v, want in (0, 1)", p.Features, p.Target, p.Chance)
		}
	}
}
