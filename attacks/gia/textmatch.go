// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/repro-dp/repro/nn"
)

// TextGrad returns the GradFunc of TinyMLLM m on the sequence s with the
// input embeddings of the tokens at the positions at replaced by the
// candidate x, len(at)×Width values (row k the embedding at position
// at[k], in place of lm.tok's row; the position embedding is added as
// always): the relaxed tokens of a text gradient-matching attack
// (RecoverText). s's image, its other tokens and its loss mask are the
// attacker's knowledge; gtheta is over layout l and gx is the gradient
// with respect to x. vt, when not nil, is the visual-token transform. It
// returns an error if a position in at is out of range, repeated, the
// <image> placeholder or a loss target (the targets' ids enter the loss
// as labels, which a relaxed embedding does not give), or if lm.tok is in
// l: a trainable embedding has its own attack (BagOfWords), and the
// gradient of lm.tok through relaxed inputs is not modelled.
func TextGrad(m *nn.TinyMLLM, l *nn.Layout, s nn.Sequence, at []int, vt nn.VisualTransform) (GradFunc, error) {
	if l.Index(m.Tok) >= 0 {
		return nil, fmt.Errorf("gia: lm.tok is trainable; its gradient rows give the bag of words (BagOfWords)")
	}
	if err := m.Check(&s); err != nil {
		return nil, fmt.Errorf("gia: %w", err)
	}
	var rows, targets []int
	seen := map[int]bool{}
	for _, p := range at {
		switch {
		case p < 0 || p >= len(s.Tokens):
			return nil, fmt.Errorf("gia: position %d outside the sequence of %d tokens", p, len(s.Tokens))
		case seen[p]:
			return nil, fmt.Errorf("gia: position %d repeated", p)
		case s.Tokens[p] == nn.TokenImage:
			return nil, fmt.Errorf("gia: position %d is the <image> placeholder", p)
		case s.Loss != nil && s.Loss[p]:
			return nil, fmt.Errorf("gia: position %d is a loss target", p)
		}
		seen[p] = true
	}
	w := m.Config.Width
	base := make([]float32, len(s.Tokens)*w)
	for i, id := range s.Tokens {
		if id != nn.TokenImage {
			copy(base[i*w:(i+1)*w], m.Tok.Data[id*w:(id+1)*w])
		}
	}
	at = slices.Clone(at)
	return func(x, gtheta, gx []float32) (float64, error) {
		if len(x) != len(at)*w {
			return 0, fmt.Errorf("gia: %d relaxed values, want %d×%d", len(x), len(at), w)
		}
		t := gradTape(l, gtheta)
		e := slices.Clone(base)
		for k, p := range at {
			copy(e[p*w:(p+1)*w], x[k*w:(k+1)*w])
		}
		in := t.Input(nn.Tensor{Shape: []int{len(s.Tokens), w}, Data: e}, gx != nil)
		hid, pos, err := m.ForwardEmbeds(t, &s, in, nil, nil, vt)
		if err != nil {
			return 0, err
		}
		if rows == nil {
			for i, on := range s.Loss {
				if on {
					rows = append(rows, pos[i]-1)
					targets = append(targets, s.Tokens[i])
				}
			}
			if len(rows) == 0 {
				return 0, fmt.Errorf("gia: the sequence has no loss positions")
			}
		}
		loss := t.CrossEntropy(m.Logits(t, hid, slices.Clone(rows)), targets, nil)
		t.Backward(loss)
		if gx != nil {
			clear(gx)
			if in.Grad != nil {
				for k, p := range at {
					copy(gx[k*w:(k+1)*w], in.Grad[p*w:(p+1)*w])
				}
			}
		}
		return float64(loss.Value.Data[0]), nil
	}, nil
}

