// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCNNPerSampleGradient checks the per-example gradients of the CNN
// (every tensor trainable) against central finite differences of each
// example's loss along a random unit direction of each tensor (Richardson
// extrapolated, as directionalCheckH), and the loss PerSample reports
// against the loss of a fresh tape, without and with group norms in the
// blocks.
func TestCNNPerSampleGradient(t *testing.T) {
	t.Parallel()
	for _, groups := range []int{0, 2} {
		t.Run(fmt.Sprintf("groups=%d", groups), func(t *testing.T) {
			t.Parallel()
			testCNNPerSampleGradient(t, groups)
		})
	}
}

func testCNNPerSampleGradient(t *testing.T, groups int) {
	c := smokeConfig(t)
	c.Classes = 5
	c.ConvGroups = groups
	c.PEFT = PEFT{Method: "full"}
	m, err := NewCNN(c)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(m.Convs); got != 3 {
		t.Fatalf("%d convolutions, want 3", got)
	}
	if want := 10 + 6*min(groups, 1); len(m.Params()) != want {
		t.Fatalf("%d tensors, want %d", len(m.Params()), want)
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

// TestGroupNormValues checks Tape.GroupNorm's output against a slow
// reference written from the definition (Wu and He, ECCV 2018): each
// group's mean and biased variance in float64, (x − μ)/√(σ² + ε), then the
// channel's gain and bias.
func TestGroupNormValues(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(4, 4))
	const C, H, W, groups, eps = 6, 3, 2, 3, 1e-5
	x, g, b := randTensor(rng, 2, C, H, W), randTensor(rng, 1, C), randTensor(rng, 1, C)
	tp := NewTape(nil, nil)
	y := tp.GroupNorm(tp.Input(x, false), tp.Input(g, false), tp.Input(b, false), groups, eps)
	per, hw := C/groups, H*W
	for k := range groups {
		vals := x.Data[k*per*hw : (k+1)*per*hw]
		var m, v float64
		for _, e := range vals {
			m += float64(e)
		}
		m /= float64(len(vals))
		for _, e := range vals {
			v += (float64(e) - m) * (float64(e) - m)
		}
		v /= float64(len(vals))
		for j := range vals {
			i := k*per*hw + j
			c := i / hw
			want := (float64(x.Data[i])-m)/math.Sqrt(v+eps)*float64(g.Data[c]) + float64(b.Data[c])
			if math.Abs(float64(y.Value.Data[i])-want) > 1e-5 {
				t.Errorf("element %d: %v, want %v", i, y.Value.Data[i], want)
			}
		}
	}
	c := smokeConfig(t)
	c.Classes, c.ConvGroups = 3, 3 // does not divide the first width, 4
	if _, err := NewCNN(c); err == nil {
		t.Errorf("NewCNN took conv_groups 3 for widths %v", CNNWidths(c))
	}
}
