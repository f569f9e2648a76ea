// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The tests of vgrad.go and vgrad_amd64.s: each kernel, through the
// function that calls it, against the Go loop it replaced, written here
// as the reference, bit for bit.

// vgradLengths are the vector lengths the tests try: every length up to
// 40 and a few of the models' widths.
var vgradLengths = func() []int {
	var ns []int
	for n := 0; n <= 40; n++ {
		ns = append(ns, n)
	}
	return append(ns, 64, 96, 383, 384, 1000)
}()

// TestAxpyVec checks axpy (y += α·x) and Tape.Weighted's first term
// (+0 + α·x into an output not cleared first) against the loop
// y[i] += α·x[i] over y, and over a cleared y, with special values in x
// and y and several α.
func TestAxpyVec(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 1))
	for _, special := range []bool{false, true} {
		for _, n := range vgradLengths {
			for _, alpha := range []float32{1, 2, -0.5, 1.0 / 3, 0, float32(math.Inf(1))} {
				x, y := vrowValues(rng, n, special), vrowValues(rng, n, special)
				got, want := append([]float32(nil), y...), append([]float32(nil), y...)
				axpy(alpha, x, got)
				for i, v := range x {
					want[i] += float32(alpha * v)
				}
				if i := firstDiff(got, want); i >= 0 {
					t.Fatalf("axpy n=%d α=%v special %t: y[%d] = %v, want %v (x = %v, y = %v)",
						n, alpha, special, i, got[i], want[i], x[i], y[i])
				}
				// The first term: written over y's old values.
				got = append([]float32(nil), y...)
				j := axpyVec(got, nil, x, alpha)
				clear(got[j:])
				for ; j < n; j++ {
					got[j] += float32(alpha * x[j])
				}
				want = make([]float32, n)
				for i, v := range x {
					want[i] += float32(alpha * v)
				}
				if i := firstDiff(got, want); i >= 0 {
					t.Fatalf("first term n=%d α=%v special %t: y[%d] = %v, want %v (x = %v)",
						n, alpha, special, i, got[i], want[i], x[i])
				}
			}
		}
	}
}

// TestWeightedZero checks Tape.Weighted's forward against the loop over a
// cleared output (y[i] += w_k·x_k[i] for each term in turn) on an arena
// whose memory holds old values, with exact −0s in the first term: a
// cleared output plus 1·(−0) is +0.
func TestWeightedZero(t *testing.T) {
	rng := rand.New(rand.NewPCG(57, 1))
	for _, n := range vgradLengths {
		x0, x1 := vrowValues(rng, n, true), vrowValues(rng, n, true)
		for i := range x0 {
			if rng.IntN(3) == 0 {
				x0[i] = float32(math.Copysign(0, -1))
			}
		}
		w := []float32{1, 1.0 / 3}
		tp := NewTape(nil, nil)
		tp.arena = new(arena)
		junk := tp.arena.alloc(4*n + 64)
		for i := range junk {
			junk[i] = float32(i) - 7
		}
		tp.arena.reset()
		y := tp.Weighted(w, tp.Input(Tensor{Shape: []int{n}, Data: x0}, false),
			tp.Input(Tensor{Shape: []int{n}, Data: x1}, false))
		want := make([]float32, n)
		for i := range want {
			want[i] += float32(w[0] * x0[i])
		}
		for i := range want {
			want[i] += float32(w[1] * x1[i])
		}
		if i := firstDiff(y.Value.Data, want); i >= 0 {
			t.Fatalf("n=%d: y[%d] = %v (bits %#x), want %v (bits %#x)", n, i, y.Value.Data[i],
				math.Float32bits(y.Value.Data[i]), want[i], math.Float32bits(want[i]))
		}
	}
}