// TextOptions configures RecoverText. The zero value means the defaults.
type TextOptions struct {
	// Iterations of Adam per restart; default 300.
	Iterations int
	// Restarts from independent random logits; the restart whose decoded
	// tokens match best is kept. Default 4.
	Restarts int
	// LR is Adam's step size on the logits; default 0.1.
	LR float64
	// Init, when not nil, is the attacker's prior over tokens at each
	// unknown position (len(at) rows of len(Vocab) probabilities, for
	// example the public prompts' token frequencies): the logits start at
	// its logarithm plus the restart's noise. nil: noise alone.
	Init [][]float64
	// Noise is the standard deviation of the logits' random start;
	// default 1.
	Noise float64
	// Sweeps bounds the discrete refinement of each restart's decoded
	// tokens: a sweep tries, at each position in turn, the TopK
	// candidates whose swap the distance's gradient in the embeddings
	// ranks best (the first-order change ⟨∂D/∂e_k, tok_j − e_k⟩, as
	// HotFlip and LAMP's discrete steps rank them) and keeps the swap
	// that lowers the exact distance most; it stops after a sweep that
	// changes nothing. Default 4; negative: no refinement.
	Sweeps int
	// TopK is the number of candidates tried per position and sweep;
	// default 32.
	TopK int
	// Seed seeds the starts.
	Seed uint64
}

func (o *TextOptions) withDefaults() TextOptions {
	var r TextOptions
	if o != nil {
		r = *o
	}
	r.Iterations = cmp.Or(r.Iterations, 300)
	r.Restarts = cmp.Or(r.Restarts, 4)
	r.LR = cmp.Or(r.LR, 0.1)
	r.Noise = cmp.Or(r.Noise, 1)
	r.Sweeps = cmp.Or(r.Sweeps, 4)
	r.TopK = cmp.Or(r.TopK, 32)
	return r
}

// A TextOutcome is what RecoverText recovered at the unknown positions.
type TextOutcome struct {
	// Tokens are the decoded tokens, one per unknown position.
	Tokens []int
	// Match is the gradient-matching distance of the decoded tokens
	// (their own embeddings, not the relaxed ones); Relaxed that of the
	// relaxed embeddings at the end of the kept restart.
	Match, Relaxed float64
	// Elapsed is the attack's wall time.
	Elapsed time.Duration
}

// RecoverText recovers the tokens of the sequence s at the positions at
// from the update g (over layout l) that TinyMLLM m released for s alone,
// by gradient matching over relaxed token embeddings, in the manner of
// TAG (Deng et al., "TAG: Gradient Attack on Transformer-based Language
// Models", Findings of EMNLP 2021) and LAMP (Balunović et al., "LAMP:
// Extracting Text from Gradients with Language Model Priors", NeurIPS
// 2022): each unknown position k holds a softmax mixture
// e_k = Σ_v softmax(z_k)_v · tok[vocab[v]] of the candidate tokens vocab'
// embeddings (in the convex hull of the table, where a token embedding
// lies), and the logits z minimise GradientMatch's cosine distance between
// the LoRA gradient of the relaxed sequence (TextGrad) and g by Adam. Its
// gradient in z is the Hessian-vector product of GradientMatch in the
// embeddings (central difference of two first-order input gradients)
// times the softmax's Jacobian. Each position is then decoded to the
// candidate whose embedding is nearest to e_k (Euclidean), the decoded
// sequence is scored by the same distance, and the restart with the
// lowest decoded distance is kept.
//
// Threat model: the attacker knows the weights, the release (s alone, a
// batch of one), the sequence's length, where the image sits and the
// image itself, the loss mask and the answer tokens (the loss targets);
// it recovers the other tokens (the prompt's, at), among the candidates
// vocab (nil: every id but the <image> placeholder). The model's
// parameters are perturbed and restored during the attack, so m must not
// be used concurrently.
func RecoverText(m *nn.TinyMLLM, l *nn.Layout, g []float32, s nn.Sequence, at, vocab []int, vt nn.VisualTransform, opt *TextOptions) (*TextOutcome, error) {
	start := time.Now()
	o := opt.withDefaults()
	if vocab == nil {
		for id := range m.Config.Vocab {
			if id != nn.TokenImage {
				vocab = append(vocab, id)
			}
		}
	}
	if len(at) == 0 || len(vocab) == 0 {
		return nil, fmt.Errorf("gia: no positions or no candidate tokens to recover")
	}
	if o.Init != nil && len(o.Init) != len(at) {
		return nil, fmt.Errorf("gia: prior over %d positions, want %d", len(o.Init), len(at))
	}
	f, err := TextGrad(m, l, s, at, vt)
	if err != nil {
		return nil, err
	}
	gm, err := NewGradientMatch(l, f, g)
	if err != nil {
		return nil, err
	}
	w, n, nv := m.Config.Width, len(at), len(vocab)
	tab := make([]float32, nv*w) // the candidates' embeddings
	for j, id := range vocab {
		if id < 0 || id >= m.Config.Vocab {
			return nil, fmt.Errorf("gia: candidate token %d outside the vocabulary", id)
		}
		copy(tab[j*w:(j+1)*w], m.Tok.Data[id*w:(id+1)*w])
	}
	rm := &relaxedMix{tab: tab, w: w, nv: nv, n: n, obj: gm.Objective}
	rng := rand.New(rand.NewPCG(o.Seed, 0x746578))
	out := &TextOutcome{Match: math.Inf(1)}
	for range o.Restarts {
		z := make([]float64, n*nv)
		for k := range n {
			for j := range nv {
				v := o.Noise * rng.NormFloat64()
				if o.Init != nil {
					if len(o.Init[k]) != nv {
						return nil, fmt.Errorf("gia: prior over %d tokens, want %d", len(o.Init[k]), nv)
					}
					v += math.Log(max(o.Init[k][j], 1e-6))
				}
				z[k*nv+j] = v
			}
		}
		relaxed, err := adam(z, o.Iterations, o.LR, rm.objective)
		if err != nil {
			return nil, err
		}
		idx := rm.decode(z)
		d, err := rm.refine(gm, idx, o.Sweeps, o.TopK)
		if err != nil {
			return nil, err
		}
		if d < out.Match {
			out.Match, out.Relaxed = d, relaxed
			out.Tokens = make([]int, n)
			for k, j := range idx {
				out.Tokens[k] = vocab[j]
			}
		}
	}
	out.Elapsed = time.Since(start)
	return out, nil
}

