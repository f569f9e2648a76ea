// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package mi

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// gaussCMI draws n samples of Z ~ N(0, 1), X = aZ + E₁, Y = aZ + cE₁ + E₂
// (E₁, E₂ ~ N(0, 1) independent). Given Z, (X, Y) is Gaussian with partial
// correlation ρ = c/√(1+c²), so I(X; Y | Z) = −½ log(1 − ρ²) = ½ log(1 + c²)
// (the Gaussian mutual information, Cover & Thomas, Elements of Information
// Theory, 2nd ed., Example 8.5.1, applied to the conditional law), while
// the unconditional I(X; Y) is larger for a > 0.
func gaussCMI(n int, a, c float64, seed uint64) (x, y, z [][]float64) {
	rng := rand.New(rand.NewPCG(seed, 2))
	for range n {
		zz, e1, e2 := rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()
		x = append(x, []float64{a*zz + e1})
		y = append(y, []float64{a*zz + c*e1 + e2})
		z = append(z, []float64{zz})
	}
	return x, y, z
}

// TestCMIGaussian checks the estimator against the closed form. A DV
// estimate on held-out samples is, up to sampling error, a lower bound of
// the CMI for any classifier (Donsker–Varadhan; Molavipour et al., Eq. 14),
// so the accepted band is [want − 0.15, want + 0.06]; the bias measured at
// these settings is 0 to −0.08. c = 0 has I(X; Y | Z) = 0 but
// I(X; Y) = −½ log(1 − 0.8²) = 0.511 (corr(X, Y) = a²/(a²+1) = 0.8 at
// a = 2): an estimator that ignored Z would fail it.
func TestCMIGaussian(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		c, want float64
	}{
		{0, 0},
		{1, 0.5 * math.Log(2)}, // 0.3466
		{2, 0.5 * math.Log(5)}, // 0.8047
	} {
		x, y, z := gaussCMI(2000, 2, tc.c, 11)
		got, err := CMI(x, y, z, &CMIOptions{Hidden: []int{32, 32}, Steps: 1000, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("c = %v: CMI = %.4f, closed form %.4f", tc.c, got, tc.want)
		if got < tc.want-0.15 || got > tc.want+0.06 {
			t.Errorf("c = %v: CMI = %.4f, want %.4f (−0.15, +0.06)", tc.c, got, tc.want)
		}
		again, _ := CMI(x, y, z, &CMIOptions{Hidden: []int{32, 32}, Steps: 1000, Seed: 3})
		if again != got {
			t.Errorf("c = %v: %v then %v with the same seed", tc.c, got, again)
		}
	}
}

// TestCMIDiscreteZ checks the resampling when z takes 3 values, so that
// every neighbour is a tie: X = Z + E₁, Y = Z + cE₁ + E₂ with Z uniform
// on {0, 1, 2} has I(X; Y | Z) = ½ log(1 + c²) as in gaussCMI (given Z the
// pair is the same Gaussian). Resampling from the same k samples of each
// z (ties broken by index) fails it: the classifier learns those few x by
// heart, and the estimates fall to −1.41 (c = 0) and −0.44 (c = 1).
func TestCMIDiscreteZ(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ c, want float64 }{{0, 0}, {1, 0.5 * math.Log(2)}} {
		rng := rand.New(rand.NewPCG(8, 8))
		var x, y, z [][]float64
		for range 2000 {
			zz, e1, e2 := float64(rng.IntN(3)), rng.NormFloat64(), rng.NormFloat64()
			x, y, z = append(x, []float64{zz + e1}), append(y, []float64{zz + tc.c*e1 + e2}), append(z, []float64{zz})
		}
		got, err := CMI(x, y, z, &CMIOptions{Hidden: []int{32, 32}, Steps: 1000, Seed: 6})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("discrete z, c = %v: CMI = %.4f, closed form %.4f", tc.c, got, tc.want)
		if got < tc.want-0.15 || got > tc.want+0.06 {
			t.Errorf("discrete z, c = %v: CMI = %.4f, want %.4f (−0.15, +0.06)", tc.c, got, tc.want)
		}
	}
}

