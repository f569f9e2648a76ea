// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/internal/parallel"
	"github.com/repro-dp/repro/nn"
)

// steerer scores head masks of a released mean: a mask over the heads of
// layers (layer-major, Heads per layer) patches each chosen head with its
// slice of mean.
type steerer struct {
	m       *nn.TinyMLLM
	layers  []int
	mean    [][]float64 // [layer of layers][Width]
	workers int
}

// steering returns the model's steering for mask.
func (s *steerer) steering(mask []bool) *nn.Steering {
	H := s.m.Config.Heads
	dh := s.m.Config.Width / H
	st := &nn.Steering{}
	for k, l := range s.layers {
		for h := range H {
			if !mask[k*H+h] {
				continue
			}
			v := make([]float32, dh)
			for i := range v {
				v[i] = float32(s.mean[k][h*dh+i])
			}
			st.Heads = append(st.Heads, nn.SteeredHead{Layer: l, Head: h, Value: v})
		}
	}
	return st
}

// query is a zero-shot query prepared for scoring: its prompt and first
// answer token, and its image's visual tokens (computed once).
type query struct {
	seq    nn.Sequence // prompt and the first answer token, marked
	vis    []*nn.Node
	target int
}

// prepare returns the queries of exs with their images encoded.
func (s *steerer) prepare(ctx context.Context, exs []datasets.Example) ([]query, error) {
	out := make([]query, len(exs))
	err := parallel.For(len(exs), s.workers, func(i int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		ex := &exs[i]
		toks := append(slices.Clone(ex.Prompt), ex.Answer[0])
		loss := make([]bool, len(toks))
		loss[len(toks)-1] = true
		q := query{seq: nn.Sequence{Tokens: toks, Images: ex.Images, Loss: loss}, target: ex.Answer[0]}
		if err := s.m.Check(&q.seq); err != nil {
			return fmt.Errorf("query %s: %w", ex.ID, err)
		}
		t := nn.NewTape(nil, nil)
		for j, img := range ex.Images {
			v, _ := s.m.EncodeImage(t, img, j, false, nil, nil)
			q.vis = append(q.vis, v.Tokens)
		}
		out[i] = q
		return nil
	})
	return out, err
}

// loss returns the cross-entropy of q's first answer token under the model
// steered by mask: the loss MTV's REINFORCE minimises.
func (s *steerer) loss(mask []bool, q *query) (float64, error) {
	m := *s.m // a shallow copy: same parameters, its own steering
	m.Steer = s.steering(mask)
	t := nn.NewTape(nil, nil)
	hid, _, err := m.Forward(t, &q.seq, q.vis, nil, nil)
	if err != nil {
		return 0, err
	}
	z := m.Logits(t, hid, []int{hid.Value.Rows() - 2}).Value.Data
	mx := float64(slices.Max(z))
	var sum float64
	for _, v := range z {
		sum += math.Exp(float64(v) - mx)
	}
	return mx + math.Log(sum) - float64(z[q.target]), nil
}

// losses returns loss(masks[i], qs[j]) for every pair, [mask][query].
func (s *steerer) losses(ctx context.Context, masks [][]bool, qs []query) ([][]float64, error) {
	out := make([][]float64, len(masks))
	for i := range out {
		out[i] = make([]float64, len(qs))
	}
	err := parallel.For(len(masks)*len(qs), s.workers, func(k int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		i, j := k/len(qs), k%len(qs)
		var err error
		out[i][j], err = s.loss(masks[i], &qs[j])
		return err
	})
	return out, err
}

// selection is a chosen head mask and how it was chosen.
type selection struct {
	mask    []bool
	steps   int
	metrics []Metric
}

// reinforce learns the probabilities p of independent Bernoulli heads
// (Williams 1992, as MTV uses it) on the queries qs, each mask scored by
// s.losses on one query.
func (s *steerer) reinforce(ctx context.Context, h Hyper, qs []query, rng *rand.Rand) ([]float64, []Metric, error) {
	r := reinforcer{heads: len(s.layers) * s.m.Config.Heads, steps: h.Int("reinforce_steps"),
		masks: h.Int("reinforce_masks"), lr: h.Float("reinforce_lr")}
	return r.run(len(qs), rng, func(masks [][]bool, q int) ([]float64, error) {
		ls, err := s.losses(ctx, masks, qs[q:q+1])
		if err != nil {
			return nil, err
		}
		l := make([]float64, len(masks))
		for i := range l {
			l[i] = ls[i][0]
		}
		return l, nil
	})
}

