// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/methods/fl"
	"github.com/repro-dp/repro/methods/mi"
	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/nn/optim"
	"github.com/repro-dp/repro/privacy"
)

// StreamLocal is the stream of a federated client's local randomness (its
// minibatches and its MINE critic), one per (round, client); StreamClient
// seeds the noise of a client's privatised upload, one per (round,
// client).
const (
	StreamLocal  = "methods/fl-local"
	StreamClient = "methods/fl-client-noise"
	// StreamServer seeds the server's noise on a round's aggregate, one
	// per round.
	StreamServer = "methods/fl-server-noise"
	// StreamFusionHead seeds the new head a fusion base pretrained on
	// other labels (the coarse ones) gets for the task's labels.
	StreamFusionHead = "methods/fl-head"
)

// fedParams returns the federated recipe of the methods that train the
// fusion classifier over fl-mm's clients (fedavg, secmmfl): the rounds,
// the clients per round, the local steps and minibatch, the local and
// server learning rates (plain SGD) and the aggregation. The defaults
// were set, not tuned on validation data (Sec-MMFL states none of them;
// its gap list suggests T = 50 rounds and SGD): smoke runs 10 rounds of
// 2 local steps on minibatches of 16. step is the default of server_step,
// the FedAvg server's step on the mean model delta (1: plain FedAvg).
func fedParams(step func(string) any) []Param {
	return []Param{
		{Name: "rounds", Kind: Int, Doc: "communication rounds T, ≥ 1",
			Default: byScale(10, 50, 100), Check: between(1, 1<<20)},
		{Name: "clients_per_round", Kind: Int, Doc: "clients sampled per round m (uniformly, without replacement), 1 to the task's clients; 0: all",
			Default: same(0), Check: between(0, 1<<20)},
		{Name: "local_steps", Kind: Int, Doc: "local SGD steps E per round (fedavg), ≥ 1; fedsgd takes 1",
			Default: byScale(2, 5, 5), Check: between(1, 1<<20)},
		{Name: "local_batch", Kind: Int, Doc: "examples per local step, drawn without replacement from the client's data; 0: all of it",
			Default: byScale(16, 32, 32), Check: between(0, 1<<30)},
		{Name: "local_lr", Kind: Float, Doc: "learning rate of the clients' SGD steps, > 0",
			Default: same(0.05), Check: positive},
		{Name: "server_lr", Kind: Float, Doc: "learning rate of the server's SGD step on the mean upload (fedsgd only), > 0",
			Default: same(0.05), Check: positive},
		{Name: "server_step", Kind: Float, Doc: "fedavg only: the server's step η_s on the mean upload, global += η_s·(mean − global), > 0 (1: plain FedAvg)",
			Default: step, Check: positive},
		{Name: "aggregation", Kind: String, Doc: "fedavg (uploads are local models, averaged) or fedsgd (uploads are gradients, the server steps)",
			Default: same(fl.FedAvg), Check: oneOf(list(fl.FedAvg, fl.FedSGD))},
		{Name: "weighting", Kind: String, Doc: "aggregation weights: size (n_k/n) or uniform (1/m)",
			Default: same(fl.BySize), Check: oneOf(list(fl.BySize, fl.Uniform))},
		{Name: "fusion", Kind: String, Doc: "fusion mode of the classifier: late (the head sees both features) or early (the image feature is the text encoder's first token); the pipeline fine-tunes the base pretrained in that mode, and a model of the other mode is an error",
			Default: same("late"), Check: oneOf(list("late", "early"))},
		{Name: "diagnostics", Kind: Bool, Doc: "record per-round non-private diagnostics (mean client loss)",
			Default: same(true), set: func(h *Hyper, v any) { h.Diagnostics = v.(bool) }},
	}
}

