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
		loss, err := answerLoss(t, m, hid, pos, &s, &rows, &targets)
		if err != nil {
			return 0, err
		}
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
	// Iterations of Adam per restart; default 200.
	Iterations int
	// Restarts from independent random logits; the restart whose decoded
	// tokens match best is kept and refined. Default 4.
	Restarts int
	// LR is Adam's step size on the logits; default 0.3 (chosen on
	// fashion-vqa-tune's questions about public images,
	// docs/gia.md).
	LR float64
	// Init, when not nil, is the attacker's prior over tokens at each
	// unknown position (len(at) rows of len(Vocab) probabilities, for
	// example the public prompts' token frequencies): the logits start at
	// its logarithm plus the restart's noise. nil: noise alone.
	Init [][]float64
	// Noise is the standard deviation of the logits' random start;
	// default 1.
	Noise float64
	// Sweeps bounds the discrete refinement of the kept restart's
	// decoded tokens, coordinate descent on the exact distance: a sweep
	// tries, at each position in turn, every candidate (or the TopK that
	// the distance's gradient in the embeddings ranks best, the
	// first-order change ⟨∂D/∂e_k, tok_j − e_k⟩, as HotFlip and LAMP's
	// discrete steps rank them) and keeps the one with the lowest
	// distance; it stops after a sweep that changes nothing. Default 4;
	// negative: no refinement.
	Sweeps int
	// TopK is the number of candidates tried per position and sweep;
	// 0: every candidate.
	TopK int
	// Reorder bounds the token-order moves of each round of the
	// discrete refinement, LAMP's discrete transformations (Balunović
	// et al., NeurIPS 2022, §4): after each substitution sweep, every
	// swap of two positions, every move of one token to another
	// position and every move of a span of two or more tokens to
	// another offset (the tokens between shifting over) is scored by
	// the exact distance, and the best is applied while it lowers the
	// distance, at most Reorder times; a round that changes nothing
	// ends the refinement (Sweeps bounds the rounds). Default 8;
	// negative: no moves (substitutions alone).
	Reorder int
	// Embed optimises the embeddings themselves (TAG's relaxation: any
	// vector of the embedding space at each position), from the table's
	// mean plus Noise times its per-coordinate standard deviation,
	// instead of softmax mixtures of the candidates (Init is then
	// ignored).
	Embed bool
	// PerBlock averages the distance over the released tensors
	// (GradientMatch.PerBlock).
	PerBlock bool
	// L2 matches by the relative squared ℓ₂ distance instead of the
	// cosine (GradientMatch.L2).
	L2 bool
	// Entropy, when positive, adds its multiple of the mean entropy of
	// the positions' softmax distributions to the continuous phase's
	// objective, its weight ramped linearly from 0 at the first
	// iteration to Entropy at the last, so that the mixtures end near
	// single tokens (ignored with Embed).
	Entropy float64
	// Seed seeds the starts.
	Seed uint64
}

