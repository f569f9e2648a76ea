// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/internal/parallel"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/privacy"
)

func init() {
	Register(DPMTV{})
	Register(MTV{})
}

// DPMTV is DP-MTV, private multimodal task vectors: it does not train. It
// makes one private release, the mean of the language model's head
// outputs at the last prompt position over K in-context prompts built
// from private episodes, and a mask of heads; the released model answers
// any number of zero-shot queries by replacing the masked heads' outputs
// with the mean (nn.Steering), which is post-processing. On the icl task:
//
//  1. partition: K private episodes (canary copies excluded), drawn by a
//     permutation of the seed, are the chunks; each is an N-shot prompt
//     (its first N demonstrations and its query, without the answer), so
//     each record is used once;
//  2. activations: the per-head outputs (the input of each attention
//     out-projection) of the layers 𝓛 at the prompt's last position;
//  3. per-layer clipping: each layer's slice (all heads, Width numbers) is
//     scaled to ℓ₂ norm at most C (C = 0: the median per-layer norm on
//     public episodes, chosen at no privacy cost);
//  4. release: the mean over chunks plus N(0, σ²) on every coordinate, σ
//     from the analytic Gaussian mechanism for sensitivity
//     Δ = √|𝓛|·C/K under zero-out neighbours (one episode's chunk present
//     or contributing zero, the partition and K fixed and public: the
//     paper's value; Kairouz et al., "Practical and Private (Deep)
//     Learning without Sampling or Shuffling", ICML 2021, name the
//     relation) or 2√|𝓛|·C/K (replace-one, the relation of the paper's
//     proof). Under add/remove neighbours proper, the partition itself
//     would move with the dataset: neither bound holds, and no option
//     claims it;
//  5. head selection: REINFORCE over independent Bernoulli heads on
//     public queries of the task (Dataset.Selection: no privacy cost), the
//     final mask the best of a few sampled on other public queries; or,
//     privately, REINFORCE on the queries of a few private episodes kept
//     out of the chunks, then the Gumbel mechanism (report noisy max) over
//     the most frequent sampled masks scored by clipped losses on those
//     queries, with a share of ε (the paper's basic composition).
//
// At ε = +Inf there is no noise (clipping still applies): clean MTV is
// the method mtv.
//
// References:
//   - I. C. Ngong, Z. Reza, J. P. Near, "Differentially Private Multimodal
//     In-Context Learning", arXiv:2603.04894, 2026, §3.3–3.4, Theorems
//     3.1–3.3.
//   - B. Huang et al., "Multimodal Task Vectors Enable Many-Shot Multimodal
//     In-Context Learning", NeurIPS 2024 (mean activations, REINFORCE
//     head selection, the intervention).
//   - B. Balle, Y.-X. Wang, "Improving the Gaussian Mechanism for
//     Differential Privacy", ICML 2018 (the analytic Gaussian mechanism).
//   - D. Durfee, R. Rogers, "Practical Differentially Private Top-k
//     Selection with Pay-what-you-get Composition", NeurIPS 2019 (the
//     Gumbel mechanism over a limited domain).
type DPMTV struct{}

// Name implements Method.
func (DPMTV) Name() string { return "dpmtv" }

// Arch implements Method.
func (DPMTV) Arch() string { return "tinymllm" }

// The head selections of DP-MTV (the selection hyperparameter).
const (
	selectPublic  = "public"
	selectPrivate = "private"
)