// A fedRun is one federated training run of the fusion classifier: the
// job's model (all tensors trainable), its clients' data and the recipe.
type fedRun struct {
	name    string
	job     *Job
	model   *nn.Fusion
	layout  *nn.Layout
	clients [][]*datasets.Example
	cfg     fl.Config

	localLR, serverLR float64
	// serverStep is FedAvg's server step η_s on the mean model delta.
	serverStep float64
	batch      int
	// lambda and mineSteps configure the MINE penalty λ·Î(h_img; h_text)
	// of the local loss (λ = 0: none).
	lambda    float64
	mineSteps int
	// privatize, when not nil, privatises a client's update u in place (a
	// model delta under FedAvg, a gradient under FedSGD) in round r.
	privatize func(r, k int, u []float32) Report
	// before, when not nil, runs before each round (fl.Sim.BeforeRound).
	before func(r int, global []float32) error
	// example, when not nil, makes the run record-level private
	// (privacy_unit = example): every client runs DP-SGD on its own data
	// and privatize is not used.
	example *exampleDP
	// download, when not nil, perturbs the round's aggregate agg (the mean
	// upload) in place before the server steps with it: the server-side
	// noise of NbAFL and of central DP-FedAvg.
	download func(r int, agg []float32)
}

// newFedRun checks the job and returns its run with the recipe of Hyper.
// Every check is made here, before anything runs.
func newFedRun(name string, job *Job) (*fedRun, error) {
	m, clients, err := job.fusion(name)
	if err != nil {
		return nil, err
	}
	h := job.Hyper
	cfg := fl.Config{
		Clients: len(clients), PerRound: h.Int("clients_per_round"), Rounds: h.Int("rounds"),
		LocalSteps: h.Int("local_steps"), Aggregation: h.String("aggregation"), Weighting: h.String("weighting"),
		Workers: job.Workers, Seed: job.Seed,
	}
	if cfg.Aggregation == fl.FedSGD {
		cfg.LocalSteps = 1
	}
	if cfg.PerRound == 0 {
		cfg.PerRound = cfg.Clients
	}
	sizes := make([]int, len(clients))
	for k, c := range clients {
		sizes[k] = len(c)
	}
	if err := cfg.Check(sizes); err != nil {
		return nil, fmt.Errorf("methods: %s: %w", name, err)
	}
	if f := h.String("fusion"); f != m.Config.FusionMode {
		return nil, fmt.Errorf("methods: %s: fusion = %s, but the model is a %s-fusion classifier", name, f, m.Config.FusionMode)
	}
	// The checks are done: only now is the model changed.
	if classes := fusionClasses(m, job.Data); m.Config.Classes != classes {
		if err := newFusionHead(m, classes, job.Seed^privacy.StreamID(StreamFusionHead)); err != nil {
			return nil, fmt.Errorf("methods: %s: %w", name, err)
		}
	}
	full := m.Config.PEFT
	full.Method, full.Parts = "full", nil
	layout, err := m.SetPEFT(full)
	if err != nil {
		return nil, fmt.Errorf("methods: %s: %w", name, err)
	}
	return &fedRun{name: name, job: job, model: m, layout: layout, clients: clients, cfg: cfg,
		localLR: h.Float("local_lr"), serverLR: h.Float("server_lr"), serverStep: h.Float("server_step"),
		batch: h.Int("local_batch")}, nil
}

// fusionClasses returns the number of labels a fusion classifier trained
// on d needs: the task's classes, or the model's when the task names none.
func fusionClasses(m *nn.Fusion, d *datasets.Dataset) int {
	if len(d.Classes) >= 2 {
		return len(d.Classes)
	}
	return m.Config.Classes
}

// newFusionHead replaces m's head, in place, by a new one for classes
// labels drawn from seed; both encoders are kept (a base pretrained on the
// coarse labels, fine-tuned on the fine ones).
func newFusionHead(m *nn.Fusion, classes int, seed uint64) error {
	cfg := m.Config
	cfg.Classes, cfg.Seed = classes, seed
	fresh, err := nn.NewFusion(cfg)
	if err != nil {
		return err
	}
	dst := fresh.Params()
	src := m.Params()
	for i := range src {
		if src[i].Name == fresh.Head.W.Name || src[i].Name == fresh.Head.B.Name {
			continue
		}
		copy(dst[i].Data, src[i].Data)
	}
	*m = *fresh
	return nil
}