func (o *TextOptions) withDefaults() TextOptions {
	var r TextOptions
	if o != nil {
		r = *o
	}
	r.Iterations = cmp.Or(r.Iterations, 200)
	r.Restarts = cmp.Or(r.Restarts, 4)
	r.LR = cmp.Or(r.LR, 0.3)
	r.Noise = cmp.Or(r.Noise, 1)
	r.Sweeps = cmp.Or(r.Sweeps, 4)
	r.Reorder = cmp.Or(r.Reorder, 8)
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
	// Evals counts the model's first-order passes (forward and
	// backward, two per Hessian-vector product), Moves the token-order
	// moves applied.
	Evals, Moves int
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
// times the softmax's Jacobian. The logits start at the attacker's prior
// (TextOptions.Init, for example PositionPrior) plus noise. Each
// position is then decoded to the candidate whose embedding is nearest to
// e_k (Euclidean), the decoded sequence is scored by the same distance,
// the restart with the lowest decoded distance is kept, and its tokens
// are refined by rounds of coordinate descent on the exact distance and
// LAMP's token-order moves (TextOptions.Sweeps and Reorder; LAMP
// alternates continuous and discrete steps, here the discrete ones come
// after the continuous phase).
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
		vocab = TextVocab(m)
	}
	if len(at) == 0 || len(vocab) == 0 {
		return nil, fmt.Errorf("gia: no positions or no candidate tokens to recover")
	}
	if o.Init != nil && len(o.Init) != len(at) {
		return nil, fmt.Errorf("gia: prior over %d positions, want %d", len(o.Init), len(at))
	}
	f0, err := TextGrad(m, l, s, at, vt)
	if err != nil {
		return nil, err
	}
	out := &TextOutcome{Match: math.Inf(1)}
	f := func(x, gtheta, gx []float32) (float64, error) {
		out.Evals++
		return f0(x, gtheta, gx)
	}
	gm, err := NewGradientMatch(l, f, g)
	if err != nil {
		return nil, err
	}
	gm.PerBlock, gm.L2 = o.PerBlock, o.L2
	w, n, nv := m.Config.Width, len(at), len(vocab)
	tab := make([]float32, nv*w) // the candidates' embeddings
	for j, id := range vocab {
		if id < 0 || id >= m.Config.Vocab {
			return nil, fmt.Errorf("gia: candidate token %d outside the vocabulary", id)
		}
		copy(tab[j*w:(j+1)*w], m.Tok.Data[id*w:(id+1)*w])
	}
	rm := &relaxedMix{tab: tab, w: w, nv: nv, n: n, obj: gm.Objective, embed: o.Embed}
	mu, sd := tableMoments(tab, w)
	rng := rand.New(rand.NewPCG(o.Seed, 0x746578))
	var best []int
	for range o.Restarts {
		var z []float64
		if o.Embed {
			z = make([]float64, n*w)
			for i := range z {
				z[i] = mu[i%w] + float64(o.Noise*sd[i%w]*rng.NormFloat64())
			}
		} else {
			z = make([]float64, n*nv)
		}
		for k := range n {
			if o.Embed {
				break
			}
			for j := range nv {
				v := float64(o.Noise * rng.NormFloat64())
				if o.Init != nil {
					if len(o.Init[k]) != nv {
						return nil, fmt.Errorf("gia: prior over %d tokens, want %d", len(o.Init[k]), nv)
					}
					v += math.Log(max(o.Init[k][j], 1e-6))
				}
				z[k*nv+j] = v
			}
		}
		it := 0
		_, err := adam(z, o.Iterations, o.LR, func(z, gz []float64) (float64, error) {
			rm.ent = o.Entropy * float64(it) / float64(max(o.Iterations, 1))
			it++
			return rm.objective(z, gz)
		})
		if err != nil {
			return nil, err
		}
		rm.mix(z)
		relaxed, err := gm.Distance(rm.e)
		if err != nil {
			return nil, err
		}
		idx := rm.decode(z)
		d, err := gm.Distance(rm.rows(idx))
		if err != nil {
			return nil, err
		}
		if d < out.Match {
			out.Match, out.Relaxed, best = d, relaxed, idx
		}
	}
	out.Match, out.Moves, err = rm.refine(gm, best, o.Sweeps, o.TopK, o.Reorder)
	if err != nil {
		return nil, err
	}
	out.Tokens = make([]int, n)
	for k, j := range best {
		out.Tokens[k] = vocab[j]
	}
	out.Elapsed = time.Since(start)
	return out, nil
}

// PromptPositions returns the positions of s's prompt tokens that the
// text attack recovers (RecoverText's at): every position before the
// first loss target but the <image> placeholder.
func PromptPositions(s nn.Sequence) []int {
	var at []int
	for i, id := range s.Tokens {
		if s.Loss != nil && s.Loss[i] {
			break
		}
		if id != nn.TokenImage {
			at = append(at, i)
		}
	}
	return at
}

// tableMoments returns the per-coordinate mean and standard deviation of
// the rows of tab (w columns).
func tableMoments(tab []float32, w int) (mu, sd []float64) {
	mu, sd = make([]float64, w), make([]float64, w)
	rows := float64(len(tab) / w)
	for i, v := range tab {
		mu[i%w] += float64(v) / rows
	}
	for i, v := range tab {
		d := float64(v) - mu[i%w]
		sd[i%w] += d * d / rows
	}
	for c := range sd {
		sd[c] = math.Sqrt(sd[c])
	}
	return mu, sd
}

// TextVocab returns RecoverText's default candidates: every token id of
// m's vocabulary but the <image> placeholder.
func TextVocab(m *nn.TinyMLLM) []int {
	var vocab []int
	for id := range m.Config.Vocab {
		if id != nn.TokenImage {
			vocab = append(vocab, id)
		}
	}
	return vocab
}

// relaxedMix is the relaxation of RecoverText: n positions, each a
// softmax mixture of the nv candidate embeddings tab (nv×w) with logits
// z, or with embed the embeddings z themselves.
type relaxedMix struct {
	tab      []float32
	w, nv, n int
	obj      Objective
	embed    bool
	ent      float64 // the weight of the mean entropy of p
	p        []float64
	e, ge    []float32
}