// Params implements Method.
func (DPMTV) Params() []Param {
	return append(mtvParams(),
		Param{Name: "clip", Kind: Float, Doc: "per-layer clipping norm C of the head outputs, ≥ 0; 0: the median per-layer norm over public episodes",
			Default: same(0.0), Check: nonNegative},
		Param{Name: "neighbour", Kind: String, Doc: "neighbouring relation: zero-out (one episode's chunk present or contributing zero, K fixed: Δ = √|L|·C/K, the paper's value) or replace-one (twice that, the relation the paper's proof states)",
			Default: same("zero-out"), Check: oneOf(list("zero-out", "replace-one"))},
		Param{Name: "selection", Kind: String, Doc: "head selection: public (REINFORCE on public queries, free) or private (REINFORCE and the Gumbel mechanism on private validation episodes)",
			Default: same(selectPublic), Check: oneOf(list(selectPublic, selectPrivate))},
		Param{Name: "select_share", Kind: Float, Doc: "private selection: the share of ε spent on the mask, in (0, 1)",
			Default: same(0.1), Check: func(v any) error {
				if f := v.(float64); !(f > 0 && f < 1) {
					return fmt.Errorf("want a share in (0, 1)")
				}
				return nil
			}},
		Param{Name: "val_records", Kind: Int, Doc: "private selection: private episodes kept out of the chunks whose queries score the masks, ≥ 1",
			Default: byScale(4, 6, 12), Check: between(1, 1<<20)},
		Param{Name: "candidates", Kind: Int, Doc: "private selection: masks sampled from the learned distribution, ≥ 1",
			Default: same(100), Check: between(1, 1<<20)},
		Param{Name: "top", Kind: Int, Doc: "private selection: the most frequent distinct sampled masks the mechanism chooses among, ≥ 1",
			Default: same(10), Check: between(1, 1<<20)},
		noiseScaleParam(),
		Param{Name: "loss_clip", Kind: Float, Doc: "private selection: each query's loss is clipped to [0, B] before the scores are summed, > 0",
			Default: same(5.0), Check: positive},
	)
}

// CheckData implements DataChecker.
func (DPMTV) CheckData(task, scale, name string, v any) error {
	return checkICLData(task, scale, name, v)
}

// CheckData implements DataChecker.
func (MTV) CheckData(task, scale, name string, v any) error {
	return checkICLData(task, scale, name, v)
}

// noiseScaleParam returns the noise_scale hyperparameter of the methods
// that train LoRA (loraParams): the planted under-noised control.
func noiseScaleParam() Param {
	ps := loraParams()
	return ps[slices.IndexFunc(ps, func(p Param) bool { return p.Name == "noise_scale" })]
}

// mtvParams are the hyperparameters DP-MTV shares with clean MTV.
func mtvParams() []Param {
	return []Param{
		{Name: "chunks", Kind: Int, Doc: "chunk count K: private episodes whose activations are averaged, ≥ 0; 0: every one available",
			Default: same(0), Check: between(0, 1<<30)},
		{Name: "shots", Kind: Int, Doc: "demonstrations N per chunk prompt (the first N of each episode), ≥ 0; 0: all of the episode's",
			Default: same(0), Check: between(0, 1<<20)},
		{Name: "query_shots", Kind: Int, Doc: "demonstrations of its own a query keeps (the first n of a test episode), ≥ 0; 0: the query alone (zero-shot)",
			Default: same(0), Check: between(0, 1<<20)},
		{Name: "patch", Kind: String, Doc: "positions the task vector replaces: every (the prompt's last and every decoded one, as MTV's code) or once (the prompt's last only)",
			Default: same("every"), Check: oneOf(list("every", "once"))},
		{Name: "layers", Kind: List, Doc: "language-model blocks whose heads are read and may be patched: all, or block indices",
			Default: same([]string{"all"}), Check: func(v any) error {
				if len(v.([]string)) == 0 {
					return fmt.Errorf("want all or at least one block index")
				}
				return nil
			}},
		{Name: "reinforce_steps", Kind: Int, Doc: "REINFORCE steps of the head selection, ≥ 1",
			Default: byScale(150, 300, 600), Check: between(1, 1<<20)},
		{Name: "reinforce_masks", Kind: Int, Doc: "masks sampled per REINFORCE step, ≥ 2",
			Default: same(32), Check: between(2, 1<<16)},
		{Name: "reinforce_lr", Kind: Float, Doc: "Adam learning rate of the head logits, > 0",
			Default: same(0.1), Check: positive},
		{Name: "final_masks", Kind: Int, Doc: "public selection: masks sampled from the learned distribution, the best on public queries kept, ≥ 1",
			Default: same(10), Check: between(1, 1<<16)},
	}
}

// The random streams of DP-MTV and MTV.
const (
	StreamPartition = "methods/dpmtv-partition"
	StreamMTVNoise  = "methods/dpmtv-noise"
	StreamReinforce = "methods/dpmtv-reinforce"
	StreamSelect    = "methods/dpmtv-select"
)

