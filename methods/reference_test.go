// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/privacy"
)

// TestPoissonRate checks the sampler's empirical inclusion rate against q.
// The number of inclusions over T batches of N examples is Binomial(NT, q);
// the test rejects when it is more than 5 standard deviations from NTq, which
// a correct sampler does with probability about 6e-7 (normal approximation;
// NTq ≥ 1000 in every case). It also checks that batches are sorted and
// within range, and that the batch sizes have the binomial variance
// N·q·(1−q) within a factor bound that fails with probability < 1e-6.
func TestPoissonRate(t *testing.T) {
	for _, tc := range []struct {
		n     int
		q     float64
		steps int
	}{
		{n: 277, q: 32.0 / 277, steps: 400},
		{n: 2000, q: 0.032, steps: 100},
		{n: 50, q: 0.5, steps: 400},
		{n: 10, q: 1, steps: 10},
	} {
		p := NewPoisson(tc.n, tc.q, 3)
		var idx []int
		total := 0
		sizes := make([]float64, tc.steps)
		for s := range tc.steps {
			idx = p.Next(idx[:0])
			if !slices.IsSorted(idx) || (len(idx) > 0 && (idx[0] < 0 || idx[len(idx)-1] >= tc.n)) {
				t.Fatalf("n=%d q=%v: batch %v not sorted or out of range", tc.n, tc.q, idx)
			}
			total += len(idx)
			sizes[s] = float64(len(idx))
		}
		nt := float64(tc.n * tc.steps)
		mean, sd := nt*tc.q, math.Sqrt(nt*tc.q*(1-tc.q))
		if math.Abs(float64(total)-mean) > 5*sd+1e-9 {
			t.Errorf("n=%d q=%v: %d inclusions in %d steps, want %v ± 5·%v", tc.n, tc.q, total, tc.steps, mean, sd)
		}
		if tc.q == 1 {
			continue
		}
		m := float64(total) / float64(tc.steps)
		v := 0.0
		for _, x := range sizes {
			v += (x - m) * (x - m)
		}
		v /= float64(tc.steps - 1)
		want := float64(tc.n) * tc.q * (1 - tc.q)
		// (steps−1)·v/want is about χ²(steps−1); for steps ≥ 100 it lies within
		// (steps−1)(1 ± 6·√(2/(steps−1))) except with probability < 1e-6
		// (normal approximation of χ²; the binomial's excess kurtosis is small).
		bound := 6 * math.Sqrt(2/float64(tc.steps-1))
		if math.Abs(v/want-1) > bound {
			t.Errorf("n=%d q=%v: batch-size variance %v, want %v within a factor 1 ± %v", tc.n, tc.q, v, want, bound)
		}
	}
}

// cloneModel returns a model with the configuration and values of m.
func cloneModel(t *testing.T, m *nn.TinyMLLM) *nn.TinyMLLM {
	t.Helper()
	c, err := nn.NewTinyMLLM(m.Config)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range c.Params() {
		copy(p.Data, m.Params()[i].Data)
	}
	return c
}

