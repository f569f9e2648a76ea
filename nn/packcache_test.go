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

// TestGemmPanels checks a product with panels packed ahead (packWeight,
// gemmWith) against the same product packing its own panels (gemm, itself
// checked against a naive product in gemm_test.go), bit for bit, for every
// kernel the CPU runs, with β = 0 and 1, over shapes with partial panels
// and partial tiles.
func TestGemmPanels(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	for _, kern := range gemmKernels() {
		for _, m := range []int{1, 3, 6, 7, 13, 40} {
			for _, n := range []int{1, 8, 16, 17, 33, 96} {
				for _, k := range []int{1, 7, 8, 24, 65} {
					a, b := randFloats(rng, m*k), randFloats(rng, n*k)
					c0 := randFloats(rng, m*n)
					pw := packWeight(kern, b, n, k)
					if !slices.Equal(pw.src, b) || pw.nr != kern.nr {
						t.Fatalf("%s: packWeight kept other values", kern.name)
					}
					for _, beta := range []float32{0, 1} {
						want, got := slices.Clone(c0), slices.Clone(c0)
						gemm(kern, false, true, m, n, k, 0.5, a, k, b, k, beta, want, n)
						gemmWith(kern, false, true, m, n, k, 0.5, a, k, b, k, pw.panels, beta, got, n)
						if !equalBits(got, want) {
							t.Errorf("%s: %d×%d×%d, β = %v: packed ahead differs", kern.name, m, n, k, beta)
						}
					}
				}
			}
		}
	}
}

