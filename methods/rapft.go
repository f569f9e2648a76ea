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
	"time"

	"github.com/repro-dp/repro/internal/parallel"
	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/privacy"
)

func init() { Register(RapFT{}) }

// RapFT is Rap-FT (N. Wang et al., Balancing differential privacy and
// utility: a relevance-based adaptive private fine-tuning framework for
// language models, IEEE TIFS 2024, Algorithm 1) on a PEFT family (LoRA,
// Houlsby adapters or BitFit):
//
//  1. before training, the relevance of every trainable element is
//     computed by enhanced LRP (nn.TinyMLLM.Relevance) on K_s examples
//     (relevance_examples) and averaged (Eq. 18); zero-initialised tensors
//     (LoRA B, adapter biases and up-projections) get N(0, s²) values for
//     the analysis only (analysis_init_std), since at zero their relevance
//     is zero;
//  2. each tensor's relevance is min-max normalised (a constant tensor
//     becomes 0), ranked ascending over all of θ, and the ⌈β·|θ|⌉ least
//     relevant elements (ties at the threshold included) form the weak
//     partition, mask 1 (Eq. 19); r_w is the mask's actual share, r_s =
//     1 − r_w;
//  3. every step is DP-SGD's with the Privatizer clipping the weak part of
//     each per-sample gradient to C_w = C·r_w² and the strong part to C_s
//     = C·r_s², and adding noise of standard deviation σ√r_w·C and σ√r_s·C
//     to the weak and strong coordinates (Eqs. 20–23). clip_power = 1
//     clips to C·r instead, the reading under which Theorem 1's Eq. 29 is
//     tight (σ_eff = σ).
//
// σ is DP-SGD's, calibrated to the target ε. The paper reports that ε
// (ε_nominal, Theorem 1); the mechanism is in fact a subsampled Gaussian
// with multiplier σ_eff = σ/√(r_w³ + r_s³) ≥ σ, whose ε (ε_tight) is the
// run's ε; both are recorded. calibrate = tight instead sets σ so that
// σ_eff is DP-SGD's σ: the comparison at equal true ε. With β = 1 every element is weak, C_w = C,
// σ_w = σ: the run is DP-SGD bit for bit (the relevance analysis is then
// skipped, since it cannot change the mask).
type RapFT struct{}

// Name implements Method.
func (RapFT) Name() string { return "rapft" }

// Arch implements Method.
func (RapFT) Arch() string { return "tinymllm" }

// Params implements Method: DPSGD's recipe (dpsgdParams, shared so that
// β = 1 is DP-SGD bit for bit), with the paper's β = 0.7, top-p (0.9)
// initialisation and α = 0.5.
func (RapFT) Params() []Param {
	return append(dpsgdParams(),
		Param{Name: "beta", Kind: Float, Doc: "irrelevance ratio β: the share of θ's elements in the weak partition, in (0, 1]; 1 is DP-SGD",
			Default: same(0.7), Check: upTo(1)},
		Param{Name: "lrp_init", Kind: String, Doc: "relevance initialisation: naive, topk, topp or beam",
			Default: same("topp"), Check: oneOf(list("naive", "topk", "topp", "beam"))},
		Param{Name: "lrp_k", Kind: Int, Doc: "k of top-k or the beam width, ≥ 1",
			Default: same(5), Check: between(1, 1<<20)},
		Param{Name: "lrp_p", Kind: Float, Doc: "p of top-p, in (0, 1]",
			Default: same(0.9), Check: upTo(1)},
		Param{Name: "lrp_alpha", Kind: Float, Doc: "α of the α-β rule (β_LRP = 1 − α), in [0, 1]",
			Default: same(0.5), Check: fraction},
		Param{Name: "relevance_examples", Kind: Int, Doc: "K_s: examples the relevance is averaged over, ≥ 1 (at most the split's size)",
			Default: byScale(32, 256, 256), Check: between(1, 1<<30)},
		Param{Name: "relevance_data", Kind: String, Doc: "where the relevance examples come from: private (the paper; uncharged) or public",
			Default: same("private"), Check: oneOf(list("private", "public"))},
		Param{Name: "mask", Kind: String, Doc: "how the weak partition is chosen: relevance (the paper) or random (control: the same share of elements drawn at random, no relevance analysis)",
			Default: same("relevance"), Check: oneOf(list("relevance", "random"))},
		Param{Name: "calibrate", Kind: String, Doc: "which ε meets the target: nominal (the paper: σ is DP-SGD's, the executed mechanism is more private) or tight (σ_eff is DP-SGD's σ, so both run at the same true ε)",
			Default: same("nominal"), Check: oneOf(list("nominal", "tight"))},
		Param{Name: "clip_power", Kind: Int, Doc: "partition clip C·r^p: 2 as printed (Algorithm 1 line 16, Theorem 1), 1 the reading that makes Eq. 29 tight (σ_eff = σ)",
			Default: same(2), Check: between(1, 2)},
		Param{Name: "analysis_init_std", Kind: Float, Doc: "std of the values zero-initialised PEFT tensors get for the relevance analysis only, > 0",
			Default: same(0.02), Check: positive},
	)
}

