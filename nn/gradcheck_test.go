// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// randTensor returns a tensor with N(0, std²) entries.
func randTensor(rng *rand.Rand, std float64, shape ...int) Tensor {
	x := NewTensor(shape...)
	for i := range x.Data {
		x.Data[i] = float32(rng.NormFloat64() * std)
	}
	return x
}

// fdCheck compares the gradients that the tape computes for every element
// of inputs with central finite differences of f,
// (f(x+h·e_i) − f(x−h·e_i))/(2h), the check of gonum
// optimize/functions/validate.go adapted to float32: h = 5e-3 balances
// the O(h²) truncation against float32 rounding, and the tolerance is
// |analytic − numeric| ≤ atol + rtol·|numeric|. At most maxPer elements of each
// input are checked (chosen at random) to keep the test fast.
func fdCheck(t *testing.T, name string, inputs []Tensor, f func(tp *Tape, in []*Node) *Node, atol, rtol float64, maxPer int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 7))
	tp := NewTape(nil, nil)
	nodes := make([]*Node, len(inputs))
	for i, x := range inputs {
		nodes[i] = tp.Input(x, true)
	}
	out := f(tp, nodes)
	if len(out.Value.Data) != 1 {
		t.Fatalf("%s: loss is not a scalar", name)
	}
	tp.Backward(out)
	eval := func() float64 {
		tp := NewTape(nil, nil)
		in := make([]*Node, len(inputs))
		for i, x := range inputs {
			in[i] = tp.Input(x, false)
		}
		return float64(f(tp, in).Value.Data[0])
	}
	const h = 5e-3
	for k, x := range inputs {
		idx := rng.Perm(len(x.Data))
		if len(idx) > maxPer {
			idx = idx[:maxPer]
		}
		for _, j := range idx {
			old := x.Data[j]
			x.Data[j] = old + h
			fp := eval()
			x.Data[j] = old - h
			fm := eval()
			x.Data[j] = old
			num := (fp - fm) / (2 * h)
			var got float64
			if nodes[k].Grad != nil {
				got = float64(nodes[k].Grad[j])
			}
			if math.Abs(got-num) > atol+rtol*math.Abs(num) {
				t.Errorf("%s: input %d element %d: got gradient %.6g, want %.6g (finite differences)", name, k, j, got, num)
			}
		}
	}
}

// project turns y into a scalar Σ c_i·y_i with fixed pseudo-random c, so
// every output element takes part in the check.
func project(tp *Tape, y *Node) *Node {
	rng := rand.New(rand.NewPCG(3, uint64(len(y.Value.Data))))
	c := randTensor(rng, 1, len(y.Value.Data))
	return tp.Sum(tp.Mul(tp.Reshape(y, len(y.Value.Data)), tp.Input(c, false)))
}

