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
	"strings"
	"time"

	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/nn/optim"
	"github.com/repro-dp/repro/privacy"
)

func init() { Register(SPARTA{}) }

// SPARTA is sparse DP fine-tuning of an image classifier by private row
// scoring (M. Makni et al., SPARTA: an optimization framework for
// differentially private sparse fine-tuning, KDD 2025, Algorithm 1). With
// T epochs, T0 warm-up epochs and N/B steps an epoch, a run
//
//  1. warm-up: trains the classifier head, every bias and every norm gain
//     with DP-SGD for T0 epochs (the paper's "DP-BitFit during the first T0
//     epochs"); the weight matrices stay frozen;
//  2. scoring: for one epoch, without updating anything, releases for each
//     Poisson batch ũ = Σ_i |clip(g_i)| + N(0, σ²C² I), the absolute values
//     of the per-example gradients clipped to ℓ₂ norm C (Eq. 11; absolute
//     value before the noise, so the noise cancels over a row) over the
//     warm-up tensors and the maskable weights, through the Privatizer (one
//     more subsampled Gaussian step per batch, Proposition 4.1);
//  3. mask: sums ũ over the epoch and over each row of each maskable
//     weight (an output neuron of a linear map, an output filter of a
//     convolution: the row of the weight reshaped to [out, in·k·k]; the ℓ₁
//     score of Eq. 12) and keeps, per layer, the ⌈s·R⌉ of its R rows with
//     the largest score (largest value, ties by index); the mask is fixed
//     from then on (Eq. 13, post-processing);
//  4. sparse: trains W_old + m ⊙ W with DP-SGD for the other T − T0 − 1
//     epochs: the kept rows of each weight are gathered into their own
//     block (nn.GatherRows), so per-example gradients, clipping and noise
//     cover them only (the paper's implementation, its Figure 4), the
//     warm-up tensors keep training, and the optimizer state of frozen
//     rows is reset and never used. sparse_rows = masked computes every
//     row's per-example gradient and multiplies it by the mask before
//     clipping instead: the clipped sums are the same, the frozen
//     coordinates receive noise that the mask then drops, so the
//     guarantee is the same and only the noise draws differ.
//
// One σ is calibrated, by the run's accountant, for the whole schedule of
// T epochs of the same subsampled Gaussian mechanism (Proposition 4.2), and
// the privacy record lists the three phases as events.
//
// The baselines of the paper's Tables 1 and 2 are values of the mask
// hyperparameter, on the same sampler, clip, σ and training steps:
// nogroup (SPARTA's scores without grouping), dpsgd-grads (Algorithm 2: the
// noisy signed DP-SGD gradient of the scoring epoch, top elements by
// magnitude), oracle (Algorithm 3: unclipped, noise-free |g| summed over
// the epoch; not differentially private, and recorded so), random
// (elements drawn uniformly), mp (Algorithm 4: largest magnitudes of the
// public pretrained weights), all (every weight), last (the head only) and
// dpbitfit (head and biases). The element-wise masks keep exactly ⌈s·n⌉ of
// a layer's n weights. The masks that need no private data (random, mp,
// all, last, dpbitfit) skip the scoring epoch: their record lists T − 1
// epochs and their ε is below the target.
//
// References:
//   - M. Makni, K. Behdin, G. Afriat, Z. Xu, S. Vassilvitskii,
//     N. Ponomareva, R. Mazumder and H. Hazimeh, SPARTA: an optimization
//     framework for differentially private sparse fine-tuning, KDD 2025,
//     Algorithms 1–4, Eqs. 11–13, Propositions 4.1 and 4.2.
//   - Y. Luo et al., Scalable differential privacy with sparse network
//     finetuning, CVPR 2021 (the mp baseline).
//   - E. B. Zaken, S. Ravfogel and Y. Goldberg, BitFit: simple
//     parameter-efficient fine-tuning for transformer-based masked
//     language-models, ACL 2022; Z. Bu et al., Differentially private
//     bias-term fine-tuning of foundation models, ICML 2024 (dpbitfit).
type SPARTA struct{}

// The masks of SPARTA and its baselines (the mask hyperparameter).
const (
	maskSPARTA  = "sparta"
	maskNoGroup = "nogroup"
	maskDPGrads = "dpsgd-grads"
	maskOracle  = "oracle"
	maskRandom  = "random"
	maskMP      = "mp"
	maskAll     = "all"
	maskLast    = "last"
	maskBitFit  = "dpbitfit"
)

// The values of the sparse_rows hyperparameter.
const (
	sparseGathered = "gathered"
	sparseMasked   = "masked"
)