// relaxedMix is the softmax parametrisation of RecoverText: n positions,
// each a mixture of the nv candidate embeddings tab (nv×w).
type relaxedMix struct {
	tab       []float32
	w, nv, n  int
	obj       Objective
	p         []float64
	e, ge, gp []float32
}

// mix writes the softmax probabilities of the logits z to rm.p and the
// mixtures to rm.e.
func (rm *relaxedMix) mix(z []float64) {
	w, nv := rm.w, rm.nv
	if rm.p == nil {
		rm.p, rm.e, rm.ge = make([]float64, len(z)), make([]float32, rm.n*w), make([]float32, rm.n*w)
	}
	for k := range rm.n {
		softmax(rm.p[k*nv:(k+1)*nv], z[k*nv:(k+1)*nv])
		e := make([]float64, w)
		for j, pj := range rm.p[k*nv : (k+1)*nv] {
			for d, t := range rm.tab[j*w : (j+1)*w] {
				e[d] += pj * float64(t)
			}
		}
		for d := range w {
			rm.e[k*w+d] = float32(e[d])
		}
	}
}

// objective returns the matching distance at the logits z and writes its
// gradient in z to gz: with s_j = ⟨tab_j, ∂D/∂e_k⟩, ∂D/∂z_kj = p_kj·(s_j −
// Σ_i p_ki·s_i).
func (rm *relaxedMix) objective(z, gz []float64) (float64, error) {
	rm.mix(z)
	v, err := rm.obj(rm.e, rm.ge)
	if err != nil {
		return 0, err
	}
	w, nv := rm.w, rm.nv
	s := make([]float64, nv)
	for k := range rm.n {
		ge := rm.ge[k*w : (k+1)*w]
		p := rm.p[k*nv : (k+1)*nv]
		var ps float64
		for j := range nv {
			var d float64
			for c, t := range rm.tab[j*w : (j+1)*w] {
				d += float64(t) * float64(ge[c])
			}
			s[j] = d
			ps += p[j] * d
		}
		for j := range nv {
			gz[k*nv+j] = p[j] * (s[j] - ps)
		}
	}
	return v, nil
}

