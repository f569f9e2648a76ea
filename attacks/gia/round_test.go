// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/repro-dp/repro/attacks"
	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/methods"
	"github.com/repro-dp/repro/nn"
)

// smokeFusionMLP returns a freshly initialised fusion classifier with the
// mlp image encoder (every tensor trainable) and its layout.
func smokeFusionMLP(t testing.TB) (*nn.Fusion, *nn.Layout) {
	t.Helper()
	c := smokeConfig(t)
	c.ImageEncoder = "mlp"
	m, err := nn.NewFusion(c)
	if err != nil {
		t.Fatal(err)
	}
	l, err := m.SetPEFT(c.PEFT)
	if err != nil {
		t.Fatal(err)
	}
	return m, l
}

// TestRoundMatchFD checks RoundMatch's gradient in the image (the adjoint
// recursion through E unrolled SGD steps, each product a central
// difference in θ) against a brute-force central difference of the whole
// objective in x along random directions (checkObjectiveFD: nothing held
// fixed, the E steps re-simulated at each point; step 10⁻³ in x, since
// the image encoder's ReLU makes a larger one cross activation switches),
// for E = 1, 2 and 3, the
// cosine (whole and tensor by tensor) and the ℓ₂ distance, on a fusion classifier with the mlp encoder.
// The target is the round of another image of the data set (so the
// objective is far from its minimum). Both are float32 estimates: 5% of
// the directional derivative.
func TestRoundMatchFD(t *testing.T) {
	t.Parallel()
	m, l := smokeFusionMLP(t)
	d := smokeData(t)
	ex, other := d.Private[0], d.Private[1]
	f := FusionGrad(m, l, ex.Prompt, ex.Label)
	rng := rand.New(rand.NewPCG(5, 5))
	for _, steps := range []int{1, 2, 3} {
		want := make([]float32, l.Size)
		probe, err := NewRoundMatch(l, f, want[:0:0], steps, 0.5)
		if err == nil {
			t.Fatalf("an empty update: no error (%v)", probe)
		}
		// The round of the other image, simulated by RoundMatch itself
		// with a placeholder target.
		ones := slices.Repeat([]float32{1}, l.Size)
		sim, err := NewRoundMatch(l, f, ones, steps, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sim.Simulate(other.Images[0], want); err != nil {
			t.Fatal(err)
		}
		rm, err := NewRoundMatch(l, f, want, steps, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		for _, l2 := range []bool{false, true} {
			rm.L2 = l2
			checkObjectiveFDStep(t, rm, ex.Images[0], rng, fmt.Sprintf("steps %d, l2 %v", steps, l2), 1e-3)
		}
		// The cosine distance tensor by tensor (gia-round's perblock).
		rm.L2, rm.PerBlock = false, true
		checkObjectiveFDStep(t, rm, ex.Images[0], rng, fmt.Sprintf("steps %d, per block", steps), 1e-3)
	}
}

// TestRoundMatchMethod checks that the attacker's simulation is the
// method's round: RoundMatch.Simulate at the true image, caption and
// label equals methods.FedUpload.Round of a non-private fedavg run (E = 2
// local steps at the run's rate), to float32 rounding; and its matching
// distance there is 0 (cosine 1) with the parameters restored bit for bit.
func TestRoundMatchMethod(t *testing.T) {
	t.Parallel()
	res, d := fedavgRun(t, 2, 3)
	up := res.Upload
	if up.Steps != 2 || up.LR <= 0 {
		t.Fatalf("upload steps %d, lr %v; want 2 and a positive rate", up.Steps, up.LR)
	}
	ex := &d.Private[0]
	got, err := up.Round(ex, 0)
	if err != nil {
		t.Fatal(err)
	}
	before := up.Layout.Values()
	rm, err := NewRoundMatch(up.Layout, FusionGrad(up.Model, up.Layout, ex.Prompt, ex.Label), got, up.Steps, up.LR)
	if err != nil {
		t.Fatal(err)
	}
	sim := make([]float32, up.Layout.Size)
	if _, err := rm.Simulate(ex.Images[0], sim); err != nil {
		t.Fatal(err)
	}
	if e := relErr(sim, got); e > 1e-5 {
		t.Errorf("simulated round against the method's: relative error %.3g, want ≤ 1e-5", e)
	}
	dist, err := rm.Distance(ex.Images[0])
	if err != nil {
		t.Fatal(err)
	}
	if dist > 1e-6 {
		t.Errorf("cosine distance at the true image %.3g, want ≈ 0", dist)
	}
	grad := make([]float32, len(ex.Images[0]))
	if _, err := rm.Objective(ex.Images[0], grad); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(before, up.Layout.Values()) {
		t.Errorf("Objective did not restore the parameters")
	}
	// A one-step round is the upload's gradient.
	one, err := up.Upload(ex, 0)
	if err != nil {
		t.Fatal(err)
	}
	rm1, err := NewRoundMatch(up.Layout, FusionGrad(up.Model, up.Layout, ex.Prompt, ex.Label), one, 1, up.LR)
	if err != nil {
		t.Fatal(err)
	}
	if err := func() error { _, err := rm1.Simulate(ex.Images[0], sim); return err }(); err != nil {
		t.Fatal(err)
	}
	if e := relErr(sim, one); e > 1e-5 {
		t.Errorf("one simulated step against the method's batch-1 upload: relative error %.3g", e)
	}
	if _, err := NewRoundMatch(up.Layout, rm.Grad, got, 0, up.LR); err == nil {
		t.Errorf("0 steps: no error")
	}
	if _, err := NewRoundMatch(up.Layout, rm.Grad, got, 2, math.Inf(1)); err == nil {
		t.Errorf("infinite rate: no error")
	}
}

// fedavgRun trains a non-private fedavg run (mlp encoder, two rounds of
// steps local steps, every client's first 4 examples) and returns its
// result and data.
func fedavgRun(t testing.TB, steps int, seed uint64) (*methods.Result, *datasets.Dataset) {
	return fedavgRunWorkers(t, steps, seed, 0)
}

// fedavgRunWorkers is fedavgRun on the given number of workers (0:
// GOMAXPROCS).
func fedavgRunWorkers(t testing.TB, steps int, seed uint64, workers int) (*methods.Result, *datasets.Dataset) {
	t.Helper()
	c := smokeConfig(t)
	c.PEFT, c.ImageEncoder = nn.PEFT{}, "mlp"
	m, err := nn.NewFusion(c)
	if err != nil {
		t.Fatal(err)
	}
	d := *smokeData(t)
	d.Private = nil
	count := map[int]int{}
	for _, e := range smokeData(t).Private {
		if e.Client >= 0 && count[e.Client] < 4 {
			count[e.Client]++
			d.Private = append(d.Private, e)
		}
	}
	h, err := methods.ResolveAt("fedavg", "smoke", math.Inf(1), map[string]any{"rounds": 2, "local_steps": steps})
	if err != nil {
		t.Fatal(err)
	}
	res, err := methods.FedAvg{}.FineTune(context.Background(), &methods.Job{Model: m, Data: &d, Hyper: h, Epsilon: math.Inf(1), Delta: 1e-5, Seed: seed, Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	return res, &d
}

// TestRoundWorkers checks that the attacked round and the attack's
// objective and gradient on it are the same bits whether the run trained
// on 1 or 2 workers (the attack itself runs in one goroutine).
func TestRoundWorkers(t *testing.T) {
	t.Parallel()
	var rounds, grads [2][]float32
	var objs [2]float64
	for i, w := range []int{1, 2} {
		res, d := fedavgRunWorkers(t, 2, 4, w)
		ex := &d.Private[1]
		g, err := res.Upload.Round(ex, 0)
		if err != nil {
			t.Fatal(err)
		}
		rm, err := NewRoundMatch(res.Upload.Layout, FusionGrad(res.Upload.Model, res.Upload.Layout, ex.Prompt, ex.Label), g, res.Upload.Steps, res.Upload.LR)
		if err != nil {
			t.Fatal(err)
		}
		x := MeanImage([][]float32{d.Public[0].Images[0], d.Public[1].Images[0]})
		grads[i] = make([]float32, len(x))
		if objs[i], err = rm.Objective(x, grads[i]); err != nil {
			t.Fatal(err)
		}
		rounds[i] = g
	}
	if !slices.Equal(rounds[0], rounds[1]) || objs[0] != objs[1] || !slices.Equal(grads[0], grads[1]) {
		t.Errorf("1 and 2 workers differ: rounds equal %v, objectives %v and %v, gradients equal %v",
			slices.Equal(rounds[0], rounds[1]), objs[0], objs[1], slices.Equal(grads[0], grads[1]))
	}
}

// TestRoundOptionsWorkers checks that gia-round with its options on
// (activity prior, per-tensor distance, step size, step decay, alone and
// together) gives the same bits on the rounds of runs trained on 1 and 2
// workers, and the same bits when run twice on the same run (the
// determinism the other attacks are held to). The activity prior must be
// on (a non-private round reveals a pattern), or the test checks nothing
// of it.
func TestRoundOptionsWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("optimisation-based inversion: slow")
	}
	t.Parallel()
	configs := []map[string][]string{
		{"activity": {"1"}, "lr": {"0.1"}}, // the secmmfl-tablec setting
		{"activity": {"2"}, "perblock": {"1"}, "decay": {"1"}, "lr": {"0.05"}},
	}
	type outcome struct {
		results map[string]float64
		images  map[string][]byte
	}
	attack := func(res *methods.Result, d *datasets.Dataset, opts map[string][]string) outcome {
		t.Helper()
		var pub [][]float32
		for _, e := range d.Public {
			pub = append(pub, e.Images[0])
		}
		base := map[string][]string{"trials": {"2"}, "iterations": {"30"}, "group": {"2"}}
		for k, v := range opts {
			base[k] = v
		}
		a, err := attacks.Configure("gia-round", base)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := a.(RoundAttack).RunUploads(context.Background(), res.Upload, d.Private, pub)
		if err != nil {
			t.Fatal(err)
		}
		delete(rep.Results, "gia_round_seconds") // wall time, the one result that may differ
		return outcome{rep.Results, rep.Images}
	}
	same := func(x, y outcome) bool {
		return maps.Equal(x.results, y.results) && maps.EqualFunc(x.images, y.images, bytes.Equal)
	}
	var runs [2]*methods.Result
	var data [2]*datasets.Dataset
	for i, w := range []int{1, 2} {
		runs[i], data[i] = fedavgRunWorkers(t, 2, 4, w)
	}
	for _, opts := range configs {
		one, two := attack(runs[0], data[0], opts), attack(runs[1], data[1], opts)
		if one.results["gia_round_pinned"] != 1 {
			t.Errorf("%v: gia_round_pinned %v, want 1 (the prior on in every non-private round)", opts, one.results["gia_round_pinned"])
		}
		if !same(one, two) {
			t.Errorf("%v: 1 and 2 workers differ:\n%v\n%v", opts, one.results, two.results)
		}
		if again := attack(runs[1], data[1], opts); !same(two, again) {
			t.Errorf("%v: a repeat differs:\n%v\n%v", opts, two.results, again.results)
		}
	}
}

// TestRoundAttack runs gia-round on the rounds of a non-private fedavg
// run (E = 2): the control must leak (PSNR ≥ 20 dB, above the mean-image
// baseline by 8 dB; TRR and label accuracy 1), and a second run gives the
// same bits (the attack is deterministic). Bad options are errors.
func TestRoundAttack(t *testing.T) {
	if testing.Short() {
		t.Skip("optimisation-based inversion: slow")
	}
	t.Parallel()
	res, d := fedavgRun(t, 2, 2)
	var pub [][]float32
	for _, e := range d.Public {
		pub = append(pub, e.Images[0])
	}
	a, err := attacks.Configure("gia-round", map[string][]string{"trials": {"2"}, "iterations": {"150"}, "group": {"3"}})
	if err != nil {
		t.Fatal(err)
	}
	ra := a.(RoundAttack)
	rep, err := ra.RunUploads(context.Background(), res.Upload, d.Private, pub)
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Results
	t.Logf("fedavg round control: %v", r)
	if r["gia_round_psnr"] < 20 || r["gia_round_psnr"] < r["gia_round_baseline_psnr"]+8 || r["gia_round_trr"] != 1 || r["gia_round_label_acc"] != 1 {
		t.Errorf("fedavg round control: %v; want PSNR ≥ 20 dB and 8 dB above the mean image, TRR 1, label accuracy 1", r)
	}
	again, err := ra.RunUploads(context.Background(), res.Upload, d.Private, pub)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range r {
		if k != "gia_round_seconds" && again.Results[k] != v {
			t.Errorf("%s: %v then %v, want the same bits", k, v, again.Results[k])
		}
	}
	if _, ok := rep.Images["round-b1-recon-0"]; !ok || len(rep.Images) != 2 {
		t.Errorf("images %d, want the first trial's round-b1-orig-0 and round-b1-recon-0", len(rep.Images))
	}
	if _, err := a.Run(context.Background(), &attacks.Target{}); err == nil || !strings.Contains(err.Error(), "client rounds") {
		t.Errorf("Run on a TinyMLLM target: got %v, want a refusal", err)
	}
	if _, err := attacks.Configure("gia-round", map[string][]string{"consistency": {"0"}}); err != nil {
		t.Errorf("consistency 0 (none): %v", err)
	}
	if b, err := attacks.Configure("gia-round", map[string][]string{"activity": {"2.5"}, "decay": {"1"}, "perblock": {"1"}, "lr": {"0.1"}}); err != nil ||
		b.(RoundAttack) != (RoundAttack{Activity: 2.5, Decay: true, PerBlock: true, LR: 0.1}) {
		t.Errorf("activity 2.5, decay 1, perblock 1, lr 0.1: %v, %v", b, err)
	}
	for _, bad := range []map[string][]string{{"trials": {"0"}}, {"group": {"17"}}, {"iterations": {"1.5"}}, {"consistency": {"-1"}},
		{"activity": {"-1"}}, {"activity": {"101"}}, {"activity": {"x"}}, {"decay": {"2"}}, {"perblock": {"0.5"}}, {"lr": {"0"}}, {"lr": {"2"}}} {
		if _, err := attacks.Configure("gia-round", bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

// TestStatsPrior checks the public-statistics prior's gradient against
// central differences of its value (it is a quadratic, so to rounding) and
// PixelStats against the mean and population standard deviation of three
// images computed by hand.
func TestStatsPrior(t *testing.T) {
	mean, std := PixelStats([][]float32{{0, 1}, {0.5, 1}, {1, 1}})
	if math.Abs(float64(mean[0])-0.5) > 1e-7 || math.Abs(float64(std[0])-math.Sqrt(1.0/6)) > 1e-6 || mean[1] != 1 || std[1] != 0 {
		t.Errorf("PixelStats: mean %v, std %v; want [0.5 1], [√(1/6) 0]", mean, std)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	n := 50
	x, mu, sd := make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], mu[i], sd[i] = rng.Float32(), rng.Float32(), 0.3*rng.Float32()
	}
	grad := make([]float32, n)
	statsPrior(x, mu, sd, 0.7, grad)
	const h = 1e-3
	for _, i := range []int{0, 17, 49} {
		y := slices.Clone(x)
		y[i] = x[i] + h
		up := statsPrior(y, mu, sd, 0, make([]float32, n))
		y[i] = x[i] - h
		down := statsPrior(y, mu, sd, 0, make([]float32, n))
		fd := 0.7 * (up - down) / (2 * h)
		if math.Abs(fd-float64(grad[i])) > 1e-3*math.Abs(fd)+1e-6 {
			t.Errorf("pixel %d: gradient %v, central difference %v", i, grad[i], fd)
		}
	}
}