// reinforcer is REINFORCE over heads independent Bernoulli heads: θ starts
// at −1 (p ≈ 0.27); each of steps steps takes one of n items in a
// shuffled order, samples masks masks from p = sigmoid(θ) (clamped to
// [10⁻³, 1 − 10⁻³]), standardises their losses ℓ̂ = (ℓ − mean)/(sd +
// 10⁻³), and takes an Adam step at lr on Σ ℓ̂·log Pr(z), whose gradient in
// θ is Σ ℓ̂·(z − p).
type reinforcer struct {
	heads, steps, masks int
	lr                  float64
}

// run returns the learned probabilities and the mean loss of every step;
// loss scores masks on item q.
func (r reinforcer) run(n int, rng *rand.Rand, loss func(masks [][]bool, q int) ([]float64, error)) ([]float64, []Metric, error) {
	theta := make([]float64, r.heads)
	for i := range theta {
		theta[i] = -1
	}
	adam := newAdam(r.heads, r.lr)
	var metrics []Metric
	order := rng.Perm(n)
	for t := range r.steps {
		if t > 0 && t%n == 0 {
			order = rng.Perm(n)
		}
		p := probs(theta)
		masks := make([][]bool, r.masks)
		for i := range masks {
			masks[i] = sample(p, rng)
		}
		l, err := loss(masks, order[t%n])
		if err != nil {
			return nil, nil, err
		}
		mu, sd := meanSD(l)
		g := make([]float64, r.heads)
		for i, z := range masks {
			w := (l[i] - mu) / (sd + 1e-3)
			for j, on := range z {
				g[j] += float64(w * scoreBernoulli(on, p[j]))
			}
		}
		adam.step(theta, g)
		metrics = append(metrics, Metric{Step: t + 1, Name: "reinforce_loss", Value: mu})
	}
	return probs(theta), metrics, nil
}

// scoreBernoulli returns d/dθ log Pr(z) for z ~ Bernoulli(sigmoid(θ)) at
// p = sigmoid(θ): z − p.
func scoreBernoulli(z bool, p float64) float64 {
	if z {
		return 1 - p
	}
	return -p
}

// selectPublic is DP-MTV's public head selection (and MTV's): REINFORCE on
// the first half of the public queries, then the best of final_masks
// masks sampled from the learned distribution by mean loss on the second
// half. It reads no private data.
func (s *steerer) selectPublic(ctx context.Context, job *Job, pub []datasets.Example) (selection, error) {
	qs, err := s.prepare(ctx, pub)
	if err != nil {
		return selection{}, err
	}
	half := len(qs) / 2
	rng := newRand(job.Seed, StreamReinforce)
	p, metrics, err := s.reinforce(ctx, job.Hyper, qs[:half], rng)
	if err != nil {
		return selection{}, err
	}
	masks := make([][]bool, job.Hyper.Int("final_masks"))
	sel := newRand(job.Seed, StreamSelect)
	for i := range masks {
		masks[i] = sample(p, sel)
	}
	ls, err := s.losses(ctx, masks, qs[half:])
	if err != nil {
		return selection{}, err
	}
	best, bestLoss := 0, math.Inf(1)
	for i, l := range ls {
		if m, _ := meanSD(l); m < bestLoss {
			best, bestLoss = i, m
		}
	}
	return selection{mask: masks[best], steps: job.Hyper.Int("reinforce_steps"), metrics: metrics}, nil
}

// selectPrivate is DP-MTV's private head selection: REINFORCE on the
// queries (first N demonstrations and the query of each) of the
// val_records private episodes after the K chunks in the partition; then
// candidates masks sampled from the learned distribution, the top most
// frequent distinct ones kept (ties: the first sampled first), each
// scored by the sum over those queries of the loss clipped to [0, B]; the
// Gumbel mechanism picks one (gumbelArgmax) at ε₂ = eps2 with score
// sensitivity (N+1)·B, the most one episode's queries can move a score.
func (s *steerer) selectPrivate(ctx context.Context, job *Job, setup *mtvSetup, K int, eps2 float64) (selection, error) {
	h := job.Hyper
	var exs []datasets.Example
	for _, i := range setup.order[K : K+h.Int("val_records")] {
		ep := datasets.FirstShots(&job.Data.Private[i], setup.shots)
		exs = append(exs, datasets.Queries(&ep)...)
	}
	qs, err := s.prepare(ctx, exs)
	if err != nil {
		return selection{}, err
	}
	rng := newRand(job.Seed, StreamReinforce)
	p, metrics, err := s.reinforce(ctx, h, qs, rng)
	if err != nil {
		return selection{}, err
	}
	cands := frequentMasks(p, h.Int("candidates"), h.Int("top"), newRand(job.Seed, StreamSelect))
	ls, err := s.losses(ctx, cands, qs)
	if err != nil {
		return selection{}, err
	}
	B := h.Float("loss_clip")
	scores := make([]float64, len(cands))
	for i, l := range ls {
		for _, v := range l {
			scores[i] += min(max(v, 0), B)
		}
	}
	sens := float64(setup.shots+1) * B
	pick := gumbelArgmax(scores, sens, eps2, newRand(job.Seed, StreamSelect+"/gumbel"))
	return selection{mask: cands[pick], steps: h.Int("reinforce_steps"), metrics: metrics}, nil
}

