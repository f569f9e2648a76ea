// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import "sync"

// This file keeps the packed panels of frozen weight matrices between the
// forward passes of zeroth-order training. Every product x·Wᵀ of an Affine
// map packs Wᵀ into the kernel's panels (gemm.go) before it multiplies;
// TinyMLLM.MeanLosses runs a batch in groups of 8 sequences, one tape
// each, so a DPZO step at small (two passes over 64 sequences) packed each
// weight 16 times. In MeanLosses the panels of a weight that is not in the
// call's layout come instead from the weight's own cache (Param.pack),
// packed once and kept while the weight's values do not change.
//
// A cached packing can never be stale: it keeps a copy of the values it
// was packed from, and the call's pack scope compares them bit for bit
// with the weight's values the first time the call uses the weight, and
// packs again on any difference. Within one call the weights do not change
// (the forward passes read them), so one comparison a call suffices. The
// tensors of the call's layout (the ones DPZO perturbs from pass to pass)
// are never cached. The panels are the ones the product would have packed,
// so the results are the same bits with the cache as without it.
//
// The batched training tapes of PerSample and Gradient (runBatched) take
// the frozen weights' panels from the same caches, one scope a call.
//
// TokenLosses and Generate, which take one example at a time, and Forward
// and ForwardBatch on an inference tape (the attacks' passes) use it only
// within a period of TinyMLLM.PackWeights (an evaluation pass, a set of
// attack scores), whose scope spans every call of the period: one
// comparison per call would cost about what the packing saves (a fifth of
// an evaluation pass at small against a third).

// packedWeight is a weight matrix W [n, k] packed into the panels of
// op(B) = Wᵀ for the kernel named kern (width nr), with a copy of the
// values src it was packed from. It is never modified once built.
type packedWeight struct {
	kern   string
	nr     int
	src    []float32
	panels []float32
}

// packWeight packs the n×k row-major matrix w into the panels of Wᵀ that
// gemm with kernel kern builds for a product with tB (gemmPlan.packT).
func packWeight(kern gemmKernel, w []float32, n, k int) *packedWeight {
	nr := kern.nr
	p := gemmPlan{kern: kern, n: n, k: k, b: w, ldb: k}
	panels := (n + nr - 1) / nr
	pw := &packedWeight{kern: kern.name, nr: nr, src: append([]float32(nil), w[:n*k]...), panels: make([]float32, panels*k*nr)}
	for q := range panels {
		j0 := q * nr
		p.packT(pw.panels[q*k*nr:(q+1)*k*nr], j0, min(nr, n-j0))
	}
	return pw
}

// packed returns p's values as an [n, k] matrix packed for the CPU
// backend's kernel: the cached packing when it was packed from the bits
// p holds now, else a new one, which p then keeps.
func (p *Param) packed(n, k int) *packedWeight {
	kern := gemmUse
	if pw := p.pack.Load(); pw != nil && pw.kern == kern.name && pw.nr == kern.nr && bitsEqual32(pw.src, p.Data[:n*k]) {
		return pw
	}
	pw := packWeight(kern, p.Data, n, k)
	p.pack.Store(pw)
	return pw
}

// A packScope is the packed weights of one call of the inference path,
// each checked against its weight's values once (Param.packed); the
// tensors of skip (nil: none) are not packed ahead. It is safe for
// concurrent use by the call's goroutines.
type packScope struct {
	mu   sync.Mutex
	skip *Layout
	seen map[*Param]*packedWeight
}

// newPackScope returns a scope that does not pack the tensors of skip
// ahead.
func newPackScope(skip *Layout) *packScope { return &packScope{skip: skip} }

// get returns the packing of p as an [n, k] matrix, or nil where p is in
// the scope's skip layout or the backend is not the CPU's.
func (s *packScope) get(p *Param, n, k int) *packedWeight {
	if _, ok := kernels.(CPU); !ok || len(p.Data) < n*k {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if pw, ok := s.seen[p]; ok {
		return pw
	}
	var pw *packedWeight
	if s.skip == nil || s.skip.Index(p) < 0 {
		pw = p.packed(n, k)
	}
	if s.seen == nil {
		s.seen = make(map[*Param]*packedWeight)
	}
	s.seen[p] = pw
	return pw
}

// packOff turns the cache off (BenchmarkPackCache's comparison).
var packOff bool

// weightPanels returns the cached panels of Wᵀ for a product x·Wᵀ with
// the weight node w (an [n, k] matrix) on t, or nil where the product
// packs them itself: on a tape without a pack scope (only inference tapes
// and batched training tapes have one), for a node that is not a
// parameter or needs a gradient, or for a tensor the tape's scope skips.
func (t *Tape) weightPanels(w *Node, n, k int) []float32 {
	if t.packs == nil || packOff || w.param == nil || w.needs || w.rows != nil {
		return nil
	}
	if pw := t.packs.get(w.param, n, k); pw != nil {
		return pw.panels
	}
	return nil
}

// gemmPanels computes C = α·A·Bᵀ + β·C, A m×k (stride lda), B n×k, C m×n
// (stride ldc), with the panels of Bᵀ pre (weightPanels); nil pre packs
// them (the backend's Gemm). The same bits either way.
func gemmPanels(m, n, k int, alpha float32, a []float32, lda int, b []float32, pre []float32, beta float32, c []float32, ldc int) {
	if pre == nil || m == 0 || n == 0 || k == 0 || alpha == 0 {
		kernels.Gemm(false, true, m, n, k, alpha, a, lda, b, k, beta, c, ldc)
		return
	}
	checkMatrix("C", m, n, c, ldc)
	checkMatrix("A", m, k, a, lda)
	checkMatrix("B", n, k, b, k)
	gemmWith(gemmUse, false, true, m, n, k, alpha, a, lda, b, k, pre, beta, c, ldc)
}

// PackWeights starts a period in which TokenLosses and Generate on m share
// the packed panels of m's weights (see the top of this file): each weight
// is packed, or its cached packing checked against its values, once in the
// period instead of at every forward pass. The caller promises that no
// tensor of m changes until it calls the returned function, which ends the
// period; that function panics if one did (it compares every weight used
// against the values it was packed from once more), since the passes of
// the period may then have read stale panels. The results are the same
// bits inside a period as outside. A period started while another holds
// does nothing: its end function is a no-op. It is safe for concurrent use
// with the period's passes.
func (m *TinyMLLM) PackWeights() (end func()) {
	s := newPackScope(nil)
	if _, held := packPeriods.LoadOrStore(m, s); held {
		return func() {}
	}
	return func() {
		packPeriods.Delete(m)
		s.mu.Lock()
		defer s.mu.Unlock()
		for p, pw := range s.seen {
			if pw != nil && !bitsEqual32(pw.src, p.Data[:len(pw.src)]) {
				panic("nn: " + p.Name + " changed within a PackWeights period")
			}
		}
	}
}

// packPeriods holds the scope of each model in a PackWeights period, by
// the model's address (a shallow copy of a model, such as a steered one,
// is not in its original's period).
var packPeriods sync.Map

// packPeriod returns the scope of m's PackWeights period, nil outside one.
func (m *TinyMLLM) packPeriod() *packScope {
	if s, ok := packPeriods.Load(m); ok {
		return s.(*packScope)
	}
	return nil
}

// joinPeriod gives the inference tape t, when it has no packed weights of
// its own, those of m's PackWeights period, if one holds.
func (m *TinyMLLM) joinPeriod(t *Tape) {
	if t.infer && t.packs == nil {
		t.packs = m.packPeriod()
	}
}
