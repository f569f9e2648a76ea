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

func TestLayerOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, want string }{
		{"lm.blocks.2.attn.q.lora_a", "lm.blocks.2"},
		{"vision.blocks.10.ln1.weight", "vision.blocks.10"},
		{"projector.fc1.weight", "projector.fc1"},
		{"lm.tok", "lm.tok"},
		{"head.bias", "head"},
		{"head.weight", "head"},
		{"vision.cls", "vision.cls"},
		{"text.pos", "text.pos"},
		{"image.conv0.weight", "image.conv0"},
	} {
		if got := LayerOf(tc.name); got != tc.want {
			t.Errorf("LayerOf(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestMaskedPerSample checks that a row mask in Options zeroes exactly the
// masked rows of every per-sample gradient and leaves the rest unchanged,
// and that per-layer clipping bounds every layer's norm.
func TestMaskedPerSample(t *testing.T) {
	t.Parallel()
	c := smokeConfig(t)
	c.PEFT = PEFT{Method: "full"}
	m, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLayout(m.Params())
	rng := rand.New(rand.NewPCG(30, 30))
	batch := []Sequence{vqa(rng, c, 3, 2), vqa(rng, c, 5, 1), vqa(rng, c, 2, 2)}
	loss := func(tp *Tape, i int) (*Node, error) { return m.Loss(tp, &batch[i], nil, nil) }
	// Keep the even rows of weights (SPARTA-style row groups) and all
	// other kinds.
	mask := l.RowMask(func(p *Param, row int) bool { return p.Kind != KindWeight || row%2 == 0 })
	full, err := PerSample(l, len(batch), loss, nil)
	if err != nil {
		t.Fatal(err)
	}
	masked, err := PerSample(l, len(batch), loss, &Options{Mask: mask})
	if err != nil {
		t.Fatal(err)
	}
	for i := range batch {
		for j, v := range masked.Grads[i] {
			want := full.Grads[i][j] * mask[j]
			if v != want {
				t.Fatalf("example %d element %d: masked gradient %v, want %v", i, j, v, want)
			}
		}
	}
	// The non-private path applies the same mask: Gradient with the mask
	// is the sum of the masked per-sample gradients.
	g, _, _, err := Gradient(l, len(batch), loss, &Options{Mask: mask})
	if err != nil {
		t.Fatal(err)
	}
	want := Sum(nil, masked.Grads)
	for j, v := range g {
		if mask[j] == 0 && v != 0 || math.Abs(float64(v-want[j])) > 1e-6*(1+math.Abs(float64(want[j]))) {
			t.Fatalf("element %d (mask %v): masked batch gradient %v, sum of masked per-sample %v", j, mask[j], v, want[j])
		}
	}
	// Row r of a weight [out, in] is the r-th output neuron: check one
	// element by index.
	q := Lookup(m, "lm.blocks.0.attn.q.weight")
	k := l.Index(q)
	b := l.Block(masked.Grads[0], k)
	if slices.ContainsFunc(b[q.RowLen():2*q.RowLen()], func(v float32) bool { return v != 0 }) {
		t.Error("row 1 of lm.blocks.0.attn.q.weight not masked")
	}

	parts, names := l.Groups(func(p *Param) string { return LayerOf(p.Name) })
	if !slices.Contains(names, "lm.blocks.0") || !slices.Contains(names, "projector.fc1") {
		t.Fatalf("groups %v", names)
	}
	cs := make([]float64, len(names))
	for i := range cs {
		cs[i] = 0.01 * float64(i+1)
	}
	rule := ClipRule{Part: parts, C: cs}
	ClipAll(full.Grads, rule)
	for i, g := range full.Grads {
		for k, n := range Norms(g, rule) {
			if n > cs[k] {
				t.Errorf("example %d layer %s: norm %v > %v", i, names[k], n, cs[k])
			}
		}
	}
}

// TestTapeBytesShrinkWithTokens checks that the memory instrumentation sees
// visual-token pruning: fewer tokens, smaller tapes (Dual-Priv's memory
// claim is measured this way).
func TestTapeBytesShrinkWithTokens(t *testing.T) {
	t.Parallel()
	c, err := Preset("small", 100)
	if err != nil {
		t.Fatal(err)
	}
	c.PEFT.Method = "lora"
	m, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLayout(m.Params())
	rng := rand.New(rand.NewPCG(31, 31))
	batch := []Sequence{vqa(rng, c, 8, 2), vqa(rng, c, 8, 2)}
	keep := func(index int, tokens, cls Tensor) TokenMix {
		return Identity(5) // [CLS] and the first 4 patches
	}
	full, err := m.PerSample(l, batch, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	pruned, err := m.PerSample(l, batch, nil, keep, nil)
	if err != nil {
		t.Fatal(err)
	}
	if pruned.Stats.TapeBytes >= full.Stats.TapeBytes {
		t.Errorf("tape bytes %d with 5 visual tokens, %d with 17", pruned.Stats.TapeBytes, full.Stats.TapeBytes)
	}
	var mt Meter
	mt.Add(full.Stats.Elapsed, full.Stats, ModelBytes(m))
	mt.Add(pruned.Stats.Elapsed, pruned.Stats, ModelBytes(m))
	if mt.Steps != 2 || mt.PeakBytes != max(full.Stats.PeakBytes(), pruned.Stats.PeakBytes())+ModelBytes(m) || mt.PerStep() <= 0 {
		t.Errorf("meter %+v", mt)
	}
}
