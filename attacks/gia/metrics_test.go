// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestPSNRClosedForm(t *testing.T) {
	t.Parallel()
	x := make([]float32, 64)
	for i := range x {
		x[i] = float32(i) / 64
	}
	for _, tc := range []struct {
		desc   string
		offset float32
		peak   float64
		want   float64
	}{
		// A uniform offset d gives MSE = d², so PSNR = 20·log₁₀(peak/d).
		{"offset 0.1, peak 1", 0.1, 1, 20},
		{"offset 0.01, peak 1", 0.01, 1, 40},
		{"offset 0.5, peak 2", 0.5, 2, 20 * math.Log10(4)},
	} {
		y := make([]float32, len(x))
		for i := range x {
			y[i] = x[i] + tc.offset
		}
		if got := PSNR(y, x, tc.peak); math.Abs(got-tc.want) > 1e-4 {
			t.Errorf("%s: got %v dB, want %v", tc.desc, got, tc.want)
		}
	}
	if got := PSNR(x, x, 1); !math.IsInf(got, 1) {
		t.Errorf("equal images: got %v, want +Inf", got)
	}
}

func TestSSIMClosedForm(t *testing.T) {
	t.Parallel()
	const h, w = 16, 13
	c1 := ssimK1 * ssimK1
	for _, tc := range []struct{ a, b float32 }{{0.2, 0.7}, {0.5, 0.5}, {0, 1}, {0.9, 0.1}} {
		// Constant images: every σ is 0, so the map is
		// (2ab + C₁)/(a² + b² + C₁) everywhere (Wang et al. 2004, Eq. 13).
		x, y := make([]float32, 2*h*w), make([]float32, 2*h*w)
		for i := range x {
			x[i], y[i] = tc.a, tc.b
		}
		a, b := float64(tc.a), float64(tc.b)
		want := (2*a*b + c1) / (a*a + b*b + c1)
		got, err := SSIM(x, y, 2, h, w, 1)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-want) > 1e-6 {
			t.Errorf("constants %v, %v: got %v, want %v", a, b, got, want)
		}
	}
	rng := rand.New(rand.NewPCG(1, 1))
	x := make([]float32, 3*28*28)
	for i := range x {
		x[i] = rng.Float32()
	}
	if got, _ := SSIM(x, x, 3, 28, 28, 1); math.Abs(got-1) > 1e-9 {
		t.Errorf("SSIM(x, x) = %v, want 1", got)
	}
	if _, err := SSIM(x[:3*10*10], x[:3*10*10], 3, 10, 10, 1); err == nil {
		t.Error("a 10×10 image: got no error, want one (smaller than the window)")
	}
}

// TestSSIMWindow checks the window against the closed form of MATLAB's
// fspecial('gaussian', 11, 1.5): the centre weight is 1/(Σ_k e^{−k²/4.5})².
func TestSSIMWindow(t *testing.T) {
	t.Parallel()
	g := ssimWeights()
	var s float64
	for k := -5; k <= 5; k++ {
		s += math.Exp(-float64(k*k) / 4.5)
	}
	if got, want := g[5]*g[5], 1/(s*s); math.Abs(got-want) > 1e-15 {
		t.Errorf("centre weight %v, want %v", got, want)
	}
}

func TestAssignBruteForce(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(2, 3))
	for n := 1; n <= 7; n++ {
		for trial := range 20 {
			cost := make([][]float64, n)
			for i := range cost {
				cost[i] = make([]float64, n)
				for j := range cost[i] {
					cost[i][j] = math.Floor(rng.Float64() * 10) // ties on purpose
				}
			}
			p := Assign(cost)
			got := total(cost, p)
			if want := bruteAssign(cost); math.Abs(got-want) > 1e-12 {
				t.Errorf("n=%d trial %d: cost %v, brute force %v (cost %v, p %v)", n, trial, got, want, cost, p)
			}
			q := slices.Clone(p)
			slices.Sort(q)
			for i, v := range q {
				if v != i {
					t.Fatalf("n=%d: %v is not a permutation", n, p)
				}
			}
		}
	}
}

func total(cost [][]float64, p []int) float64 {
	var s float64
	for i, j := range p {
		s += cost[i][j]
	}
	return s
}