// decode returns, for each position, the index of the candidate whose
// embedding is nearest to the mixture at the logits z.
func (rm *relaxedMix) decode(z []float64) []int {
	rm.mix(z)
	w := rm.w
	idx := make([]int, rm.n)
	for k := range rm.n {
		e := rm.e[k*w : (k+1)*w]
		best, bd := 0, math.Inf(1)
		for j := range rm.nv {
			var d float64
			for c, t := range rm.tab[j*w : (j+1)*w] {
				x := float64(t) - float64(e[c])
				d += x * x
			}
			if d < bd {
				best, bd = j, d
			}
		}
		idx[k] = best
	}
	return idx
}

// embed returns the embeddings of the candidates idx, n×w.
func (rm *relaxedMix) embed(idx []int) []float32 {
	w := rm.w
	emb := make([]float32, len(idx)*w)
	for k, j := range idx {
		copy(emb[k*w:(k+1)*w], rm.tab[j*w:(j+1)*w])
	}
	return emb
}

// refine improves the decoded candidates idx in place by at most sweeps
// sweeps of RecoverText's discrete refinement (TextOptions.Sweeps) with
// topK candidates per position, and returns their distance.
func (rm *relaxedMix) refine(gm *GradientMatch, idx []int, sweeps, topK int) (float64, error) {
	w := rm.w
	emb := rm.embed(idx)
	cur, err := gm.Distance(emb)
	if err != nil || sweeps < 0 {
		return cur, err
	}
	ge := make([]float32, len(emb))
	type cand struct {
		j int
		s float64
	}
	cs := make([]cand, rm.nv)
	for range sweeps {
		if _, err := gm.Objective(emb, ge); err != nil {
			return 0, err
		}
		changed := false
		for k := range rm.n {
			g := ge[k*w : (k+1)*w]
			for j := range rm.nv {
				var d float64
				for c, t := range rm.tab[j*w : (j+1)*w] {
					d += float64(t) * float64(g[c])
				}
				cs[j] = cand{j, d}
			}
			slices.SortStableFunc(cs, func(a, b cand) int { return cmp.Compare(a.s, b.s) })
			e := emb[k*w : (k+1)*w]
			best, bestD := idx[k], cur
			tried := 0
			for _, c := range cs {
				if tried == topK {
					break
				}
				if c.j == idx[k] {
					continue
				}
				tried++
				copy(e, rm.tab[c.j*w:(c.j+1)*w])
				d, err := gm.Distance(emb)
				if err != nil {
					return 0, err
				}
				if d < bestD {
					best, bestD = c.j, d
				}
			}
			copy(e, rm.tab[best*w:(best+1)*w])
			if best != idx[k] {
				idx[k], cur, changed = best, bestD, true
			}
		}
		if !changed {
			break
		}
	}
	return cur, nil
}

// softmax writes the softmax of z to p.
func softmax(p, z []float64) {
	m := math.Inf(-1)
	for _, v := range z {
		m = max(m, v)
	}
	var s float64
	for i, v := range z {
		p[i] = math.Exp(v - m)
		s += p[i]
	}
	for i := range p {
		p[i] /= s
	}
}

// adam minimises obj from x in place with Adam (Kingma & Ba 2015,
// Algorithm 1, β₁ = 0.9, β₂ = 0.999, ε = 1e-8), unconstrained, and returns
// the objective at the final x.
func adam(x []float64, iters int, lr float64, obj func(x, grad []float64) (float64, error)) (float64, error) {
	const b1, b2, eps = 0.9, 0.999, 1e-8
	m, v, g := make([]float64, len(x)), make([]float64, len(x)), make([]float64, len(x))
	for it := 1; it <= iters; it++ {
		if _, err := obj(x, g); err != nil {
			return 0, err
		}
		c1, c2 := 1-math.Pow(b1, float64(it)), 1-math.Pow(b2, float64(it))
		for i, d := range g {
			m[i] = b1*m[i] + (1-b1)*d
			v[i] = b2*v[i] + (1-b2)*d*d
			x[i] -= lr * (m[i] / c1) / (math.Sqrt(v[i]/c2) + eps)
		}
	}
	return obj(x, g)
}
