// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCNNPerSampleGradient checks the per-example gradients of the CNN
// (every tensor trainable) against central finite differences of each
// example's loss along a random unit direction of each tensor (Richardson
// extrapolated, as directionalCheckH), and the loss PerSample reports
// against the loss of a fresh tape.
func TestCNNPerSampleGradient(t *testing.T) {
	t.Parallel()
	c := smokeConfig(t)
	c.Classes = 5
	c.PEFT = PEFT{Method: "full"}
	m, err := NewCNN(c)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(m.Convs); got != 3 {
		t.Fatalf("%d convolutions, want 3", got)
	}
	l := NewLayout(m.Params())
	if len(l.Params) != len(m.Params()) {
		t.Fatalf("%d of %d tensors trainable with PEFT full", len(l.Params), len(m.Params()))
	}
	rng := rand.New(rand.NewPCG(2, 9))
	imgs := [][]float32{randImage(rng, c), randImage(rng, c), randImage(rng, c)}
	labels := []int{0, 3, 4}
	loss := func(tp *Tape, i int) (*Node, error) { return m.Loss(tp, imgs[i], labels[i], nil) }
	r, err := PerSample(l, len(imgs), loss, &Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	eval := func(i int) float64 {
		out, err := loss(NewTape(nil, nil), i)
		if err != nil {
			t.Fatal(err)
		}
		return float64(out.Value.Data[0])
	}
	// ReLU and max pooling have kinks that a step along a whole tensor
	// crosses, so the step is small and the tolerance loose, as for the
	// Fusion model's CNN in TestViTAndFusionGradient.
	const h = 1e-3
	for i := range imgs {
		if math.Abs(eval(i)-r.Losses[i]) > 1e-6 {
			t.Errorf("example %d: loss %v, per-sample %v", i, eval(i), r.Losses[i])
		}
		drng := rand.New(rand.NewPCG(11, uint64(i)))
		for k, p := range l.Params {
			v := make([]float32, len(p.Data))
			for j := range v {
				v[j] = float32(drng.NormFloat64())
			}
			scale(float32(1/Norm(v)), v)
			orig := slices.Clone(p.Data)
			diff := func(h float64) float64 {
				for j := range p.Data {
					p.Data[j] = orig[j] + float32(h)*v[j]
				}
				fp := eval(i)
				for j := range p.Data {
					p.Data[j] = orig[j] - float32(h)*v[j]
				}
				fm := eval(i)
				copy(p.Data, orig)
				return (fp - fm) / (2 * h)
			}
			num := (4*diff(h/2) - diff(h)) / 3
			got := Dot(l.Block(r.Grads[i], k), v)
			if math.Abs(got-num) > 3e-4+0.1*math.Abs(num) {
				t.Errorf("example %d, %s: directional derivative %.6g, finite differences %.6g", i, p.Name, got, num)
			}
		}
	}
}

// TestCNNShape checks the CNN's tensors: one row per output filter of each
// convolution (the rows SPARTA scores), the widths of CNNWidths, the
// kinds SPARTA and BitFit select by, and that PEFT none freezes every
// tensor while bitfit trains the biases, the norm gain's bias and the
// head.
func TestCNNShape(t *testing.T) {
	t.Parallel()
	c := smokeConfig(t)
	c.Classes = 4
	m, err := NewCNN(c)
	if err != nil {
		t.Fatal(err)
	}
	widths := CNNWidths(c)
	if want := []int{4, 8, 16}; !slices.Equal(widths, want) {
		t.Fatalf("widths %v, want %v", widths, want)
	}
	in := c.Channels
	for i, conv := range m.Convs {
		if want := []int{widths[i], in, 3, 3}; !slices.Equal(conv.W.Shape, want) {
			t.Errorf("conv %d weight shape %v, want %v", i, conv.W.Shape, want)
		}
		if conv.W.Rows() != widths[i] || conv.W.RowLen() != in*9 || conv.W.Kind != KindWeight || conv.B.Kind != KindBias {
			t.Errorf("conv %d: %d rows of %d, kinds %s, %s", i, conv.W.Rows(), conv.W.RowLen(), conv.W.Kind, conv.B.Kind)
		}
		in = widths[i]
	}
	if m.Head.W.Kind != KindHead || m.Norm.G.Kind != KindNorm {
		t.Errorf("head kind %s, norm kind %s", m.Head.W.Kind, m.Norm.G.Kind)
	}
	if l := NewLayout(m.Params()); l.Size != 0 {
		t.Errorf("PEFT none: %d trainable values", l.Size)
	}
	l, err := m.SetPEFT(PEFT{Method: "bitfit"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range l.Params {
		if p.Kind != KindBias && p.Kind != KindHead {
			t.Errorf("bitfit trains %s (%s)", p.Name, p.Kind)
		}
	}
	if _, _, err := m.Predict(make([]float32, 5)); err == nil {
		t.Errorf("Predict took an image of 5 values")
	}
}
