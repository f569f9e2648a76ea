// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package fl

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/repro-dp/repro/nn/optim"
)

// regression is a least-squares problem: loss ½(w·x − y)² averaged over a
// batch, examples split over clients.
type regression struct {
	x       [][]float32
	y       []float32
	clients [][]int // example indices of each client
}

func newRegression(n, d, clients int, seed uint64) *regression {
	rng := rand.New(rand.NewPCG(seed, 1))
	p := &regression{clients: make([][]int, clients)}
	for i := range n {
		x := make([]float32, d)
		for j := range x {
			x[j] = float32(rng.NormFloat64())
		}
		p.x = append(p.x, x)
		p.y = append(p.y, float32(rng.NormFloat64()))
		// Unequal sizes: client k gets examples with i mod (K+1) = k,
		// client 0 also those with remainder K.
		k := i % (clients + 1)
		if k == clients {
			k = 0
		}
		p.clients[k] = append(p.clients[k], i)
	}
	return p
}

func (p *regression) sizes() []int {
	s := make([]int, len(p.clients))
	for k, c := range p.clients {
		s[k] = len(c)
	}
	return s
}

// grad writes the mean gradient over idx at w to g (float64 sums in index
// order).
func (p *regression) grad(g, w []float32, idx []int) float64 {
	acc := make([]float64, len(w))
	loss := 0.0
	for _, i := range idx {
		r := -float64(p.y[i])
		for j, v := range p.x[i] {
			r += float64(w[j]) * float64(v)
		}
		loss += r * r / 2
		for j, v := range p.x[i] {
			acc[j] += r * float64(v)
		}
	}
	for j := range g {
		g[j] = float32(acc[j] / float64(len(idx)))
	}
	return loss / float64(len(idx))
}

// sgdSteps takes steps plain-SGD steps on the examples idx from w in place,
// with the optimizer of package optim (the centralised reference).
func (p *regression) sgdSteps(w []float32, idx []int, lr float64, steps int) {
	g := make([]float32, len(w))
	params := []optim.Param{{Name: "w", Data: w, Grad: g}}
	opt, err := optim.New("sgd", params, nil)
	if err != nil {
		panic(err)
	}
	for range steps {
		p.grad(g, w, idx)
		opt.Step(params, lr, nil)
	}
}

type regClient struct {
	p     *regression
	lr    float64
	local int
	sgd   bool // FedSGD: upload the gradient
}

func (c *regClient) Update(r, k int, global, upload []float32) (Info, error) {
	idx := c.p.clients[k]
	if c.sgd {
		loss := c.p.grad(upload, global, idx)
		return Info{Steps: 1, Examples: len(idx), Loss: loss}, nil
	}
	copy(upload, global)
	c.p.sgdSteps(upload, idx, c.lr, c.local)
	return Info{Steps: c.local, Examples: c.local * len(idx)}, nil
}

// sgdServer is a FedSGD server: a plain SGD step of package optim.
func sgdServer(lr float64) Server {
	var opt optim.Optimizer
	return func(r int, global, agg []float32) error {
		params := []optim.Param{{Name: "w", Data: global, Grad: agg}}
		if opt == nil {
			var err error
			if opt, err = optim.New("sgd", params, nil); err != nil {
				return err
			}
		}
		opt.Step(params, lr, nil)
		return nil
	}
}