// spartaMasks lists the values of the mask hyperparameter.
var spartaMasks = []string{maskSPARTA, maskNoGroup, maskDPGrads, maskOracle, maskRandom, maskMP, maskAll, maskLast, maskBitFit}

// spartaLayers are the names of the maskable layers (the layers
// hyperparameter): a weight tensor's layer is the last part of its name
// before ".weight", without trailing digits (vision.blocks.0.attn.q.weight
// is q, image.conv1.weight is conv).
var spartaLayers = []string{"patch", "q", "k", "v", "o", "fc1", "fc2", "conv"}

// needsScoring reports whether the mask needs the scoring epoch.
func needsScoring(mask string) bool {
	switch mask {
	case maskSPARTA, maskNoGroup, maskDPGrads, maskOracle:
		return true
	}
	return false
}

// Name implements Method.
func (SPARTA) Name() string { return "sparta" }

// Arch implements Method.
func (SPARTA) Arch() string { return "vit" }

// Params implements Method: the paper's recipe (SGD with momentum 0.9, a
// constant learning rate, C = 1, s = 20%, the PLD accountant for σ, T0 =
// 20% of T as in its Table 2 runs, 10 of 50 epochs; its Table 1 ablation
// uses 5 of 50) scaled to the presets' data: smoke and small train 10
// epochs (2 of warm-up) with B = 32 and 64 (q = 0.125 and 0.032 of their
// 256 and 2000 private images), full the paper's 50 (10) epochs with
// B = 500. The learning rates are the paper's (0.01, the head's 0.1 as in
// its ablation); they were not tuned here.
func (SPARTA) Params() []Param {
	ps := pickParams(loraParams(), "batch_size", "lr", "optimizer", "weight_decay", "schedule", "warmup", "clip", "accountant", "diagnostics", "noise_scale")
	ps = withDefault(ps, "batch_size", byScale(32, 64, 500))
	ps = withDefault(ps, "lr", same(0.01))
	ps = withDefault(ps, "optimizer", same("sgd"))
	ps = withDefault(ps, "accountant", same("pld"))
	return append(ps,
		Param{Name: "epochs", Kind: Int, Doc: "epochs T of the whole run (warm-up, scoring and sparse), ≥ 2",
			Default: byScale(10, 10, 50), Check: between(2, 1<<20), set: func(h *Hyper, v any) { h.Epochs = float64(v.(int)) }},
		Param{Name: "warmup_epochs", Kind: Int, Doc: "epochs T0 of the DP-BitFit warm-up, ≥ 0 and < epochs",
			Default: byScale(2, 2, 10), Check: between(0, 1<<20)},
		Param{Name: "sparsity", Kind: Float, Doc: "fraction s of the rows (or weights) of each maskable layer that are trained, in (0, 1]",
			Default: same(0.2), Check: upTo(1)},
		Param{Name: "mask", Kind: String, Doc: "how the trained rows or weights are chosen: " + strings.Join(spartaMasks, ", "),
			Default: same(maskSPARTA), Check: oneOf(list(spartaMasks...))},
		Param{Name: "layers", Kind: List, Doc: "maskable layers: " + strings.Join(spartaLayers, ", ") + " (those the model has)",
			Default: same(spartaLayers), Check: subsetOf(spartaLayers...)},
		Param{Name: "momentum", Kind: Float, Doc: "SGD momentum μ, in [0, 1)",
			Default: same(0.9), Check: func(v any) error {
				if f := v.(float64); !(f >= 0 && f < 1) {
					return fmt.Errorf("want a value in [0, 1)")
				}
				return nil
			}},
		Param{Name: "oracle_epsilon", Kind: Float, Doc: "oracle mask only: the target ε whose σ its steps use (the budget of the private masks it is compared with); the run itself is not private and has target ε = inf, > 0",
			Default: same(1.0), Check: positive},
		Param{Name: "head_lr", Kind: Float, Doc: "learning rate of the classifier head, ≥ 0; 0: lr",
			Default: same(0.1), Check: nonNegative},
		Param{Name: "model", Kind: String, Doc: "the classifier fine-tuned, from its own public-pretrained base: " + strings.Join(spartaModels, ", ") + " (cnn: the small CNN, the paper's Wide-ResNet stand-in; cnn-gn: the same with a group norm in each block, as the paper's WRN)",
			Default: same(modelViT), Check: oneOf(list(spartaModels...))},
		Param{Name: "sparse_rows", Kind: String, Doc: "how the sparse phase trains a weight's kept rows: " + sparseGathered + " (the rows that hold a kept element in their own matrix: per-example gradients, clipping and noise for them only) or " + sparseMasked + " (every row's per-example gradient multiplied by the mask, noise on every coordinate and the frozen ones' masked away; the same guarantee, more work)",
			Default: same(sparseGathered), Check: oneOf(list(sparseGathered, sparseMasked))},
	)
}

