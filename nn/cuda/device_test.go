// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build cuda

package cuda

// These tests need an NVIDIA GPU and its driver. Where the driver or the
// GPU is missing they are skipped, unless REPRO_GPU_REQUIRED=1 (set by
// scripts/gpu-check.sh, which runs them on a device machine from a binary
// built with go test -c -tags cuda): there they fail.

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/repro-dp/repro/methods"
	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/nn/cuda/ptx"
	"github.com/repro-dp/repro/nn/optim"
	"github.com/repro-dp/repro/privacy"
)

var (
	openOnce sync.Once
	gpu      *Device
	openErr  error
)

// device returns the GPU the tests share, opened once.
func device(t testing.TB) *Device {
	t.Helper()
	openOnce.Do(func() { gpu, openErr = Open(0) })
	if openErr != nil {
		if os.Getenv("REPRO_GPU_REQUIRED") != "1" && (errors.Is(openErr, ErrNoDriver) || errors.Is(openErr, ErrNoDevice)) {
			t.Skipf("no GPU here (REPRO_GPU_REQUIRED=1 fails instead): %v", openErr)
		}
		t.Fatalf("opening the GPU: %v", openErr)
	}
	return gpu
}

func TestMain(m *testing.M) {
	code := m.Run()
	if gpu != nil {
		gpu.Close()
	}
	os.Exit(code)
}

// TestOpen logs the GPU the tests run on.
func TestOpen(t *testing.T) {
	t.Logf("GPU: %v", device(t))
}

// TestGemmBits checks the device's matrix product against the CPU
// backend, the reference: the same bits for every transposition, strides
// wider than the rows, β = 0, 1 and 0.5, α ≠ 1, and shapes that do and do
// not fill the kernel's 64×64 tiles and 16-deep panels.
func TestGemmBits(t *testing.T) {
	d := device(t)
	saved := d.MinGemm
	d.MinGemm = 0
	defer func() { d.MinGemm = saved }()
	rng := rand.New(rand.NewPCG(1, 1))
	fill := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		return x
	}
	for _, sh := range [][3]int{{1, 1, 1}, {5, 7, 3}, {64, 64, 16}, {65, 63, 17}, {130, 200, 300}, {640, 256, 256}, {3, 1000, 41}} {
		m, n, k := sh[0], sh[1], sh[2]
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				for _, ab := range [][2]float32{{1, 0}, {1, 1}, {0.7, 0.5}} {
					alpha, beta := ab[0], ab[1]
					ar, ac := m, k
					if tA {
						ar, ac = k, m
					}
					br, bc := k, n
					if tB {
						br, bc = n, k
					}
					lda, ldb, ldc := ac+3, bc, n+2
					a, b, c := fill(ar*lda), fill(br*ldb), fill(m*ldc)
					want := slices.Clone(c)
					nn.CPU{}.Gemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, want, ldc)
					d.Gemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
					if i := firstDiff(c, want); i >= 0 {
						t.Errorf("%d×%d×%d tA=%v tB=%v α=%v β=%v: element %d is %v on the GPU, %v on the CPU", m, n, k, tA, tB, alpha, beta, i, c[i], want[i])
					}
				}
			}
		}
	}
}