// StreamRapFTSubset and StreamRapFTAnalysis are Rap-FT's random streams:
// the choice of the relevance examples and the analysis-only values of
// zero-initialised tensors.
const (
	StreamRapFTSubset   = "methods/rapft-relevance-subset"
	StreamRapFTAnalysis = "methods/rapft-analysis-init"
)

// uncharged is the caveat of a mask computed on private data.
const rapftCaveat = "Rap-FT's relevance mask is computed from private training examples without noise, as in the paper; the accountant does not charge it (relevance_data=public avoids it)"

// FineTune implements Method.
func (RapFT) FineTune(ctx context.Context, job *Job) (*Result, error) {
	l, tight, part, analysis, err := rapftLoop(ctx, job)
	if err != nil {
		return nil, err
	}
	var reports []*Report
	update := l.update
	l.update = func(step int, idx []int, g []float32) (stepInfo, error) {
		info, err := update(step, idx, g)
		reports = append(reports, info.report)
		return info, err
	}
	res, err := l.run(ctx, tight)
	if err != nil {
		return nil, err
	}
	res.VisualTokens = float64(job.Model.(*nn.TinyMLLM).Config.Patches() + 1)
	res.Values = part.values(job.Hyper.Clip, tight)
	res.Values["rapft_analysis_seconds"] = analysis.Seconds()
	if part.analysed {
		res.Values["rapft_analysis_peak_bytes"] = float64(part.analysisBytes)
	}
	if job.Hyper.Diagnostics && part.rs > 0 {
		res.Metrics = append(res.Metrics, partitionMetrics(reports)...)
	}
	res.Release = part.release(job.Hyper)
	return res, nil
}

// rapftLoop returns Rap-FT's loop on job (DP-SGD's, with the two-partition
// Privatizer), the accounting of the executed mechanism, the partition and
// the time the relevance analysis took.
func rapftLoop(ctx context.Context, job *Job) (*loop, accounting, *rapftPartition, time.Duration, error) {
	const name = "rapft"
	var part *rapftPartition
	var analysis time.Duration
	l, acc, err := newPrivateLoop(ctx, name, job, func(l *loop, acc accounting, train []nn.Sequence) (*Privatizer, error) {
		var err error
		start := time.Now()
		part, err = rapftMask(ctx, job, l, train)
		if err != nil {
			return nil, err
		}
		analysis = time.Since(start)
		part.sigma = acc.Sigma
		if job.Hyper.String("calibrate") == "tight" && part.rs > 0 {
			// acc.Sigma meets the target as σ_eff; σ = σ_eff·√(Σ r^(2p−1)).
			part.sigma = acc.Sigma / part.sigmaEff(1)
		}
		rule, sigma := part.privatizer(job.Hyper.Clip, job.Hyper.noise(part.sigma))
		return NewPrivatizer(rule, sigma, l.expectedBatch(), job.Seed)
	})
	if err != nil {
		return nil, accounting{}, nil, 0, err
	}
	tight, err := part.tightAccounting(name, job, acc, l.q, l.steps)
	if err != nil {
		return nil, accounting{}, nil, 0, err
	}
	return l, tight, part, analysis, nil
}

// release returns the release of a Rap-FT step of a run with
// hyperparameters h, the Privatizer of its steps (privatizer with the
// run's clip and noise): each example's gradient clipped partition by
// partition, each partition noised with its own σ√r·C, recombined and
// divided by B. The threat model takes the mask as known to the attacker
// (the worst case: the mechanism is public, and a mask computed from
// private data may leak anyway). With one partition (β = 1) it is
// DP-SGD's release.
func (p *rapftPartition) release(h Hyper) *Release {
	rule, sigma := p.privatizer(h.Clip, h.noise(p.sigma))
	if len(rule.C) == 1 {
		return &Release{Rule: nn.Flat(rule.C[0]), Sigmas: sigma}
	}
	return &Release{Rule: rule, Sigmas: sigma}
}