// pickParams returns the params of ps named names, in the order of names.
// It panics if one is missing.
func pickParams(ps []Param, names ...string) []Param {
	out := make([]Param, 0, len(names))
	for _, n := range names {
		i := slices.IndexFunc(ps, func(p Param) bool { return p.Name == n })
		if i < 0 {
			panic("methods: no hyperparameter " + n)
		}
		out = append(out, ps[i])
	}
	return out
}

// StreamSPARTA is the prefix of SPARTA's random streams: each phase
// (warmup, score, sparse) samples and draws its noise from the job's
// seed mixed with its own stream, so a phase's draws do not depend on
// whether another phase ran; the random mask draws from StreamSPARTA +
// "random".
const StreamSPARTA = "methods/sparta/"

// phaseSeed returns the seed of the streams of phase of a run with seed.
func phaseSeed(seed uint64, phase string) uint64 {
	return seed ^ privacy.StreamID(StreamSPARTA+phase)
}

// A spartaSchedule is the plan of a run: the steps of each phase.
type spartaSchedule struct {
	epochSteps           int // ⌈N/B⌉
	warmup, score, train int // steps of the three phases
	q                    float64
}

// newSpartaSchedule returns the schedule of h's run over n examples, or an
// error for T0 ≥ T.
func newSpartaSchedule(h Hyper, n int) (spartaSchedule, error) {
	t, t0 := h.Int("epochs"), h.Int("warmup_epochs")
	if t0 >= t {
		return spartaSchedule{}, fmt.Errorf("methods: sparta: warmup_epochs = %d, epochs = %d: want warm-up epochs < epochs (one epoch scores the rows)", t0, t)
	}
	b := h.BatchSize
	s := spartaSchedule{epochSteps: (n + b - 1) / b, q: min(1, float64(b)/float64(n))}
	s.warmup = t0 * s.epochSteps
	s.score = s.epochSteps
	s.train = (t - t0 - 1) * s.epochSteps
	return s, nil
}

// events returns the run's mechanism as the events of its phases with
// noise multiplier sigma: the warm-up, the scoring epoch (a non-private
// release for oracle, nothing for the masks without scoring) and the
// sparse phase, each a self-composed Poisson-subsampled Gaussian. Phases
// without steps are left out.
func (s spartaSchedule) events(sigma float64, mask string) privacy.Composed {
	var ev privacy.Composed
	add := func(steps int) {
		if steps > 0 {
			ev = append(ev, privacy.SelfComposed{Event: privacy.PoissonGaussian{Q: s.q, Sigma: sigma}, Count: steps})
		}
	}
	add(s.warmup)
	switch {
	case mask == maskOracle:
		ev = append(ev, privacy.NonPrivate{})
	case needsScoring(mask):
		add(s.score)
	}
	add(s.train)
	return ev
}

// layerOf returns the layer name of a weight tensor (spartaLayers).
func layerOf(p *nn.Param) string {
	name := strings.TrimSuffix(p.Name, ".weight")
	name = name[strings.LastIndex(name, ".")+1:]
	if slices.Contains(spartaLayers, name) {
		return name // fc1, fc2
	}
	return strings.TrimRight(name, "0123456789")
}

// warmupParam reports whether p trains in the warm-up (and in every
// later phase of SPARTA): the head, biases and norm gains.
func warmupParam(p *nn.Param) bool {
	return p.Kind == nn.KindHead || p.Kind == nn.KindBias || p.Kind == nn.KindNorm
}

// maskable returns the weight tensors of ps in the layers, in order.
func maskable(ps []*nn.Param, layers []string) []*nn.Param {
	var out []*nn.Param
	for _, p := range ps {
		if p.Kind == nn.KindWeight && slices.Contains(layers, layerOf(p)) {
			out = append(out, p)
		}
	}
	return out
}

// keepCount returns ⌈s·n⌉, at least 1 (the tolerance keeps 0.2·10 at 2).
func keepCount(s float64, n int) int {
	return min(n, max(1, int(math.Ceil(float64(s*float64(n))-1e-9))))
}