// TestMulAddVec checks GELU's backward accumulation y += a·b (mulAddVec
// and its loop, over y and over a cleared y, written without clearing)
// against the loop y[i] += a[i]·b[i].
func TestMulAddVec(t *testing.T) {
	rng := rand.New(rand.NewPCG(52, 1))
	for _, special := range []bool{false, true} {
		for _, n := range vgradLengths {
			a, b, y := vrowValues(rng, n, special), vrowValues(rng, n, special), vrowValues(rng, n, special)
			for _, fresh := range []bool{false, true} {
				got, want := append([]float32(nil), y...), append([]float32(nil), y...)
				src := got
				if fresh {
					src, want = nil, make([]float32, n)
				}
				i := mulAddVec(got, src, a, b)
				if fresh {
					clear(got[i:])
				}
				for ; i < n; i++ {
					got[i] += float32(a[i] * b[i])
				}
				for i := range want {
					want[i] += float32(a[i] * b[i])
				}
				if i := firstDiff(got, want); i >= 0 {
					t.Fatalf("n=%d special %t fresh %t: y[%d] = %v, want %v", n, special, fresh, i, got[i], want[i])
				}
			}
		}
	}
}

// TestGradFresh checks Tape.gAxpy and Tape.gMulAdd, which write a
// gradient not yet made without clearing it (an arena's memory holding
// old values), against the loops over a cleared gradient (y[i] += α·x[i],
// y[i] += a[i]·b[i]) for a first and a second contribution, with exact
// −0s among the contributions.
func TestGradFresh(t *testing.T) {
	rng := rand.New(rand.NewPCG(58, 1))
	for _, n := range vgradLengths {
		x, a, b := vrowValues(rng, n, true), vrowValues(rng, n, true), vrowValues(rng, n, true)
		for i := range x {
			if rng.IntN(3) == 0 {
				x[i], a[i] = float32(math.Copysign(0, -1)), float32(math.Copysign(0, -1))
			}
		}
		for _, order := range []bool{false, true} {
			tp := NewTape(nil, nil)
			tp.arena = new(arena)
			junk := tp.arena.alloc(8*n + 64)
			for i := range junk {
				junk[i] = float32(i) - 7
			}
			tp.arena.reset()
			node := tp.Input(Tensor{Shape: []int{n}, Data: make([]float32, n)}, true)
			want := make([]float32, n)
			axpyStep := func() {
				tp.gAxpy(node, 0.75, x)
				for i := range want {
					want[i] += float32(0.75 * x[i])
				}
			}
			mulStep := func() {
				tp.gMulAdd(node, a, b)
				for i := range want {
					want[i] += float32(a[i] * b[i])
				}
			}
			if order {
				axpyStep()
				mulStep()
			} else {
				mulStep()
				axpyStep()
			}
			if i := firstDiff(node.Grad, want); i >= 0 {
				t.Fatalf("n=%d, axpy first %t: g[%d] = %v (bits %#x), want %v (bits %#x)", n, order, i,
					node.Grad[i], math.Float32bits(node.Grad[i]), want[i], math.Float32bits(want[i]))
			}
		}
	}
}

// TestScaleVec checks scale against the loop x[i] *= α.
func TestScaleVec(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 1))
	for _, special := range []bool{false, true} {
		for _, n := range vgradLengths {
			alpha := float32(rng.NormFloat64())
			x := vrowValues(rng, n, special)
			got, want := append([]float32(nil), x...), append([]float32(nil), x...)
			scale(alpha, got)
			for i := range want {
				want[i] *= alpha
			}
			if i := firstDiff(got, want); i >= 0 {
				t.Fatalf("n=%d special %t: x[%d] = %v, want %v", n, special, i, got[i], want[i])
			}
		}
	}
}

// wideValues returns n values whose magnitudes span 10^±15, so that a
// float64 sum of their squares (or of them) taken in another order gives
// other bits; special adds ±0, subnormals, the largest finite values and
// ±Inf.
func wideValues(rng *rand.Rand, n int, special bool) []float32 {
	x := vrowValues(rng, n, special)
	for i := range x {
		if rng.IntN(3) == 0 {
			x[i] *= float32(math.Pow(10, float64(rng.IntN(31)-15)))
		}
	}
	return x
}

// TestSumSquares8 checks sumSquares8 (sumSq8AVX2's eight lanes) against
// sumSquares, each vector's chain in order, bit for bit in float64.
func TestSumSquares8(t *testing.T) {
	rng := rand.New(rand.NewPCG(54, 1))
	for _, special := range []bool{false, true} {
		for _, n := range vgradLengths {
			var x [8][]float32
			for k := range x {
				x[k] = wideValues(rng, n, special)
			}
			s, ok := sumSquares8(&x, n)
			if !ok {
				if n >= 4 && gradVec() {
					t.Fatalf("n=%d: not computed", n)
				}
				continue
			}
			for k := range x {
				if want := sumSquares(x[k]); math.Float64bits(s[k]) != math.Float64bits(want) && !(s[k] != s[k] && want != want) {
					t.Fatalf("n=%d special %t: vector %d: %v, want %v", n, special, k, s[k], want)
				}
			}
		}
	}
}