func runRegression(t *testing.T, p *regression, c Config, lr float64, w []float32) *Record {
	t.Helper()
	s := &Sim{Config: c, Sizes: p.sizes(), NewClient: func() (Client, error) {
		return &regClient{p: p, lr: lr, local: max(1, c.LocalSteps), sgd: c.Aggregation == FedSGD}, nil
	}}
	if c.Aggregation == FedSGD {
		s.Server = sgdServer(lr)
	}
	rec, err := s.Run(t.Context(), w)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestOneClientIsCentralised checks that FedAvg and FedSGD with one client,
// full participation and one local step are centralised full-batch SGD,
// bit for bit.
func TestOneClientIsCentralised(t *testing.T) {
	t.Parallel()
	const rounds, lr = 7, 0.1
	p := newRegression(40, 5, 1, 3)
	want := make([]float32, 5)
	p.sgdSteps(want, p.clients[0], lr, rounds)
	for _, agg := range []string{FedAvg, FedSGD} {
		got := make([]float32, 5)
		runRegression(t, p, Config{Clients: 1, Rounds: rounds, LocalSteps: 1, Aggregation: agg, Seed: 9}, lr, got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: got %v, want the centralised %v bit for bit", agg, got, want)
		}
		if slices.Equal(got, make([]float32, 5)) {
			t.Errorf("%s: the model did not move", agg)
		}
	}
}

// TestFedSGDWeightsBySize checks that FedSGD with full participation and
// size weights steps along the full-data mean gradient (Σ_k (n_k/n)·ḡ_k =
// ḡ), and that uniform weights step along the mean of the clients' mean
// gradients, computed here independently.
func TestFedSGDWeightsBySize(t *testing.T) {
	t.Parallel()
	const lr = 0.05
	p := newRegression(53, 4, 4, 5)
	all := make([]int, len(p.x))
	for i := range all {
		all[i] = i
	}
	want := make([]float32, 4)
	p.sgdSteps(want, all, lr, 1)
	got := make([]float32, 4)
	runRegression(t, p, Config{Clients: 4, Rounds: 1, Aggregation: FedSGD}, lr, got)
	for j := range got {
		if math.Abs(float64(got[j]-want[j])) > 1e-6 {
			t.Errorf("size weights: coordinate %d got %v, want %v", j, got[j], want[j])
		}
	}
	means := make([]float64, 4)
	g := make([]float32, 4)
	for _, c := range p.clients {
		p.grad(g, make([]float32, 4), c)
		for j := range g {
			means[j] += float64(g[j]) / 4
		}
	}
	uni := make([]float32, 4)
	runRegression(t, p, Config{Clients: 4, Rounds: 1, Aggregation: FedSGD, Weighting: Uniform}, lr, uni)
	for j := range uni {
		if w := -lr * means[j]; math.Abs(float64(uni[j])-w) > 1e-6 {
			t.Errorf("uniform weights: coordinate %d got %v, want %v", j, uni[j], w)
		}
	}
}

// TestWorkersDoNotChangeResults runs FedAvg with partial participation and
// several local steps on 1, 2 and 4 workers.
func TestWorkersDoNotChangeResults(t *testing.T) {
	t.Parallel()
	p := newRegression(61, 6, 5, 7)
	run := func(workers int) ([]float32, *Record) {
		w := make([]float32, 6)
		rec := runRegression(t, p, Config{Clients: 5, PerRound: 3, Rounds: 6, LocalSteps: 3, Workers: workers, Seed: 11, KeepRounds: 2}, 0.05, w)
		return w, rec
	}
	w1, r1 := run(1)
	for _, workers := range []int{2, 4} {
		w, r := run(workers)
		if !slices.Equal(w, w1) {
			t.Errorf("%d workers: model %v, want %v (1 worker)", workers, w, w1)
		}
		r.Config.Workers = r1.Config.Workers
		if d := cmp.Diff(r1, r); d != "" {
			t.Errorf("%d workers: record differs (-1 worker +%d):\n%s", workers, workers, d)
		}
	}
	var before []int
	s := &Sim{Config: Config{Clients: 2, Rounds: 3}, Sizes: []int{1, 1},
		NewClient:   func() (Client, error) { return &regClient{p: p, lr: 0.1, local: 1}, nil },
		BeforeRound: func(r int, _ []float32) error { before = append(before, r); return nil }}
	if _, err := s.Run(t.Context(), make([]float32, 6)); err != nil || !slices.Equal(before, []int{0, 1, 2}) {
		t.Errorf("BeforeRound called for rounds %v (error %v), want 0, 1, 2", before, err)
	}
	if got, want := r1.Up, int64(6*3*6); got != want {
		t.Errorf("upload volume %d floats, want %d (6 rounds × 3 clients × 6 floats)", got, want)
	}
	if len(r1.Uploads) != 2 || r1.KeptFrom != 4 || len(r1.Uploads[0]) != 3 {
		t.Errorf("kept %d rounds from %d, want 2 from round 4 with 3 uploads each", len(r1.Uploads), r1.KeptFrom)
	}
	steps := 0
	for _, s := range r1.ClientSteps() {
		steps += s
	}
	if steps != 6*3*3 {
		t.Errorf("local steps %d in all, want 54 (6 rounds × 3 clients × 3 steps)", steps)
	}
}

// TestSchedule checks the sampled sets and the sampling frequencies: over
// 2000 rounds a client's count is Binomial(2000, 0.3) (mean 600, sd 20.5);
// the test rejects a count outside 600 ± 120 (5.9 sd), falsely with
// probability below 10 × 4e-9.
func TestSchedule(t *testing.T) {
	t.Parallel()
	c := Config{Clients: 10, PerRound: 3, Rounds: 2000, Seed: 4}
	s := Schedule(c)
	for r, set := range s {
		if len(set) != 3 || !slices.IsSorted(set) || set[0] == set[1] || set[1] == set[2] {
			t.Fatalf("round %d: clients %v, want 3 distinct in increasing order", r, set)
		}
	}
	for k, n := range Participations(s, 10) {
		if n < 480 || n > 720 {
			t.Errorf("client %d sampled %d times in 2000 rounds, want 600 ± 120", k, n)
		}
	}
	if !cmp.Equal(s, Schedule(c)) {
		t.Error("the schedule is not deterministic")
	}
	c.Seed = 5
	if cmp.Equal(s, Schedule(c)) {
		t.Error("the schedule does not depend on the seed")
	}
}

func TestBadConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		desc  string
		c     Config
		sizes []int
		want  string
	}{
		{"no clients", Config{Clients: 0, Rounds: 1}, nil, "0 clients"},
		{"no rounds", Config{Clients: 2, Rounds: 0}, []int{1, 1}, "0 rounds"},
		{"too many sampled", Config{Clients: 2, PerRound: 3, Rounds: 1}, []int{1, 1}, "3 clients sampled per round out of 2"},
		{"negative sampled", Config{Clients: 2, PerRound: -1, Rounds: 1}, []int{1, 1}, "-1 clients sampled"},
		{"empty client", Config{Clients: 3, Rounds: 1}, []int{4, 0, 2}, "client 1 has no training data"},
		{"sizes", Config{Clients: 3, Rounds: 1}, []int{4, 2}, "sizes of 2 clients for 3"},
		{"aggregation", Config{Clients: 1, Rounds: 1, Aggregation: "fedprox"}, []int{1}, `unknown aggregation "fedprox"`},
		{"weighting", Config{Clients: 1, Rounds: 1, Weighting: "loss"}, []int{1}, `unknown weighting "loss"`},
		{"fedsgd steps", Config{Clients: 1, Rounds: 1, Aggregation: FedSGD, LocalSteps: 2}, []int{1}, "one gradient per round"},
		{"local steps", Config{Clients: 1, Rounds: 1, LocalSteps: -1}, []int{1}, "-1 local steps"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			err := tc.c.Check(tc.sizes)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check(%+v, %v) = %v, want an error containing %q", tc.c, tc.sizes, err, tc.want)
			}
			called := false
			s := &Sim{Config: tc.c, Sizes: tc.sizes, NewClient: func() (Client, error) { called = true; return nil, nil }}
			if _, err := s.Run(context.Background(), []float32{0}); err == nil || called {
				t.Errorf("Run: err %v, client created %v; want an error before any client", err, called)
			}
		})
	}
}