// mix writes the relaxed embeddings at z to rm.e (and the softmax
// probabilities to rm.p).
func (rm *relaxedMix) mix(z []float64) {
	w, nv := rm.w, rm.nv
	if rm.e == nil {
		rm.p, rm.e, rm.ge = make([]float64, rm.n*nv), make([]float32, rm.n*w), make([]float32, rm.n*w)
	}
	if rm.embed {
		for i, v := range z {
			rm.e[i] = float32(v)
		}
		return
	}
	for k := range rm.n {
		softmax(rm.p[k*nv:(k+1)*nv], z[k*nv:(k+1)*nv])
		e := make([]float64, w)
		for j, pj := range rm.p[k*nv : (k+1)*nv] {
			for d, t := range rm.tab[j*w : (j+1)*w] {
				e[d] += float64(pj * float64(t))
			}
		}
		for d := range w {
			rm.e[k*w+d] = float32(e[d])
		}
	}
}

// objective returns the matching distance at the logits z and writes its
// gradient in z to gz: with s_j = ⟨tab_j, ∂D/∂e_k⟩, ∂D/∂z_kj = p_kj·(s_j −
// Σ_i p_ki·s_i); plus rm.ent times the mean over positions of the
// entropy of p_k.
func (rm *relaxedMix) objective(z, gz []float64) (float64, error) {
	rm.mix(z)
	v, err := rm.obj(rm.e, rm.ge)
	if err != nil {
		return 0, err
	}
	if rm.embed {
		for i, g := range rm.ge {
			gz[i] = float64(g)
		}
		return v, nil
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
				d += float64(float64(t) * float64(ge[c]))
			}
			s[j] = d
			ps += float64(p[j] * d)
		}
		for j := range nv {
			gz[k*nv+j] = p[j] * (s[j] - ps)
		}
		if rm.ent > 0 {
			// H = −Σ p log p; ∂H/∂z_j = −p_j·(log p_j + H).
			var h float64
			for _, pj := range p {
				if pj > 0 {
					h -= float64(pj * math.Log(pj))
				}
			}
			c := rm.ent / float64(rm.n)
			v += float64(c * h)
			for j, pj := range p {
				if pj > 0 {
					gz[k*nv+j] -= float64(c * pj * (math.Log(pj) + h))
				}
			}
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
				d += float64(x * x)
			}
			if d < bd {
				best, bd = j, d
			}
		}
		idx[k] = best
	}
	return idx
}

// rows returns the embeddings of the candidates idx, n×w.
func (rm *relaxedMix) rows(idx []int) []float32 {
	w := rm.w
	emb := make([]float32, len(idx)*w)
	for k, j := range idx {
		copy(emb[k*w:(k+1)*w], rm.tab[j*w:(j+1)*w])
	}
	return emb
}

// refine improves the decoded candidates idx in place by at most sweeps
// rounds of RecoverText's discrete refinement (TextOptions.Sweeps and
// Reorder): a substitution sweep with topK candidates per position, then
// at most reorder token-order moves; it stops after a round that changes
// nothing, and returns the distance of idx and the moves applied.
func (rm *relaxedMix) refine(gm *GradientMatch, idx []int, sweeps, topK, reorder int) (float64, int, error) {
	cur, err := gm.Distance(rm.rows(idx))
	if err != nil || sweeps < 0 {
		return cur, 0, err
	}
	moves := 0
	for range sweeps {
		d, changed, err := rm.substitute(gm, idx, cur, topK)
		if err != nil {
			return 0, 0, err
		}
		cur = d
		for range max(reorder, 0) {
			d, ok, err := rm.reorder(gm, idx, cur)
			if err != nil {
				return 0, 0, err
			}
			if !ok {
				break
			}
			cur, changed = d, true
			moves++
		}
		if !changed {
			break
		}
	}
	return cur, moves, nil
}