// FineTune implements Method: it releases the task vector and mask of
// job's private episodes and leaves them in job.Model's steering.
func (DPMTV) FineTune(ctx context.Context, job *Job) (*Result, error) {
	return runMTV(ctx, "dpmtv", job, true)
}

// MTV is clean multimodal task vectors, DP-MTV's non-private reference:
// the mean of the unclipped head outputs of the chunks without noise,
// heads selected on public queries. It has no guarantee.
type MTV struct{}

// Name implements Method.
func (MTV) Name() string { return "mtv" }

// Arch implements Method.
func (MTV) Arch() string { return "tinymllm" }

// Params implements Method.
func (MTV) Params() []Param { return mtvParams() }

// FineTune implements Method. The job's ε must be +Inf.
func (MTV) FineTune(ctx context.Context, job *Job) (*Result, error) {
	if !math.IsInf(job.Epsilon, 1) {
		return nil, fmt.Errorf("methods: mtv: target ε = %v: clean MTV runs at ε = inf only", job.Epsilon)
	}
	return runMTV(ctx, "mtv", job, false)
}

// mtvSetup is what runMTV and the in-context baselines read of a job.
type mtvSetup struct {
	m      *nn.TinyMLLM
	shots  int   // N, demonstrations per chunk prompt
	order  []int // private episodes (no canary copies), in the partition's order
	layers []int // 𝓛
}

// icl checks that job poses an in-context task to a TinyMLLM and returns
// its setup: the episodes' shots capped by the shots hyperparameter when
// declared, the private episodes in the order of the seed's permutation,
// the layers hyperparameter when declared.
func icl(name string, job *Job) (*mtvSetup, error) {
	m, ok := job.Model.(*nn.TinyMLLM)
	switch {
	case !ok:
		return nil, fmt.Errorf("methods: %s works on a tinymllm", name)
	case job.Data == nil || len(job.Data.Private) == 0:
		return nil, fmt.Errorf("methods: %s: empty training set", name)
	case m.Config.PEFT.Method != "" && m.Config.PEFT.Method != "none":
		return nil, fmt.Errorf("methods: %s: the model already has PEFT %q; give a fresh copy of the base", name, m.Config.PEFT.Method)
	}
	if err := checkPrivacy(name, job.Epsilon, job.Delta); err != nil {
		return nil, err
	}
	s := &mtvSetup{m: m}
	for i := range job.Data.Private {
		ex := &job.Data.Private[i]
		if ex.Canary >= 0 {
			continue
		}
		n, err := datasets.EpisodeShots(ex)
		if err != nil {
			return nil, fmt.Errorf("methods: %s: task %s is not an in-context task the base can answer from demonstrations: %w", name, job.Data.Task, err)
		}
		s.shots = n
		s.order = append(s.order, i)
	}
	if len(s.order) == 0 {
		return nil, fmt.Errorf("methods: %s: no private episode", name)
	}
	if n, ok := job.Hyper.values["shots"].(int); ok && n > 0 {
		if n > s.shots {
			return nil, fmt.Errorf("methods: %s: %d shots asked, the episodes of %s have %d", name, n, job.Data.Task, s.shots)
		}
		s.shots = n
	}
	rng := newRand(job.Seed, StreamPartition)
	rng.Shuffle(len(s.order), func(i, j int) { s.order[i], s.order[j] = s.order[j], s.order[i] })
	var err error
	if _, ok := job.Hyper.values["layers"]; ok {
		s.layers, err = parseLayers(job.Hyper.List("layers"), len(m.LM.Blocks))
		if err != nil {
			return nil, fmt.Errorf("methods: %s: %w", name, err)
		}
	}
	return s, nil
}

// parseLayers returns the block indices of spec ("all", or indices) of a
// model with L blocks, sorted.
func parseLayers(spec []string, L int) ([]int, error) {
	if slices.Equal(spec, []string{"all"}) {
		out := make([]int, L)
		for i := range out {
			out[i] = i
		}
		return out, nil
	}
	var out []int
	for _, s := range spec {
		l, err := strconv.Atoi(s)
		if err != nil || l < 0 || l >= L {
			return nil, fmt.Errorf("layer %q is not a block index in [0, %d)", s, L)
		}
		if slices.Contains(out, l) {
			return nil, fmt.Errorf("layer %d listed twice", l)
		}
		out = append(out, l)
	}
	slices.Sort(out)
	return out, nil
}

