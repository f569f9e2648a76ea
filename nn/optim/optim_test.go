// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package optim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// refGrad is the gradient fed at step t in the reference trajectories.
func refGrad(t int) []float32 {
	return []float32{0.5 * float32(t+1), -1.0 + 0.25*float32(t), 2.0 / float32(t+1)}
}

// TestReferenceTrajectories compares four steps of each optimizer with
// PyTorch. Values computed with Debian's python3-torch 1.13 by:
//
//	p = torch.nn.Parameter(torch.tensor([1.0, -2.0, 0.5]))
//	opt = <optimizer>([p], ...)
//	for t in range(4):
//	    p.grad = torch.tensor([0.5*(t+1), -1.0+0.25*t, 2.0/(t+1)])
//	    opt.step(); print([float(x) for x in p.detach()])
//
// with <optimizer> as in each case's comment. PyTorch computes in float32
// and this package in float64 with float32 state, hence the tolerance.
func TestReferenceTrajectories(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		desc string
		name string
		set  *Settings
		lr   float64
		want [4][3]float64
		tol  float64
	}{
		{
			desc: "sgd", name: "sgd", lr: 0.1, tol: 1e-6, // torch.optim.SGD(ps, lr=0.1)
			want: [4][3]float64{
				{0.949999988079071, -1.899999976158142, 0.30000001192092896},
				{0.8499999642372131, -1.8249999284744263, 0.20000001788139343},
				{0.699999988079071, -1.774999976158142, 0.13333335518836975},
				{0.5, -1.75, 0.08333335816860199},
			},
		},
		{
			// torch.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01)
			desc: "sgd momentum", name: "sgd", lr: 0.1, tol: 1e-6, set: &Settings{Momentum: 0.9, WeightDecay: 0.01},
			want: [4][3]float64{
				{0.9490000009536743, -1.8980000019073486, 0.2994999885559082},
				{0.8021510243415833, -1.7293020486831665, 0.018750471994280815},
				{0.5191847681999207, -1.5257445573806763, -0.3006094992160797},
				{0.06399600952863693, -1.3160170316696167, -0.6377328634262085},
			},
		},
		{
			// torch.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)
			desc: "sgd nesterov", name: "sgd", lr: 0.1, tol: 1e-6, set: &Settings{Momentum: 0.9, Nesterov: true, WeightDecay: 0.01},
			want: [4][3]float64{
				{0.9031000137329102, -1.8062000274658203, 0.11904997378587723},
				{0.6700741052627563, -1.5776482820510864, -0.23358124494552612},
				{0.2648904621601105, -1.343079686164856, -0.5870650410652161},
				{-0.3446750342845917, -1.1283360719680786, -0.9392952919006348},
			},
		},
		{
			desc: "adam", name: "adam", lr: 0.01, tol: 1e-6, // torch.optim.Adam(ps, lr=0.01)
			want: [4][3]float64{
				{0.9900000095367432, -1.9900000095367432, 0.49000000953674316},
				{0.9803481698036194, -1.9801743030548096, 0.4806782007217407},
				{0.97076815366745, -1.970748782157898, 0.4719466269016266},
				{0.9611640572547913, -1.962095856666565, 0.4637342393398285},
			},
		},
		{
			// torch.optim.Adam(ps, lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)
			desc: "adam l2", name: "adam", lr: 0.01, tol: 1e-6, set: &Settings{Beta1: 0.8, Beta2: 0.99, Eps: 1e-6, WeightDecay: 0.1},
			want: [4][3]float64{
				{0.9900000095367432, -1.9900000095367432, 0.49000000953674316},
				{0.9801056385040283, -1.9801907539367676, 0.480812132358551},
				{0.9701277613639832, -1.9707815647125244, 0.4723476767539978},
				{0.9599869847297668, -1.9620795249938965, 0.46452605724334717},
			},
		},
		{
			desc: "adamw", name: "adamw", lr: 0.01, tol: 1e-6, set: &Settings{WeightDecay: 0.1}, // torch.optim.AdamW(ps, lr=0.01, weight_decay=0.1)
			want: [4][3]float64{
				{0.9890000224113464, -1.9880000352859497, 0.4895000159740448},
				{0.9783592224121094, -1.9761863946914673, 0.47968870401382446},
				{0.9678008556365967, -1.9647847414016724, 0.47047746181488037},
				{0.95722895860672, -1.9541670083999634, 0.4617946147918701},
			},
		},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			params := []Param{{Name: "p", Data: []float32{1, -2, 0.5}, Grad: make([]float32, 3)}}
			opt, err := New(tc.name, params, tc.set)
			if err != nil {
				t.Fatal(err)
			}
			for step, want := range tc.want {
				copy(params[0].Grad, refGrad(step))
				opt.Step(params, tc.lr, nil)
				for j, w := range want {
					if got := float64(params[0].Data[j]); math.Abs(got-w) > tc.tol*math.Max(1, math.Abs(w)) {
						t.Errorf("step %d element %d: got %.9g, want %.9g", step, j, got, w)
					}
				}
			}
		})
	}
}

