// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math/rand/v2"
	"testing"
)

// engineShape is a model, its trainable layout and a batch of a
// benchmark of the engine's inference paths.
type engineShape struct {
	name  string
	m     *TinyMLLM
	l     *Layout
	batch []Sequence
}

// engineShapes returns the shapes of BenchmarkZOStep, BenchmarkEvalPass
// and BenchmarkLiRAScore: the anchor (anchorBench: width 64, LoRA r = 8
// on q and v, B = 32) and the small preset with the methods' default
// LoRA and batch (benchLoRA: every map of the language model, r = 8,
// B = 64).
func engineShapes(b *testing.B) []engineShape {
	m, l, batch := anchorBench(b)
	sm, sl, sbatch, _ := benchLoRA(b, "small", 9)
	return []engineShape{{"anchor", m, l, batch}, {"small", sm, sl, sbatch}}
}

// BenchmarkZOStep measures one DPZO step against one DP-SGD step on the
// same model and batch, at the anchor's shape and at small. dpzo is what
// methods.DPZO does each step: draw a direction z ~ N(0, I) over the
// trainable coordinates, write θ + φz into the parameters, compute every
// example's mean loss (TinyMLLM.MeanLosses with the visual-token cache the
// training loop keeps, and the PassShare it empties every step), the same
// at θ − φz, restore θ, and take an SGD step along z; dpsgd is BenchmarkAnchor's DP-SGD step (per-sample
// gradients, clipping, noise, SGD) with the same options as the methods'
// training loops give both (memory reused, the visual-token cache). The
// ratio of their CPU times is the goal "a DPZO step ≤ 0.4× a DP-SGD step
// at the same batch".
func BenchmarkZOStep(b *testing.B) {
	for _, sh := range engineShapes(b) {
		b.Run(sh.name+"/dpzo", func(b *testing.B) { benchDPZOStep(b, sh) })
		b.Run(sh.name+"/dpsgd", func(b *testing.B) { benchDPSGDStep(b, sh) })
	}
}

// benchDPZOStep is BenchmarkZOStep's DPZO step on sh.
func benchDPZOStep(b *testing.B, sh engineShape) {
	m, l, batch := sh.m, sh.l, sh.batch
	rng := rand.New(rand.NewPCG(3, 3))
	opts := &Options{Reuse: true, Visual: NewVisualCache(64 << 20), Share: new(PassShare)}
	theta := l.Values()
	z, v := make([]float32, l.Size), make([]float32, l.Size)
	lp, lm := make([]float64, len(batch)), make([]float64, len(batch))
	const phi = 1e-3
	cpu := startCPU(b)
	for b.Loop() {
		for j := range z {
			z[j] = float32(rng.NormFloat64())
		}
		opts.Share.Reset()
		for _, pass := range []struct {
			f   float32
			out []float64
		}{{phi, lp}, {-phi, lm}} {
			for j, t := range theta {
				v[j] = t + pass.f*z[j]
			}
			l.SetValues(v)
			if err := m.MeanLosses(l, batch, opts, pass.out); err != nil {
				b.Fatal(err)
			}
		}
		s := 0.0
		for i := range lp {
			s += max(-1, min(1, (lp[i]-lm[i])/(2*phi)))
		}
		c := float32(1e-3 * s / float64(len(batch)))
		for j := range theta {
			theta[j] -= c * z[j]
		}
		l.SetValues(theta)
	}
	cpu.stop(b)
	b.ReportMetric(float64(len(batch)*b.N)/b.Elapsed().Seconds(), "ex/s")
}

// benchDPSGDStep is BenchmarkZOStep's DP-SGD step on sh.
func benchDPSGDStep(b *testing.B, sh engineShape) {
	opts := &Options{Reuse: true, Visual: NewVisualCache(64 << 20)}
	anchorDPSGD(b, sh.m, sh.l, len(sh.batch), func() (*Result, error) {
		return sh.m.PerSample(sh.l, sh.batch, nil, nil, opts)
	})
}

// BenchmarkVecKernels measures BenchmarkZOStep's four steps with the
// kernels of vrow_amd64.s and LayerNorm's eight-row statistics off and on,
// alternated in one process (rounds of off, on, on, off), so that a loaded
// machine's changing load falls on both alike. Off is the code before
// them: the same bits, the Go loops.
func BenchmarkVecKernels(b *testing.B) {
	benchOffOn(b, &vrowOff)
}

// BenchmarkThin measures BenchmarkZOStep's four steps with the narrow
// AVX2 kernels (gemmAVX2x8: LoRA's x·Aᵀ of rank 8, the last panel of
// attention's products with the values), the bias rows filled by
// doubling copies (fillRows) and the PassShare's values read in place
// off and on (thinOff), alternated in one process as BenchmarkVecKernels
// does. Off is the code before them: the same bits.
func BenchmarkThin(b *testing.B) {
	benchOffOn(b, &thinOff)
}

// BenchmarkFirstOrder measures BenchmarkZOStep's four steps with the
// kernels of vgrad_amd64.s (the backward's y += α·x and GELU's
// accumulation, Tape.Weighted's first term written without clearing,
// clipping's rescaling) and ClipAll's and Sum's several examples at a
// time off and on (gradOff), alternated in one process as
// BenchmarkVecKernels does. Off is the code before them: the same bits.
func BenchmarkFirstOrder(b *testing.B) {
	benchOffOn(b, &gradOff)
}

// BenchmarkAttnSoftmax measures the DPZO and DP-SGD steps' CPU time
// with the attention softmax backward's kernels (softmaxBack: softDots4,
// softBackVec) off and on (attnOff), alternated in one process as
// BenchmarkFirstOrder.
func BenchmarkAttnSoftmax(b *testing.B) {
	benchOffOn(b, &attnOff)
}