// fusion returns the job's fusion classifier and its private examples by
// client, after checking the job: the model, a non-empty training set of
// valid examples (labels of the task's classes, which a new head gives the
// model when its own differ), a valid target (ε, δ), a positive Dirichlet α, every
// example on one of the task's clients and every client with data.
func (j *Job) fusion(name string) (*nn.Fusion, [][]*datasets.Example, error) {
	m, ok := j.Model.(*nn.Fusion)
	switch {
	case j.Model == nil:
		return nil, nil, fmt.Errorf("methods: %s: no model", name)
	case !ok:
		arch, _ := j.Model.Describe()
		return nil, nil, fmt.Errorf("methods: %s fine-tunes a fusion classifier, not a %s", name, arch)
	case j.Data == nil || len(j.Data.Private) == 0:
		return nil, nil, fmt.Errorf("methods: %s: empty training set", name)
	case m.Config.PEFT.Method != "" && m.Config.PEFT.Method != "none":
		return nil, nil, fmt.Errorf("methods: %s: the model already has PEFT %q; give a fresh copy of the base", name, m.Config.PEFT.Method)
	case j.Data.Clients < 1:
		return nil, nil, fmt.Errorf("methods: %s: task %s has %d federated clients, want at least 1", name, j.Data.Task, j.Data.Clients)
	case !(j.Data.Alpha > 0) || math.IsInf(j.Data.Alpha, 0):
		return nil, nil, fmt.Errorf("methods: %s: Dirichlet α = %v of the client partition, want a finite value > 0", name, j.Data.Alpha)
	}
	if err := checkPrivacy(name, j.Epsilon, j.Delta); err != nil {
		return nil, nil, err
	}
	clients := make([][]*datasets.Example, j.Data.Clients)
	for i := range j.Data.Private {
		e := &j.Data.Private[i]
		if err := checkFusionExample(m, e, fusionClasses(m, j.Data)); err != nil {
			return nil, nil, fmt.Errorf("methods: %s: training example %d: %w", name, i, err)
		}
		if e.Client < 0 || e.Client >= len(clients) {
			return nil, nil, fmt.Errorf("methods: %s: training example %d is on client %d, want 0 to %d", name, i, e.Client, len(clients)-1)
		}
		clients[e.Client] = append(clients[e.Client], e)
	}
	for k, c := range clients {
		if len(c) == 0 {
			return nil, nil, fmt.Errorf("methods: %s: client %d has no training data", name, k)
		}
	}
	return m, clients, nil
}

// checkFusionExample returns an error for an example the classifier cannot
// take: no image, an image of the wrong size, a caption of the wrong
// length or outside the vocabulary, a label outside [0, classes).
func checkFusionExample(m *nn.Fusion, e *datasets.Example, classes int) error {
	c := m.Config
	switch {
	case len(e.Images) == 0:
		return fmt.Errorf("no image")
	case len(e.Images[0]) != c.Channels*c.ImageSize*c.ImageSize:
		return fmt.Errorf("image of %d values, want %d", len(e.Images[0]), c.Channels*c.ImageSize*c.ImageSize)
	case len(e.Prompt) == 0 || len(e.Prompt) > c.MaxLen:
		return fmt.Errorf("caption of %d tokens, want 1 to %d", len(e.Prompt), c.MaxLen)
	case e.Label < 0 || e.Label >= classes:
		return fmt.Errorf("label %d outside [0, %d)", e.Label, classes)
	}
	for _, id := range e.Prompt {
		if id < 0 || id >= c.Vocab {
			return fmt.Errorf("token %d outside the vocabulary [0, %d)", id, c.Vocab)
		}
	}
	return nil
}