// rapftPartition is the weak/strong split of θ.
type rapftPartition struct {
	mask   []float32 // 1: weak (low relevance), 0: strong
	rw, rs float64   // shares of θ's elements
	power  float64   // p of the clips C·r^p
	sigma  float64   // the noise multiplier σ of the partitions' noise σ√r·C
	// splitErr is the largest LRP conservation error of a split (Eq. 10)
	// in the analysis.
	splitErr float64
	// analysed says whether the relevance was computed (β < 1), and
	// analysisBytes the largest count of the buffers one propagation
	// holds (nn.Relevance.Bytes, a count of buffer lengths, not the
	// measured heap) over the analysed examples.
	analysed      bool
	analysisBytes int64
	private       bool
}

// privatizer returns the clip rule and noise multipliers of the partition
// for base clip c and noise multiplier sigma: one group (DP-SGD's) when
// every element is weak, else C_g = c·r_g^p (p = 2 as printed) and
// multipliers σ·r_g^(1/2−p), so that the noise std σ_g·C_g is σ√r_g·c
// (Eq. 22: noise scales with C, not with C_g).
func (p *rapftPartition) privatizer(c, sigma float64) (nn.ClipRule, []float64) {
	if p.rs == 0 {
		return nn.Flat(c), []float64{sigma}
	}
	rule := nn.MaskParts(p.mask, c*p.clip(p.rw), c*p.clip(p.rs))
	return rule, []float64{sigma * math.Pow(p.rw, 0.5-p.pow()), sigma * math.Pow(p.rs, 0.5-p.pow())}
}

// pow returns p of the clips (2 when unset).
func (p *rapftPartition) pow() float64 {
	if p.power == 0 {
		return 2
	}
	return p.power
}

// clip returns r^p, a partition's clip norm in units of C.
func (p *rapftPartition) clip(r float64) float64 {
	if p.pow() == 2 {
		return r * r
	}
	return math.Pow(r, p.pow())
}

// sigmaEff returns the multiplier of the isotropic Gaussian mechanism the
// two-partition step is: whitening each partition by its noise std σ√r·C
// gives squared sensitivity Σ_g (C r_g^p)²/(σ² r_g C²) = Σ_g r_g^(2p−1)/σ²,
// so σ_eff = σ/√(r_w³ + r_s³) for the printed p = 2 and σ for p = 1.
func (p *rapftPartition) sigmaEff(sigma float64) float64 {
	e := 2*p.pow() - 1
	return sigma / math.Sqrt(math.Pow(p.rw, e)+math.Pow(p.rs, e))
}

// rapftMask computes the relevance mask of the loop's trainable tensors
// (Algorithm 1 lines 1–9).
func rapftMask(ctx context.Context, job *Job, l *loop, train []nn.Sequence) (*rapftPartition, error) {
	h := job.Hyper
	beta := h.Float("beta")
	p := &rapftPartition{mask: make([]float32, l.layout.Size), rw: 1, power: float64(h.Int("clip_power"))}
	for i := range p.mask {
		p.mask[i] = 1
	}
	if beta == 1 {
		return p, nil
	}
	if h.String("mask") == "random" {
		return randomMask(p, beta, job.Seed), nil
	}
	m := job.Model.(*nn.TinyMLLM)
	data := train
	p.private = h.String("relevance_data") == "private"
	if !p.private {
		data = nil
		for i := range job.Data.Public {
			if s := Sequence(&job.Data.Public[i]); slices.Contains(s.Loss, true) {
				data = append(data, s)
			}
		}
		if len(data) == 0 {
			return nil, fmt.Errorf("methods: rapft: relevance_data=public: task %s has no public examples with answers", job.Data.Task)
		}
	}
	rel, splitErr, bytes, err := averageRelevance(ctx, job, m, l.layout, data)
	if err != nil {
		return nil, err
	}
	p.analysed, p.splitErr, p.analysisBytes = true, splitErr, bytes
	normaliseByTensor(rel, l.layout)
	n := 0
	thr := threshold(rel, beta)
	for i, v := range rel {
		p.mask[i] = 0
		if v <= thr {
			p.mask[i] = 1
			n++
		}
	}
	p.rw = float64(n) / float64(len(rel))
	p.rs = 1 - p.rw
	return p, nil
}