func TestMean(t *testing.T) {
	t.Parallel()
	got := Mean(nil, [][]float32{{1, 2}, {3, 6}}, []float64{0.25, 0.75})
	// 0.25·1 + 0.75·3 = 2.5, 0.25·2 + 0.75·6 = 5 (exact in binary).
	if want := []float32{2.5, 5}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestFedAvgServerStep checks that a FedAvg server step receives the mean
// local model: with one client and one local step, a step of 1/2 towards it
// lands halfway between the start and one centralised SGD step.
func TestFedAvgServerStep(t *testing.T) {
	t.Parallel()
	const lr = 0.1
	p := newRegression(40, 5, 1, 3)
	full := make([]float32, 5)
	p.sgdSteps(full, p.clients[0], lr, 1)
	got := make([]float32, 5)
	s := &Sim{Config: Config{Clients: 1, Rounds: 1, LocalSteps: 1, Aggregation: FedAvg, Seed: 9}, Sizes: p.sizes(),
		NewClient: func() (Client, error) { return &regClient{p: p, lr: lr, local: 1}, nil },
		Server: func(r int, global, agg []float32) error {
			for j := range global {
				global[j] += 0.5 * (agg[j] - global[j])
			}
			return nil
		}}
	if _, err := s.Run(t.Context(), got); err != nil {
		t.Fatal(err)
	}
	for j := range got {
		if want := full[j] / 2; math.Abs(float64(got[j]-want)) > 1e-7 || full[j] == 0 {
			t.Errorf("w[%d] = %v, want %v (half of the plain step %v)", j, got[j], want, full[j])
		}
	}
}