// topK returns which of the scores are among the k largest (largest value;
// ties broken towards the lower index).
func topK(scores []float64, k int) []bool {
	order := make([]int, len(scores))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case scores[a] > scores[b]:
			return -1
		case scores[a] < scores[b]:
			return 1
		}
		return 0
	})
	keep := make([]bool, len(scores))
	for _, i := range order[:min(k, len(order))] {
		keep[i] = true
	}
	return keep
}

// rowScores returns the ℓ₁ row scores of a tensor of rows rows from its
// accumulated element scores u (Eq. 12): the sum of each row, in float64.
func rowScores(u []float64, rows int) []float64 {
	rl := len(u) / rows
	out := make([]float64, rows)
	for r := range out {
		s := 0.0
		for _, v := range u[r*rl : (r+1)*rl] {
			s += v
		}
		out[r] = s
	}
	return out
}

// rowMask returns the element mask of a tensor of rows rows whose kept
// rows are the ⌈s·R⌉ of largest score.
func rowMask(u []float64, rows int, s float64) []bool {
	return optim.RowMask(topK(rowScores(u, rows), keepCount(s, rows)), len(u)/rows)
}

// elemMask returns the element mask that keeps the ⌈s·n⌉ elements of
// largest score.
func elemMask(u []float64, s float64) []bool { return topK(u, keepCount(s, len(u))) }

// absScores returns |u| element by element (Algorithm 2 ranks the noisy
// signed gradient by magnitude).
func absScores(u []float64) []float64 {
	out := make([]float64, len(u))
	for i, v := range u {
		out[i] = math.Abs(v)
	}
	return out
}

// StreamSPARTAHead is the stream of the new classifier head's initial
// values (the private task's labels are not the pretraining's).
const StreamSPARTAHead = StreamSPARTA + "head"

// FineTune implements Method. job.Model must be a *nn.ViT (or a *nn.CNN
// with model = cnn); a head whose
// number of classes differs from the task's is replaced by a new one drawn
// from the job's seed (the paper's random classifier initialisation), in
// place.
func (SPARTA) FineTune(ctx context.Context, job *Job) (*Result, error) {
	r, err := newViTRun(job)
	if err != nil {
		return nil, err
	}
	return r.run(ctx)
}

// newViTRun checks job and returns its run on the job's classifier (the
// ViT, or the CNN of model = cnn).
func newViTRun(job *Job) (*spartaRun, error) {
	const name = "sparta"
	m, cfg, err := spartaModel(name, job)
	switch {
	case err != nil:
		return nil, err
	case job.Data == nil || len(job.Data.Private) == 0:
		return nil, fmt.Errorf("methods: %s: empty training set", name)
	case len(job.Data.Classes) < 2:
		return nil, fmt.Errorf("methods: %s: task %s has %d classes, want ≥ 2", name, job.Data.Task, len(job.Data.Classes))
	case cfg.PEFT.Method != "" && cfg.PEFT.Method != "none":
		return nil, fmt.Errorf("methods: %s: the model already has PEFT %q; give a fresh copy of the base", name, cfg.PEFT.Method)
	}
	classes := len(job.Data.Classes)
	train := job.Data.Private
	for i := range train {
		if len(train[i].Images) != 1 || train[i].Label < 0 || train[i].Label >= classes {
			return nil, fmt.Errorf("methods: %s: training example %d: want one image and a label in [0, %d)", name, i, classes)
		}
	}
	loss := func(t *nn.Tape, i int) (*nn.Node, error) {
		return m.Loss(t, train[i].Images[0], train[i].Label, nil)
	}
	r, err := newSpartaRun(name, job, m, loss, len(train))
	if err != nil {
		return nil, err
	}
	// The checks are done: only now is the model changed.
	if cfg.Classes != classes {
		if err := newClassifierHead(m, classes, job.Seed^privacy.StreamID(StreamSPARTAHead)); err != nil {
			return nil, fmt.Errorf("methods: %s: %w", name, err)
		}
	}
	return r, nil
}

// newHead replaces m's classifier head, in place, by a new one for classes
// labels drawn from seed; the vision encoder is kept.
func newHead(m *nn.ViT, classes int, seed uint64) error {
	cfg := m.Config
	cfg.Classes, cfg.Seed = classes, seed
	fresh, err := nn.NewViT(cfg)
	if err != nil {
		return err
	}
	dst := fresh.Vision.Params()
	for i, p := range m.Vision.Params() {
		copy(dst[i].Data, p.Data)
	}
	*m = *fresh
	return nil
}