// substitute runs one sweep of coordinate descent over the candidates at
// each position of idx (in place; topK: those the gradient ranks best,
// 0: all) from the distance cur, and returns the new distance and
// whether idx changed.
func (rm *relaxedMix) substitute(gm *GradientMatch, idx []int, cur float64, topK int) (float64, bool, error) {
	w := rm.w
	emb := rm.rows(idx)
	ge := make([]float32, len(emb))
	if topK > 0 {
		if _, err := gm.Objective(emb, ge); err != nil {
			return 0, false, err
		}
	}
	type cand struct {
		j int
		s float64
	}
	cs := make([]cand, rm.nv)
	changed := false
	for k := range rm.n {
		g := ge[k*w : (k+1)*w]
		for j := range rm.nv {
			var d float64
			if topK > 0 {
				for c, t := range rm.tab[j*w : (j+1)*w] {
					d += float64(float64(t) * float64(g[c]))
				}
			}
			cs[j] = cand{j, d}
		}
		slices.SortStableFunc(cs, func(a, b cand) int { return cmp.Compare(a.s, b.s) })
		e := emb[k*w : (k+1)*w]
		best, bestD := idx[k], cur
		tried := 0
		for _, c := range cs {
			if topK > 0 && tried == topK {
				break
			}
			if c.j == idx[k] {
				continue
			}
			tried++
			copy(e, rm.tab[c.j*w:(c.j+1)*w])
			d, err := gm.Distance(emb)
			if err != nil {
				return 0, false, err
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
	return cur, changed, nil
}

// reorder scores every token-order move of idx (orderMoves) by the exact
// distance and applies the best in place if it is below cur; it returns
// the distance of idx and whether it moved.
func (rm *relaxedMix) reorder(gm *GradientMatch, idx []int, cur float64) (float64, bool, error) {
	var best []int
	bestD := cur
	for _, c := range orderMoves(idx) {
		d, err := gm.Distance(rm.rows(c))
		if err != nil {
			return 0, false, err
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	if best == nil {
		return cur, false, nil
	}
	copy(idx, best)
	return bestD, true, nil
}

// orderMoves returns the distinct reorderings of s that LAMP's discrete
// transformations reach in one step (Balunović et al., NeurIPS 2022, §4):
// a swap of two positions, a move of one token to another position (the
// tokens between shifting by one), a move of a span of two or more
// tokens to another offset; each once, and none equal to s.
func orderMoves(s []int) [][]int {
	n := len(s)
	seen := map[string]bool{fmt.Sprint(s): true}
	var out [][]int
	add := func(c []int) {
		if k := fmt.Sprint(c); !seen[k] {
			seen[k] = true
			out = append(out, c)
		}
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			c := slices.Clone(s)
			c[i], c[j] = c[j], c[i]
			add(c)
		}
	}
	// A span [i, i+L) taken out and put back at offset k of the rest
	// (L = 1: one token).
	for L := 1; L < n; L++ {
		for i := 0; i+L <= n; i++ {
			rest := slices.Concat(s[:i], s[i+L:])
			for k := 0; k <= len(rest); k++ {
				if k != i {
					add(slices.Concat(rest[:k], s[i:i+L], rest[k:]))
				}
			}
		}
	}
	return out
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
			m[i] = float64(b1*m[i]) + float64((1-b1)*d)
			v[i] = float64(b2*v[i]) + float64((1-b2)*d*d)
			x[i] -= lr * (m[i] / c1) / (math.Sqrt(v[i]/c2) + eps)
		}
	}
	return obj(x, g)
}

// DefaultTextPriorMix is the weight of the uniform distribution in the
// prior the text attack starts from (PositionPrior's mix), chosen on
// fashion-vqa-tune (docs/gia.md).
const DefaultTextPriorMix = 0.5

// PositionPrior returns the attacker's data-independent prior over the
// candidates vocab at each of the positions at: the frequency of each
// candidate at that position among the public token sequences pub (the
// public prompts), or, where no public sequence is that long, among all
// their tokens; each row mixed with the uniform distribution at weight
// mix ∈ [0, 1]. Its most probable token at each position is the
// data-independent baseline of RecoverText (PriorGuess).
func PositionPrior(pub [][]int, at, vocab []int, mix float64) [][]float64 {
	ix := map[int]int{}
	for j, id := range vocab {
		ix[id] = j
	}
	all := make([]float64, len(vocab))
	for _, s := range pub {
		for _, id := range s {
			if j, ok := ix[id]; ok {
				all[j]++
			}
		}
	}
	out := make([][]float64, len(at))
	for k, p := range at {
		f := make([]float64, len(vocab))
		for _, s := range pub {
			if p < len(s) {
				if j, ok := ix[s[p]]; ok {
					f[j]++
				}
			}
		}
		var sum float64
		for _, v := range f {
			sum += v
		}
		if sum == 0 {
			copy(f, all)
			for _, v := range f {
				sum += v
			}
		}
		for j := range f {
			u := 1 / float64(len(vocab))
			if sum > 0 {
				f[j] = (1-mix)*f[j]/sum + float64(mix*u)
			} else {
				f[j] = u
			}
		}
		out[k] = f
	}
	return out
}

// PriorGuess returns the most probable candidate of each row of a prior
// (PositionPrior), the lowest index on ties.
func PriorGuess(prior [][]float64, vocab []int) []int {
	out := make([]int, len(prior))
	for k, row := range prior {
		best := 0
		for j, v := range row {
			if v > row[best] {
				best = j
			}
		}
		out[k] = vocab[best]
	}
	return out
}
