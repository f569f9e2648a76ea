// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/repro-dp/repro/nn"
)

// The position slices of a TinyMLLM sequence [visual tokens | prompt |
// answer] over which the target-free scores (MaxRényi-K%) are taken, after
// VL-MIA (Li et al. 2024): the logits at the visual-token positions (img),
// the logits that predict the prompt's text tokens (inst), those that
// predict the answer tokens (desp), and the last two together (inst_desp).
// The logit row that predicts the first prompt token after an image is the
// image's last visual row, so it is in both img and inst, as in VL-MIA's
// slicing of the logits by position.
const (
	SliceImg      = "img"
	SliceInst     = "inst"
	SliceDesp     = "desp"
	SliceInstDesp = "inst_desp"
)

// Slices are the position slices in the order scores are reported.
var Slices = []string{SliceImg, SliceInst, SliceDesp, SliceInstDesp}

// RenyiOrders are the Rényi orders α of MaxRényi-K% (VL-MIA's 0.5, 1
// (Shannon), 2 and ∞).
var RenyiOrders = []float64{0.5, 1, 2, math.Inf(1)}

// TopFractions are the fractions K of MaxRényi-K% (VL-MIA's main tables:
// 0, 10% and 100%; K = 0 takes the single largest entropy).
var TopFractions = []float64{0, 0.1, 1}

// renyiClamp is VL-MIA's clamp of the probabilities for α = 0.5 and 2.
const renyiClamp = 1e-10

// A pass is what one forward pass of the target model tells about one
// example: the Rényi entropies of every next-token distribution of each
// position slice, and the log-probabilities of the true next tokens where
// the slice predicts a token.
type pass struct {
	// orders are the Rényi orders of ent: those forwardAll was asked for
	// (Target.Orders, then the attack's), then any extend added; none for
	// a pass of log-probabilities only, whose img rows are then empty.
	orders []float64
	// ent[o][s] are the entropies of order orders[o] at the rows of
	// slice s (0 img, 1 inst, 2 desp, in position order).
	ent [][3][]float64
	// logp[0] are the log-probabilities of the prompt's text tokens, [1]
	// those of the answer tokens, in token order.
	logp [2][]float64
	// answer holds the answer's token ids (for the zlib score).
	answer []int
}

// slice returns the values of slice name built from the per-slice values
// v (img, inst, desp); inst_desp is inst followed by desp.
func slice(v [3][]float64, name string) []float64 {
	switch name {
	case SliceImg:
		return v[0]
	case SliceInst:
		return v[1]
	case SliceDesp:
		return v[2]
	case SliceInstDesp:
		return append(append([]float64(nil), v[1]...), v[2]...)
	}
	panic("attacks: unknown slice " + name)
}

// entropies returns the entropies of order α at the rows of each slice;
// it panics if the pass lacks α (runSets asks forwardAll for it).
func (p *pass) entropies(alpha float64) [3][]float64 {
	for i, a := range p.orders {
		if a == alpha {
			return p.ent[i]
		}
	}
	panic(fmt.Sprintf("attacks: a pass without Rényi order %v", alpha))
}

// forward runs m (with the visual transform vt) once on s and returns its
// pass with the entropies of the Rényi orders orders.
func forward(m *nn.TinyMLLM, vt nn.VisualTransform, s *nn.Sequence, orders []float64) (*pass, error) {
	t := nn.NewInferenceTape()
	defer t.Release()
	hid, pos, err := m.Forward(t, s, nil, nil, vt)
	if err != nil {
		return nil, err
	}
	rows, targets, err := scoredRows(s, pos, 0, hid.Value.Rows(), len(orders) > 0)
	if err != nil {
		return nil, err
	}
	return newPass(m.Logits(t, hid, rows.all()).Value.Data, m.Config.Vocab, targets, rows, orders), nil
}