// A spartaRun is one SPARTA run on a model given by its tensors and the
// losses of its training examples.
type spartaRun struct {
	name  string
	job   *Job
	h     Hyper
	mask  string
	model nn.Module
	// loss builds the loss of training example i (of n).
	loss  func(t *nn.Tape, i int) (*nn.Node, error)
	n     int
	sched spartaSchedule
	acc   accounting

	weights []*nn.Param // the maskable weights, in model order
	union   []*nn.Param // every tensor a phase trains, in model order
	params  []optim.Param
	opt     optim.Optimizer
	lr      optim.Schedule

	// u holds the element scores of the scoring layout (scoreLayout)
	// summed over the scoring epoch.
	u           []float64
	scoreLayout *nn.Layout
	// keep holds each maskable weight's element mask once it is chosen;
	// nil for a weight trained whole.
	keep map[*nn.Param][]bool

	res  *Result
	done int // steps run so far
	// sparseStep is the mean wall time of a step of the sparse phase.
	sparseStep time.Duration
}

// newSpartaRun checks the job's hyperparameters and privacy parameters
// against a model of tensors model whose n training examples have losses
// loss, and calibrates σ. It changes nothing.
func newSpartaRun(name string, job *Job, model nn.Module, loss func(t *nn.Tape, i int) (*nn.Node, error), n int) (*spartaRun, error) {
	h := job.Hyper
	if err := checkPrivacy(name, job.Epsilon, job.Delta); err != nil {
		return nil, err
	}
	sched, err := newSpartaSchedule(h, n)
	if err != nil {
		return nil, err
	}
	r := &spartaRun{name: name, job: job, h: h, mask: h.String("mask"), model: model, loss: loss, n: n, sched: sched}
	layers := h.List("layers")
	r.weights = maskable(model.Params(), layers)
	if len(r.weights) == 0 {
		return nil, fmt.Errorf("methods: %s: layers = %s names no weight of the model", name, strings.Join(layers, ","))
	}
	if r.acc, err = spartaAccounting(name, h, job.Epsilon, job.Delta, sched, r.mask); err != nil {
		return nil, err
	}
	return r, nil
}

// setParams builds the optimizer over every tensor a phase trains (the
// warm-up tensors and the maskable weights) and the learning-rate
// schedule over the training steps (the scoring epoch does not advance
// it, as in the paper's code).
func (r *spartaRun) setParams() error {
	// The tensors, as they are now (a new head replaces every tensor).
	r.weights = maskable(r.model.Params(), r.h.List("layers"))
	r.union = r.union[:0]
	for _, p := range r.model.Params() {
		if warmupParam(p) || slices.Contains(r.weights, p) {
			r.union = append(r.union, p)
		}
	}
	h := r.h
	head := h.Float("head_lr")
	r.params = make([]optim.Param, len(r.union))
	for i, p := range r.union {
		if p.Grad == nil {
			p.Grad = make([]float32, len(p.Data))
		}
		r.params[i] = optim.Param{Name: p.Name, Data: p.Data, Grad: p.Grad}
		if p.Kind == nn.KindHead && head > 0 {
			r.params[i].LRScale = head / h.LR
		}
	}
	var err error
	r.opt, err = optim.New(h.Optimizer, r.params, &optim.Settings{Momentum: h.Float("momentum"), WeightDecay: h.WeightDecay})
	if err != nil {
		return fmt.Errorf("methods: %s: %w", r.name, err)
	}
	r.lr = h.schedule(r.sched.warmup + r.sched.train)
	return nil
}

// offsetSchedule is a schedule read from step Off on.
type offsetSchedule struct {
	S   optim.Schedule
	Off int
}

// LR implements optim.Schedule.
func (s offsetSchedule) LR(step int) float64 { return s.S.LR(step + s.Off) }

// A spartaPhase is one phase of a run.
type spartaPhase struct {
	name  string
	steps int
	// train says which tensors the phase's per-example gradients cover.
	train func(p *nn.Param) bool
	// rows, when not nil, gives the rows of a tensor the phase's layout
	// gathers (nn.GatherRows; nil for all of them).
	rows func(p *nn.Param) []int
	// opt is the optimizer mask of every step of the phase.
	opt *optim.Mask
	// lr is the schedule's offset of the phase's first step, or -1 for no
	// learning rate (the scoring epoch).
	lr int
	// update returns the phase's update on its layout, drawing from seed.
	update func(l *nn.Layout, seed uint64) (func(step int, idx []int, g []float32) (stepInfo, error), error)
}

// layout marks the tensors of the phase trainable in m and returns their
// layout, gathered when the phase gathers rows.
func (ph spartaPhase) layout(m nn.Module) *nn.Layout {
	if ph.rows != nil {
		return nn.GatherRows(m, ph.train, ph.rows)
	}
	return nn.SetTrainable(m, ph.train)
}