// randFloats returns n draws of N(0, 1) as float32.
func randFloats(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

// TestPackCacheStale checks that a weight's cached packing never serves
// values the weight no longer holds: after MeanLosses has packed the
// frozen weights, a frozen weight changed in place gives the ordinary
// tape's losses of the changed model (refLogits, which packs every
// product anew), in MeanLosses and in TokenLosses, not the old ones; and
// that MeanLosses leaves the tensors of its layout (DPZO's perturbed ones)
// uncached.
func TestPackCacheStale(t *testing.T) {
	c, err := Preset("smoke", 120)
	if err != nil {
		t.Fatal(err)
	}
	c.PEFT = PEFT{Method: "lora", Rank: 4, Alpha: 8, Targets: []string{"q", "v", "fc1"}}
	m, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	var lora []*Param
	for _, p := range m.Params() {
		if p.Kind == KindLoRAB {
			for j := range p.Data {
				p.Data[j] = 0.1
			}
		}
		if p.Kind == KindLoRAA || p.Kind == KindLoRAB {
			lora = append(lora, p)
		}
	}
	l := NewLayout(lora)
	batch := inferBatch(m)
	// want returns the mean losses of the ordinary tape (refLogits:
	// every product packs its panels), as TestInferBitwise forms them.
	want := func() []float64 {
		out := make([]float64, len(batch))
		probs := make([]float32, c.Vocab)
		for e := range batch {
			s := &batch[e]
			ref, pos := refLogits(t, m, s, nil)
			n := 0
			for i, marked := range s.Loss {
				if marked {
					row := ref.Row(pos[i] - 1)
					out[e] += softmaxRow(row, probs) - float64(row[s.Tokens[i]])
					n++
				}
			}
			out[e] /= float64(n)
		}
		return out
	}
	check := func(stage string) {
		t.Helper()
		ref := want()
		got := make([]float64, len(batch))
		if err := m.MeanLosses(l, batch, nil, got); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, ref) {
			t.Errorf("%s: MeanLosses %v, the ordinary tape %v", stage, got, ref)
		}
		for e := range batch {
			losses, _, err := m.TokenLosses(&batch[e], nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			mean := 0.0
			for _, v := range losses {
				mean += v
			}
			if mean /= float64(len(losses)); mean != ref[e] {
				t.Errorf("%s: sequence %d: TokenLosses' mean %v, the ordinary tape %v", stage, e, mean, ref[e])
			}
		}
	}
	got := make([]float64, len(batch))
	if err := m.MeanLosses(l, batch, nil, got); err != nil {
		t.Fatal(err)
	}
	blk := m.LM.Blocks[0]
	if blk.Q.W.pack.Load() == nil || m.Tok.pack.Load() == nil {
		t.Fatal("MeanLosses cached no packing of the frozen weights")
	}
	for _, p := range lora {
		if p.pack.Load() != nil {
			t.Errorf("%s, in MeanLosses' layout, was cached", p.Name)
		}
	}
	check("first")
	before := want()
	// Change frozen weights in place, as an optimizer or a checkpoint
	// load would: a query weight, the MLP's input and the tied
	// embeddings' output product.
	blk.Q.W.Data[5] += 0.5
	blk.MLP.FC1.W.Data[17] -= 0.5
	m.Tok.Data[3*c.Width+1] += 0.5
	if slices.Equal(want(), before) {
		t.Fatal("the changes do not change the losses: the test checks nothing")
	}
	check("changed")
}

// TestBitsEqual32 checks bitsEqual32 against math.Float32bits element by
// element: −0 and +0 differ, a NaN equals the same NaN, a difference in
// the last element or in length counts.
func TestBitsEqual32(t *testing.T) {
	nan := float32(math.NaN())
	negZero := float32(math.Copysign(0, -1))
	a := []float32{1, 0, nan, 3}
	for _, c := range []struct {
		b    []float32
		want bool
	}{
		{[]float32{1, 0, nan, 3}, true},
		{[]float32{1, negZero, nan, 3}, false},
		{[]float32{1, 0, nan, math.Nextafter32(3, 4)}, false},
		{[]float32{1, 0, nan}, false},
	} {
		ref := len(a) == len(c.b)
		for i := 0; ref && i < len(a); i++ {
			ref = math.Float32bits(a[i]) == math.Float32bits(c.b[i])
		}
		if got := bitsEqual32(a, c.b); got != c.want || got != ref {
			t.Errorf("bitsEqual32(%v, %v) = %v, want %v", a, c.b, got, c.want)
		}
	}
	if !bitsEqual32(nil, []float32{}) {
		t.Error("bitsEqual32 of two empty slices is false")
	}
}

// TestPackWeights checks a PackWeights period: TokenLosses, Generate, and
// Forward and ForwardBatch on inference tapes inside it give the bits they
// give outside it (themselves checked against the ordinary tape by
// TestInferBitwise); a nested period's end
// does not end the outer one; and the end panics when a weight changed
// within the period.
func TestPackWeights(t *testing.T) {
	for name, m := range inferShapes(t) {
		batch := inferBatch(m)
		type out struct {
			losses []float64
			gen    []int
			hid    []float32 // Forward on an inference tape
		}
		run := func() []out {
			var o []out
			for e := range batch {
				s := &batch[e]
				losses, _, err := m.TokenLosses(s, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				k := slices.Index(s.Loss, true)
				gen, err := m.Generate(&Sequence{Tokens: s.Tokens[:k], Images: s.Images}, 3, Sampler{}, nil, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				tp := NewInferenceTape()
				hid, _, err := m.Forward(tp, s, nil, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				o = append(o, out{losses, gen, slices.Clone(hid.Value.Data)})
				tp.Release()
			}
			tp := NewInferenceTape()
			defer tp.Release()
			hid, _, _, err := m.ForwardBatch(tp, batch)
			if err != nil {
				t.Fatal(err)
			}
			return append(o, out{hid: slices.Clone(hid.Value.Data)})
		}
		want := run()
		end := m.PackWeights()
		m.PackWeights()() // nested: a no-op
		if m.packPeriod() == nil {
			t.Fatalf("%s: a nested period ended the outer one", name)
		}
		got := run()
		if m.Tok.pack.Load() == nil {
			t.Errorf("%s: the passes of the period packed no weight ahead", name)
		}
		end()
		if m.packPeriod() != nil {
			t.Fatalf("%s: the period did not end", name)
		}
		for e := range got {
			if !slices.Equal(got[e].losses, want[e].losses) || !slices.Equal(got[e].gen, want[e].gen) || !equalBits(got[e].hid, want[e].hid) {
				t.Errorf("%s: sequence %d: the passes in a PackWeights period differ", name, e)
			}
		}
	}
	m := inferShapes(t)["anchor"]
	end := m.PackWeights()
	if _, _, err := m.TokenLosses(&inferBatch(m)[0], nil, nil); err != nil {
		t.Fatal(err)
	}
	m.Tok.Data[7] += 1
	defer func() {
		if recover() == nil {
			t.Error("ending a period after a weight changed did not panic")
		}
	}()
	end()
}