// refSum is Sum's loop: each element's float64 chain over the vectors in
// order, rounded to float32 at the end.
func refSum(gs [][]float32) []float32 {
	acc := make([]float64, len(gs[0]))
	for _, g := range gs {
		for j, v := range g {
			acc[j] += float64(v)
		}
	}
	out := make([]float32, len(acc))
	for j, v := range acc {
		out[j] = float32(v)
	}
	return out
}

// TestSumVec checks Sum (acc4's four vectors a pass) against refSum on 1
// to 13 vectors of every length in vgradLengths.
func TestSumVec(t *testing.T) {
	rng := rand.New(rand.NewPCG(55, 1))
	for _, special := range []bool{false, true} {
		for _, n := range vgradLengths {
			for m := 1; m <= 13; m++ {
				gs := make([][]float32, m)
				for i := range gs {
					gs[i] = wideValues(rng, n, special)
				}
				got, want := Sum(nil, gs), refSum(gs)
				if i := firstDiff(got, want); i >= 0 {
					t.Fatalf("n=%d, %d vectors, special %t: sum[%d] = %v, want %v", n, m, special, i, got[i], want[i])
				}
			}
		}
	}
}

// TestClipAllFlat checks ClipAll with a flat rule (clipAllFlat: eight
// norms at once, only rescaled examples rechecked) against Clip on each
// example with the kernels off (the loops before them): clipped values
// and norms bit for bit, on batches of 1 to 19 examples of several
// lengths (one batch of mixed lengths), with gradients below, at and
// above the bound, zero ones, ones with a NaN or an infinite element,
// and tiny ones whose rescaling leaves the norm above the bound (Clip's
// nudges; the test checks that some batch needed them).
func TestClipAllFlat(t *testing.T) {
	rng := rand.New(rand.NewPCG(56, 1))
	nudged := 0
	for _, n := range []int{1, 5, 8, 13, 64, 383} {
		for m := 1; m <= 19; m += 3 {
			for _, c := range []float64{0, 1e-30, 0.5, 1} {
				gs := make([][]float32, m)
				for i := range gs {
					g := make([]float32, n)
					if i == m-1 && m > 8 {
						g = make([]float32, n+1) // one length differs: the one-by-one path
					}
					kind := rng.IntN(6)
					for j := range g {
						switch kind {
						case 0: // zero
						case 1: // tiny: subnormal or near it
							g[j] = float32(rng.NormFloat64() * 1e-41)
						default:
							g[j] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(5)-2)))
						}
					}
					if kind == 2 {
						g[rng.IntN(len(g))] = []float32{float32(math.NaN()), float32(math.Inf(-1))}[rng.IntN(2)]
					}
					if kind == 3 && c > 0 {
						s := float32(c / Norm(g))
						scale(s, g) // at the bound, up to rounding
					}
					gs[i] = g
				}
				want := make([][]float32, m)
				wantN := make([][]float64, m)
				gradOff = true
				for i, g := range gs {
					want[i] = append([]float32(nil), g...)
					wantN[i] = Clip(want[i], Flat(c))
					if f := float32(c / math.Sqrt(sumSquares(g))); f < 1 && f > 0 {
						h := append([]float32(nil), g...)
						for j := range h {
							h[j] *= f
						}
						if Norm(h) > c {
							nudged++
						}
					}
				}
				gradOff = false
				gotN := ClipAll(gs, Flat(c))
				for i := range gs {
					if j := firstDiff(gs[i], want[i]); j >= 0 {
						t.Fatalf("n=%d m=%d c=%v: example %d: g[%d] = %v, want %v", n, m, c, i, j, gs[i][j], want[i][j])
					}
					a, b := gotN[i][0], wantN[i][0]
					if len(gotN[i]) != 1 || math.Float64bits(a) != math.Float64bits(b) && !(a != a && b != b) {
						t.Fatalf("n=%d m=%d c=%v: example %d: norms %v, want %v", n, m, c, i, gotN[i], wantN[i])
					}
				}
			}
		}
	}
	if nudged == 0 {
		t.Error("no example needed a nudge: the test does not reach Clip's loop")
	}
}