// TestDPSGDReference compares two DP-SGD steps with a slow reference on a
// tiny model: the reference draws the Poisson batches itself, computes every
// example's gradient on its own (nn's non-private Gradient on a batch of
// one, a different code path from PerSample), clips, sums and adds the noise
// in float64, divides by the expected batch size and takes an SGD step.
func TestDPSGDReference(t *testing.T) {
	job := tinyJob(t, "dpsgd", 6, 2)
	job.Hyper.BatchSize, job.Hyper.Epochs = 3, 1 // q = 0.5, 2 steps
	job.Hyper.Optimizer, job.Hyper.LR = "sgd", 0.5
	job.Hyper.LoRATargets = []string{"q", "v", "fc2"}
	ref := cloneModel(t, lmOf(job))
	train := trainOf(job)
	layout, err := ref.SetPEFT(job.Hyper.peft(privacy.StreamID(StreamLoRA) ^ job.Seed))
	if err != nil {
		t.Fatal(err)
	}
	grad := func(i int) []float64 {
		g, _, _, err := ref.Gradient(layout, train[i:i+1], nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float64, len(g))
		for j, v := range g {
			out[j] = float64(v)
		}
		return out
	}
	norm := func(g []float64) float64 {
		s := 0.0
		for _, v := range g {
			s += v * v
		}
		return math.Sqrt(s)
	}
	// Clip at the median norm of the first gradients, so some are clipped
	// and some are not.
	var norms []float64
	for i := range train {
		norms = append(norms, norm(grad(i)))
	}
	slices.Sort(norms)
	job.Hyper.Clip = (norms[2] + norms[3]) / 2
	acc, err := sampledGaussianAccounting("dpsgd", job.Hyper, job.Epsilon, job.Delta, 0.5, 2)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(job.Seed, privacy.StreamID(StreamSampler)))
	noise := privacy.NewNoise(job.Seed, StreamNoise)
	c := job.Hyper.Clip
	for range 2 {
		sum := make([]float64, layout.Size)
		for i := range train {
			if !(rng.Float64() < 0.5) {
				continue
			}
			g := grad(i)
			f := min(1, c/norm(g))
			for j := range sum {
				sum[j] += f * g[j]
			}
		}
		noise.AddGaussian(sum, acc.Sigma*c)
		v := layout.Values()
		for j := range v {
			v[j] = float32(float64(v[j]) - job.Hyper.LR*sum[j]/3)
		}
		layout.SetValues(v)
	}
	if _, err := (DPSGD{}).FineTune(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	got, want := nn.NewLayout(job.Model.Params()).Values(), layout.Values()
	moved := 0.0
	init := nn.NewLayout(cloneModelPEFT(t, job).Params()).Values()
	for j := range got {
		moved = max(moved, math.Abs(float64(want[j]-init[j])))
		if d := math.Abs(float64(got[j] - want[j])); d > 1e-5*(1+math.Abs(float64(want[j]))) {
			t.Fatalf("value %d = %v, reference %v", j, got[j], want[j])
		}
	}
	if moved < 1e-3 {
		t.Errorf("the reference moved the parameters by at most %v: the test compares nothing", moved)
	}
}