// bruteAssign is the slow reference: the least total over all n!
// permutations (Heap's algorithm).
func bruteAssign(cost [][]float64) float64 {
	n := len(cost)
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	best := total(cost, p)
	c := make([]int, n)
	for i := 0; i < n; {
		if c[i] < i {
			if i%2 == 0 {
				p[0], p[i] = p[i], p[0]
			} else {
				p[c[i]], p[i] = p[i], p[c[i]]
			}
			best = min(best, total(cost, p))
			c[i]++
			i = 0
		} else {
			c[i] = 0
			i++
		}
	}
	return best
}

// TestSSIMReference checks SSIM and PSNR against scikit-image 0.19.3
// (Debian python3-skimage, numpy 1.24.2) on a smooth 20×17 test image and
// a perturbed copy. The values were computed with
//
//	i = np.arange(20)[:, None]; j = np.arange(17)[None, :]
//	x = 0.5 + 0.4*np.sin(0.7*i)*np.cos(0.3*j)
//	y = np.clip(x + 0.1*np.cos(1.3*i + 0.5*j), 0, 1)
//	x, y = (a.astype(np.float32).astype(np.float64) for a in (x, y))
//	structural_similarity(x, y, gaussian_weights=True, sigma=1.5,
//	    use_sample_covariance=False, data_range=1.0)  # 0.906883489516574
//	peak_signal_noise_ratio(x, y, data_range=1.0)      # 23.005541252250367
//
// With those options scikit-image implements Wang et al.'s SSIM (11×11
// Gaussian window, σ = 1.5, truncated at 3.5σ; population covariances;
// the map cropped to where the window fits).
func TestSSIMReference(t *testing.T) {
	t.Parallel()
	const h, w = 20, 17
	x, y := make([]float32, h*w), make([]float32, h*w)
	for i := range h {
		for j := range w {
			v := 0.5 + 0.4*math.Sin(0.7*float64(i))*math.Cos(0.3*float64(j))
			x[i*w+j] = float32(v)
			y[i*w+j] = float32(min(1, max(0, v+0.1*math.Cos(1.3*float64(i)+0.5*float64(j)))))
		}
	}
	got, err := SSIM(y, x, 1, h, w, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := 0.906883489516574; math.Abs(got-want) > 1e-9 {
		t.Errorf("SSIM: got %.15f, want %.15f", got, want)
	}
	if got, want := PSNR(y, x, 1), 23.005541252250367; math.Abs(got-want) > 1e-9 {
		t.Errorf("PSNR: got %.15f, want %.15f", got, want)
	}
}

// TestFeatureDistance checks FeatureDistance against a slow reference
// written from its definition on the smoke ViT encoder's tokens, and its
// edges: zero for equal images, symmetric, at most 4.
func TestFeatureDistance(t *testing.T) {
	t.Parallel()
	m, _ := smokeViT(t)
	b, mean := smokeBatch(t, 2)
	x, y := b.Images[0], b.Images[1]
	got := FeatureDistance(m.Vision, x, y)
	fx, fy := tokens(m.Vision, x), tokens(m.Vision, y)
	var want float64
	for i := range fx.Rows() {
		var nx, ny, dot float64
		for j := range fx.Row(i) {
			a, c := float64(fx.Row(i)[j]), float64(fy.Row(i)[j])
			nx += a * a
			ny += c * c
			dot += a * c
		}
		want += 2 - 2*dot/math.Sqrt(nx*ny) // ‖a/‖a‖ − c/‖c‖‖² = 2 − 2cos
	}
	want /= float64(fx.Rows())
	if math.Abs(got-want) > 1e-9 {
		t.Errorf("got %v, want %v", got, want)
	}
	if d := FeatureDistance(m.Vision, x, x); d != 0 {
		t.Errorf("d(x, x) = %v, want 0", d)
	}
	if d1, d2 := FeatureDistance(m.Vision, x, mean), FeatureDistance(m.Vision, mean, x); math.Abs(d1-d2) > 1e-12 || d1 > 4 || d1 <= 0 {
		t.Errorf("d(x, mean) = %v, d(mean, x) = %v: want equal, in (0, 4]", d1, d2)
	}
}