// simulate runs the federated training from the model's values, leaves the
// final global model in the job's model and returns the record.
func (run *fedRun) simulate(ctx context.Context) (*fl.Record, error) {
	global := run.layout.Values()
	sizes := make([]int, len(run.clients))
	for k, c := range run.clients {
		sizes[k] = len(c)
	}
	sim := &fl.Sim{Config: run.cfg, Sizes: sizes, NewClient: run.newClient, BeforeRound: run.before}
	if run.job.Progress != nil {
		sim.Progress = run.job.Progress
	}
	if run.cfg.Aggregation == fl.FedAvg && run.serverStep != 1 {
		step := float32(run.serverStep)
		sim.Server = func(r int, global, agg []float32) error {
			for j, v := range agg {
				global[j] += float32(step * (v - global[j]))
			}
			return nil
		}
	}
	if run.cfg.Aggregation == fl.FedSGD {
		var opt optim.Optimizer
		sim.Server = func(r int, global, agg []float32) error {
			ps := []optim.Param{{Name: "global", Data: global, Grad: agg}}
			if opt == nil {
				var err error
				if opt, err = optim.New("sgd", ps, nil); err != nil {
					return err
				}
			}
			opt.Step(ps, run.serverLR, nil)
			return nil
		}
	}
	if run.download != nil {
		inner := sim.Server
		sim.Server = func(r int, global, agg []float32) error {
			run.download(r, agg)
			if inner == nil { // plain FedAvg: the global model is the mean
				copy(global, agg)
				return nil
			}
			return inner(r, global, agg)
		}
	}
	rec, err := sim.Run(ctx, global)
	if err != nil {
		return nil, fmt.Errorf("methods: %s: %w", run.name, err)
	}
	run.layout.SetValues(global)
	return rec, nil
}

// A fedClient trains a replica of the run's model for the clients it is
// handed.
type fedClient struct {
	run    *fedRun
	m      *nn.Fusion
	layout *nn.Layout
	params []optim.Param
	grad   []float32
	opts   *nn.Options
}

func (run *fedRun) newClient() (fl.Client, error) {
	cfg := run.model.Config
	peft := cfg.PEFT
	cfg.PEFT = nn.PEFT{}
	m, err := nn.NewFusion(cfg)
	if err != nil {
		return nil, err
	}
	layout, err := m.SetPEFT(peft)
	if err != nil {
		return nil, err
	}
	if layout.Size != run.layout.Size {
		return nil, fmt.Errorf("replica of %d trainable values, want %d", layout.Size, run.layout.Size)
	}
	// One goroutine per client: the clients of a round run in parallel.
	return &fedClient{run: run, m: m, layout: layout, params: optimParams(layout),
		grad: make([]float32, layout.Size), opts: &nn.Options{Workers: 1}}, nil
}

// streamRNG returns the generator of a purpose's stream of (round,
// client).
func streamRNG(seed uint64, purpose string, r, k int) *rand.Rand {
	return rand.New(rand.NewPCG(seed, privacy.StreamID(purpose)^uint64(r)<<32^uint64(k)))
}

// Update implements fl.Client: E local SGD steps on minibatches (FedAvg,
// upload the local model) or one gradient (FedSGD, upload it), the update
// privatised when the run is private; under the record-level unit, E
// local DP-SGD steps (updateExample).
func (c *fedClient) Update(r, k int, global, upload []float32) (fl.Info, error) {
	run := c.run
	c.layout.SetValues(global)
	rng := streamRNG(run.job.Seed, StreamLocal, r, k)
	if run.example != nil {
		return c.updateExample(r, k, global, upload, rng)
	}
	data := run.clients[k]
	var critic *mi.MINE
	if run.lambda > 0 && len(data) >= 2 {
		var err error
		if critic, err = c.trainCritic(data, rng); err != nil {
			return fl.Info{}, err
		}
	}
	info := fl.Info{Steps: run.cfg.LocalSteps}
	var opt optim.Optimizer
	for range run.cfg.LocalSteps {
		batch := sampleBatch(rng, data, run.batch)
		loss, err := c.gradient(batch, critic, rng, c.grad)
		if err != nil {
			return fl.Info{}, err
		}
		info.Examples += len(batch)
		info.Loss += loss / float64(run.cfg.LocalSteps)
		if run.cfg.Aggregation == fl.FedSGD {
			copy(upload, c.grad)
			c.privatize(r, k, upload, nil)
			return info, nil
		}
		if opt == nil {
			if opt, err = optim.New("sgd", c.params, nil); err != nil {
				return fl.Info{}, err
			}
		}
		c.layout.SetGrad(c.grad)
		opt.Step(c.params, run.localLR, nil)
	}
	copy(upload, c.layout.Values())
	c.privatize(r, k, upload, global)
	return info, nil
}