// forwardGroup is forward on every sequence of ss at once (no visual
// transform), through the batched engine (nn.TinyMLLM.ForwardBatch): one
// stack of rows for the vision encoder, one for the language model and
// one product for the logits of every scored row, on an inference tape
// (nn.NewInferenceTape; newPass keeps no logit). Each pass holds the bits
// forward gives it alone, since the batched engine gives every row the
// bits of its own tape and a product's rows are computed independently.
func forwardGroup(m *nn.TinyMLLM, ss []*nn.Sequence, orders []float64) ([]*pass, error) {
	batch := make([]nn.Sequence, len(ss))
	for i, s := range ss {
		batch[i] = *s
	}
	t := nn.NewInferenceTape()
	defer t.Release()
	hid, off, pos, err := m.ForwardBatch(t, batch)
	if err != nil {
		return nil, err
	}
	rs := make([]passRows, len(ss))
	ts := make([][3][]int, len(ss))
	var all []int
	for e, s := range ss {
		if rs[e], ts[e], err = scoredRows(s, pos[e], off[e], off[e+1], len(orders) > 0); err != nil {
			return nil, err
		}
		all = append(all, rs[e].all()...)
	}
	z := m.Logits(t, hid, all).Value.Data
	V := m.Config.Vocab
	out := make([]*pass, len(ss))
	for e := range ss {
		n := len(rs[e].all())
		out[e] = newPass(z[:n*V], V, ts[e], rs[e], orders)
		z = z[n*V:]
	}
	return out, nil
}

// passRows are the rows of a sequence's hidden states in each position
// slice (0 img, 1 inst, 2 desp).
type passRows [3][]int

// all returns the rows of the three slices in slice order.
func (r passRows) all() []int { return slices.Concat(r[0], r[1], r[2]) }

// scoredRows returns the rows of the slices of s, whose hidden states are
// rows first to end of its forward pass (pos: its tokens' positions, from
// first), and the tokens the inst and desp rows predict: for each <image>
// placeholder the rows of its visual tokens; for each other token i ≥ 1
// the row pos[i]−1 that predicts it, in inst if s.Loss does not mark it
// and in desp if it does. Without img (no entropies asked for, so no
// score reads the visual rows), the img slice is left empty.
func scoredRows(s *nn.Sequence, pos []int, first, end int, img bool) (passRows, [3][]int, error) {
	var rows passRows
	var targets [3][]int
	for i, id := range s.Tokens {
		switch {
		case id == nn.TokenImage && !img:
		case id == nn.TokenImage:
			last := end
			if i+1 < len(s.Tokens) {
				last = first + pos[i+1]
			}
			for r := first + pos[i]; r < last; r++ {
				rows[0] = append(rows[0], r)
			}
		case i == 0:
		case s.Loss != nil && s.Loss[i]:
			rows[2] = append(rows[2], first+pos[i]-1)
			targets[2] = append(targets[2], id)
		default:
			rows[1] = append(rows[1], first+pos[i]-1)
			targets[1] = append(targets[1], id)
		}
	}
	if len(rows[0])+len(rows[1])+len(rows[2]) == 0 {
		return rows, targets, fmt.Errorf("attacks: a sequence of %d tokens has no scored position", len(s.Tokens))
	}
	return rows, targets, nil
}

// newPass returns the pass of the logits z (one row of V per scored row,
// in the order of rows.all()) with the entropies of orders.
func newPass(z []float32, V int, targets [3][]int, rows passRows, orders []float64) *pass {
	p := &pass{orders: orders, ent: make([][3][]float64, len(orders)), answer: targets[2]}
	lp := make([]float64, V)
	r := 0
	for sl := range 3 {
		for o := range orders {
			p.ent[o][sl] = make([]float64, len(rows[sl]))
		}
		for j := range rows[sl] {
			logSoftmax(lp, z[r*V:(r+1)*V])
			for o, a := range orders {
				p.ent[o][sl][j] = renyi(lp, a)
			}
			if sl > 0 {
				p.logp[sl-1] = append(p.logp[sl-1], lp[targets[sl][j]])
			}
			r++
		}
	}
	return p
}

// logSoftmax writes the log-softmax of z to dst, in float64.
func logSoftmax(dst []float64, z []float32) {
	mx := math.Inf(-1)
	for _, v := range z {
		mx = max(mx, float64(v))
	}
	s := 0.0
	for _, v := range z {
		s += math.Exp(float64(v) - mx)
	}
	lse := mx + math.Log(s)
	for i, v := range z {
		dst[i] = float64(v) - lse
	}
}