// TestCMIForms checks the two other forms at CMI 0 (each has expectation 0
// when the classifier cannot separate the tuples) and at 0.8047, where the
// plug-in log-odds is unbiased for a perfect classifier (band ±0.2) and
// the stated Sec-MMFL ratio form is not an estimator of the CMI: it
// measures 1.9–2.0 here (Jensen: E log γ_joint − E log γ_resampled exceeds
// the log-odds mean), which the test records as a lower bound of 1.2.
func TestCMIForms(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		form   string
		c      float64
		lo, hi float64
	}{
		{FormLogOdds, 0, -0.1, 0.1},
		{FormPaper, 0, -0.1, 0.1},
		{FormLogOdds, 2, 0.6047, 1.0047},
		{FormPaper, 2, 1.2, math.Inf(1)},
	} {
		x, y, z := gaussCMI(2000, 2, tc.c, 5)
		got, err := CMI(x, y, z, &CMIOptions{Hidden: []int{32, 32}, Steps: 1000, Form: tc.form, Seed: 4})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s, c = %v: %.4f", tc.form, tc.c, got)
		if got < tc.lo || got > tc.hi {
			t.Errorf("%s, c = %v: got %.4f, want in [%v, %v]", tc.form, tc.c, got, tc.lo, tc.hi)
		}
	}
}