// chunkPrompt returns the prompt of the chunk of episode ex: its first n
// demonstrations and its query, without the answer.
func chunkPrompt(ex *datasets.Example, n int) nn.Sequence {
	c := datasets.FirstShots(ex, n)
	return nn.Sequence{Tokens: c.Prompt, Images: c.Images}
}

// lastHeads returns, for every prompt, the per-head outputs of each block
// of layers at the prompt's last position, [prompt][layer][Width].
func lastHeads(ctx context.Context, m *nn.TinyMLLM, prompts []nn.Sequence, layers []int, workers int) ([][][]float32, error) {
	out := make([][][]float32, len(prompts))
	site := make(map[string]int, len(layers))
	for k, l := range layers {
		site[m.LM.Blocks[l].Name+".attn.heads"] = k
	}
	err := parallel.For(len(prompts), workers, func(i int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		a := make([][]float32, len(layers))
		h := &nn.Hooks{Observe: func(s string, x nn.Tensor) {
			if k, ok := site[s]; ok {
				D := x.Cols()
				a[k] = slices.Clone(x.Data[(x.Rows()-1)*D:])
			}
		}}
		if _, _, err := m.Forward(nn.NewTape(nil, nil), &prompts[i], nil, h, nil); err != nil {
			return fmt.Errorf("prompt %d: %w", i, err)
		}
		out[i] = a
		return nil
	})
	return out, err
}

// clippedMean returns the mean over the chunks of acts ([chunk][layer][D])
// with every layer slice scaled to ℓ₂ norm at most c first (c = +Inf: no
// clipping), in float64, [layer][D].
func clippedMean(acts [][][]float32, c float64) [][]float64 {
	mu := make([][]float64, len(acts[0]))
	for k := range mu {
		mu[k] = make([]float64, len(acts[0][k]))
	}
	inv := 1 / float64(len(acts))
	for _, a := range acts {
		for k, x := range a {
			s := inv
			if n := norm(x); n > c {
				s *= c / n
			}
			for j, v := range x {
				mu[k][j] += float64(s * float64(v))
			}
		}
	}
	return mu
}

// publicClip returns the median per-layer norm of the head outputs at the
// last position of up to 64 public episodes (as n-shot prompts): the
// default clipping norm, chosen without private data.
func publicClip(ctx context.Context, s *mtvSetup, d *datasets.Dataset, workers int) (float64, error) {
	var prompts []nn.Sequence
	for i := range d.Public {
		if len(prompts) == 64 {
			break
		}
		if _, err := datasets.EpisodeShots(&d.Public[i]); err == nil {
			prompts = append(prompts, chunkPrompt(&d.Public[i], s.shots))
		}
	}
	if len(prompts) == 0 {
		return 0, fmt.Errorf("no public episode to choose the clipping norm on; set clip")
	}
	acts, err := lastHeads(ctx, s.m, prompts, s.layers, workers)
	if err != nil {
		return 0, err
	}
	var norms []float64
	for _, a := range acts {
		for _, x := range a {
			norms = append(norms, norm(x))
		}
	}
	slices.Sort(norms)
	n := len(norms)
	return (norms[(n-1)/2] + norms[n/2]) / 2, nil
}

// release is DP-MTV's private release before head selection.
type release struct {
	Mean        [][]float64 // μ̃, [layer][Width]
	Clip, Sigma float64     // C (+Inf: none) and the noise standard deviation σ
	Sensitivity float64     // Δ
	Signal      float64     // ‖μ̄‖, diagnostic
	NoiseNorm   float64     // ‖μ̃ − μ̄‖, diagnostic
	Cosine      float64     // cos(μ̃, μ̄), diagnostic
}