// renyi returns the Rényi entropy of order α ≥ 0 of the distribution with
// log-probabilities lp (Rényi 1961):
//
//	H_α(p) = 1/(1−α) · log Σ_v p_v^α,  H_1(p) = −Σ_v p_v log p_v,  H_∞(p) = −log max_v p_v,
//
// with the probabilities clamped to [1e-10, 1 − 1e-10] for α ∉ {1, ∞}, as
// VL-MIA does for α = 0.5 and 2. H_1 and H_∞ are the limits of H_α as
// α → 1 and α → ∞; H_0 is the log of the number of outcomes (the clamp
// makes every p_v positive).
func renyi(lp []float64, alpha float64) float64 {
	switch {
	case alpha == 1:
		h := 0.0
		for _, l := range lp {
			h -= float64(math.Exp(l) * l)
		}
		return h
	case math.IsInf(alpha, 1):
		mx := math.Inf(-1)
		for _, l := range lp {
			mx = max(mx, l)
		}
		return -mx
	}
	s := 0.0
	for _, l := range lp {
		p := min(max(math.Exp(l), renyiClamp), 1-renyiClamp)
		s += math.Pow(p, alpha)
	}
	return math.Log(s) / (1 - alpha)
}

// A classLogits returns the class logits of one example: a classifier
// target's model on the example's image, or on its image and caption.
type classLogits func(ex *Example) ([]float32, error)

// classLogits returns the logits of t's classifier (Classifier, or Fusion
// on Seq.Tokens as the caption), or nil when t has neither.
func (t *Target) classLogits() classLogits {
	switch {
	case t.Classifier != nil:
		c := t.Classifier
		return func(ex *Example) ([]float32, error) {
			if len(ex.Seq.Images) != 1 {
				return nil, fmt.Errorf("a classifier's example has one image, got %d", len(ex.Seq.Images))
			}
			z, _, err := c.Logits(nn.NewTape(nil, nil), ex.Seq.Images[0], false, nil)
			if err != nil {
				return nil, err
			}
			return z.Value.Data, nil
		}
	case t.Fusion != nil:
		c := t.Fusion
		return func(ex *Example) ([]float32, error) {
			if len(ex.Seq.Images) != 1 {
				return nil, fmt.Errorf("a pair classifier's example has one image, got %d", len(ex.Seq.Images))
			}
			z, _, err := c.Logits(nn.NewTape(nil, nil), ex.Seq.Images[0], ex.Seq.Tokens, false, nil)
			if err != nil {
				return nil, err
			}
			return z.Value.Data, nil
		}
	}
	return nil
}

// forwardClassifier runs the classifier once on ex (logits) and returns
// its pass: the one row of class logits is the desp slice, the class
// ex.Label the token it predicts (so the loss, the confidence and the
// entropies of the membership attacks are those of the class
// distribution), the other slices empty.
func forwardClassifier(logits classLogits, ex *Example, orders []float64) (*pass, error) {
	z, err := logits(ex)
	if err != nil {
		return nil, err
	}
	V := len(z)
	if ex.Label < 0 || ex.Label >= V {
		return nil, fmt.Errorf("label %d outside the %d classes", ex.Label, V)
	}
	var rows passRows
	rows[2] = []int{0}
	var targets [3][]int
	targets[2] = []int{ex.Label}
	return newPass(z, V, targets, rows, orders), nil
}

// passGroup is the number of examples forwardGroup runs on one batched
// tape: enough rows that every frozen product is a matrix product, few
// enough that the tape stays small (at small, 8 sequences of about 50
// rows).
const passGroup = 8

// passes returns the passes of exs with the entropies of orders, computed
// on up to workers goroutines (0: GOMAXPROCS). Without a visual transform,
// groups of passGroup consecutive examples share one batched forward pass
// (forwardGroup); with one, or for a group with an invalid example, each
// example has its own (forward). Either way a pass is a function of the
// model and its example alone, so the result does not depend on workers.
// It returns the error of the lowest-indexed example that fails.
func passes(ctx context.Context, m *nn.TinyMLLM, vt nn.VisualTransform, exs []Example, orders []float64, workers int) ([]*pass, error) {
	return targetPasses(ctx, m, nil, vt, exs, orders, workers)
}