// TestMINEGaussian checks MINE against I(X; Y) = −(d/2) log(1 − ρ²) for d
// independent pairs of standard Gaussians with correlation ρ (Cover &
// Thomas, Example 8.5.1), trained on 4000 pairs and estimated on 4000
// held-out pairs. The DV bound is a lower bound for any critic, so the
// band is [want − 0.12, want + 0.05]; the bias measured here is −0.002 to
// −0.054.
func TestMINEGaussian(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rho  float64
		d    int
		want float64
	}{
		{0, 1, 0},
		{0.5, 1, -0.5 * math.Log(0.75)},  // 0.1438
		{0.9, 1, -0.5 * math.Log(0.19)},  // 0.8304
		{0.8, 2, -math.Log(1 - 0.8*0.8)}, // 1.0217
	} {
		rng := rand.New(rand.NewPCG(uint64(tc.d), 7))
		gen := func(n int) (x, y [][]float64) {
			for range n {
				xi, yi := make([]float64, tc.d), make([]float64, tc.d)
				for j := range tc.d {
					a, b := rng.NormFloat64(), rng.NormFloat64()
					xi[j], yi[j] = a, tc.rho*a+math.Sqrt(1-tc.rho*tc.rho)*b
				}
				x, y = append(x, xi), append(y, yi)
			}
			return x, y
		}
		x, y := gen(4000)
		m, err := TrainMINE(x, y, &MINEOptions{Steps: 1000, Batch: 256, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		ex, ey := gen(4000)
		got, err := m.Estimate(ex, ey, rng.Perm(4000))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("ρ = %v, d = %d: MINE = %.4f, closed form %.4f", tc.rho, tc.d, got, tc.want)
		if got < tc.want-0.12 || got > tc.want+0.05 {
			t.Errorf("ρ = %v, d = %d: MINE = %.4f, want %.4f (−0.12, +0.05)", tc.rho, tc.d, got, tc.want)
		}
	}
}

// TestMLPGradient checks backward against central differences (step 1e-6)
// for the weights, the biases and the input.
func TestMLPGradient(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	m := NewMLP(3, []int{5, 4}, rng)
	for l := range m.B {
		for i := range m.B[l] {
			m.B[l][i] = float32(0.1 * rng.NormFloat64()) // avoid ReLU kinks at 0
		}
	}
	x := []float64{0.3, -1.2, 0.7}
	a := m.newActs()
	m.forward(x, a)
	dx := make([]float64, 3)
	m.backward(a, 1, dx)
	const h, tol = 1e-3, 1e-3 // float32 weights: a coarser step
	for l := range m.W {
		for i := range m.W[l] {
			old := m.W[l][i]
			m.W[l][i] = old + h
			up := m.Eval(x)
			m.W[l][i] = old - h
			down := m.Eval(x)
			m.W[l][i] = old
			fd := (up - down) / float64(float32(old+h)-float32(old-h))
			if math.Abs(fd-m.gw[l][i]) > tol*(1+math.Abs(fd)) {
				t.Errorf("∂/∂W[%d][%d]: backward %v, central difference %v", l, i, m.gw[l][i], fd)
			}
		}
	}
	for i := range x {
		xp, xm := append([]float64(nil), x...), append([]float64(nil), x...)
		xp[i] += 1e-6
		xm[i] -= 1e-6
		fd := (m.Eval(xp) - m.Eval(xm)) / 2e-6
		if math.Abs(fd-dx[i]) > 1e-6*(1+math.Abs(fd)) {
			t.Errorf("∂/∂x[%d]: backward %v, central difference %v", i, dx[i], fd)
		}
	}
}

// TestMINEGradient checks the estimate's input gradients against central
// differences (step 1e-6).
func TestMINEGradient(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(2, 2))
	var x, y [][]float64
	for range 12 {
		x = append(x, []float64{rng.NormFloat64(), rng.NormFloat64()})
		y = append(y, []float64{rng.NormFloat64()})
	}
	m, err := TrainMINE(x, y, &MINEOptions{Hidden: []int{6, 5}, Steps: 20, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	perm := rng.Perm(12)
	_, gx, gy, err := m.Gradient(x, y, perm, true)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, v [][]float64, g [][]float64) {
		for i := range v {
			for j := range v[i] {
				old := v[i][j]
				v[i][j] = old + 1e-6
				up, _ := m.Estimate(x, y, perm)
				v[i][j] = old - 1e-6
				down, _ := m.Estimate(x, y, perm)
				v[i][j] = old
				if fd := (up - down) / 2e-6; math.Abs(fd-g[i][j]) > 1e-5*(1+math.Abs(fd)) {
					t.Errorf("∂Î/∂%s[%d][%d]: %v, central difference %v", name, i, j, g[i][j], fd)
				}
			}
		}
	}
	check("x", x, gx)
	check("y", y, gy)
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	x, y, z := gaussCMI(40, 1, 1, 1)
	for _, tc := range []struct {
		desc string
		err  func() error
		want string
	}{
		{"few samples", func() error { _, err := CMI(x[:10], y[:10], z[:10], nil); return err }, "10 samples, want at least 24"},
		{"ragged", func() error { _, err := CMI(x, y[:39], z, nil); return err }, "40, 39 and 40 samples"},
		{"form", func() error { _, err := CMI(x, y, z, &CMIOptions{Form: "ratio"}); return err }, `unknown CMI form "ratio"`},
		{"k", func() error { _, err := CMI(x, y, z, &CMIOptions{K: -1}); return err }, "k = -1"},
		{"nan", func() error {
			bad := append([][]float64{{math.NaN()}}, x[1:]...)
			_, err := CMI(bad, y, z, nil)
			return err
		}, "sample 0 has a non-finite value"},
		{"mine pairs", func() error { _, err := TrainMINE(x[:1], y[:1], nil); return err }, "1 pairs"},
		{"mine lr", func() error { _, err := TrainMINE(x, y, &MINEOptions{LR: -1}); return err }, "learning rate -1"},
		{"perm", func() error {
			m, err := TrainMINE(x, y, &MINEOptions{Steps: 1})
			if err != nil {
				return err
			}
			_, err = m.Estimate(x, y, make([]int, 40))
			return err
		}, "not a permutation"},
	} {
		if err := tc.err(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.desc, err, tc.want)
		}
	}
}