// BenchmarkCausal measures the DPZO and DP-SGD steps' CPU time with
// causal attention on the mask's tiles (causal.go: the scores below the
// diagonal's tiles, the products with the values over each tile's
// unmasked columns) off and on (causalOff), alternated in one process as
// BenchmarkFirstOrder. Off is the code before it: the same bits.
func BenchmarkCausal(b *testing.B) {
	benchOffOn(b, &causalOff)
}

// BenchmarkSlab measures the DPZO and DP-SGD steps' CPU time with the
// inference tapes' nodes, shapes and parameter map kept in their arenas
// (Tape.newNode, Tape.shapeOf) off and on (slabOff), alternated in one
// process as BenchmarkFirstOrder. Off allocates each anew, as before.
func BenchmarkSlab(b *testing.B) {
	benchOffOn(b, &slabOff)
}

// BenchmarkEvalPass measures one evaluation pass over a test set of the
// shape's batch, as pipeline.Evaluate makes it, one example at a time:
// greedy decoding of the answer's length from the prompt
// (TinyMLLM.Generate) and the reference answer's token losses
// (TinyMLLM.TokenLosses), in one PackWeights period a pass.
func BenchmarkEvalPass(b *testing.B) {
	for _, sh := range engineShapes(b) {
		m, test := sh.m, sh.batch
		b.Run(sh.name, func(b *testing.B) {
			cpu := startCPU(b)
			for b.Loop() {
				end := m.PackWeights() // as pipeline.Evaluate: one period a pass
				for i := range test {
					s := &test[i]
					k := firstLoss(s)
					p := Sequence{Tokens: s.Tokens[:k], Images: s.Images}
					if _, err := m.Generate(&p, len(s.Tokens)-k, Sampler{}, nil, nil, nil); err != nil {
						b.Fatal(err)
					}
					if _, _, err := m.TokenLosses(s, nil, nil); err != nil {
						b.Fatal(err)
					}
				}
				end()
			}
			cpu.stop(b)
			b.ReportMetric(float64(len(test)*b.N)/b.Elapsed().Seconds(), "ex/s")
		})
	}
}

// firstLoss returns the index of the first token s.Loss marks (the
// answer's start), len(s.Tokens) if none.
func firstLoss(s *Sequence) int {
	for i, l := range s.Loss {
		if l {
			return i
		}
	}
	return len(s.Tokens)
}

// BenchmarkLiRAScore measures one LiRA scoring pass over a pool of the
// shape's batch, as package attacks scores a target: groups of 8
// consecutive examples on one batched forward pass (ForwardBatch on an
// inference tape), the
// logits of every row that predicts a text token, and the
// log-probability of each true token (its log-softmax).
func BenchmarkLiRAScore(b *testing.B) {
	for _, sh := range engineShapes(b) {
		m, pool := sh.m, sh.batch
		V := m.Config.Vocab
		b.Run(sh.name, func(b *testing.B) {
			cpu := startCPU(b)
			p := make([]float32, V)
			for b.Loop() {
				for from := 0; from < len(pool); from += 8 {
					group := pool[from:min(from+8, len(pool))]
					t := NewInferenceTape()
					hid, off, pos, err := m.ForwardBatch(t, group)
					if err != nil {
						b.Fatal(err)
					}
					var rows, targets []int
					for e := range group {
						for i, id := range group[e].Tokens {
							if i > 0 && id != TokenImage {
								rows = append(rows, off[e]+pos[e][i]-1)
								targets = append(targets, id)
							}
						}
					}
					z := m.Logits(t, hid, rows).Value
					for r, tg := range targets {
						row := z.Data[r*V : (r+1)*V]
						_ = softmaxRow(row, p) - float64(row[tg])
					}
					t.Release()
				}
			}
			cpu.stop(b)
			b.ReportMetric(float64(len(pool)*b.N)/b.Elapsed().Seconds(), "ex/s")
		})
	}
}

// BenchmarkPackCache measures TinyMLLM.MeanLosses at small (one of a DPZO
// step's two passes, BenchmarkZOStep's shape) with the packed frozen
// weights kept between calls (packcache.go) and without (every product
// packs its panels), alternated in one process: rounds of off and on.
func BenchmarkPackCache(b *testing.B) {
	m, l, batch, _ := benchLoRA(b, "small", 9)
	out := make([]float64, len(batch))
	opts := &Options{Reuse: true, Visual: NewVisualCache(64 << 20)}
	defer func() { packOff = false }()
	for range 4 {
		for _, off := range []bool{true, false} {
			name := "on"
			if off {
				name = "off"
			}
			b.Run(name, func(b *testing.B) {
				packOff = off
				cpu := startCPU(b)
				for b.Loop() {
					if err := m.MeanLosses(l, batch, opts, out); err != nil {
						b.Fatal(err)
					}
				}
				cpu.stop(b)
			})
		}
	}
}

// benchOffOn runs the DPZO and DP-SGD steps at engineShapes' shapes with
// *off set and cleared, alternated in one process (rounds of off, on,
// on, off), so that a loaded machine's changing load falls on both alike.
func benchOffOn(b *testing.B, off *bool) {
	shapes := engineShapes(b)
	defer func() { *off = false }()
	for r := range 4 {
		for _, o := range [][]bool{{true, false}, {false, true}}[r%2] {
			name := "on"
			if o {
				name = "off"
			}
			for _, sh := range shapes {
				b.Run(sh.name+"/dpzo/"+name, func(b *testing.B) { *off = o; benchDPZOStep(b, sh) })
				b.Run(sh.name+"/dpsgd/"+name, func(b *testing.B) { *off = o; benchDPSGDStep(b, sh) })
			}
		}
	}
}