// run runs the phases and returns the run's result.
func (r *spartaRun) run(ctx context.Context) (*Result, error) {
	if err := r.setParams(); err != nil {
		return nil, err
	}
	r.res = &Result{}
	warm := spartaPhase{name: "warmup", steps: r.sched.warmup, train: warmupParam, lr: 0,
		opt: &optim.Mask{Params: r.paramMask(warmupParam)}, update: r.trainUpdate(nil)}
	if err := r.runPhase(ctx, warm); err != nil {
		return nil, err
	}
	if needsScoring(r.mask) {
		if err := r.runPhase(ctx, r.scorePhase()); err != nil {
			return nil, err
		}
	}
	if err := r.choose(); err != nil {
		return nil, err
	}
	if err := r.runPhase(ctx, r.sparsePhase()); err != nil {
		return nil, err
	}
	r.res.Values = r.values()
	// The sparse phase's release: DP-SGD's joint clip and noise on the
	// tensors the phase trains (the model's trainable tensors from now
	// on), restricted to the kept rows or elements.
	r.res.Release = &Release{Rule: nn.Flat(r.h.Clip), Sigmas: []float64{r.h.noise(r.acc.Sigma)}, Mask: r.elemMask}
	return r.res, nil
}

// scorePhase returns the scoring epoch: no tensor moves (every tensor is
// left out of the optimizer's steps, whose state is kept).
func (r *spartaRun) scorePhase() spartaPhase {
	return spartaPhase{name: "score", steps: r.sched.score, train: r.scored, lr: -1,
		opt: &optim.Mask{Params: make([]bool, len(r.union))}, update: r.scoreUpdate}
}

// scored reports whether p is in the scoring layout: the warm-up tensors
// and the maskable weights (jointly clipped, as in the paper's code).
func (r *spartaRun) scored(p *nn.Param) bool { return warmupParam(p) || slices.Contains(r.weights, p) }

// paramMask returns which tensors of the union in reports true for.
func (r *spartaRun) paramMask(in func(p *nn.Param) bool) []bool {
	m := make([]bool, len(r.union))
	for i, p := range r.union {
		m[i] = in(p)
	}
	return m
}

// runPhase runs ph's steps as one loop over the run's optimizer and adds
// its steps, metrics and costs to the run's result.
func (r *spartaRun) runPhase(ctx context.Context, ph spartaPhase) error {
	if ph.steps == 0 {
		return nil
	}
	layout := ph.layout(r.model)
	seed := phaseSeed(r.job.Seed, ph.name)
	job := *r.job
	off, total := r.done, r.totalSteps()
	if r.job.Progress != nil {
		job.Progress = func(done, _ int) { r.job.Progress(off+done, total) }
	}
	var sched optim.Schedule = optim.Constant{Value: 0}
	if ph.lr >= 0 {
		sched = offsetSchedule{r.lr, ph.lr}
	}
	l := &loop{name: r.name, job: &job, n: r.n, steps: ph.steps, q: r.sched.q, layout: layout,
		params: r.params, opt: r.opt, sched: sched, sampler: NewPoisson(r.n, r.sched.q, seed), buffers: 1, model: r.model}
	update, err := ph.update(layout, seed)
	if err != nil {
		return err
	}
	l.update = update
	l.mask = func(int, []float32) *optim.Mask { return ph.opt }
	res, err := l.run(ctx, r.acc)
	if err != nil {
		return err
	}
	r.merge(res, off)
	if ph.name == "sparse" {
		r.sparseStep = res.StepTime
	}
	r.done += ph.steps
	return nil
}

// totalSteps returns the number of steps the run takes.
func (r *spartaRun) totalSteps() int {
	n := r.sched.warmup + r.sched.train
	if needsScoring(r.mask) {
		n += r.sched.score
	}
	return n
}

// merge adds a phase's result, whose first step is step off of the run.
func (r *spartaRun) merge(res *Result, off int) {
	out := r.res
	if out.Steps == 0 {
		out.Privacy, out.EpsilonRDP, out.EpsilonPLD, out.Warnings = res.Privacy, res.EpsilonRDP, res.EpsilonPLD, res.Warnings
	}
	for _, m := range res.Metrics {
		m.Step += off
		out.Metrics = append(out.Metrics, m)
	}
	// The mean step time over the phases, weighted by their steps.
	steps := out.Steps + res.Steps
	out.StepTime = (out.StepTime*time.Duration(out.Steps) + res.StepTime*time.Duration(res.Steps)) / time.Duration(steps)
	out.PeakBytes = max(out.PeakBytes, res.PeakBytes)
	out.Steps = steps
}