// privatize privatises u in place when the run is private: u itself (a
// gradient) when global is nil, else its delta from global (a local
// model), which is then added back.
func (c *fedClient) privatize(r, k int, u, global []float32) {
	if c.run.privatize == nil {
		return
	}
	if global != nil {
		for j := range u {
			u[j] -= global[j]
		}
	}
	c.run.privatize(r, k, u)
	if global != nil {
		for j := range u {
			u[j] += global[j]
		}
	}
}

// upload implements FedUpload.Upload: one local step on ex alone from the
// run's global model, privatised as client 0 of round T + trial (T the
// run's rounds: a noise stream no training round drew from). The MINE
// penalty needs two examples and is absent.
func (run *fedRun) upload(ex *datasets.Example, trial int) ([]float32, error) {
	c, global, r, err := run.attackedClient("upload", ex, trial)
	if err != nil {
		return nil, err
	}
	g := make([]float32, len(global))
	if _, err := c.gradient([]*datasets.Example{ex}, nil, nil, g); err != nil {
		return nil, err
	}
	if run.example != nil {
		// Record-level: the client's one-example DP-SGD step clips the
		// example's gradient and adds the run's noise to it (a sum of
		// one, normalised by 1); under FedAvg the server divides the
		// model delta by −η and sees the same vector.
		p, err := run.example.privatizer(run.job.Seed, r, 0, 1)
		if err != nil {
			return nil, err
		}
		p.Privatize(g, [][]float32{slices.Clone(g)})
		return g, nil
	}
	if run.cfg.Aggregation == fl.FedSGD {
		c.privatize(r, 0, g, nil)
		return g, nil
	}
	// FedAvg: the upload is θ′ = θ − η·g; the privatiser acts on its
	// delta θ′ − θ.
	lr := float32(run.localLR)
	u := make([]float32, len(g))
	for j, v := range g {
		u[j] = -lr * v
	}
	c.privatize(r, 0, u, nil)
	for j, v := range u {
		g[j] = -v / lr
	}
	return g, nil
}

// attackedClient checks an attacked example and trial (what names the
// caller in errors) and returns a fresh client holding the run's global
// model, those parameters, and the round whose noise the attack draws:
// T + trial, T the run's rounds, a stream no training round drew from.
func (run *fedRun) attackedClient(what string, ex *datasets.Example, trial int) (*fedClient, []float32, int, error) {
	if trial < 0 {
		return nil, nil, 0, fmt.Errorf("methods: %s: %s trial %d, want ≥ 0", run.name, what, trial)
	}
	if err := checkFusionExample(run.model, ex, run.model.Config.Classes); err != nil {
		return nil, nil, 0, fmt.Errorf("methods: %s: %s: %w", run.name, what, err)
	}
	cl, err := run.newClient()
	if err != nil {
		return nil, nil, 0, err
	}
	c := cl.(*fedClient)
	global := run.layout.Values()
	c.layout.SetValues(global)
	return c, global, run.cfg.Rounds + trial, nil
}

