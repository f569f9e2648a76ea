// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/privacy"
)

// spartaHyper resolves SPARTA's hyperparameters at scale with params
// overriding the defaults (ResolveAt), failing the test on a bad value.
func spartaHyper(t testing.TB, scale string, params map[string]any) Hyper {
	t.Helper()
	h, err := ResolveAt("sparta", scale, ReferenceEpsilon, params)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// toyModule is a model given by its tensors.
type toyModule []*nn.Param

func (m toyModule) Params() []*nn.Param { return m }

func toyParam(name string, kind nn.Kind, rng *rand.Rand, shape ...int) *nn.Param {
	n := 1
	for _, d := range shape {
		n *= d
	}
	p := &nn.Param{Name: name, Kind: kind, Shape: shape, Data: make([]float32, n), Grad: make([]float32, n)}
	for i := range p.Data {
		p.Data[i] = float32(rng.NormFloat64())
	}
	return p
}

// refScores is the slow reference of the scoring epoch of mask for
// per-example gradients grad(i) in float64 over d coordinates, on the
// batches of the Poisson sampler's stream. SPARTA (Eq. 11, Algorithm 1
// lines 2–4): each example's gradient clipped to ℓ₂ norm c by its own norm,
// its absolute values summed over the batch, N(0, (σc)²) added to every
// coordinate in order from the noise stream, divided by the expected batch
// size b, summed over the epoch's steps; dpsgd-grads (Algorithm 2): the
// same with the signed clipped gradients; oracle (Algorithm 3): the
// absolute values of the unclipped gradients, summed, without noise.
func refScores(mask string, n, steps, d int, q, sigma, c, b float64, seed uint64, grad func(i int) []float64) []float64 {
	sampler := rand.New(rand.NewPCG(seed, privacy.StreamID(StreamSampler)))
	noise := rand.New(rand.NewPCG(seed, privacy.StreamID(StreamNoise)))
	u := make([]float64, d)
	for range steps {
		sum := make([]float64, d)
		for i := range n {
			if sampler.Float64() >= q {
				continue
			}
			g := grad(i)
			s := 0.0
			for _, v := range g {
				s += v * v
			}
			f := math.Min(1, c/math.Sqrt(s))
			for j, v := range g {
				switch mask {
				case maskOracle:
					sum[j] += math.Abs(v)
				case maskDPGrads:
					sum[j] += v * f
				default:
					sum[j] += math.Abs(v) * f
				}
			}
		}
		for j := range sum {
			if mask == maskOracle {
				u[j] += sum[j]
				continue
			}
			u[j] += (sum[j] + sigma*c*noise.NormFloat64()) / b
		}
	}
	return u
}

// scoreToy runs the scoring epoch of SPARTA on a toy model and returns the
// run (its scores r.u and masks r.keep).
func scoreToy(t *testing.T, m toyModule, loss func(t *nn.Tape, i int) (*nn.Node, error), n int, params map[string]any) *spartaRun {
	t.Helper()
	job := &Job{Hyper: spartaHyper(t, "smoke", params), Epsilon: 1, Delta: 1e-5, Seed: 11, Workers: 2}
	if params["mask"] == maskOracle {
		job.Epsilon = math.Inf(1) // not private; σ of oracle_epsilon = 1
	}
	r, err := newSpartaRun("sparta", job, m, loss, n)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.setParams(); err != nil {
		t.Fatal(err)
	}
	r.res = &Result{}
	if err := r.runPhase(context.Background(), r.scorePhase()); err != nil {
		t.Fatal(err)
	}
	if err := r.choose(); err != nil {
		t.Fatal(err)
	}
	return r
}

// checkScores compares a run's scores with the reference's, and its mask
// of weight w (unless nil) with the top rows of the reference's row scores.
func checkScores(t *testing.T, r *spartaRun, want []float64, w *nn.Param, s float64) {
	t.Helper()
	if len(r.u) != len(want) {
		t.Fatalf("got %d scores, want %d", len(r.u), len(want))
	}
	for j := range want {
		if math.Abs(r.u[j]-want[j]) > 1e-5*(1+math.Abs(want[j])) {
			t.Fatalf("score %d: got %v, want %v (reference)", j, r.u[j], want[j])
		}
	}
	if w == nil {
		return
	}
	i := r.scoreLayout.Index(w)
	rows := rowScores(want[r.scoreLayout.Offsets[i]:r.scoreLayout.Offsets[i+1]], w.Rows())
	k := keepCount(s, w.Rows())
	order := make([]int, len(rows))
	for j := range order {
		order[j] = j
	}
	slices.SortFunc(order, func(a, b int) int { return -cmpFloat(rows[a], rows[b]) })
	for rank, row := range order {
		got := r.keep[w][row*w.RowLen()]
		if got != (rank < k) {
			t.Errorf("row %d (score %v, rank %d of %d, keep %d): kept %v", row, rows[row], rank, len(rows), k, got)
		}
		for _, b := range r.keep[w][row*w.RowLen() : (row+1)*w.RowLen()] {
			if b != got {
				t.Fatalf("row %d is not kept or dropped whole", row)
			}
		}
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestSpartaScoresLinear checks the scoring epoch of SPARTA, dpsgd-grads
// and oracle on a toy linear layer with softmax cross-entropy against
// refScores, whose per-example
// gradients are the closed form ∂/∂W = (softmax(Wx + b) − e_y)·xᵀ,
// ∂/∂b = softmax(Wx + b) − e_y (clipped jointly, as the weight and the
// warm-up bias are in the paper's code), and the masks against the
// reference's top rows (SPARTA) or elements (the others).
func TestSpartaScoresLinear(t *testing.T) {
	t.Parallel()
	const n, rows, cols = 23, 6, 5
	rng := rand.New(rand.NewPCG(3, 3))
	w := toyParam("toy.fc1.weight", nn.KindWeight, rng, rows, cols)
	b := toyParam("toy.fc1.bias", nn.KindBias, rng, rows)
	xs := make([][]float32, n)
	ys := make([]int, n)
	for i := range xs {
		xs[i] = make([]float32, cols)
		for j := range xs[i] {
			xs[i][j] = float32(2 * rng.NormFloat64())
		}
		ys[i] = rng.IntN(rows)
	}
	loss := func(tp *nn.Tape, i int) (*nn.Node, error) {
		z := tp.Affine(tp.Input(nn.Tensor{Shape: []int{1, cols}, Data: xs[i]}, false), tp.Param(w), tp.Param(b))
		return tp.CrossEntropy(z, []int{ys[i]}, nil), nil
	}
	grad := func(i int) []float64 {
		z := make([]float64, rows)
		mx := math.Inf(-1)
		for r := range z {
			z[r] = float64(b.Data[r])
			for j := range cols {
				z[r] += float64(w.Data[r*cols+j]) * float64(xs[i][j])
			}
			mx = math.Max(mx, z[r])
		}
		sum := 0.0
		for r := range z {
			z[r] = math.Exp(z[r] - mx)
			sum += z[r]
		}
		g := make([]float64, rows*cols+rows)
		for r := range z {
			dz := z[r] / sum
			if r == ys[i] {
				dz--
			}
			for j := range cols {
				g[r*cols+j] = dz * float64(xs[i][j])
			}
			g[rows*cols+r] = dz
		}
		return g
	}
	const s = 0.5
	for _, mask := range []string{maskSPARTA, maskDPGrads, maskOracle} {
		r := scoreToy(t, toyModule{w, b}, loss, n, map[string]any{"batch_size": 5, "layers": "fc1", "sparsity": s, "epochs": 2, "warmup_epochs": 0, "mask": mask})
		if r.sched.score != 5 {
			t.Fatalf("scoring epoch of %d steps, want ⌈23/5⌉ = 5", r.sched.score)
		}
		if !(r.acc.Sigma > 0) {
			t.Fatalf("σ = %v", r.acc.Sigma)
		}
		want := refScores(mask, n, 5, rows*cols+rows, 5.0/n, r.acc.Sigma, 1, 5, phaseSeed(11, "score"), grad)
		if mask == maskSPARTA {
			checkScores(t, r, want, w, s)
			continue
		}
		// No grouping: the ⌈s·n⌉ elements of w with the largest
		// reference score (by magnitude for the signed DP-SGD gradient).
		checkScores(t, r, want, nil, s)
		lo, hi, kept := math.Inf(1), math.Inf(-1), 0
		for j, k := range r.keep[w] {
			v := math.Abs(want[j])
			if k {
				lo, kept = math.Min(lo, v), kept+1
			} else {
				hi = math.Max(hi, v)
			}
		}
		if kept != rows*cols/2 || lo <= hi {
			t.Errorf("%s: %d of %d elements kept (want %d), smallest kept score %v, largest dropped %v", mask, kept, rows*cols, rows*cols/2, lo, hi)
		}
	}
}

// TestSpartaScoresConv checks the scoring epoch on a toy convolution
// (weight [F, C, k, k], no bias; loss ½‖conv(x) − y‖²) against refScores
// with the gradient computed by direct summation over output positions,
// ∂/∂W[f,c,i,j] = Σ_{o,p} (conv(x) − y)[f,o,p]·x[c, o+i, p+j], and the rows
// (output filters) kept against the reference's.
func TestSpartaScoresConv(t *testing.T) {
	t.Parallel()
	const n, f, ch, k, hw = 17, 5, 2, 2, 4
	const ho = hw - k + 1
	rng := rand.New(rand.NewPCG(4, 4))
	w := toyParam("toy.conv0.weight", nn.KindWeight, rng, f, ch, k, k)
	for i := range w.Data {
		w.Data[i] *= 0.3
	}
	xs, ys := make([][]float32, n), make([][]float32, n)
	for i := range xs {
		xs[i] = toyParam("x", nn.KindWeight, rng, ch*hw*hw).Data
		ys[i] = toyParam("y", nn.KindWeight, rng, f*ho*ho).Data
	}
	loss := func(tp *nn.Tape, i int) (*nn.Node, error) {
		y := tp.Conv2d(tp.Input(nn.Tensor{Shape: []int{ch, hw, hw}, Data: xs[i]}, false), tp.Param(w), nil, 1, 0)
		neg := make([]float32, len(ys[i]))
		for j, v := range ys[i] {
			neg[j] = -v
		}
		d := tp.Add(y, tp.Input(nn.Tensor{Shape: []int{f, ho, ho}, Data: neg}, false))
		return tp.Scale(tp.Sum(tp.Mul(d, d)), 0.5), nil
	}
	x := func(i, c, a, b int) float64 { return float64(xs[i][(c*hw+a)*hw+b]) }
	grad := func(i int) []float64 {
		g := make([]float64, len(w.Data))
		for fi := range f {
			for o := range ho {
				for p := range ho {
					y := 0.0
					for c := range ch {
						for a := range k {
							for b := range k {
								y += float64(w.Data[((fi*ch+c)*k+a)*k+b]) * x(i, c, o+a, p+b)
							}
						}
					}
					d := y - float64(ys[i][(fi*ho+o)*ho+p])
					for c := range ch {
						for a := range k {
							for b := range k {
								g[((fi*ch+c)*k+a)*k+b] += d * x(i, c, o+a, p+b)
							}
						}
					}
				}
			}
		}
		return g
	}
	const s = 0.4 // ⌈0.4·5⌉ = 2 filters
	r := scoreToy(t, toyModule{w}, loss, n, map[string]any{"batch_size": 4, "layers": "conv", "sparsity": s, "epochs": 3, "warmup_epochs": 1})
	want := refScores(maskSPARTA, n, 5, len(w.Data), 4.0/n, r.acc.Sigma, 1, 4, phaseSeed(11, "score"), grad)
	checkScores(t, r, want, w, s)
	kept := 0
	for row := range f {
		if r.keep[w][row*w.RowLen()] {
			kept++
		}
	}
	if kept != 2 {
		t.Errorf("%d filters kept, want ⌈0.4·5⌉ = 2", kept)
	}
}

// vitJob returns a SPARTA job with params on the first n private examples
// of the smoke fashion-cls task and a freshly initialised smoke ViT with a
// head for the four public coarse labels (so FineTune replaces it).
func vitJob(t testing.TB, n int, eps float64, params map[string]any) *Job {
	t.Helper()
	return classifierJob(t, "sparta", n, eps, params)
}

// classifierJob is vitJob for the registered method name of Arch vit.
func classifierJob(t testing.TB, name string, n int, eps float64, params map[string]any) *Job {
	t.Helper()
	d, err := datasets.Build("fashion-cls", &datasets.Options{Scale: datasets.Smoke, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := nn.Preset("smoke", datasets.Vocab().Len())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Classes = len(d.PublicClasses)
	m, err := nn.NewViT(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sub := *d
	sub.Private = d.Private[:n]
	h, err := ResolveAt(name, "smoke", eps, params)
	if err != nil {
		t.Fatal(err)
	}
	return &Job{Model: m, Data: &sub, Hyper: h, Epsilon: eps, Delta: 1e-5, Seed: 5}
}

// tinyRun is a SPARTA run short enough for a test: 4 epochs of 4 steps
// (B = 12 of 48 examples), one of warm-up.
var tinyRun = map[string]any{"epochs": 4, "warmup_epochs": 1, "batch_size": 12}

func with(base map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// TestSpartaFullMaskIsAll checks that SPARTA with s = 100% trains exactly
// what the all baseline trains after the warm-up, bit for bit (the
// all-ones row mask, the masked optimizer steps and the scoring epoch
// change nothing), whatever the number of workers, and that a smaller s
// does not.
func TestSpartaFullMaskIsAll(t *testing.T) {
	t.Parallel()
	run := func(workers int, params map[string]any) []float32 {
		job := vitJob(t, 48, 1, params)
		job.Workers = workers
		res, err := SPARTA{}.FineTune(context.Background(), job)
		if err != nil {
			t.Fatal(err)
		}
		if want := 4 * 4; res.Steps != want && params["mask"] != maskAll || params["mask"] == maskAll && res.Steps != want-4 {
			t.Errorf("%v: %d steps", params, res.Steps)
		}
		return nn.NewLayout(nn.SetTrainable(job.Model, func(*nn.Param) bool { return true }).Params).Values()
	}
	full := run(1, with(tinyRun, "sparsity", 1.0))
	all := run(2, with(tinyRun, "mask", maskAll))
	if !slices.Equal(full, all) {
		t.Errorf("sparta at s = 1 and all differ")
	}
	if again := run(3, with(tinyRun, "sparsity", 1.0)); !slices.Equal(full, again) {
		t.Errorf("sparta at s = 1 differs between 1 and 3 workers")
	}
	if sparse := run(2, with(tinyRun, "sparsity", 0.5)); slices.Equal(full, sparse) {
		t.Errorf("sparta at s = 0.5 equals s = 1")
	}
}

// TestSpartaMaskFixed checks, after every step of a run, that the weights
// do not move before the sparse phase, and that in the sparse phase only
// the rows the scoring epoch kept move (the mask is fixed once chosen and
// frozen rows keep their pretrained values bit for bit), ⌈s·R⌉ of each
// layer's R rows; and that kept rows do move; with the kept rows gathered
// (the default) and masked.
func TestSpartaMaskFixed(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{sparseGathered, sparseMasked} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			testSpartaMaskFixed(t, mode)
		})
	}
}

func testSpartaMaskFixed(t *testing.T, mode string) {
	job := vitJob(t, 48, 1, with(tinyRun, "sparsity", 0.3, "sparse_rows", mode))
	r, err := newViTRun(job)
	if err != nil {
		t.Fatal(err)
	}
	var init [][]float32
	for _, p := range maskable(job.Model.Params(), spartaLayers) {
		init = append(init, slices.Clone(p.Data))
	}
	moved := map[*nn.Param]bool{}
	emb := map[*nn.Param][]float32{}
	warmInit := map[string][]float32{}
	for _, p := range job.Model.Params() {
		if p.Kind == nn.KindEmbedding {
			emb[p] = slices.Clone(p.Data)
		}
		warmInit[p.Name] = slices.Clone(p.Data)
	}
	warm := map[string]bool{}
	job.Progress = func(done, total int) {
		if done == r.sched.warmup {
			// The warm-up trains the head, the biases and the norm gains.
			for _, p := range job.Model.Params() {
				if warmupParam(p) && !slices.Equal(p.Data, warmInit[p.Name]) {
					warm[string(p.Kind)] = true
				}
			}
		}
		for i, p := range r.weights {
			for j, v := range p.Data {
				if v == init[i][j] {
					continue
				}
				if done <= r.sched.warmup+r.sched.score {
					t.Fatalf("step %d of %d: %s element %d moved before the sparse phase", done, total, p.Name, j)
				}
				if !r.keep[p][j] {
					t.Fatalf("step %d of %d: %s element %d (row %d) is frozen but moved", done, total, p.Name, j, j/p.RowLen())
				}
				moved[p] = true
			}
		}
	}
	if _, err := r.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for p, v := range emb {
		if !slices.Equal(p.Data, v) {
			t.Errorf("%s ([CLS] or position embedding) moved", p.Name)
		}
	}
	if len(warm) != 3 {
		t.Errorf("the warm-up trained the kinds %v, want head, bias and norm", warm)
	}
	if len(r.weights) != 7 { // patch, q, k, v, o, fc1, fc2 of one block
		t.Fatalf("%d maskable weights, want 7", len(r.weights))
	}
	for _, p := range r.weights {
		rows := 0
		for row := range p.Rows() {
			if r.keep[p][row*p.RowLen()] {
				rows++
			}
		}
		if want := int(math.Ceil(0.3 * float64(p.Rows()))); rows != want {
			t.Errorf("%s: %d of %d rows kept, want %d", p.Name, rows, p.Rows(), want)
		}
		if !moved[p] {
			t.Errorf("%s: no kept element moved", p.Name)
		}
	}
}

// TestSpartaPrivacyRecord checks that SPARTA's record lists its three
// phases as events of one Poisson-subsampled Gaussian mechanism (the same
// q and σ) that sum to exactly T epochs, with an ε at most the target and
// equal to that of T epochs of DP-SGD at that σ; that the masks without a
// scoring epoch record T − 1 epochs with the same σ; and that oracle is
// recorded as not private.
func TestSpartaPrivacyRecord(t *testing.T) {
	t.Parallel()
	const n, eps = 48, 2.0
	for _, tc := range []struct {
		mask   string
		epochs int
	}{{maskSPARTA, 4}, {maskDPGrads, 4}, {maskMP, 3}, {maskAll, 3}, {maskOracle, 3}} {
		t.Run(tc.mask, func(t *testing.T) {
			t.Parallel()
			h := spartaHyper(t, "smoke", with(tinyRun, "mask", tc.mask))
			s, err := newSpartaSchedule(h, n)
			if err != nil {
				t.Fatal(err)
			}
			target := eps
			if tc.mask == maskOracle {
				// Not private: run at ε = inf with the noise of ε = 2.
				target = math.Inf(1)
				h.values["oracle_epsilon"] = eps
				if _, err := spartaAccounting("sparta", h, eps, 1e-5, s, tc.mask); err == nil {
					t.Error("oracle at a finite target ε: no error")
				}
			}
			a, err := spartaAccounting("sparta", h, target, 1e-5, s, tc.mask)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := privacy.UnmarshalEvent(a.Record.Events)
			if err != nil {
				t.Fatal(err)
			}
			steps, private := 0, true
			for _, e := range ev.(privacy.Composed) {
				switch e := e.(type) {
				case privacy.SelfComposed:
					if pg := e.Event.(privacy.PoissonGaussian); pg.Q != 12.0/n || pg.Sigma != a.Sigma {
						t.Errorf("event %v, want q = %v, σ = %v", e, 12.0/n, a.Sigma)
					}
					steps += e.Count
				case privacy.NonPrivate:
					private = false
				default:
					t.Errorf("event %v", e)
				}
			}
			if steps != tc.epochs*4 || int(a.Record.Steps) != steps+map[bool]int{true: 0, false: 4}[private] {
				t.Errorf("events of %d steps, record %d steps; want %d epochs of 4", steps, a.Record.Steps, tc.epochs)
			}
			if tc.mask == maskOracle {
				if private || !math.IsInf(float64(a.Record.Epsilon), 1) || !slices.Contains(a.Record.Caveats, oracleCaveat) {
					t.Errorf("oracle: ε = %v, caveats %v", a.Record.Epsilon, a.Record.Caveats)
				}
				sp, err := spartaAccounting("sparta", h, eps, 1e-5, s, maskSPARTA)
				if err != nil {
					t.Fatal(err)
				}
				if a.Sigma != sp.Sigma {
					t.Errorf("oracle σ = %v, SPARTA's at ε = %v: %v", a.Sigma, eps, sp.Sigma)
				}
				return
			}
			// The same σ as a 4-epoch DP-SGD run calibrated to ε.
			ref := privacy.SelfComposed{Event: privacy.PoissonGaussian{Q: 12.0 / n, Sigma: a.Sigma}, Count: tc.epochs * 4}
			rdp, pld, err := epsilons(ref, 1e-5)
			if err != nil {
				t.Fatal(err)
			}
			if got := float64(a.Record.Epsilon); got > eps || math.Abs(got-pld) > 1e-6*pld || math.Abs(a.EpsilonRDP-rdp) > 1e-9*rdp {
				t.Errorf("ε = %v (RDP %v), want ≤ %v and the ε of %v: PLD %v, RDP %v", got, a.EpsilonRDP, eps, ref, pld, rdp)
			}
			if tc.epochs == 4 && !(float64(a.Record.Epsilon) > 0.99*eps) {
				t.Errorf("ε = %v, want the target %v (σ calibrated for 4 epochs)", a.Record.Epsilon, eps)
			}
		})
	}
}

// TestSpartaMaskSparsity checks that the element-wise random and mp masks
// keep exactly ⌈s·n⌉ of each layer's n weights, that mp keeps the largest
// magnitudes of the pretrained weights, and that every mask runs and
// reports the trained fraction of the maskable weights it kept.
func TestSpartaMaskSparsity(t *testing.T) {
	t.Parallel()
	for _, mask := range spartaMasks {
		for _, s := range []float64{0.1, 0.25, 1} {
			t.Run(mask, func(t *testing.T) {
				t.Parallel()
				eps := 1.0
				if mask == maskOracle {
					eps = math.Inf(1) // not private
				}
				job := vitJob(t, 48, eps, with(tinyRun, "mask", mask, "sparsity", s))
				r, err := newViTRun(job)
				if err != nil {
					t.Fatal(err)
				}
				init := map[string][]float32{}
				for _, p := range job.Model.Params() {
					init[p.Name] = slices.Clone(p.Data)
				}
				res, err := r.run(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				kept, total := 0, 0
				for _, p := range r.weights {
					k := r.keep[p]
					total += len(p.Data)
					if k == nil {
						if mask == maskAll {
							kept += len(p.Data)
						}
						continue
					}
					n := 0
					lo, hi := math.Inf(1), 0.0 // smallest kept and largest dropped |w|
					for j, b := range k {
						a := math.Abs(float64(init[p.Name][j]))
						if b {
							n, lo = n+1, math.Min(lo, a)
						} else {
							hi = math.Max(hi, a)
						}
					}
					kept += n
					want := int(math.Ceil(s * float64(len(k))))
					if mask == maskSPARTA {
						want = int(math.Ceil(s*float64(p.Rows()))) * p.RowLen()
					}
					if n != want {
						t.Errorf("%s at s = %v: %d of %d weights kept, want %d", p.Name, s, n, len(k), want)
					}
					if mask == maskMP && lo < hi {
						t.Errorf("%s: mp keeps |w| = %v but drops %v", p.Name, lo, hi)
					}
				}
				if got, want := res.Values["sparta_trainable_fraction"], float64(kept)/float64(total); got != want {
					t.Errorf("trainable fraction %v, want %v", got, want)
				}
				if (mask == maskLast || mask == maskBitFit) && kept != 0 {
					t.Errorf("%s keeps %d weights", mask, kept)
				}
			})
		}
	}
}

// TestSpartaBadInput checks that bad hyperparameters are errors before
// anything runs: sparsity outside (0, 1] and an unknown layer in the
// hyperparameter table (so the spec checker reports them with their
// line), warm-up epochs ≥ epochs and a layer list that names no weight of
// the model in FineTune, which then leaves the model as it was.
func TestSpartaBadInput(t *testing.T) {
	t.Parallel()
	check := func(name string, v any) error {
		_, err := CheckParam("sparta", name, v)
		return err
	}
	for _, tc := range []struct {
		name string
		v    any
		ok   bool
	}{
		{"sparsity", 0.0, false}, {"sparsity", -0.1, false}, {"sparsity", 1.5, false}, {"sparsity", math.NaN(), false},
		{"sparsity", 1.0, true}, {"sparsity", 0.01, true},
		{"layers", "q,lm", false}, {"layers", "", false}, {"layers", "q,conv", true},
		{"mask", "magnitude", false}, {"mask", "oracle", true},
		{"epochs", 1, false}, {"warmup_epochs", -1, false},
	} {
		if err := check(tc.name, tc.v); (err == nil) != tc.ok {
			t.Errorf("%s = %v: error %v, want ok %v", tc.name, tc.v, err, tc.ok)
		}
	}
	for _, params := range []map[string]any{
		with(tinyRun, "warmup_epochs", 4),
		with(tinyRun, "warmup_epochs", 5),
		with(tinyRun, "layers", "conv"),
	} {
		job := vitJob(t, 48, 1, params)
		before := nn.NewLayout(nn.SetTrainable(job.Model, func(*nn.Param) bool { return true }).Params).Values()
		if _, err := (SPARTA{}).FineTune(context.Background(), job); err == nil {
			t.Errorf("%v: no error", params)
		} else {
			t.Logf("%v: %v", params, err)
		}
		after := nn.NewLayout(nn.SetTrainable(job.Model, func(*nn.Param) bool { return true }).Params).Values()
		if !slices.Equal(before, after) {
			t.Errorf("%v: the model changed", params)
		}
	}
}

// TestSpartaGatheredIsMasked checks the gathered sparse step against the
// masked one (the reference: every row's per-example gradient multiplied
// by the mask, as in W_old + m ⊙ W): on the same batch and mask, the sums
// of the clipped per-example gradients (the release before its noise)
// are equal on every kept coordinate, for SPARTA's row mask and for an
// element mask (random), whose gathered layout holds the rows with a kept
// element and masks the others; and that the gathered layout is smaller
// by the rows no element of which is kept.
func TestSpartaGatheredIsMasked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mask     string
		sparsity float64
	}{{maskSPARTA, 0.3}, {maskRandom, 0.01}} {
		sums := map[string][]float32{}
		var layouts = map[string]*nn.Layout{}
		var models = map[string]nn.Module{}
		for _, mode := range []string{sparseGathered, sparseMasked} {
			job := vitJob(t, 48, 1, with(tinyRun, "mask", tc.mask, "sparsity", tc.sparsity, "sparse_rows", mode))
			r, err := newViTRun(job)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.setParams(); err != nil {
				t.Fatal(err)
			}
			// Scores drawn at random, the same for both modes.
			r.scoreLayout = nn.SetTrainable(r.model, r.scored)
			r.u = make([]float64, r.scoreLayout.Size)
			rng := rand.New(rand.NewPCG(1, 2))
			for i := range r.u {
				r.u[i] = rng.Float64()
			}
			if err := r.choose(); err != nil {
				t.Fatal(err)
			}
			ph := r.sparsePhase()
			l := ph.layout(r.model)
			idx := []int{0, 3, 4, 9, 17, 30}
			grads, _, err := r.perSample(l, idx, &nn.Options{Mask: r.elemMask(l)})
			if err != nil {
				t.Fatal(err)
			}
			nn.ClipAll(grads, nn.Flat(r.h.Clip))
			sums[mode] = nn.Sum(nil, grads)
			layouts[mode], models[mode] = l, r.model
		}
		g, m := layouts[sparseGathered], layouts[sparseMasked]
		if g.Size >= m.Size {
			t.Errorf("%s: the gathered layout has %d elements, the masked %d", tc.mask, g.Size, m.Size)
		}
		if g.Rows(g.Index(nn.Lookup(models[sparseGathered], "vision.blocks.0.attn.q.weight"))) == nil {
			t.Errorf("%s: q's rows are not gathered", tc.mask)
		}
		for i, p := range g.Params {
			gb := g.Block(sums[sparseGathered], i)
			q := nn.Lookup(models[sparseMasked], p.Name)
			mb := m.Block(sums[sparseMasked], m.Index(q))
			rows, rl := g.Rows(i), p.RowLen()
			for j, v := range gb {
				e := j
				if rows != nil {
					e = rows[j/rl]*rl + j%rl
				}
				if w := mb[e]; math.Abs(float64(v-w)) > 1e-6*max(1, math.Abs(float64(w))) {
					t.Fatalf("%s: %s element %d: gathered clipped sum %g, masked %g", tc.mask, p.Name, e, v, w)
				}
			}
		}
	}
}