// TestSGDClosedForm checks SGD with momentum under a constant gradient g:
// the buffer after t steps is g·(1−μᵗ)/(1−μ), so
// θ_T = θ₀ − η·g·Σ_{t=1..T} (1−μᵗ)/(1−μ).
func TestSGDClosedForm(t *testing.T) {
	t.Parallel()
	const (
		mu, eta, g, θ0 = 0.9, 0.01, 0.5, 2.0
		steps          = 30
	)
	params := []Param{{Name: "w", Data: []float32{θ0}, Grad: []float32{g}}}
	opt, err := New("sgd", params, &Settings{Momentum: mu})
	if err != nil {
		t.Fatal(err)
	}
	want := θ0
	for s := 1; s <= steps; s++ {
		opt.Step(params, eta, nil)
		want -= eta * g * (1 - math.Pow(mu, float64(s))) / (1 - mu)
		if got := float64(params[0].Data[0]); math.Abs(got-want) > 1e-6 {
			t.Fatalf("step %d: got %.9g, want %.9g", s, got, want)
		}
	}
}

// TestAdamFirstStep checks the closed form of Adam's first step: with bias
// correction m̂ = g and v̂ = g², so θ₁ = θ₀ − η·g/(|g| + ε), about η·sign(g),
// whatever the size of g (Kingma & Ba 2015, §2.1).
func TestAdamFirstStep(t *testing.T) {
	t.Parallel()
	grad := []float32{1e-3, -5, 1e4, 0, 3e-7}
	data := []float32{1, 1, 1, 1, 1}
	params := []Param{{Name: "w", Data: slices.Clone(data), Grad: grad}}
	const eta, eps = 0.1, 1e-8
	opt, err := New("adam", params, nil)
	if err != nil {
		t.Fatal(err)
	}
	opt.Step(params, eta, nil)
	for j, g := range grad {
		want := float64(data[j]) - eta*float64(g)/(math.Abs(float64(g))+eps)
		if got := float64(params[0].Data[j]); math.Abs(got-want) > 1e-7 {
			t.Errorf("element %d (g = %v): got %.9g, want %.9g", j, g, got, want)
		}
	}
}

// quadratic is f(θ) = ½ Σ aᵢ(θᵢ − cᵢ)², an ill-conditioned bowl with
// minimum at c.
type quadratic struct{ a, c []float64 }

func newQuadratic(n int, seed uint64) quadratic {
	rng := rand.New(rand.NewPCG(seed, 0))
	q := quadratic{a: make([]float64, n), c: make([]float64, n)}
	for i := range q.a {
		q.a[i] = math.Pow(10, 3*rng.Float64()-1) // condition number up to 10³
		q.c[i] = 4*rng.Float64() - 2
	}
	return q
}