// round implements FedUpload.Round: the round of a client that holds only
// ex, from the run's global model, as client 0 of round T + trial. Under
// the record-level unit each of the E local steps is a DP-SGD step on a
// Poisson sample at q = min(1, B/1) = 1 (the example itself), its
// gradient clipped and noised by the round's Privatizer (fresh noise a
// step, as updateExample); under the client unit the E steps are plain
// SGD and the round's delta is privatised (Update). The MINE penalty is
// absent, as in upload.
func (run *fedRun) round(ex *datasets.Example, trial int) ([]float32, error) {
	c, global, r, err := run.attackedClient("round", ex, trial)
	if err != nil {
		return nil, err
	}
	var p *Privatizer
	if run.example != nil {
		if p, err = run.example.privatizer(run.job.Seed, r, 0, 1); err != nil {
			return nil, err
		}
	}
	steps := run.cfg.LocalSteps
	if run.cfg.Aggregation == fl.FedSGD {
		steps = 1
	}
	g := make([]float32, len(global))
	var opt optim.Optimizer
	for range steps {
		if _, err := c.gradient([]*datasets.Example{ex}, nil, nil, g); err != nil {
			return nil, err
		}
		if p != nil {
			p.Privatize(g, [][]float32{slices.Clone(g)})
		}
		if run.cfg.Aggregation == fl.FedSGD {
			if p == nil {
				c.privatize(r, 0, g, nil)
			}
			return g, nil
		}
		if opt == nil {
			if opt, err = optim.New("sgd", c.params, nil); err != nil {
				return nil, err
			}
		}
		c.layout.SetGrad(g)
		opt.Step(c.params, run.localLR, nil)
	}
	u := c.layout.Values()
	for j := range u {
		u[j] -= global[j]
	}
	if p == nil {
		c.privatize(r, 0, u, nil)
	}
	inv := -1 / run.localLR
	for j, v := range u {
		u[j] = float32(float64(v) * inv)
	}
	return u, nil
}

// sampleBatch returns b examples of data drawn uniformly without
// replacement, in data order (all of them when b is 0 or ≥ len(data)).
func sampleBatch(rng *rand.Rand, data []*datasets.Example, b int) []*datasets.Example {
	if b == 0 || b >= len(data) {
		return data
	}
	idx := rng.Perm(len(data))[:b]
	slices.Sort(idx)
	out := make([]*datasets.Example, b)
	for i, j := range idx {
		out[i] = data[j]
	}
	return out
}

// imageInput returns an example's image as a tape input.
func (c *fedClient) imageInput(t *nn.Tape, e *datasets.Example) *nn.Node {
	cfg := c.m.Config
	return t.Input(nn.Tensor{Shape: []int{cfg.Channels, cfg.ImageSize, cfg.ImageSize}, Data: e.Images[0]}, false)
}

// features returns the image and text features of the examples and their
// cross-entropies, at the replica's current values (no gradients).
func (c *fedClient) features(data []*datasets.Example) (img, text [][]float64, ce []float64) {
	for _, e := range data {
		t := nn.NewTape(nil, nil)
		f, p := c.m.FeaturesFrom(t, c.imageInput(t, e), e.Prompt, nil)
		l := t.CrossEntropy(c.m.HeadFrom(t, f, p, nil), []int{e.Label}, nil)
		img, text = append(img, toFloat64(f.Value.Data)), append(text, toFloat64(p.Value.Data))
		ce = append(ce, float64(l.Value.Data[0]))
	}
	return img, text, ce
}