func TestOpGradients(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	for _, tc := range []struct {
		desc   string
		inputs []Tensor
		f      func(tp *Tape, in []*Node) *Node
	}{
		{"affine", []Tensor{randTensor(rng, 1, 3, 4), randTensor(rng, 1, 5, 4), randTensor(rng, 1, 5)},
			func(tp *Tape, in []*Node) *Node { return project(tp, tp.Affine(in[0], in[1], in[2])) }},
		{"affine without bias", []Tensor{randTensor(rng, 1, 2, 3, 4), randTensor(rng, 1, 2, 4)},
			func(tp *Tape, in []*Node) *Node { return project(tp, tp.Affine(in[0], in[1], nil)) }},
		{"add rows", []Tensor{randTensor(rng, 1, 3, 4), randTensor(rng, 1, 4)},
			func(tp *Tape, in []*Node) *Node { return project(tp, tp.AddRows(in[0], in[1])) }},
		{"gelu", []Tensor{randTensor(rng, 2, 3, 5)},
			func(tp *Tape, in []*Node) *Node { return project(tp, tp.GELU(in[0])) }},
		{"tanh", []Tensor{randTensor(rng, 1, 7)},
			func(tp *Tape, in []*Node) *Node { return project(tp, tp.Tanh(in[0])) }},
		{"relu", []Tensor{randTensor(rng, 1, 9)},
			func(tp *Tape, in []*Node) *Node { return project(tp, tp.ReLU(in[0])) }},
		{"layernorm", []Tensor{randTensor(rng, 1, 3, 6), randTensor(rng, 1, 6), randTensor(rng, 1, 6)},
			func(tp *Tape, in []*Node) *Node { return project(tp, tp.LayerNorm(in[0], in[1], in[2], 1e-5)) }},
		{"embed", []Tensor{randTensor(rng, 1, 5, 3)},
			func(tp *Tape, in []*Node) *Node { return project(tp, tp.Embed(in[0], []int{4, 0, 4, 2})) }},
		{"slice concat", []Tensor{randTensor(rng, 1, 4, 3), randTensor(rng, 1, 2, 3)},
			func(tp *Tape, in []*Node) *Node {
				return project(tp, tp.Concat(tp.Slice(in[0], 1, 3), in[1], tp.Slice(in[0], 0, 1)))
			}},
		{"concat cols", []Tensor{randTensor(rng, 1, 2, 3), randTensor(rng, 1, 2, 2)},
			func(tp *Tape, in []*Node) *Node { return project(tp, tp.ConcatCols(in[0], in[1])) }},
		{"mean rows", []Tensor{randTensor(rng, 1, 4, 3)},
			func(tp *Tape, in []*Node) *Node { return project(tp, tp.MeanRows(in[0])) }},
		{"weighted", []Tensor{randTensor(rng, 1, 4), randTensor(rng, 1, 4)},
			func(tp *Tape, in []*Node) *Node { return project(tp, tp.Weighted([]float32{0.5, -2}, in[0], in[1])) }},
		{"cross entropy mean", []Tensor{randTensor(rng, 2, 3, 5)},
			func(tp *Tape, in []*Node) *Node { return tp.CrossEntropy(in[0], []int{1, 4, 0}, nil) }},
		{"cross entropy weighted", []Tensor{randTensor(rng, 2, 3, 5)},
			func(tp *Tape, in []*Node) *Node { return tp.CrossEntropy(in[0], []int{2, 2, 3}, []float32{1, 0.25, 0}) }},
		{"attention bidirectional", []Tensor{randTensor(rng, 1, 5, 6), randTensor(rng, 1, 5, 6), randTensor(rng, 1, 5, 6)},
			func(tp *Tape, in []*Node) *Node {
				o, _ := tp.Attention(in[0], in[1], in[2], 2, false)
				return project(tp, o)
			}},
		{"attention causal", []Tensor{randTensor(rng, 1, 4, 6), randTensor(rng, 1, 4, 6), randTensor(rng, 1, 4, 6)},
			func(tp *Tape, in []*Node) *Node {
				o, _ := tp.Attention(in[0], in[1], in[2], 3, true)
				return project(tp, o)
			}},
		{"rotary", []Tensor{randTensor(rng, 1, 5, 8)},
			func(tp *Tape, in []*Node) *Node { return project(tp, tp.Rotary(in[0], 2)) }},
		{"smear keys", []Tensor{randTensor(rng, 1, 5, 6), randTensor(rng, 1, 3)},
			func(tp *Tape, in []*Node) *Node { return project(tp, tp.SmearKeys(in[0], in[1], 3)) }},
		{"head patch", []Tensor{randTensor(rng, 1, 3, 4)},
			func(tp *Tape, in []*Node) *Node {
				return project(tp, tp.Patch(in[0], 2, []HeadPatch{{Pos: -1, Head: 1, Value: []float32{1, 2}}}))
			}},
		{"mix", []Tensor{randTensor(rng, 1, 4, 3)},
			func(tp *Tape, in []*Node) *Node {
				m := TokenMix{Rows: []MixRow{{Src: []int{0}, Weight: []float32{1}}, {Src: []int{3, 1, 2}, Weight: []float32{1, 0.5, 0.5}, Add: []float32{1, 1, 1}}}}
				return project(tp, tp.Mix(in[0], m))
			}},
		{"conv2d pad stride", []Tensor{randTensor(rng, 1, 2, 5, 5), randTensor(rng, 1, 3, 2, 3, 3), randTensor(rng, 1, 3)},
			func(tp *Tape, in []*Node) *Node { return project(tp, tp.Conv2d(in[0], in[1], in[2], 2, 1)) }},
		{"conv2d", []Tensor{randTensor(rng, 1, 1, 4, 4), randTensor(rng, 1, 2, 1, 2, 2)},
			func(tp *Tape, in []*Node) *Node { return project(tp, tp.Conv2d(in[0], in[1], nil, 1, 0)) }},
		{"groupnorm", []Tensor{randTensor(rng, 1, 4, 3, 3), randTensor(rng, 1, 4), randTensor(rng, 1, 4)},
			func(tp *Tape, in []*Node) *Node { return project(tp, tp.GroupNorm(in[0], in[1], in[2], 2, 1e-5)) }},
		{"groupnorm per channel without bias", []Tensor{randTensor(rng, 1, 3, 2, 3), randTensor(rng, 1, 3)},
			func(tp *Tape, in []*Node) *Node { return project(tp, tp.GroupNorm(in[0], in[1], nil, 3, 1e-5)) }},
		{"maxpool", []Tensor{randTensor(rng, 1, 2, 4, 5)},
			func(tp *Tape, in []*Node) *Node { return project(tp, tp.MaxPool(in[0], 2)) }},
		{"avgpool", []Tensor{randTensor(rng, 1, 2, 3, 3)},
			func(tp *Tape, in []*Node) *Node { return project(tp, tp.AvgPool(in[0])) }},
		{"patchify", []Tensor{randTensor(rng, 1, 2, 4, 4)},
			func(tp *Tape, in []*Node) *Node { return project(tp, tp.Patchify(in[0], 2)) }},
	} {
		fdCheck(t, tc.desc, tc.inputs, tc.f, 3e-4, 2e-3, 64)
	}
}