func (q quadratic) grad(dst, θ []float32) {
	for i := range θ {
		dst[i] = float32(q.a[i] * (float64(θ[i]) - q.c[i]))
	}
}

func (q quadratic) dist(θ []float32) float64 {
	var d float64
	for i := range θ {
		d = math.Max(d, math.Abs(float64(θ[i])-q.c[i]))
	}
	return d
}

// TestConvergence runs every registered optimizer on a quadratic with a
// cosine schedule and checks that it reaches the minimum. Adam's step size
// does not depend on the curvature, so it converges on the ill-conditioned
// bowl; SGD's learning rate must stay below 2/max(a).
func TestConvergence(t *testing.T) {
	t.Parallel()
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			q := newQuadratic(20, 3)
			params := []Param{{Name: "θ", Data: make([]float32, 20), Grad: make([]float32, 20)}}
			set := &Settings{Momentum: 0.9}
			peak := 0.05
			if name == "sgd" {
				peak = 1.0 / 100 // the largest curvature is below 100
			}
			opt, err := New(name, params, set)
			if err != nil {
				t.Fatal(err)
			}
			sched := Cosine{Peak: peak, Warmup: 20, Steps: 2000}
			start := q.dist(params[0].Data)
			for step := range sched.Steps {
				q.grad(params[0].Grad, params[0].Data)
				opt.Step(params, sched.LR(step), nil)
			}
			if d := q.dist(params[0].Data); d > 1e-3 {
				t.Errorf("after %d steps: max |θ − c| = %g (from %g), want ≤ 1e-3", sched.Steps, d, start)
			}
		})
	}
}

// randomParams returns three parameters with fixed-seed values and
// gradients.
func randomParams(rng *rand.Rand) []Param {
	ps := []Param{
		{Name: "lora.a", Data: make([]float32, 12), Grad: make([]float32, 12)},
		{Name: "lora.b", Data: make([]float32, 8), Grad: make([]float32, 8), LRScale: 10},
		{Name: "bias", Data: make([]float32, 5), Grad: make([]float32, 5), NoDecay: true},
	}
	for _, p := range ps {
		for j := range p.Data {
			p.Data[j] = float32(rng.NormFloat64())
		}
	}
	return ps
}

func fillGrads(rng *rand.Rand, ps []Param) {
	for _, p := range ps {
		for j := range p.Grad {
			p.Grad[j] = float32(rng.NormFloat64())
		}
	}
}

// every registered optimizer with settings that use all its features.
var allSettings = map[string]*Settings{
	"sgd":   {Momentum: 0.9, Nesterov: true, WeightDecay: 0.1},
	"adam":  {WeightDecay: 0.1},
	"adamw": {WeightDecay: 0.1},
}

func TestRegistry(t *testing.T) {
	t.Parallel()
	if got := Names(); !slices.Equal(got, []string{"adam", "adamw", "sgd"}) {
		t.Errorf("Names() = %v", got)
	}
	for _, name := range Names() {
		if allSettings[name] == nil {
			t.Errorf("optimizer %q has no test settings", name)
		}
	}
	if _, err := New("lamb", nil, nil); err == nil || !strings.Contains(err.Error(), "adam, adamw, sgd") {
		t.Errorf("New of an unknown name: got %v, want an error listing the known names", err)
	}
}