// gumbelArgmax returns argmax_j (−scores[j] + G_j), G_j independent
// Gumbel(0, 2Δ/ε) draws: the exponential mechanism with utility −score of
// sensitivity Δ, ε-DP (McSherry & Talwar 2007; the Gumbel-max form of
// Durfee & Rogers 2019), choosing j with probability proportional to
// exp(−ε·scores[j]/(2Δ)). ε = +Inf returns the lowest score (the first of
// ties).
func gumbelArgmax(scores []float64, sens, eps float64, rng *rand.Rand) int {
	beta := 0.0
	if !math.IsInf(eps, 1) {
		beta = 2 * sens / eps
	}
	best, bestV := 0, math.Inf(-1)
	for j, s := range scores {
		v := -s
		if beta > 0 {
			u := rng.Float64()
			for u == 0 {
				u = rng.Float64()
			}
			v += float64(-beta * math.Log(-math.Log(u)))
		}
		if v > bestV {
			best, bestV = j, v
		}
	}
	return best
}

// frequentMasks samples n masks from p and returns the top most frequent
// distinct ones, most frequent first, ties in order of first appearance.
func frequentMasks(p []float64, n, top int, rng *rand.Rand) [][]bool {
	type cand struct {
		mask  []bool
		count int
		first int
	}
	byKey := map[string]*cand{}
	var all []*cand
	for i := range n {
		z := sample(p, rng)
		k := fmt.Sprint(z)
		if c, ok := byKey[k]; ok {
			c.count++
			continue
		}
		c := &cand{mask: z, count: 1, first: i}
		byKey[k] = c
		all = append(all, c)
	}
	slices.SortStableFunc(all, func(a, b *cand) int { return cmp.Compare(b.count, a.count) })
	out := make([][]bool, 0, top)
	for _, c := range all[:min(top, len(all))] {
		out = append(out, c.mask)
	}
	return out
}

// probs returns sigmoid(θ) clamped to [10⁻³, 1 − 10⁻³].
func probs(theta []float64) []float64 {
	p := make([]float64, len(theta))
	for i, t := range theta {
		p[i] = min(max(1/(1+math.Exp(-t)), 1e-3), 1-1e-3)
	}
	return p
}

// sample draws a mask with independent heads on with probabilities p.
func sample(p []float64, rng *rand.Rand) []bool {
	z := make([]bool, len(p))
	for i, q := range p {
		z[i] = rng.Float64() < q
	}
	return z
}

func meanSD(x []float64) (mean, sd float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		sd += float64((v - mean) * (v - mean))
	}
	if len(x) > 1 {
		sd = math.Sqrt(sd / float64(len(x)-1))
	}
	return mean, sd
}

// adam is Adam (Kingma & Ba, "Adam: A Method for Stochastic
// Optimization", ICLR 2015, Algorithm 1; β₁ = 0.9, β₂ = 0.999,
// ε = 10⁻⁸) on a float64 vector.
type adam struct {
	lr   float64
	m, v []float64
	t    int
}

func newAdam(n int, lr float64) *adam {
	return &adam{lr: lr, m: make([]float64, n), v: make([]float64, n)}
}

func (a *adam) step(x, g []float64) {
	const b1, b2, eps = 0.9, 0.999, 1e-8
	a.t++
	c1, c2 := 1-math.Pow(b1, float64(a.t)), 1-math.Pow(b2, float64(a.t))
	for i := range x {
		a.m[i] = float64(b1*a.m[i]) + float64((1-b1)*g[i])
		a.v[i] = float64(b2*a.v[i]) + float64((1-b2)*g[i]*g[i])
		x[i] -= a.lr * (a.m[i] / c1) / (math.Sqrt(a.v[i]/c2) + eps)
	}
}