// TestBatchedPackedWeights checks that the batched training tapes take
// the frozen weights' cached panels (runBatched's pack scope) and that a
// frozen weight changed between two calls is packed again: the per-sample
// gradients after the change are bit for bit those of one tape per
// example, which packs every product itself.
func TestBatchedPackedWeights(t *testing.T) {
	m, l := batchModel(t, batchCases[0])
	batch := raggedBatch(rand.New(rand.NewPCG(84, 84)), m.Config, 9)
	var frozen *Param
	for _, p := range m.Params() {
		if l.Index(p) < 0 && len(p.Shape) == 2 && p.Kind == KindWeight {
			frozen = p
		}
	}
	if frozen == nil {
		t.Fatal("no frozen weight matrix")
	}
	opt := &Options{Workers: 2, Reuse: true}
	if _, err := m.PerSample(l, batch, nil, nil, opt); err != nil {
		t.Fatal(err)
	}
	if frozen.pack.Load() == nil && gemmUse.name != "go" {
		t.Fatalf("%s: no cached panels after a batched call", frozen.Name)
	}
	for j := range frozen.Data {
		frozen.Data[j] *= 1.25
	}
	r, err := m.PerSample(l, batch, nil, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	want, err := PerSample(l, len(batch), func(tp *Tape, i int) (*Node, error) { return m.Loss(tp, &batch[i], nil, nil) }, &Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range batch {
		if !bitsEqual(r.Grads[i], want.Grads[i]) {
			t.Fatalf("example %d: gradient after %s changed differs from its own tape's", i, frozen.Name)
		}
	}
}

// TestLayerNormTrain checks a training tape's LayerNorm (several rows'
// statistics at once in layerNormRowsH, the normalised rows through
// normRowHVec, four rows' backward sums at once in layerNormBackRows4)
// against the code before them, Tape.LayerNorm's row-by-row loops
// (gradOff): the output and the gradients of x, the gain and the bias,
// bit for bit, for 1 to 40 rows of 3, 13, 64 and 96 values, with and
// without a bias, on an arena holding old values.
func TestLayerNormTrain(t *testing.T) {
	rng := rand.New(rand.NewPCG(59, 1))
	defer func() { gradOff = false }()
	for _, c := range []int{3, 13, 64, 96} {
		for rows := 1; rows <= 40; rows++ {
			special := rows%7 == 0
			x := vrowValues(rng, rows*c, special)
			gain, bias := vrowValues(rng, c, false), vrowValues(rng, c, false)
			seed := vrowValues(rng, rows*c, false)
			for _, withBias := range []bool{false, true} {
				var out [2][4][]float32
				for k, off := range []bool{true, false} {
					gradOff = off
					tp := NewTape(nil, nil)
					tp.arena = new(arena)
					junk := tp.arena.alloc(8*rows*c + 256)
					for i := range junk {
						junk[i] = float32(i%97) - 7
					}
					tp.arena.reset()
					xn := tp.Input(Tensor{Shape: []int{rows, c}, Data: x}, true)
					gn := tp.Input(Tensor{Shape: []int{c}, Data: gain}, true)
					var bn *Node
					if withBias {
						bn = tp.Input(Tensor{Shape: []int{c}, Data: bias}, true)
					}
					y := tp.LayerNorm(xn, gn, bn, 1e-5)
					tp.BackwardFrom(y, seed)
					out[k][0] = append([]float32(nil), y.Value.Data...)
					out[k][1] = append([]float32(nil), xn.Grad...)
					out[k][2] = append([]float32(nil), gn.Grad...)
					if bn != nil {
						out[k][3] = append([]float32(nil), bn.Grad...)
					}
				}
				for q, name := range []string{"y", "x's gradient", "gain's gradient", "bias's gradient"} {
					if i := firstDiff(out[1][q], out[0][q]); i >= 0 {
						t.Fatalf("c=%d rows=%d bias %t: %s[%d] = %v, want %v", c, rows, withBias, name, i, out[1][q][i], out[0][q][i])
					}
				}
			}
		}
	}
}