func TestSettingsErrors(t *testing.T) {
	t.Parallel()
	ok := []Param{{Name: "a", Data: make([]float32, 2)}}
	for _, tc := range []struct {
		desc   string
		name   string
		params []Param
		set    *Settings
		msg    string
	}{
		{"momentum 1", "sgd", ok, &Settings{Momentum: 1}, "momentum is 1"},
		{"negative momentum", "sgd", ok, &Settings{Momentum: -0.1}, "momentum is -0.1"},
		{"NaN momentum", "sgd", ok, &Settings{Momentum: math.NaN()}, "momentum is NaN"},
		{"nesterov without momentum", "sgd", ok, &Settings{Nesterov: true}, "Nesterov"},
		{"beta1 1", "adam", ok, &Settings{Beta1: 1}, "beta1 is 1"},
		{"beta2 negative", "adam", ok, &Settings{Beta2: -0.5}, "beta2 is -0.5"},
		{"eps negative", "adam", ok, &Settings{Eps: -1}, "eps is -1"},
		{"weight decay infinite", "adamw", ok, &Settings{WeightDecay: math.Inf(1)}, "weight decay is +Inf"},
		{"weight decay NaN", "adamw", ok, &Settings{WeightDecay: math.NaN()}, "weight decay is NaN"},
		{"unnamed parameter", "sgd", []Param{{Data: make([]float32, 1)}}, nil, "parameter 0 has no name"},
		{"duplicate parameter", "adam", []Param{{Name: "a"}, {Name: "a"}}, nil, `"a" appears twice`},
		{"negative lr scale", "adam", []Param{{Name: "a", LRScale: -1}}, nil, "learning-rate scale is -1"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			_, err := New(tc.name, tc.params, tc.set)
			if err == nil || !strings.Contains(err.Error(), tc.msg) || !strings.HasPrefix(err.Error(), "optim: ") {
				t.Errorf("got %v, want an error containing %q", err, tc.msg)
			}
		})
	}
}

// panics runs fn and returns whether it panicked and with what message.
func panics(fn func()) (panicked bool, msg string) {
	defer func() {
		if r := recover(); r != nil {
			panicked, msg = true, fmt.Sprint(r)
		}
	}()
	fn()
	return false, ""
}

func TestStepPanics(t *testing.T) {
	t.Parallel()
	for _, name := range Names() {
		mk := func() []Param { return randomParams(rand.New(rand.NewPCG(1, 1))) }
		opt, err := New(name, mk(), allSettings[name])
		if err != nil {
			t.Fatal(err)
		}
		renamed := mk()
		renamed[1].Name = "other"
		shortGrad := mk()
		shortGrad[2].Grad = shortGrad[2].Grad[:4]
		for _, tc := range []struct {
			desc   string
			params []Param
			lr     float64
			mask   *Mask
			msg    string
		}{
			{"fewer parameters", mk()[:2], 0.1, nil, "optim: parameter count mismatch"},
			{"renamed parameter", renamed, 0.1, nil, "optim: parameters differ from those the optimizer was built with"},
			{"short gradient", shortGrad, 0.1, nil, "optim: gradient length mismatch"},
			{"negative lr", mk(), -1, nil, "optim: learning rate negative or not finite"},
			{"NaN lr", mk(), math.NaN(), nil, "optim: learning rate negative or not finite"},
			{"short params mask", mk(), 0.1, &Mask{Params: []bool{true}}, "optim: mask length mismatch"},
			{"short elems mask", mk(), 0.1, &Mask{Elems: [][]bool{nil, {true}, nil}}, "optim: mask length mismatch"},
		} {
			if ok, msg := panics(func() { opt.Step(tc.params, tc.lr, tc.mask) }); !ok || msg != tc.msg {
				t.Errorf("%s: %s: got panic %v %q, want %q", name, tc.desc, ok, msg, tc.msg)
			}
		}
	}
}