func toFloat64(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// mineExamples caps the examples a client trains its critic on.
const mineExamples = 128

// trainCritic trains the client's MINE critic on the features of (up to
// mineExamples of) its data at the global model: Sec-MMFL's critic, an MLP
// [32, 64, 32] trained by Adam at learning rate 1e-3 on the whole sample.
func (c *fedClient) trainCritic(data []*datasets.Example, rng *rand.Rand) (*mi.MINE, error) {
	if len(data) > mineExamples {
		data = sampleBatch(rng, data, mineExamples)
	}
	img, text, _ := c.features(data)
	return mi.TrainMINE(img, text, &mi.MINEOptions{Steps: c.run.mineSteps, Seed: rng.Uint64()})
}

// gradient writes to g the gradient of the batch's mean cross-entropy,
// plus λ·Î(h_img; h_text) on the batch when critic is not nil, and returns
// the mean cross-entropy. The penalty's gradient flows through the
// features: Σ_b ∂Î/∂h_b · ∂h_b/∂θ, exactly, as the gradient of the
// per-example term λ·B·⟨∂Î/∂h_b, h_b⟩ averaged over the batch (∂Î/∂h_b
// held constant).
func (c *fedClient) gradient(batch []*datasets.Example, critic *mi.MINE, rng *rand.Rand, g []float32) (float64, error) {
	n := len(batch)
	var gx, gy [][]float64
	var ce []float64
	if critic != nil && n >= 2 {
		img, text, losses := c.features(batch)
		_, gi, gt, err := critic.Gradient(img, text, rng.Perm(n), true)
		if err != nil {
			return 0, err
		}
		gx, gy, ce = gi, gt, losses
	}
	scale := float32(c.run.lambda * float64(n))
	sum, losses, _, err := nn.Gradient(c.layout, n, func(t *nn.Tape, i int) (*nn.Node, error) {
		e := batch[i]
		f, p := c.m.FeaturesFrom(t, c.imageInput(t, e), e.Prompt, nil)
		loss := t.CrossEntropy(c.m.HeadFrom(t, f, p, nil), []int{e.Label}, nil)
		if gx == nil {
			return loss, nil
		}
		pen := t.Add(dot(t, gx[i], f), dot(t, gy[i], p))
		return t.Add(loss, t.Scale(pen, scale)), nil
	}, c.opts)
	if err != nil {
		return 0, err
	}
	inv := 1 / float64(n)
	for j, v := range sum {
		g[j] = float32(float64(v) * inv)
	}
	if ce == nil {
		ce = losses
	}
	return mean(ce), nil
}

// dot returns ⟨w, x⟩ for a constant w and a node x of len(w) values.
func dot(t *nn.Tape, w []float64, x *nn.Node) *nn.Node {
	c := make([]float32, len(w))
	for i, v := range w {
		c[i] = float32(v)
	}
	return t.Sum(t.Mul(t.Input(nn.Tensor{Shape: slices.Clone(x.Value.Shape), Data: c}, false), x))
}

// result returns the Result of a finished run with the privacy record acc:
// per-round metrics and the run's communication.
func (run *fedRun) result(rec *fl.Record, acc accounting) *Result {
	res := &Result{Privacy: acc.Record, EpsilonRDP: acc.EpsilonRDP, EpsilonPLD: acc.EpsilonPLD,
		Steps: len(rec.Rounds), Warnings: slices.Clone(acc.Warnings), Values: map[string]float64{}}
	for _, rd := range rec.Rounds {
		steps, loss := 0, 0.0
		for _, in := range rd.Infos {
			steps += in.Steps
			loss += in.Loss / float64(len(rd.Infos))
		}
		res.Metrics = append(res.Metrics, Metric{rd.Round, "clients", float64(len(rd.Clients))},
			Metric{rd.Round, "client_steps", float64(steps)}, Metric{rd.Round, "upload_floats", float64(rd.Up)})
		if run.job.Hyper.Diagnostics {
			res.Metrics = append(res.Metrics, Metric{rd.Round, "loss", loss})
		}
	}
	c := rec.Config
	// fl_-prefixed: the hyperparameters and data params of the same names
	// are run columns too.
	res.Values["fl_rounds"] = float64(c.Rounds)
	res.Values["fl_clients"] = float64(c.Clients)
	res.Values["fl_clients_per_round"] = float64(c.PerRound)
	res.Values["fl_local_steps"] = float64(c.LocalSteps)
	res.Values["upload_floats"] = float64(rec.Up)
	res.Values["download_floats"] = float64(rec.Down)
	res.Values["max_participations"] = float64(slices.Max(fl.Participations(fl.Schedule(c), c.Clients)))
	steps := c.LocalSteps
	if c.Aggregation == fl.FedSGD {
		steps = 1
	}
	res.Upload = &FedUpload{Model: run.model, Layout: run.layout, Upload: run.upload, Round: run.round,
		Steps: steps, LR: run.localLR}
	if run.job.Hyper.Diagnostics {
		res.Privacy.Caveats = append(res.Privacy.Caveats, "non-private diagnostics outside the guarantee: the per-round metric loss (the clients' mean training loss) is computed from private data without noise (diagnostics=off drops it)")
	}
	return res
}