// cloneModelPEFT returns a fresh copy of the model the job started from,
// with the job's LoRA added (its initial trainable values).
func cloneModelPEFT(t *testing.T, job *Job) *nn.TinyMLLM {
	t.Helper()
	cfg := lmOf(job).Config
	cfg.PEFT = nn.PEFT{}
	m, err := nn.NewTinyMLLM(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.SetPEFT(job.Hyper.peft(privacy.StreamID(StreamLoRA) ^ job.Seed)); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCalibratedEpsilon checks that the achieved ε never exceeds the target
// and is close to it (calibration is not just a very large σ), for both
// accountants, and that ε = ∞ gives σ = 0.
func TestCalibratedEpsilon(t *testing.T) {
	for _, acct := range []string{"rdp", "pld"} {
		for _, eps := range []float64{0.5, 1, 3, 8, math.Inf(1)} {
			for _, c := range []struct {
				q     float64
				steps int
			}{{32.0 / 256, 32}, {0.032, 250}} {
				if acct == "pld" && (c.steps > 32 || (eps != 1 && !math.IsInf(eps, 1))) {
					continue // PLD calibration takes seconds; a few cases suffice
				}
				h, _ := Defaults("dpsgd", "small")
				h.Accountant = acct
				a, err := sampledGaussianAccounting("dpsgd", h, eps, 1e-5, c.q, c.steps)
				if err != nil {
					t.Fatal(err)
				}
				got := float64(a.Record.Epsilon)
				if math.IsInf(eps, 1) {
					if a.Sigma != 0 || !math.IsInf(got, 1) {
						t.Errorf("%s ε=∞: σ = %v, ε = %v; want 0, +Inf", acct, a.Sigma, got)
					}
					continue
				}
				if got > eps || got < 0.95*eps {
					t.Errorf("%s ε=%v q=%v T=%d: achieved %v, want in [0.95ε, ε]", acct, eps, c.q, c.steps, got)
				}
				if acct == "rdp" && a.EpsilonPLD > a.EpsilonRDP {
					t.Errorf("ε=%v: PLD ε %v above RDP ε %v at the same σ", eps, a.EpsilonPLD, a.EpsilonRDP)
				}
			}
		}
	}
}

// TestZOUnbiased checks that DPZO's estimate s·z/(2φ) is unbiased for the
// mean gradient of quadratic losses when nothing is clipped and σ = 0: for
// f(θ) = ½θᵀAθ + bᵀθ, f(θ+φz) − f(θ−φz) = 2φ zᵀ∇f(θ) exactly, and
// E[z zᵀ] = I. Each coordinate j of the estimate has variance
// ‖g‖² + g_j² (Gaussian z), and the test rejects a mean more than 5
// standard errors from g_j: a false reject has probability about 6e-7 per
// coordinate.
func TestZOUnbiased(t *testing.T) {
	const d, nb, draws = 4, 3, 20000
	rng := rand.New(rand.NewPCG(1, 2))
	type quad struct {
		a [d][d]float64
		b [d]float64
	}
	qs := make([]quad, nb)
	for i := range qs {
		for j := range d {
			for k := 0; k <= j; k++ {
				v := rng.NormFloat64()
				qs[i].a[j][k], qs[i].a[k][j] = v, v
			}
			qs[i].b[j] = rng.NormFloat64()
		}
	}
	theta := []float32{0.3, -0.2, 0.5, 0.1}
	f := func(q *quad, v []float32) float64 {
		s := 0.0
		for j := range d {
			for k := range d {
				s += 0.5 * float64(v[j]) * q.a[j][k] * float64(v[k])
			}
			s += q.b[j] * float64(v[j])
		}
		return s
	}
	want := make([]float64, d) // mean gradient over the batch, divided by B = nb
	for i := range qs {
		for j := range d {
			g := qs[i].b[j]
			for k := range d {
				g += qs[i].a[j][k] * float64(theta[k])
			}
			want[j] += g / nb
		}
	}
	losses := func(v []float32, out []float64) error {
		for i := range qs {
			out[i] = f(&qs[i], v)
		}
		return nil
	}
	const phi = 0.15
	o := testZO(t, d, phi, 1e9, 0, nb, 5)
	mean := make([]float64, d)
	for range draws {
		s, _, _, err := stepOn(o, theta, nb, losses)
		if err != nil {
			t.Fatal(err)
		}
		for j := range d {
			mean[j] += s * float64(o.z[j]) / (2 * phi) / draws
		}
	}
	g2 := 0.0
	for _, g := range want {
		g2 += g * g
	}
	for j := range d {
		se := math.Sqrt((g2 + want[j]*want[j]) / draws)
		if math.Abs(mean[j]-want[j]) > 5*se {
			t.Errorf("coordinate %d: mean estimate %v, gradient %v (standard error %v)", j, mean[j], want[j], se)
		}
	}
}

// stepOn runs o.step on a layout of one trainable tensor holding a copy
// of theta, with losses given the tensor's values at each call as v.
func stepOn(o *zo, theta []float32, nb int, losses func(v []float32, out []float64) error) (float64, float64, Report, error) {
	p := &nn.Param{Name: "theta", Shape: []int{len(theta)}, Data: slices.Clone(theta), Grad: make([]float32, len(theta)), Trainable: true}
	l := nn.NewLayout([]*nn.Param{p})
	var f func(out []float64) error
	if losses != nil {
		f = func(out []float64) error { return losses(p.Data, out) }
	}
	return o.step(l, nb, f)
}

// TestZOInPlace checks DPZO's perturbation in place against the vectors
// it replaces: the losses see θ + φz and then θ − φz, each value computed
// as a perturbed copy of θ computes it (θ_j + (±φ)·z_j in float32), over
// a layout of two tensors; afterwards, and after a failing loss, every
// tensor holds θ again, bit for bit.
func TestZOInPlace(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	ps := []*nn.Param{
		{Name: "a", Shape: []int{5}, Data: make([]float32, 5), Grad: make([]float32, 5), Trainable: true},
		{Name: "b", Shape: []int{3}, Data: make([]float32, 3), Grad: make([]float32, 3), Trainable: true},
	}
	l := nn.NewLayout(ps)
	for _, p := range ps {
		for j := range p.Data {
			p.Data[j] = float32(rng.NormFloat64())
		}
	}
	theta := l.Values()
	for _, fail := range []bool{false, true} {
		const phi = 0.37
		o := testZO(t, l.Size, phi, 1, 0, 1, 4)
		var seen [][]float32
		_, _, _, err := o.step(l, 1, func(out []float64) error {
			seen = append(seen, l.Values())
			out[0] = 0
			if fail {
				return errors.New("failed")
			}
			return nil
		})
		if fail != (err != nil) {
			t.Fatalf("fail %v: error %v", fail, err)
		}
		for k, f := range []float32{phi, -phi}[:len(seen)] {
			for j := range theta {
				if want := theta[j] + f*o.z[j]; math.Float32bits(seen[k][j]) != math.Float32bits(want) {
					t.Errorf("fail %v: pass %d value %d = %v, want θ + fz = %v", fail, k, j, seen[k][j], want)
				}
			}
		}
		if got := l.Values(); !slices.Equal(got, theta) {
			t.Errorf("fail %v: values after the step %v, want θ %v", fail, got, theta)
		}
	}
}

// TestZOClipAndNoise checks the privatised scalar on a batch whose loss
// differences are known: clipped to ±C, summed, and with σ > 0 the noise
// has standard deviation σC/B.
func TestZOClipAndNoise(t *testing.T) {
	// Losses ±(3, 0.2, −5)·zᵀ1 make the differences 2φ·(3, 0.2, −5)·Σz;
	// with C = 0.1·|Σz|·2φ... simpler: use losses that ignore θ on the
	// minus side, so l_i = L_i(θ+φz) − L_i(θ−φz) = c_i·sign.
	o := testZO(t, 2, 0.5, 1, 0, 4, 1)
	plus := true
	losses := func(v []float32, out []float64) error {
		vals := []float64{3, 0.2, -5}
		for i := range out {
			if plus {
				out[i] = vals[i]
			} else {
				out[i] = 0
			}
		}
		plus = !plus
		return nil
	}
	s, _, _, err := stepOn(o, []float32{0, 0}, 3, losses)
	if err != nil {
		t.Fatal(err)
	}
	// clip(3) + clip(0.2) + clip(−5) = 1 + 0.2 − 1 = 0.2, divided by B = 4.
	if want := 0.2 / 4; math.Abs(s-want) > 1e-15 {
		t.Errorf("s = %v, want %v", s, want)
	}
	// Noise only: an empty batch releases N(0, (σC/B)²).
	const sigma, c, b, n = 2.0, 0.5, 4, 20000
	o = testZO(t, 2, 0.5, c, sigma, b, 2)
	v := 0.0
	for range n {
		s, _, _, err := stepOn(o, []float32{0, 0}, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		v += s * s / n
	}
	// n·v/w² is χ²(n); 6 standard deviations (√(2/n) relative) bound a
	// false reject by about 1e-9.
	w := sigma * c / b
	if math.Abs(v/(w*w)-1) > 6*math.Sqrt(2.0/n) {
		t.Errorf("noise variance %v, want %v", v, w*w)
	}
}

// TestZOClipScope checks that clipping the derivative estimate l_i/(2φ) at C
// is the mechanism that clips the difference l_i at 2φC: the same update
// up to rounding, noise included (its standard deviation σ·C on the
// derivative is σ·2φC on the difference).
func TestZOClipScope(t *testing.T) {
	const phi, c, sigma, b = 0.05, 0.3, 1.5, 4.0
	vals := []float64{3, 0.02, -0.5, 0.01}
	mk := func(derivative bool, clip float64) *zo {
		o := testZO(t, 2, phi, clip, sigma, b, 9)
		o.derivative = derivative
		return o
	}
	losses := func(v []float32, out []float64) error {
		for i := range out {
			out[i] = vals[i] * float64(v[0]) // l_i = vals_i·2φ·z_0
		}
		return nil
	}
	d, f := mk(true, c), mk(false, 2*phi*c)
	for step := range 5 {
		sd, _, rd, err := stepOn(d, []float32{0, 0}, len(vals), losses)
		if err != nil {
			t.Fatal(err)
		}
		sf, _, rf, err := stepOn(f, []float32{0, 0}, len(vals), losses)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(sd-sf) > 1e-12*max(1, math.Abs(sf)) || rd.Clipped != rf.Clipped {
			t.Errorf("step %d: derivative scope %v (%d clipped), difference scope at 2φC %v (%d clipped)", step, sd, rd.Clipped, sf, rf.Clipped)
		}
	}
}

// TestZOEngineDirectionalDerivative checks DPZO's estimate on the model it
// trains, against the engine's exact per-example gradients g_i (PerSample):
// the central difference (L_i(θ+φz) − L_i(θ−φz))/(2φ) is g_i·z up to
// O(φ²) (e.g. J. Nocedal, S. J. Wright, Numerical Optimization, 2nd ed.,
// Springer 2006, §8.1), so with σ = 0 and no clipping the scalar the
// estimator releases for the batch, divided by 2φ, is (Σ g_i)·z / B and
// its estimate s·z/(2φ) has mean (Σ g_i)/B over directions
// (TestZOUnbiased checks E[zzᵀ] = I). LoRA's B factors are set away from
// zero first, so that directions in A change the loss too. It also checks
// the O(φ²) order: quartering φ divides the error by about 16.
func TestZOEngineDirectionalDerivative(t *testing.T) {
	const n = 6
	job := tinyJob(t, "dpzo", n, math.Inf(1))
	m := lmOf(job)
	train := trainOf(job)
	l, err := newLoRALoop("dpzo", job, m, n)
	if err != nil {
		t.Fatal(err)
	}
	theta := l.layout.Values()
	rng := rand.New(rand.NewPCG(3, 4))
	for j := range theta {
		theta[j] += float32(0.1 * rng.NormFloat64())
	}
	l.layout.SetValues(theta)
	opts := stepOptions(job)
	r, err := m.PerSample(l.layout, train, nil, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	losses := func(v []float32, out []float64) error {
		l.layout.SetValues(v)
		return m.MeanLosses(l.layout, train, opts, out)
	}
	for dir := range 3 {
		errAt := map[float64]float64{}
		for _, phi := range []float64{4e-2, 1e-2, 1e-3} {
			// σ = 0, clip far above any difference, normaliser 1: s is
			// the sum of the differences l_i.
			o := testZO(t, l.layout.Size, phi, 1e12, 0, 1, uint64(100+dir))
			s, _, _, err := stepOn(o, theta, n, losses)
			if err != nil {
				t.Fatal(err)
			}
			sum, scale := 0.0, 0.0
			for i := range n {
				gz, g2 := 0.0, 0.0
				for j, z := range o.z {
					gz += float64(r.Grads[i][j]) * float64(z)
					g2 += float64(r.Grads[i][j]) * float64(r.Grads[i][j])
				}
				d := (o.lp[i] - o.lm[i]) / (2 * phi)
				t.Logf("dir %d φ %g example %d: difference/2φ %.6g, g·z %.6g, ‖g‖ %.4g", dir, phi, i, d, gz, math.Sqrt(g2))
				sum += gz
				scale += math.Sqrt(g2)
			}
			e := math.Abs(s/(2*phi) - sum)
			errAt[phi] = e
			t.Logf("dir %d φ %g: s/2φ %.6g, Σ g_i·z %.6g, error %.3g (Σ‖g_i‖ %.4g)", dir, phi, s/(2*phi), sum, e, scale)
			if phi == 1e-3 && e > 1e-3*scale {
				t.Errorf("dir %d φ %g: s/2φ = %v, (Σ g_i)·z = %v: error %.3g above 1e-3·Σ‖g_i‖ = %.3g", dir, phi, s/(2*phi), sum, e, 1e-3*scale)
			}
		}
		if ratio := errAt[4e-2] / errAt[1e-2]; !(ratio > 8 && ratio < 32) {
			t.Errorf("dir %d: error at φ = 0.04 over error at φ = 0.01 = %.3g, want about 16 (O(φ²))", dir, ratio)
		}
	}
}