// TestParamOptions checks LRScale and NoDecay against runs without them:
// LRScale s equals a run at learning rate s·η, and NoDecay equals a run with
// WeightDecay 0.
func TestParamOptions(t *testing.T) {
	t.Parallel()
	for _, name := range Names() {
		rng := rand.New(rand.NewPCG(2, 2))
		base := randomParams(rng)
		grads := make([][][]float32, 5)
		for s := range grads {
			fillGrads(rng, base)
			for _, p := range base {
				grads[s] = append(grads[s], slices.Clone(p.Grad))
			}
		}
		run := func(p Param, set Settings, lr float64) []float32 {
			p.Data = slices.Clone(p.Data)
			ps := []Param{p}
			opt, err := New(name, ps, &set)
			if err != nil {
				t.Fatal(err)
			}
			for s := range grads {
				idx := slices.IndexFunc(base, func(q Param) bool { return q.Name == p.Name })
				ps[0].Grad = grads[s][idx]
				opt.Step(ps, lr, nil)
			}
			return ps[0].Data
		}
		set := *allSettings[name]
		scaled := base[1] // LRScale 10
		plain := scaled
		plain.LRScale = 0
		if got, want := run(scaled, set, 0.01), run(plain, set, 0.1); !slices.Equal(got, want) {
			t.Errorf("%s: LRScale 10 at lr 0.01: got %v, want the run at lr 0.1 %v", name, got, want)
		}
		nodecay := base[2]
		decay := nodecay
		decay.NoDecay = false
		noWD := set
		noWD.WeightDecay = 0
		if got, want := run(nodecay, set, 0.01), run(decay, noWD, 0.01); !slices.Equal(got, want) {
			t.Errorf("%s: NoDecay: got %v, want the run without weight decay %v", name, got, want)
		}
		if got, other := run(decay, set, 0.01), run(decay, noWD, 0.01); slices.Equal(got, other) {
			t.Errorf("%s: weight decay has no effect", name)
		}
	}
}

// TestMaskedStepKeepsExcludedState checks that what a mask leaves out keeps
// its values and its optimizer state bit for bit, for every optimizer.
func TestMaskedStepKeepsExcludedState(t *testing.T) {
	t.Parallel()
	for _, name := range Names() {
		rng := rand.New(rand.NewPCG(3, 3))
		ps := randomParams(rng)
		opt, err := New(name, ps, allSettings[name])
		if err != nil {
			t.Fatal(err)
		}
		for range 3 { // build up some state
			fillGrads(rng, ps)
			opt.Step(ps, 0.05, nil)
		}
		elems := make([]bool, len(ps[0].Data))
		for j := range elems {
			elems[j] = j%3 == 0
		}
		mask := &Mask{Params: []bool{true, false, true}, Elems: [][]bool{elems, nil, nil}}
		before := opt.State()
		data := [][]float32{slices.Clone(ps[0].Data), slices.Clone(ps[1].Data), slices.Clone(ps[2].Data)}
		fillGrads(rng, ps)
		opt.Step(ps, 0.05, mask)
		after := opt.State()

		// Parameter 1 is left out: values and all state unchanged.
		if !bitsEqual(ps[1].Data, data[1]) {
			t.Errorf("%s: excluded parameter changed", name)
		}
		if !paramStateEqual(before.Params[1], after.Params[1]) {
			t.Errorf("%s: excluded parameter's state changed: %+v → %+v", name, before.Params[1], after.Params[1])
		}
		// Parameter 0: the elements left out keep values and moments.
		for j, k := range elems {
			changed := !bitsEqual(ps[0].Data[j:j+1], data[0][j:j+1])
			if k != changed {
				t.Errorf("%s: element %d selected %v, changed %v", name, j, k, changed)
			}
			for b := range after.Params[0].Buffers {
				x, y := before.Params[0].Buffers[b].Data[j], after.Params[0].Buffers[b].Data[j]
				if !k && math.Float32bits(x) != math.Float32bits(y) {
					t.Errorf("%s: excluded element %d's %s changed", name, j, after.Params[0].Buffers[b].Name)
				}
			}
		}
		if bitsEqual(ps[2].Data, data[2]) {
			t.Errorf("%s: included parameter did not change", name)
		}
	}
}