// privateMean computes the release of the chunks' head outputs acts: the
// clipped mean plus the analytic Gaussian mechanism's noise for (eps,
// delta) at sensitivity √|𝓛|·c/K (times 2 when replace is true), drawn
// from the seed's stream StreamMTVNoise. eps = +Inf adds no noise; c =
// +Inf clips nothing (then eps must be +Inf).
func privateMean(acts [][][]float32, c, eps, delta float64, replace bool, seed uint64) (release, error) {
	return scaledMean(acts, c, eps, delta, replace, 1, seed)
}

// scaledMean is privateMean with noise of standard deviation scale·σ (σ
// the calibrated one, which the release records): scale ≠ 1 is a planted
// under-noised control (the noise_scale hyperparameter).
func scaledMean(acts [][][]float32, c, eps, delta float64, replace bool, scale float64, seed uint64) (release, error) {
	r := release{Clip: c, Mean: clippedMean(acts, c)}
	bar := make([][]float64, len(r.Mean))
	for k := range r.Mean {
		bar[k] = slices.Clone(r.Mean[k])
	}
	if !math.IsInf(eps, 1) {
		r.Sensitivity = math.Sqrt(float64(len(acts[0]))) * c / float64(len(acts))
		if replace {
			r.Sensitivity *= 2
		}
		var err error
		if r.Sigma, err = privacy.AnalyticGaussianSigma(eps, delta, r.Sensitivity); err != nil {
			return release{}, err
		}
		noise := privacy.NewNoise(seed, StreamMTVNoise)
		for k := range r.Mean {
			noise.AddGaussian(r.Mean[k], scale*r.Sigma)
		}
	}
	var dot, nb, nm, nd float64
	for k := range bar {
		for j, b := range bar[k] {
			m := r.Mean[k][j]
			dot, nb, nm, nd = dot+float64(b*m), nb+float64(b*b), nm+float64(m*m), nd+float64((m-b)*(m-b))
		}
	}
	r.Signal, r.NoiseNorm = math.Sqrt(nb), math.Sqrt(nd)
	r.Cosine = dot / math.Sqrt(nb*nm)
	return r, nil
}

// runMTV runs DP-MTV (private true) or clean MTV on job.
func runMTV(ctx context.Context, name string, job *Job, private bool) (*Result, error) {
	start := time.Now()
	s, err := icl(name, job)
	if err != nil {
		return nil, err
	}
	h, d := job.Hyper, job.Data
	sel, val := selectPublic, 0
	if private {
		if sel = h.String("selection"); sel == selectPrivate {
			val = h.Int("val_records")
		}
	}
	K := h.Int("chunks")
	if K == 0 {
		K = len(s.order) - val
	}
	if K < 1 || K+val > len(s.order) {
		return nil, fmt.Errorf("methods: %s: %d chunks and %d validation episodes asked, task %s has %d private episodes", name, K, val, d.Task, len(s.order))
	}
	if sel == selectPublic && len(d.Selection) < 4 {
		return nil, fmt.Errorf("methods: %s: task %s has %d public selection queries; public head selection needs some", name, d.Task, len(d.Selection))
	}
	prompts := make([]nn.Sequence, K)
	for k := range prompts {
		prompts[k] = chunkPrompt(&d.Private[s.order[k]], s.shots)
	}
	acts, err := lastHeads(ctx, s.m, prompts, s.layers, job.Workers)
	if err != nil {
		return nil, fmt.Errorf("methods: %s: %w", name, err)
	}
	eps1, eps2 := job.Epsilon, 0.0
	if sel == selectPrivate {
		eps2 = job.Epsilon
		if !math.IsInf(job.Epsilon, 1) {
			eps2 = float64(h.Float("select_share") * job.Epsilon)
			eps1 = job.Epsilon - eps2
		}
	}
	c := math.Inf(1)
	if private {
		if c = h.Float("clip"); c == 0 {
			if c, err = publicClip(ctx, s, d, job.Workers); err != nil {
				return nil, fmt.Errorf("methods: %s: %w", name, err)
			}
		}
	}
	replace, scale := private && h.String("neighbour") == "replace-one", 1.0
	if private {
		scale = h.Float("noise_scale")
	}
	rel, err := scaledMean(acts, c, eps1, job.Delta, replace, scale, job.Seed)
	if err != nil {
		return nil, fmt.Errorf("methods: %s: %w", name, err)
	}
	st := &steerer{m: s.m, layers: s.layers, mean: rel.Mean, workers: job.Workers}
	var chosen selection
	if sel == selectPublic {
		chosen, err = st.selectPublic(ctx, job, d.Selection)
	} else {
		chosen, err = st.selectPrivate(ctx, job, s, K, eps2)
	}
	if err != nil {
		return nil, fmt.Errorf("methods: %s: %w", name, err)
	}
	s.m.Steer = st.steering(chosen.mask)
	s.m.Steer.Once = h.String("patch") == "once"
	res, err := mtvResult(name, job, s, K, rel, chosen, eps1, eps2, private)
	if err != nil {
		return nil, err
	}
	res.StepTime = time.Since(start) / time.Duration(max(chosen.steps, 1))
	if private && !math.IsInf(eps1, 1) {
		res.Mean = &MeanRelease{Chunks: acts, Clip: c, Epsilon: eps1, Delta: job.Delta, Relation: h.String("neighbour"), Seed: job.Seed,
			Release: func(chunks [][][]float32, seed uint64) [][]float64 {
				r, err := scaledMean(chunks, c, eps1, job.Delta, replace, scale, seed)
				if err != nil {
					panic(err) // the run's own parameters: calibrated above
				}
				return r.Mean
			}}
	}
	return res, nil
}