func TestAttentionProbs(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(2, 2))
	q, k, v := randTensor(rng, 1, 4, 4), randTensor(rng, 1, 4, 4), randTensor(rng, 1, 4, 4)
	tp := NewTape(nil, nil)
	out, p := tp.Attention(tp.Input(q, false), tp.Input(k, false), tp.Input(v, false), 2, true)
	// Reference: a direct float64 evaluation of softmax(q_h k_hᵀ/√2)·v_h
	// with the causal mask, head by head.
	for h := 0; h < 2; h++ {
		for i := 0; i < 4; i++ {
			var w [4]float64
			var s float64
			for j := 0; j <= i; j++ {
				var d float64
				for c := 0; c < 2; c++ {
					d += float64(q.Data[i*4+h*2+c]) * float64(k.Data[j*4+h*2+c])
				}
				w[j] = math.Exp(d / math.Sqrt2)
				s += w[j]
			}
			for j := 0; j < 4; j++ {
				want := w[j] / s
				if got := float64(p.Data[(h*4+i)*4+j]); math.Abs(got-want) > 1e-6 {
					t.Errorf("probs[%d,%d,%d] = %v, want %v", h, i, j, got, want)
				}
			}
			for c := 0; c < 2; c++ {
				var want float64
				for j := 0; j <= i; j++ {
					want += w[j] / s * float64(v.Data[j*4+h*2+c])
				}
				if got := float64(out.Value.Data[i*4+h*2+c]); math.Abs(got-want) > 1e-5 {
					t.Errorf("out[%d,%d] = %v, want %v", i, h*2+c, got, want)
				}
			}
		}
	}
}

func TestGELUValues(t *testing.T) {
	t.Parallel()
	// Values of x·Φ(x) from the closed form Φ(x) = (1+erf(x/√2))/2:
	// GELU(1) = 0.8413447460685429, GELU(−2) = −0.04550026389635842
	// (Φ(1) and 2·Φ(−2) from the standard normal table).
	tp := NewTape(nil, nil)
	y := tp.GELU(tp.Input(Tensor{Shape: []int{3}, Data: []float32{1, -2, 0}}, false))
	// Tolerance: gelu32's bound |ΔΦ| ≤ 2.5e-7 times |x|, plus the
	// rounding of the product (vmath.go).
	xs := []float64{1, -2, 0}
	for i, want := range []float64{0.8413447460685429, -0.04550026389635842, 0} {
		if got := float64(y.Value.Data[i]); math.Abs(got-want) > 2.5e-7*math.Abs(xs[i])+6e-8*math.Abs(want) {
			t.Errorf("GELU[%d] = %v, want %v", i, got, want)
		}
	}
}