func bitsEqual(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

func paramStateEqual(a, b ParamState) bool {
	return a.Name == b.Name && a.Step == b.Step && slices.Equal(a.ElemSteps, b.ElemSteps) &&
		slices.EqualFunc(a.Buffers, b.Buffers, func(x, y Buffer) bool { return x.Name == y.Name && bitsEqual(x.Data, y.Data) })
}

// TestMaskedTrajectory checks the per-element semantics: under a random
// element mask each step, every element of a masked run follows exactly the
// trajectory of a one-element optimizer that sees only the steps in which
// the element took part. With Reset, an element left out restarts from a
// fresh state, so it follows a fresh one-element optimizer from its next
// step on.
func TestMaskedTrajectory(t *testing.T) {
	t.Parallel()
	for _, name := range Names() {
		for _, reset := range []bool{false, true} {
			const n, steps = 6, 12
			rng := rand.New(rand.NewPCG(4, 4))
			init := make([]float32, n)
			for j := range init {
				init[j] = float32(rng.NormFloat64())
			}
			ps := []Param{{Name: "w", Data: slices.Clone(init), Grad: make([]float32, n)}}
			opt, err := New(name, ps, allSettings[name])
			if err != nil {
				t.Fatal(err)
			}
			// One single-element optimizer per element.
			single := make([]Optimizer, n)
			sps := make([][]Param, n)
			for j := range single {
				sps[j] = []Param{{Name: "w", Data: []float32{init[j]}, Grad: make([]float32, 1)}}
				if single[j], err = New(name, sps[j], allSettings[name]); err != nil {
					t.Fatal(err)
				}
			}
			for s := range steps {
				keep := make([]bool, n)
				for j := range keep {
					keep[j] = s < 2 || rng.IntN(3) > 0
				}
				fillGrads(rng, ps)
				lr := 0.01 * float64(s+1)
				opt.Step(ps, lr, &Mask{Elems: [][]bool{keep}, Reset: reset})
				for j := range n {
					switch {
					case keep[j]:
						sps[j][0].Grad[0] = ps[0].Grad[j]
						single[j].Step(sps[j], lr, nil)
					case reset:
						fresh, _ := New(name, sps[j], allSettings[name])
						single[j] = fresh
					}
					if got, want := ps[0].Data[j], sps[j][0].Data[0]; math.Float32bits(got) != math.Float32bits(want) {
						t.Fatalf("%s reset=%v step %d element %d: got %v, want %v", name, reset, s, j, got, want)
					}
				}
			}
		}
	}
}

// TestMaskedParamsTrajectory is TestMaskedTrajectory for whole parameters,
// as Dual-Priv's top-K block update uses it: a parameter left out of some
// steps follows exactly the optimizer that sees only its own steps.
func TestMaskedParamsTrajectory(t *testing.T) {
	t.Parallel()
	for _, name := range Names() {
		rng := rand.New(rand.NewPCG(5, 5))
		ps := randomParams(rng)
		opt, err := New(name, ps, allSettings[name])
		if err != nil {
			t.Fatal(err)
		}
		alone := make([]Optimizer, len(ps))
		aps := make([][]Param, len(ps))
		for i, p := range ps {
			p.Data = slices.Clone(p.Data)
			p.Grad = make([]float32, len(p.Grad))
			aps[i] = []Param{p}
			if alone[i], err = New(name, aps[i], allSettings[name]); err != nil {
				t.Fatal(err)
			}
		}
		for s := range 10 {
			keep := []bool{rng.IntN(2) == 0, rng.IntN(2) == 0, rng.IntN(2) == 0}
			fillGrads(rng, ps)
			opt.Step(ps, 0.02, &Mask{Params: keep})
			for i, k := range keep {
				if k {
					copy(aps[i][0].Grad, ps[i].Grad)
					alone[i].Step(aps[i], 0.02, nil)
				}
				if !bitsEqual(ps[i].Data, aps[i][0].Data) {
					t.Fatalf("%s step %d parameter %d: masked run differs from the run on its own steps", name, s, i)
				}
			}
		}
	}
}

// TestFullMaskEqualsNoMask checks that a mask selecting everything gives the
// same bits as no mask, although Adam then switches to per-element counts.
func TestFullMaskEqualsNoMask(t *testing.T) {
	t.Parallel()
	for _, name := range Names() {
		rngA, rngB := rand.New(rand.NewPCG(6, 6)), rand.New(rand.NewPCG(6, 6))
		a, b := randomParams(rngA), randomParams(rngB)
		optA, _ := New(name, a, allSettings[name])
		optB, _ := New(name, b, allSettings[name])
		all := [][]bool{make([]bool, 12), make([]bool, 8), make([]bool, 5)}
		for _, e := range all {
			for j := range e {
				e[j] = true
			}
		}
		for s := range 6 {
			fillGrads(rngA, a)
			fillGrads(rngB, b)
			optA.Step(a, 0.03, nil)
			var m *Mask
			if s >= 2 {
				m = &Mask{Params: []bool{true, true, true}, Elems: all}
			}
			optB.Step(b, 0.03, m)
			for i := range a {
				if !bitsEqual(a[i].Data, b[i].Data) {
					t.Fatalf("%s step %d parameter %d: full mask differs from no mask", name, s, i)
				}
			}
		}
	}
}

// TestResetParams checks that Reset leaves excluded values alone and clears
// their state, and that a reset parameter then moves as a fresh one.
func TestResetParams(t *testing.T) {
	t.Parallel()
	for _, name := range Names() {
		rng := rand.New(rand.NewPCG(7, 7))
		ps := randomParams(rng)
		opt, _ := New(name, ps, allSettings[name])
		for range 3 {
			fillGrads(rng, ps)
			opt.Step(ps, 0.05, nil)
		}
		data := slices.Clone(ps[0].Data)
		fillGrads(rng, ps)
		opt.Step(ps, 0.05, &Mask{Params: []bool{false, true, true}, Reset: true})
		if !bitsEqual(data, ps[0].Data) {
			t.Errorf("%s: Reset changed an excluded value", name)
		}
		st := opt.State().Params[0]
		if st.Step != 0 || st.ElemSteps != nil {
			t.Errorf("%s: reset step counts %d %v, want 0 and nil", name, st.Step, st.ElemSteps)
		}
		for _, b := range st.Buffers {
			for _, v := range b.Data {
				if v != 0 {
					t.Fatalf("%s: buffer %s not cleared by Reset", name, b.Name)
				}
			}
		}
		// Now parameter 0 moves as under a fresh optimizer.
		fresh := []Param{ps[0]}
		fresh[0].Data = slices.Clone(ps[0].Data)
		fopt, _ := New(name, fresh, allSettings[name])
		fillGrads(rng, ps)
		opt.Step(ps, 0.05, nil)
		fresh[0].Grad = ps[0].Grad
		fopt.Step(fresh, 0.05, nil)
		if !bitsEqual(ps[0].Data, fresh[0].Data) {
			t.Errorf("%s: reset parameter does not move as a fresh one", name)
		}
	}
}

func TestRowMask(t *testing.T) {
	t.Parallel()
	got := RowMask([]bool{true, false, true}, 2)
	if want := []bool{true, true, false, false, true, true}; !slices.Equal(got, want) {
		t.Errorf("RowMask = %v, want %v", got, want)
	}
	if ok, msg := panics(func() { RowMask([]bool{true}, 0) }); !ok || msg != "optim: non-positive row length" {
		t.Errorf("RowMask with rowLen 0: got panic %v %q", ok, msg)
	}
}

// TestMomentumer checks SetMomentum: changing μ (SGD) or β₁ (Adam) between
// steps matches a run built with that value from the start when the state is
// still empty, and invalid values panic.
func TestMomentumer(t *testing.T) {
	t.Parallel()
	for _, name := range Names() {
		a := []Param{{Name: "w", Data: []float32{1, 2}, Grad: []float32{0.3, -0.2}}}
		b := []Param{{Name: "w", Data: []float32{1, 2}, Grad: []float32{0.3, -0.2}}}
		optA, _ := New(name, a, &Settings{Momentum: 0.5, Beta1: 0.5})
		optB, _ := New(name, b, &Settings{Momentum: 0.8, Beta1: 0.8})
		mom, ok := optA.(Momentumer)
		if !ok {
			t.Fatalf("%s is not a Momentumer", name)
		}
		mom.SetMomentum(0.8)
		for range 3 {
			optA.Step(a, 0.1, &Mask{Elems: [][]bool{{true, false}}})
			optB.Step(b, 0.1, &Mask{Elems: [][]bool{{true, false}}})
		}
		if !bitsEqual(a[0].Data, b[0].Data) {
			t.Errorf("%s: SetMomentum(0.8) run %v differs from a run built with 0.8 %v", name, a[0].Data, b[0].Data)
		}
		if ok, msg := panics(func() { mom.SetMomentum(1) }); !ok || msg != "optim: invalid momentum" {
			t.Errorf("%s: SetMomentum(1): got panic %v %q", name, ok, msg)
		}
	}
}

func TestBytes(t *testing.T) {
	t.Parallel()
	ps := randomParams(rand.New(rand.NewPCG(8, 8))) // 12 + 8 + 5 elements
	for _, tc := range []struct {
		name        string
		set         *Settings
		mask        *Mask
		before, aft int64
	}{
		{"sgd", nil, nil, 0, 0},                                                              // plain SGD keeps no state
		{"sgd", &Settings{Momentum: 0.9}, nil, 0, 4 * 25},                                    // one buffer
		{"adam", nil, nil, 0, 2 * 4 * 25},                                                    // two buffers
		{"adam", nil, &Mask{Params: []bool{true, false, false}}, 0, 2 * 4 * 12},              // only what took part
		{"adamw", nil, &Mask{Elems: [][]bool{make([]bool, 12), nil, nil}}, 0, 2*4*25 + 4*12}, // plus counts
	} {
		opt, _ := New(tc.name, ps, tc.set)
		if got := opt.Bytes(); got != tc.before {
			t.Errorf("%s %+v: Bytes() before a step = %d, want %d", tc.name, tc.set, got, tc.before)
		}
		opt.Step(ps, 0, tc.mask)
		if got := opt.Bytes(); got != tc.aft {
			t.Errorf("%s %+v %+v: Bytes() after a step = %d, want %d", tc.name, tc.set, tc.mask, got, tc.aft)
		}
	}
}

// TestAdamBeyondTable checks per-element step counts above the tabulated
// range: the bias corrections computed on the fly give the same bits as the
// whole-tensor path, and the tables stay bounded.
func TestAdamBeyondTable(t *testing.T) {
	t.Parallel()
	const steps = maxTable + 10
	mk := func(elem bool) (*Adam, []Param) {
		ps := []Param{{Name: "w", Data: []float32{1, -1}, Grad: []float32{0.5, 0.25}}}
		opt, _ := New("adam", ps, nil)
		st := &State{Optimizer: "adam", Params: []ParamState{{Name: "w", Step: steps, Buffers: []Buffer{
			{Name: "exp_avg", Data: []float32{0.1, -0.2}}, {Name: "exp_avg_sq", Data: []float32{0.01, 0.04}}}}}}
		if elem {
			st.Params[0].ElemSteps = []int64{steps, steps}
		}
		if err := opt.SetState(st); err != nil {
			t.Fatal(err)
		}
		return opt.(*Adam), ps
	}
	a, pa := mk(true)
	b, pb := mk(false)
	for range 3 {
		a.Step(pa, 0.1, nil)
		b.Step(pb, 0.1, nil)
		if !bitsEqual(pa[0].Data, pb[0].Data) {
			t.Fatalf("per-element path %v differs from whole-tensor path %v", pa[0].Data, pb[0].Data)
		}
	}
	if len(a.bc1) > maxTable+1 {
		t.Errorf("bias-correction table has %d entries, want at most %d", len(a.bc1), maxTable+1)
	}
}