// randomMask fills p with a control mask: ⌈β·n⌉ elements drawn uniformly
// at random (stream StreamRapFTSubset) form the weak partition.
func randomMask(p *rapftPartition, beta float64, seed uint64) *rapftPartition {
	n := len(p.mask)
	rel := make([]float64, n)
	rng := rand.New(rand.NewPCG(seed, privacy.StreamID(StreamRapFTSubset)))
	for i, j := range rng.Perm(n) {
		rel[j] = float64(i)
	}
	thr := threshold(rel, beta)
	w := 0
	for i, v := range rel {
		p.mask[i] = 0
		if v <= thr {
			p.mask[i] = 1
			w++
		}
	}
	p.rw = float64(w) / float64(n)
	p.rs = 1 - p.rw
	return p
}

// averageRelevance returns the mean relevance map over K_s examples of data
// drawn without replacement (Eq. 18), computed with the zero-initialised
// tensors given analysis-only values that are restored afterwards.
//
// It also returns the largest conservation error of any split (Eq. 10) over
// the examples, and the largest memory one propagation held
// (nn.Relevance.Bytes; job.Workers propagations run at once).
func averageRelevance(ctx context.Context, job *Job, m *nn.TinyMLLM, l *nn.Layout, data []nn.Sequence) ([]float64, float64, int64, error) {
	h := job.Hyper
	k := min(h.Int("relevance_examples"), len(data))
	rng := rand.New(rand.NewPCG(job.Seed, privacy.StreamID(StreamRapFTSubset)))
	idx := rng.Perm(len(data))[:k]
	slices.Sort(idx)
	saved := make([][]float32, len(l.Params))
	init := rand.New(rand.NewPCG(job.Seed, privacy.StreamID(StreamRapFTAnalysis)))
	for i, p := range l.Params {
		if slices.ContainsFunc(p.Data, func(v float32) bool { return v != 0 }) {
			continue
		}
		saved[i] = slices.Clone(p.Data)
		for j := range p.Data {
			p.Data[j] = float32(init.NormFloat64() * h.Float("analysis_init_std"))
		}
	}
	defer func() {
		for i, s := range saved {
			if s != nil {
				copy(l.Params[i].Data, s)
			}
		}
	}()
	o := nn.LRP{Init: h.String("lrp_init"), K: h.Int("lrp_k"), P: h.Float("lrp_p"), Alpha: h.Float("lrp_alpha")}
	rels, errs, bytes := make([][]float64, k), make([]float64, k), make([]int64, k)
	err := parallel.For(k, job.Workers, func(i int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		r, err := m.Relevance(l, &data[idx[i]], o)
		if err != nil {
			return fmt.Errorf("methods: rapft: relevance of example %d: %w", idx[i], err)
		}
		rels[i], errs[i], bytes[i] = r.Params, r.SplitError, r.Bytes
		return nil
	})
	if err != nil {
		return nil, 0, 0, err
	}
	mean := make([]float64, l.Size)
	for _, r := range rels {
		for j, v := range r {
			mean[j] += v
		}
	}
	for j := range mean {
		mean[j] /= float64(k)
	}
	return mean, slices.Max(errs), slices.Max(bytes), nil
}

// normaliseByTensor min-max normalises the relevance of every tensor of l
// to [0, 1] in place (Algorithm 1 line 4); a constant tensor becomes 0.
func normaliseByTensor(rel []float64, l *nn.Layout) {
	for i := range l.Params {
		b := rel[l.Offsets[i]:l.Offsets[i+1]]
		lo, hi := slices.Min(b), slices.Max(b)
		for j, v := range b {
			if hi > lo {
				b[j] = (v - lo) / (hi - lo)
			} else {
				b[j] = 0
			}
		}
	}
}

// threshold returns R'[I_r], the I_r-th smallest relevance (1-based) with
// I_r = ⌈β·n⌉ (Algorithm 1 lines 5–7); a product within 10⁻⁹ of an integer
// counts as that integer, so β·n = 7.000000000000001 gives 7.
func threshold(rel []float64, beta float64) float64 {
	x := float64(beta * float64(len(rel)))
	if r := math.Round(x); math.Abs(x-r) < 1e-9 {
		x = r
	}
	ir := min(max(int(math.Ceil(x)), 1), len(rel))
	s := slices.Clone(rel)
	slices.Sort(s)
	return s[ir-1]
}