// firstDiff returns the first index where the bits of a and b differ, or
// −1.
func firstDiff(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

// TestOps checks GELU, Softmax and LayerNorm on the device against
// float64 closed forms (x·Φ(x) with Φ from math.Erfc; softmax with the
// maximum subtracted; LayerNorm with the biased variance).
func TestOps(t *testing.T) {
	d := device(t)
	rng := rand.New(rand.NewPCG(2, 2))
	const rows, cols = 37, 300
	x := make([]float32, rows*cols)
	for i := range x {
		x[i] = float32(3 * rng.NormFloat64())
	}
	y := make([]float32, len(x))
	if err := d.GELU(y, x); err != nil {
		t.Fatal(err)
	}
	for i, v := range x {
		want := float64(v) * 0.5 * math.Erfc(-float64(v)/math.Sqrt2)
		if math.Abs(float64(y[i])-want) > 1e-6+1e-5*math.Abs(want) {
			t.Errorf("GELU(%v) = %v, want %v", v, y[i], want)
			break
		}
	}
	if err := d.Softmax(y, x, rows, cols); err != nil {
		t.Fatal(err)
	}
	for r := 0; r < rows; r++ {
		xr := x[r*cols : (r+1)*cols]
		mx := float64(slices.Max(xr))
		s := 0.0
		for _, v := range xr {
			s += math.Exp(float64(v) - mx)
		}
		for j, v := range xr {
			want := math.Exp(float64(v)-mx) / s
			if got := float64(y[r*cols+j]); math.Abs(got-want) > 1e-5*want+1e-9 {
				t.Errorf("softmax row %d column %d = %v, want %v", r, j, got, want)
				break
			}
		}
	}
	g, b := make([]float32, cols), make([]float32, cols)
	for j := range g {
		g[j], b[j] = float32(1+0.1*rng.NormFloat64()), float32(0.1*rng.NormFloat64())
	}
	const eps = 1e-5
	if err := d.LayerNorm(y, x, g, b, rows, cols, eps); err != nil {
		t.Fatal(err)
	}
	for r := 0; r < rows; r++ {
		xr := x[r*cols : (r+1)*cols]
		mean, v := 0.0, 0.0
		for _, x := range xr {
			mean += float64(x)
		}
		mean /= cols
		for _, x := range xr {
			v += (float64(x) - mean) * (float64(x) - mean)
		}
		inv := 1 / math.Sqrt(v/cols+eps)
		for j, x := range xr {
			want := (float64(x)-mean)*inv*float64(g[j]) + float64(b[j])
			if got := float64(y[r*cols+j]); math.Abs(got-want) > 1e-5*(1+math.Abs(want)) {
				t.Errorf("LayerNorm row %d column %d = %v, want %v", r, j, got, want)
				break
			}
		}
	}
}

// TestAdamStep checks the device's Adam and AdamW against nn/optim, the
// reference: the same bits over five steps, with and without weight decay.
func TestAdamStep(t *testing.T) {
	d := device(t)
	rng := rand.New(rand.NewPCG(6, 6))
	for _, name := range []string{"adam", "adamw"} {
		for _, wd := range []float64{0, 0.01} {
			const n, lr = 5000, 1e-3
			theta := make([]float32, n)
			for j := range theta {
				theta[j] = float32(rng.NormFloat64())
			}
			p := []optim.Param{{Name: "w", Data: slices.Clone(theta), Grad: make([]float32, n)}}
			o, err := optim.New(name, p, &optim.Settings{WeightDecay: wd})
			if err != nil {
				t.Fatal(err)
			}
			m, v := make([]float32, n), make([]float32, n)
			for step := int64(1); step <= 5; step++ {
				for j := range p[0].Grad {
					p[0].Grad[j] = float32(rng.NormFloat64())
				}
				if err := d.AdamStep(theta, p[0].Grad, m, v, ptx.NewAdam(lr, 0.9, 0.999, 1e-8, wd, name == "adamw", step)); err != nil {
					t.Fatal(err)
				}
				o.Step(p, lr, nil)
				if j := firstDiff(theta, p[0].Data); j >= 0 {
					t.Fatalf("%s, λ = %v, step %d: element %d is %v on the GPU, %v in nn/optim", name, wd, step, j, theta[j], p[0].Data[j])
				}
			}
		}
	}
}

// The step the correctness tests take: the clip norm, noise multiplier,
// learning rate and seed of one DP-SGD step (values of the methods'
// recipes' order of magnitude; any would do).
const (
	stepClip  = 1.0
	stepSigma = 1.0
	stepLR    = float32(0.05)
	stepSeed  = 7
)

// StepTolerance is the largest relative difference, per trainable tensor,
// allowed between the CPU's and the GPU's DP-SGD step: max_j |gpu_j −
// cpu_j| / max_j |cpu_j| over the tensor's elements, for the parameters
// after the step and for the privatised gradient. The matrix products give
// the same bits, so the per-example gradients agree exactly; what differs
// is the order in which the norms are summed, which can move a clip factor
// by an ulp of float32 (a relative 6e-8). The bound leaves two orders of
// magnitude for that.
const StepTolerance = 1e-5

// testModel returns a TinyMLLM of the preset with LoRA of the preset's
// rank on every map of its language model (as the methods fine-tune it),
// its trainable layout and a batch of n synthetic VQA sequences (one image,
// an 8-token question, a 2-token answer, random tokens).
func testModel(t testing.TB, preset string, n int) (*nn.TinyMLLM, *nn.Layout, []nn.Sequence) {
	t.Helper()
	c, err := nn.Preset(preset, 600)
	if err != nil {
		t.Fatal(err)
	}
	c.PEFT = nn.PEFT{Method: "lora", Rank: c.PEFT.Rank, Targets: []string{"q", "k", "v", "o", "fc1", "fc2"}, BInitStd: 0.1}
	m, err := nn.NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	batch := make([]nn.Sequence, n)
	for i := range batch {
		toks := []int{nn.TokenBOS, nn.TokenImage}
		loss := []bool{false, false}
		for j := 0; j < 11; j++ {
			toks = append(toks, 5+rng.IntN(c.Vocab-5))
			loss = append(loss, j >= 8)
		}
		toks = append(toks, nn.TokenEOS)
		loss = append(loss, true)
		img := make([]float32, c.Channels*c.ImageSize*c.ImageSize)
		for j := range img {
			img[j] = rng.Float32()
		}
		batch[i] = nn.Sequence{Tokens: toks, Images: [][]float32{img}, Loss: loss}
	}
	return m, nn.NewLayout(m.Params()), batch
}

// stepResult is what one DP-SGD step gives.
type stepResult struct {
	theta, g []float32
	grads    [][]float32
	stats    nn.Stats
}

// cpuStep is the reference: per-example gradients on the CPU backend,
// methods.Privatizer (clip to stepClip, noise σ = stepSigma from the
// stream of stepSeed, divide by the batch size), and θ ← θ − lr·g in
// float32.
func cpuStep(t testing.TB, m *nn.TinyMLLM, l *nn.Layout, batch []nn.Sequence, theta0 []float32) stepResult {
	t.Helper()
	nn.SetBackend(nil)
	l.SetValues(theta0)
	res, err := m.PerSample(l, batch, nil, nil, &nn.Options{Reuse: true})
	if err != nil {
		t.Fatal(err)
	}
	grads := make([][]float32, len(res.Grads))
	for i, g := range res.Grads {
		grads[i] = slices.Clone(g)
	}
	priv, err := methods.NewPrivatizer(nn.Flat(stepClip), []float64{stepSigma}, float64(len(batch)), stepSeed)
	if err != nil {
		t.Fatal(err)
	}
	g := make([]float32, l.Size)
	priv.Privatize(g, res.Grads)
	theta := slices.Clone(theta0)
	for j := range theta {
		theta[j] = theta[j] - float32(stepLR*g[j])
	}
	return stepResult{theta, g, grads, res.Stats}
}

// gpuStep is the same step with every matrix product on the GPU and the
// private part in DPSGDStep, the noise drawn from the same stream.
func gpuStep(t testing.TB, d *Device, m *nn.TinyMLLM, l *nn.Layout, batch []nn.Sequence, theta0 []float32) stepResult {
	t.Helper()
	nn.SetBackend(d)
	defer nn.SetBackend(nil)
	l.SetValues(theta0)
	res, err := m.PerSample(l, batch, nil, nil, &nn.Options{Reuse: true})
	if err != nil {
		t.Fatal(err)
	}
	noise := privacy.NewNoise(stepSeed, methods.StreamNoise)
	z := make([]float64, l.Size)
	std := stepSigma * stepClip
	for j := range z {
		z[j] = std * noise.Normal()
	}
	theta := slices.Clone(theta0)
	g, _, err := d.DPSGDStep(theta, res.Grads, DPSGD{Clip: stepClip, Noise: z, Batch: float64(len(batch)), LR: stepLR})
	if err != nil {
		t.Fatal(err)
	}
	return stepResult{theta, g, res.Grads, res.Stats}
}

// relDiff returns max_j |a_j − b_j| / max_j |b_j| (0 when both are zero).
func relDiff(a, b []float32) float64 {
	var num, den float64
	for j := range a {
		num = max(num, math.Abs(float64(a[j])-float64(b[j])))
		den = max(den, math.Abs(float64(b[j])))
	}
	if num == 0 {
		return 0
	}
	return num / den
}

// TestDPSGDStep runs one DP-SGD step of the smoke preset's TinyMLLM with
// LoRA on the CPU (the reference: nn.CPU, methods.Privatizer, SGD) and on
// the GPU (every matrix product on the device, DPSGDStep), and checks
// every trainable tensor: the per-example gradients, the privatised
// gradient and the parameters after the step, within StepTolerance.
func TestDPSGDStep(t *testing.T) {
	d := device(t)
	saved := d.MinGemm
	d.MinGemm = 0
	defer func() { d.MinGemm = saved }()
	m, l, batch := testModel(t, "smoke", 16)
	theta0 := l.Values()
	cpu := cpuStep(t, m, l, batch, theta0)
	gpu := gpuStep(t, d, m, l, batch, theta0)
	worst := 0.0
	for i := range cpu.grads {
		worst = max(worst, relDiff(gpu.grads[i], cpu.grads[i]))
	}
	t.Logf("per-example gradients: max relative difference %.3g (0: the same bits)", worst)
	if worst > StepTolerance {
		t.Errorf("per-example gradients differ by %.3g, more than %g", worst, StepTolerance)
	}
	for i, p := range l.Params {
		lo, hi := l.Offsets[i], l.Offsets[i+1]
		dg := relDiff(gpu.g[lo:hi], cpu.g[lo:hi])
		dt := relDiff(gpu.theta[lo:hi], cpu.theta[lo:hi])
		t.Logf("%-32s %8d  gradient %.3g  parameters %.3g", p.Name, hi-lo, dg, dt)
		if dg > StepTolerance || dt > StepTolerance {
			t.Errorf("%s: relative difference %.3g (gradient), %.3g (parameters), more than %g", p.Name, dg, dt, StepTolerance)
		}
	}
	l.SetValues(theta0)
}

// TestDPSGDStepDeterministic checks that the GPU's step gives the same
// bits twice from the same state and seed.
func TestDPSGDStepDeterministic(t *testing.T) {
	d := device(t)
	saved := d.MinGemm
	d.MinGemm = 0
	defer func() { d.MinGemm = saved }()
	m, l, batch := testModel(t, "smoke", 16)
	theta0 := l.Values()
	a := gpuStep(t, d, m, l, batch, theta0)
	b := gpuStep(t, d, m, l, batch, theta0)
	for i := range a.grads {
		if j := firstDiff(a.grads[i], b.grads[i]); j >= 0 {
			t.Errorf("example %d: gradient element %d is %v, then %v", i, j, a.grads[i][j], b.grads[i][j])
		}
	}
	if j := firstDiff(a.g, b.g); j >= 0 {
		t.Errorf("privatised gradient element %d is %v, then %v", j, a.g[j], b.g[j])
	}
	if j := firstDiff(a.theta, b.theta); j >= 0 {
		t.Errorf("parameter %d is %v, then %v", j, a.theta[j], b.theta[j])
	}
	l.SetValues(theta0)
}

// BenchmarkDPSGDStep measures one DP-SGD step (per-example gradients,
// clipping, noise, SGD update) of the small and full presets' TinyMLLM
// with LoRA on every map of the language model, batch 64, on the CPU
// (nn.CPU on GOMAXPROCS goroutines, methods.Privatizer) and on the GPU
// (products of at least DefaultMinGemm multiply-adds on the device,
// DPSGDStep). It reports the step's peak training state on the host
// (nn.Stats.PeakBytes, peak-B) and the device memory the package held at
// its peak (gpu-B); cuda-all runs every product on the GPU (MinGemm 0).
func BenchmarkDPSGDStep(b *testing.B) {
	for _, preset := range []string{"small", "full"} {
		m, l, batch := testModel(b, preset, 64)
		theta0 := l.Values()
		b.Run(preset+"/cpu", func(b *testing.B) {
			var st nn.Stats
			for b.Loop() {
				st = cpuStep(b, m, l, batch, theta0).stats
			}
			b.ReportMetric(float64(st.PeakBytes()), "peak-B")
			b.ReportMetric(float64(len(batch))*float64(b.N)/b.Elapsed().Seconds(), "ex/s")
		})
		b.Run(preset+"/cuda", func(b *testing.B) {
			d := device(b)
			d.ResetPeak()
			var st nn.Stats
			for b.Loop() {
				st = gpuStep(b, d, m, l, batch, theta0).stats
			}
			b.ReportMetric(float64(st.PeakBytes()), "peak-B")
			b.ReportMetric(float64(d.PeakBytes()), "gpu-B")
			b.ReportMetric(float64(len(batch))*float64(b.N)/b.Elapsed().Seconds(), "ex/s")
		})
		// Every product on the device (MinGemm = 0): what the threshold
		// saves in transfers of small products.
		b.Run(preset+"/cuda-all", func(b *testing.B) {
			d := device(b)
			saved := d.MinGemm
			d.MinGemm = 0
			defer func() { d.MinGemm = saved }()
			for b.Loop() {
				gpuStep(b, d, m, l, batch, theta0)
			}
			b.ReportMetric(float64(len(batch))*float64(b.N)/b.Elapsed().Seconds(), "ex/s")
		})
		l.SetValues(theta0)
		fmt.Fprintf(os.Stderr, "%s: %d trainable parameters, batch %d\n", preset, l.Size, len(batch))
	}
}

// BenchmarkGemm measures one 2048×2048×2048 matrix product (no
// transposition, β = 0) on the CPU backend (GOMAXPROCS goroutines) and on
// the GPU with its transfers (operands in, C out), and reports GFLOP/s
// (2·m·n·k per product).
func BenchmarkGemm(b *testing.B) {
	const n = 2048
	rng := rand.New(rand.NewPCG(3, 3))
	x, y, z := make([]float32, n*n), make([]float32, n*n), make([]float32, n*n)
	for i := range x {
		x[i], y[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
	}
	for _, dev := range []string{"cpu", "cuda"} {
		b.Run(dev, func(b *testing.B) {
			var be nn.Backend = nn.CPU{}
			if dev == "cuda" {
				be = device(b)
			}
			for b.Loop() {
				be.Gemm(false, false, n, n, n, 1, x, n, y, n, 0, z, n)
			}
			b.ReportMetric(2*n*n*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkPrivate measures the private half of a DP-SGD step alone
// (clipping, the ordered sum, noise, the SGD update) on 64 per-example
// gradients of the full preset's LoRA layout: methods.Privatizer and the
// update on the CPU against DPSGDStep on the GPU, transfers included
// (the gradients in, the parameters and the gradient out), the noise
// drawn on the host either way.
func BenchmarkPrivate(b *testing.B) {
	_, l, _ := testModel(b, "full", 1)
	rng := rand.New(rand.NewPCG(4, 4))
	grads := make([][]float32, 64)
	for i := range grads {
		grads[i] = make([]float32, l.Size)
		for j := range grads[i] {
			grads[i][j] = float32(rng.NormFloat64() * 1e-3)
		}
	}
	theta0 := l.Values()
	b.Run("cpu", func(b *testing.B) {
		work := make([][]float32, len(grads))
		for i := range work {
			work[i] = make([]float32, l.Size)
		}
		theta, g := slices.Clone(theta0), make([]float32, l.Size)
		for b.Loop() {
			for i := range work {
				copy(work[i], grads[i])
			}
			priv, err := methods.NewPrivatizer(nn.Flat(stepClip), []float64{stepSigma}, float64(len(grads)), stepSeed)
			if err != nil {
				b.Fatal(err)
			}
			priv.Privatize(g, work)
			for j := range theta {
				theta[j] = theta[j] - float32(stepLR*g[j])
			}
		}
	})
	b.Run("cuda", func(b *testing.B) {
		d := device(b)
		theta, z := slices.Clone(theta0), make([]float64, l.Size)
		for b.Loop() {
			noise := privacy.NewNoise(stepSeed, methods.StreamNoise)
			for j := range z {
				z[j] = stepSigma * stepClip * noise.Normal()
			}
			if _, _, err := d.DPSGDStep(theta, grads, DPSGD{Clip: stepClip, Noise: z, Batch: float64(len(grads)), LR: stepLR}); err != nil {
				b.Fatal(err)
			}
		}
	})
	fmt.Fprintf(os.Stderr, "private half: %d trainable parameters, 64 examples\n", l.Size)
}