// perSample returns the per-example gradients of the training examples
// idx on layout l (masked by opts.Mask), with the step's information.
func (r *spartaRun) perSample(l *nn.Layout, idx []int, opts *nn.Options) ([][]float32, stepInfo, error) {
	if len(idx) == 0 {
		return nil, stepInfo{}, nil
	}
	res, err := nn.PerSample(l, len(idx), func(t *nn.Tape, k int) (*nn.Node, error) { return r.loss(t, idx[k]) }, opts)
	if err != nil {
		return nil, stepInfo{}, err
	}
	return res.Grads, stepInfo{loss: mean(res.Losses), stats: res.Stats}, nil
}

// privatizer returns the Privatizer of a phase drawing from seed: DP-SGD's
// joint clip to C, noise σC, the expected batch size q·N.
func (r *spartaRun) privatizer(seed uint64) (*Privatizer, error) {
	return NewPrivatizer(nn.Flat(r.h.Clip), []float64{r.h.noise(r.acc.Sigma)}, r.sched.q*float64(r.n), seed)
}

// trainUpdate returns the update maker of a DP-SGD phase whose per-example
// gradients are masked by mask (element mask over the phase's layout; nil:
// none): each step's update is the Privatizer's mean of them.
func (r *spartaRun) trainUpdate(mask func(l *nn.Layout) []float32) func(l *nn.Layout, seed uint64) (func(int, []int, []float32) (stepInfo, error), error) {
	return func(l *nn.Layout, seed uint64) (func(int, []int, []float32) (stepInfo, error), error) {
		p, err := r.privatizer(seed)
		if err != nil {
			return nil, err
		}
		opts := &nn.Options{Workers: r.job.Workers, Reuse: true}
		if mask != nil {
			opts.Mask = mask(l)
		}
		return func(step int, idx []int, g []float32) (stepInfo, error) {
			grads, info, err := r.perSample(l, idx, opts)
			if err != nil {
				return stepInfo{}, err
			}
			rep := p.Privatize(g, grads)
			info.report = &rep
			return info, nil
		}, nil
	}
}

// scoreUpdate returns the update of the scoring epoch on layout l: it
// adds the batch's scores to r.u and leaves g at zero (nothing moves).
// SPARTA and nogroup release Σ|clip(g_i)| + N(0, σ²C² I) (Eq. 11: the
// absolute value taken before the Privatizer, which clips by the same norm,
// since ‖|g|‖ = ‖g‖), dpsgd-grads the DP-SGD release Σ clip(g_i) + N
// (Algorithm 2), oracle the unclipped, noise-free Σ|g_i| (Algorithm 3).
// Every release is divided by the expected batch size, which changes no
// ranking.
func (r *spartaRun) scoreUpdate(l *nn.Layout, seed uint64) (func(int, []int, []float32) (stepInfo, error), error) {
	r.u, r.scoreLayout = make([]float64, l.Size), l
	p, err := r.privatizer(seed)
	if err != nil {
		return nil, err
	}
	opts := &nn.Options{Workers: r.job.Workers, Reuse: true}
	return func(step int, idx []int, g []float32) (stepInfo, error) {
		grads, info, err := r.perSample(l, idx, opts)
		if err != nil {
			return stepInfo{}, err
		}
		if r.mask == maskOracle {
			for _, gi := range grads {
				for j, v := range gi {
					r.u[j] += math.Abs(float64(v))
				}
			}
			clear(g)
			return info, nil
		}
		if r.mask != maskDPGrads {
			for _, gi := range grads {
				for j, v := range gi {
					gi[j] = float32(math.Abs(float64(v)))
				}
			}
		}
		rep := p.Privatize(g, grads)
		info.report = &rep
		for j, v := range g {
			r.u[j] += float64(v)
		}
		clear(g)
		return info, nil
	}, nil
}