// mtvResult returns the result of a DP-MTV or MTV run: its privacy
// record, values, pose and membership examples.
func mtvResult(name string, job *Job, s *mtvSetup, K int, rel release, chosen selection, eps1, eps2 float64, private bool) (*Result, error) {
	d := job.Data
	res := &Result{Steps: chosen.steps, Metrics: chosen.metrics, Pose: queryPose(job.Hyper.Int("query_shots"))}
	if eps2 > 0 {
		// REINFORCE's per-step losses are those of private queries
		// without noise: not released.
		res.Metrics = nil
	}
	var err error
	if private {
		res.Privacy, res.EpsilonRDP, res.EpsilonPLD, err = mtvAccounting(rel, job.Epsilon, eps1, eps2, job.Delta, job.Hyper.String("neighbour"))
		if err != nil {
			return nil, fmt.Errorf("methods: %s: %w", name, err)
		}
		if eps2 > 0 {
			res.Privacy.Caveats = append(res.Privacy.Caveats, mtvSelectCaveat)
		}
		res.Privacy.Caveats = append(res.Privacy.Caveats, mtvDiagnosticsCaveat)
	} else {
		a, err := nonPrivateAccounting(job.Epsilon, job.Delta, 1, 1)
		if err != nil {
			return nil, err
		}
		res.Privacy, res.EpsilonRDP, res.EpsilonPLD = a.Record, a.EpsilonRDP, a.EpsilonPLD
		res.Privacy.Sampling = "none"
	}
	res.Privacy.Caveats = append(res.Privacy.Caveats, job.Hyper.Caveats...)
	clip := rel.Clip
	if math.IsInf(clip, 1) {
		clip = 0
	}
	res.Values = map[string]float64{
		"mtv_chunks": float64(K), "mtv_shots": float64(s.shots), "mtv_layers": float64(len(s.layers)),
		"mtv_clip": clip, "mtv_sigma": rel.Sigma, "mtv_sensitivity": rel.Sensitivity,
		"mtv_heads": float64(countTrue(chosen.mask)), "mtv_signal_norm": rel.Signal,
		"mtv_noise_norm": rel.NoiseNorm, "mtv_cosine": rel.Cosine,
	}
	res.Members, res.NonMembers = demoQueries(d.Private, s.order[:K], s.shots), demoQueries(d.Holdout, nil, s.shots)
	return res, nil
}

// queryPose returns the pose of DP-MTV's queries with n demonstrations
// of their own: an in-context episode becomes its query alone (n = 0) or
// its first n demonstrations and its query; other examples (the
// membership attacks' one-image queries) stay as they are.
func queryPose(n int) func(*datasets.Example) datasets.Example {
	return func(ex *datasets.Example) datasets.Example {
		if _, err := datasets.EpisodeShots(ex); err != nil || len(ex.Images) == 1 {
			return *ex
		}
		if n == 0 {
			return datasets.ZeroShot(ex)
		}
		return datasets.FirstShots(ex, n)
	}
}