// targetPasses is passes on the TinyMLLM m or, when m is nil, on the
// classifier's logits (forwardClassifier, one example at a time).
func targetPasses(ctx context.Context, m *nn.TinyMLLM, logits classLogits, vt nn.VisualTransform, exs []Example, orders []float64, workers int) ([]*pass, error) {
	size := passGroup
	if vt != nil || m == nil {
		size = 1
	}
	groups := (len(exs) + size - 1) / size
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, groups))
	out := make([]*pass, len(exs))
	errs := make([]error, len(exs))
	if m != nil {
		// The weights do not change during the passes: pack them once
		// for all of them (the same bits).
		defer m.PackWeights()()
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				g := int(next.Add(1) - 1)
				if g >= groups || ctx.Err() != nil {
					return
				}
				from, to := g*size, min((g+1)*size, len(exs))
				if size > 1 {
					ss := make([]*nn.Sequence, to-from)
					for i := range ss {
						ss[i] = &exs[from+i].Seq
					}
					if ps, err := forwardGroup(m, ss, orders); err == nil {
						copy(out[from:to], ps)
						continue
					}
				}
				for i := from; i < to; i++ {
					if m == nil {
						out[i], errs[i] = forwardClassifier(logits, &exs[i], orders)
						continue
					}
					out[i], errs[i] = forward(m, vt, &exs[i].Seq, orders)
				}
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("attacks: example %d: %w", exs[i].ID, err)
		}
	}
	return out, nil
}

// passSet holds the passes of a Target's members and non-members, computed
// once and shared by every attack run on the Target.
type passSet struct {
	mu         sync.Mutex
	done       bool
	members    []*pass
	nonMembers []*pass
	err        error
}

// forwardAll returns the passes of t's members and non-members, computing
// them on the first call: one forward pass per example, whatever attacks
// read them, with the entropies of t.Orders and orders (none for the
// attacks that read log-probabilities only). A later call that asks for
// orders the passes lack runs one more forward pass per example for those
// (t.Orders avoids it). The passes do not
// depend on which attack asks first: every value of a pass is a function
// of the model and the example alone.
func (t *Target) forwardAll(ctx context.Context, orders []float64) (members, nonMembers []*pass, err error) {
	ps := t.passSet()
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if !ps.done {
		ps.done = true
		all := addOrders(slices.Clone(t.Orders), orders)
		if ps.members, ps.err = targetPasses(ctx, t.Model, t.classLogits(), t.Visual, t.Members, all, t.Workers); ps.err == nil {
			ps.nonMembers, ps.err = targetPasses(ctx, t.Model, t.classLogits(), t.Visual, t.NonMembers, all, t.Workers)
		}
	}
	if ps.err != nil {
		return nil, nil, ps.err
	}
	if len(ps.members) == 0 {
		return ps.members, ps.nonMembers, nil
	}
	have := ps.members[0].orders
	if more := addOrders(nil, slices.DeleteFunc(slices.Clone(orders), func(a float64) bool { return slices.Contains(have, a) })); len(more) > 0 {
		if err := t.extend(ctx, ps, more); err != nil {
			return nil, nil, err
		}
	}
	return ps.members, ps.nonMembers, nil
}

// extend adds the entropies of the orders more to the passes of ps, with
// one more forward pass per example.
func (t *Target) extend(ctx context.Context, ps *passSet, more []float64) error {
	for _, side := range []struct {
		ps  []*pass
		exs []Example
	}{{ps.members, t.Members}, {ps.nonMembers, t.NonMembers}} {
		extra, err := targetPasses(ctx, t.Model, t.classLogits(), t.Visual, side.exs, more, t.Workers)
		if err != nil {
			return err
		}
		for i, p := range side.ps {
			p.orders = slices.Concat(p.orders, more)
			p.ent = slices.Concat(p.ent, extra[i].ent)
		}
	}
	return nil
}

// addOrders returns orders with those of more it lacks appended, in the
// order of more.
func addOrders(orders, more []float64) []float64 {
	for _, a := range more {
		if !slices.Contains(orders, a) {
			orders = append(orders, a)
		}
	}
	return orders
}

// passSet returns t's pass cache, making it on the first call.
func (t *Target) passSet() *passSet {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.passes == nil {
		t.passes = &passSet{}
	}
	return t.passes
}