// choose sets the mask of every maskable weight from the scores (or from
// the weights, or at random) for the masks that have one.
func (r *spartaRun) choose() error {
	r.keep = map[*nn.Param][]bool{}
	s := r.h.Float("sparsity")
	rng := newRand(r.job.Seed, StreamSPARTA+"random")
	for _, p := range r.weights {
		var u []float64
		if r.scoreLayout != nil {
			i := r.scoreLayout.Index(p)
			if i < 0 {
				return fmt.Errorf("methods: %s: %s was not scored", r.name, p.Name)
			}
			u = r.u[r.scoreLayout.Offsets[i]:r.scoreLayout.Offsets[i+1]]
		}
		switch r.mask {
		case maskSPARTA:
			r.keep[p] = rowMask(u, p.Rows(), s)
		case maskNoGroup, maskOracle:
			r.keep[p] = elemMask(u, s)
		case maskDPGrads:
			r.keep[p] = elemMask(absScores(u), s)
		case maskMP:
			w := make([]float64, len(p.Data))
			for j, v := range p.Data {
				w[j] = math.Abs(float64(v))
			}
			r.keep[p] = elemMask(w, s)
		case maskRandom:
			w := make([]float64, len(p.Data))
			for j := range w {
				w[j] = rng.Float64()
			}
			r.keep[p] = elemMask(w, s)
		}
	}
	return nil
}

// sparsePhase returns the last phase: DP-SGD on the tensors of the mask,
// the maskable weights restricted to their kept rows or elements, whose
// masked-out optimizer state is reset.
func (r *spartaRun) sparsePhase() spartaPhase {
	ph := spartaPhase{name: "sparse", steps: r.sched.train, train: r.scored, lr: r.sched.warmup}
	switch r.mask {
	case maskAll:
		ph.update = r.trainUpdate(nil) // plain DP-SGD: no mask at all
		return ph
	case maskLast:
		ph.train = func(p *nn.Param) bool { return p.Kind == nn.KindHead }
	case maskBitFit:
		ph.train = func(p *nn.Param) bool { return p.Kind == nn.KindHead || p.Kind == nn.KindBias }
	}
	if r.mask == maskLast || r.mask == maskBitFit {
		ph.opt = &optim.Mask{Params: r.paramMask(ph.train)}
		ph.update = r.trainUpdate(nil)
		return ph
	}
	elems := make([][]bool, len(r.union))
	for i, p := range r.union {
		elems[i] = r.keep[p]
	}
	ph.opt = &optim.Mask{Elems: elems, Reset: true}
	if r.h.String("sparse_rows") == sparseGathered {
		ph.rows = r.keptRows
	}
	ph.update = r.trainUpdate(r.elemMask)
	return ph
}

// keptRows returns the rows of p that hold a kept element, or nil when
// p is trained whole or every row holds one.
func (r *spartaRun) keptRows(p *nn.Param) []int {
	k := r.keep[p]
	if k == nil {
		return nil
	}
	rl := p.RowLen()
	var rows []int
	for row := range p.Rows() {
		if slices.Contains(k[row*rl:(row+1)*rl], true) {
			rows = append(rows, row)
		}
	}
	if len(rows) == p.Rows() {
		return nil
	}
	return rows
}

// elemMask returns the element mask of the kept elements over the
// sparse phase's layout l (gathered or not), or nil when l holds kept
// elements only (SPARTA's gathered rows, or s = 1: nothing to mask).
func (r *spartaRun) elemMask(l *nn.Layout) []float32 {
	m := make([]float32, l.Size)
	all := true
	for i, p := range l.Params {
		b := m[l.Offsets[i]:l.Offsets[i+1]]
		k := r.keep[p]
		rows, rl := l.Rows(i), p.RowLen()
		for j := range b {
			e := j
			if rows != nil {
				e = rows[j/rl]*rl + j%rl
			}
			if k == nil || k[e] {
				b[j] = 1
			} else {
				all = false
			}
		}
	}
	if all {
		return nil
	}
	return m
}

// values returns the run's SPARTA results for the manifest: the fraction
// of the maskable weights trained in the sparse phase, the steps of each
// phase, and the mean wall time of a sparse step (the step of the
// paper's Figure 4; the scoring epoch's steps cost what dense ones do).
func (r *spartaRun) values() map[string]float64 {
	kept, total := 0, 0
	for _, p := range r.weights {
		total += len(p.Data)
		switch k := r.keep[p]; {
		case r.mask == maskAll:
			kept += len(p.Data)
		case k != nil:
			for _, b := range k {
				if b {
					kept++
				}
			}
		}
	}
	score := 0
	if needsScoring(r.mask) {
		score = r.sched.score
	}
	return map[string]float64{
		"sparta_trainable_fraction":  float64(kept) / float64(total),
		"sparta_warmup_steps":        float64(r.sched.warmup),
		"sparta_score_steps":         float64(score),
		"sparta_sparse_steps":        float64(r.sched.train),
		"sparta_sparse_step_seconds": r.sparseStep.Seconds(),
	}
}

// newRand returns the generator of stream purpose of seed.
func newRand(seed uint64, purpose string) *rand.Rand {
	return rand.New(rand.NewPCG(seed, privacy.StreamID(purpose)))
}