// demoQueries returns the zero-shot queries of the first n demonstrations
// of the episodes exs[idx] (every episode of exs when idx is nil; canary
// copies and examples that are not episodes skipped): the labelled images
// a release of those episodes could reveal.
func demoQueries(exs []datasets.Example, idx []int, n int) []datasets.Example {
	if idx == nil {
		for i := range exs {
			idx = append(idx, i)
		}
	}
	var out []datasets.Example
	for _, i := range idx {
		ex := &exs[i]
		if _, err := datasets.EpisodeShots(ex); err != nil || ex.Canary >= 0 {
			continue
		}
		qs := datasets.Queries(ex)
		out = append(out, qs[:min(n, len(qs)-1)]...)
	}
	return out
}

func countTrue(b []bool) int {
	n := 0
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}

// mtvSelectCaveat and mtvDiagnosticsCaveat label what DP-MTV's accounting
// does not charge.
const (
	mtvSelectCaveat      = "private head selection: the candidate masks come from REINFORCE on the private validation episodes' queries, which the accountant does not charge (only the Gumbel choice among them, as in the paper's Theorem 3.3)"
	mtvDiagnosticsCaveat = "diagnostics outside the guarantee: mtv_signal_norm and mtv_cosine read the private mean without noise; they are reports, not part of the release"
)

// mtvAccounting returns the privacy record of DP-MTV's release rel at the
// target ε target: one analytic Gaussian release at (eps1, δ), composed
// with a pure eps2 selection when eps2 > 0. The record's ε is the basic composition
// ε₁ + ε₂ of the paper's Theorem 3.3, with ε₁ the release's exact ε (σ is
// the analytic Gaussian mechanism's, checked here through
// privacy.GaussianDelta); the RDP and PLD accountants' ε of the same
// events are returned beside it (RDP is looser than the exact ε₁; PLD
// matches it up to its discretisation and may compose tighter than the
// sum).
func mtvAccounting(rel release, target, eps1, eps2, delta float64, relation string) (results.Privacy, float64, float64, error) {
	var ev privacy.Event = privacy.NonPrivate{}
	achieved := math.Inf(1)
	if rel.Sigma > 0 {
		ev = privacy.Gaussian{Sigma: rel.Sigma, Sensitivity: rel.Sensitivity}
		// σ is the smallest with δ(ε₁) ≤ δ, so the release is exactly
		// (ε₁, δ)-DP; GaussianEpsilon's rounding up may land a few ulps
		// above ε₁.
		dd, err := privacy.GaussianDelta(rel.Sigma, rel.Sensitivity, eps1)
		if err != nil {
			return results.Privacy{}, 0, 0, err
		}
		if dd > delta {
			return results.Privacy{}, 0, 0, fmt.Errorf("the release is (%v, %v)-DP, above its target δ = %v", eps1, dd, delta)
		}
		achieved = eps1
		if eps2 > 0 {
			ev = privacy.Composed{ev, privacy.EpsilonDelta{Epsilon: eps2}}
			// ε₁ = ε − ε₂ was computed in floating point: the sum is the
			// target ε up to an ulp.
			achieved = min(achieved+eps2, target)
		}
	}
	rdpEps, pldEps := math.Inf(1), math.Inf(1)
	if rel.Sigma > 0 {
		var err error
		if rdpEps, pldEps, err = epsilons(ev, delta); err != nil {
			return results.Privacy{}, 0, 0, err
		}
	}
	evb, err := privacy.MarshalEvent(ev)
	if err != nil {
		return results.Privacy{}, 0, 0, err
	}
	mult := 0.0
	if rel.Sensitivity > 0 {
		mult = rel.Sigma / rel.Sensitivity
	}
	p := results.Privacy{
		Accountant: "agm", EpsilonTarget: results.Float(target), Epsilon: results.Float(achieved),
		Delta: delta, Sigma: mult, SampleRate: 1, Steps: 1, Sampling: "none",
		Neighbouring: relation, ClipNorm: rel.Clip, Events: json.RawMessage(evb),
	}
	return p, rdpEps, pldEps, nil
}
