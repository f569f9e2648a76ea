// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// everyOther returns the rows of p whose index is 1 mod 3 (a gathered
// row list that leaves out the first row and most others).
func everyOther(p *Param) []int {
	var r []int
	for i := 1; i < p.Rows(); i += 3 {
		r = append(r, i)
	}
	return r
}

// checkGathered compares the per-sample gradients of the gathered layout
// g with those of the full layout f over the same trainable tensors (the
// reference: the full backward pass, itself checked against finite
// differences in gradcheck_test.go): each gathered block must be the
// full gradient's rows, bit for bit (the same products over the same
// inner dimension), and the other tensors' blocks equal.
func checkGathered(t *testing.T, f, g *Layout, rf, rg *Result) {
	t.Helper()
	for e := range rf.Grads {
		for i, p := range f.Params {
			full := f.Block(rf.Grads[e], i)
			j := g.Index(p)
			if j < 0 {
				t.Fatalf("%s is not in the gathered layout", p.Name)
			}
			got := g.Block(rg.Grads[e], j)
			want := make([]float32, len(got))
			g.gather(want, full, j)
			if !slices.Equal(got, want) {
				t.Fatalf("example %d: %s: gathered gradient differs from the full gradient's rows %v", e, p.Name, g.Rows(j))
			}
		}
		if rf.Losses[e] != rg.Losses[e] {
			t.Fatalf("example %d: loss %v, full layout %v", e, rg.Losses[e], rf.Losses[e])
		}
	}
}

// TestGatherRowsViT checks GatherRows on the smoke ViT: the per-sample
// gradients of a layout gathering every third row of each weight matrix
// are the full layout's at those rows, and SetGrad scatters them with
// zeros elsewhere.
func TestGatherRowsViT(t *testing.T) {
	t.Parallel()
	c := smokeConfig(t)
	c.Classes = 5
	m, err := NewViT(c)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	imgs := [][]float32{randImage(rng, c), randImage(rng, c), randImage(rng, c)}
	loss := func(tp *Tape, i int) (*Node, error) { return m.Loss(tp, imgs[i], i%5, nil) }
	all := func(*Param) bool { return true }
	rows := func(p *Param) []int {
		if p.Kind == KindWeight {
			return everyOther(p)
		}
		return nil
	}
	f := SetTrainable(m, all)
	rf, err := PerSample(f, len(imgs), loss, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := GatherRows(m, all, rows)
	if g.Size >= f.Size {
		t.Fatalf("gathered layout of %d elements, full %d", g.Size, f.Size)
	}
	rg, err := PerSample(g, len(imgs), loss, &Options{Workers: 2, Reuse: true})
	if err != nil {
		t.Fatal(err)
	}
	checkGathered(t, f, g, rf, rg)

	// SetGrad: the gathered rows at their place, zero elsewhere.
	for _, p := range m.Params() {
		for i := range p.Grad {
			p.Grad[i] = 7
		}
	}
	g.SetGrad(rg.Grads[0])
	for i, p := range g.Params {
		want := slices.Clone(f.Block(rf.Grads[0], f.Index(p)))
		if r := g.Rows(i); r != nil {
			rl := p.RowLen()
			for row := range p.Rows() {
				if !slices.Contains(r, row) {
					clear(want[row*rl : (row+1)*rl])
				}
			}
		}
		if !slices.Equal(p.Grad, want) {
			t.Fatalf("%s: SetGrad of a gathered layout: wrong gradient", p.Name)
		}
	}
	// Values and SetValues round-trip.
	v := g.Values()
	before := slices.Clone(m.Head.W.Data)
	g.SetValues(v)
	if !slices.Equal(before, m.Head.W.Data) {
		t.Fatal("SetValues(Values()) changed the model")
	}
}

// convModule is a toy module: one convolution and a linear read-out.
type convModule struct{ w, b, h *Param }

func (c *convModule) Params() []*Param { return []*Param{c.w, c.b, c.h} }

// TestGatherRowsConv checks GatherRows on a convolution: the gathered
// filters' gradients are the full layout's, bit for bit.
func TestGatherRowsConv(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	const C, H, F, k = 2, 6, 5, 3
	m := &convModule{w: newParam("conv.weight", KindWeight, F, C, k, k), b: newParam("conv.bias", KindBias, F),
		h: newParam("head.weight", KindHead, 3, F*4*4)}
	for _, p := range m.Params() {
		p.initNormal(rng, 0.5)
	}
	xs := make([][]float32, 3)
	for i := range xs {
		xs[i] = make([]float32, C*H*H)
		for j := range xs[i] {
			xs[i][j] = float32(rng.NormFloat64())
		}
	}
	loss := func(tp *Tape, i int) (*Node, error) {
		x := tp.Input(Tensor{Shape: []int{C, H, H}, Data: xs[i]}, false)
		y := tp.ReLU(tp.Conv2d(x, tp.Param(m.w), tp.Param(m.b), 1, 0))
		z := tp.Affine(tp.Reshape(y, 1, F*4*4), tp.Param(m.h), nil)
		return tp.CrossEntropy(z, []int{i % 3}, nil), nil
	}
	all := func(*Param) bool { return true }
	f := SetTrainable(m, all)
	rf, err := PerSample(f, len(xs), loss, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := GatherRows(m, all, func(p *Param) []int {
		switch p {
		case m.w:
			return []int{0, 3, 4}
		case m.h:
			return []int{1}
		}
		return nil
	})
	rg, err := PerSample(g, len(xs), loss, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkGathered(t, f, g, rf, rg)
}

// TestGatherRowsMisuse checks that a gathered parameter used outside
// Affine and Conv2d panics rather than writing a full gradient into its
// gathered block, and that an invalid row list panics.
func TestGatherRowsMisuse(t *testing.T) {
	t.Parallel()
	p := newParam("emb", KindWeight, 4, 3)
	m := &convModule{w: p, b: newParam("b", KindBias, 1), h: newParam("h", KindHead, 1)}
	l := GatherRows(m, func(q *Param) bool { return q == p }, func(q *Param) []int {
		if q == p {
			return []int{2}
		}
		return nil
	})
	func() {
		defer func() {
			if r := recover(); r != errGathered {
				t.Errorf("Embed of a gathered table: recovered %v, want %v", r, errGathered)
			}
		}()
		tp := NewTape(l, make([]float32, l.Size))
		tp.Backward(tp.Sum(tp.Embed(tp.Param(p), []int{2})))
	}()
	func() {
		defer func() {
			if recover() == nil {
				t.Error("rows {2, 1}: no panic")
			}
		}()
		GatherRows(m, func(*Param) bool { return true }, func(*Param) []int { return []int{2, 1} })
	}()
}
