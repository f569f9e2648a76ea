// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// cacheCheck compares m's per-sample gradients, losses and summed gradient
// on batch with the cache vc (and 3 workers) against those without it (and
// one worker), bit for bit.
func cacheCheck(t *testing.T, what string, m *TinyMLLM, l *Layout, batch []Sequence, vc *VisualCache) {
	t.Helper()
	want, err := m.PerSample(l, batch, nil, nil, &Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.PerSample(l, batch, nil, nil, &Options{Workers: 3, Reuse: true, Visual: vc})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Losses, want.Losses) {
		t.Errorf("%s: losses with the cache differ", what)
	}
	for i := range batch {
		if !bitsEqual(got.Grads[i], want.Grads[i]) {
			t.Errorf("%s: gradient of example %d with the cache differs", what, i)
		}
	}
	g0, _, _, err := m.Gradient(l, batch, nil, nil, &Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	g1, _, _, err := m.Gradient(l, batch, nil, nil, &Options{Workers: 3, Visual: vc})
	if err != nil {
		t.Fatal(err)
	}
	if !bitsEqual(g0, g1) {
		t.Errorf("%s: summed gradient with the cache differs", what)
	}
}

// TestVisualCache checks that the cache of visual tokens gives the same
// bits as encoding every image, that it is read (a wrong entry changes the
// result), and that it never serves a token computed from other values:
// after a change to a frozen tensor of the projector or the encoder, to
// an encoder's LoRA scale, to an image in place, or with another model,
// the results are those of encoding anew. It is not used when the encoder
// or projector is trainable, and it respects its byte budget.
func TestVisualCache(t *testing.T) {
	t.Parallel()
	m, l := batchModel(t, batchCase{"bitfit lm", PEFT{Method: "bitfit", Parts: []string{"lm"}}, "", false, false, false})
	batch := raggedBatch(rand.New(rand.NewPCG(86, 86)), m.Config, 7)
	vc := NewVisualCache(1 << 30)
	cacheCheck(t, "first use", m, l, batch, vc)
	n := len(vc.tokens)
	if n != 7 { // 7 examples: one text-only, one with two images
		t.Fatalf("cache holds %d images, want 7", n)
	}
	cacheCheck(t, "from the cache", m, l, batch, vc)

	// A wrong entry must change the result: the cache is read.
	for k, v := range vc.tokens {
		v.Data[0] += 1
		vc.tokens[k] = v
	}
	r, err := m.PerSample(l, batch, nil, nil, &Options{Visual: vc})
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.PerSample(l, batch, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(r.Losses, want.Losses) {
		t.Fatal("a changed cache entry does not change the losses: the cache is not read")
	}

	m.Proj2.W.Data[3] += 0.5 // a frozen tensor changes: the cache is emptied
	cacheCheck(t, "projector weight changed", m, l, batch, vc)
	m.Vision.Stack.Blocks[0].LN1.B.Data[1] -= 0.25
	cacheCheck(t, "encoder bias changed", m, l, batch, vc)
	batch[0].Images[0][5] += 0.5 // an image changes in place
	cacheCheck(t, "image changed", m, l, batch, vc)

	other, lo := batchModel(t, batchCase{"bitfit lm", PEFT{Method: "bitfit", Parts: []string{"lm"}}, "", false, false, false})
	perturbAll(other, 87)
	cacheCheck(t, "another model", other, lo, batch, vc)

	c := m.Config
	c.PEFT = PEFT{Method: "lora", Targets: []string{"q"}, Parts: []string{"vision", "lm"}, BInitStd: 0.1}
	vm, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	lv := NewLayout(vm.Params())
	if vm.visualCache(lv, &Options{Visual: vc}) != nil {
		t.Error("the cache is used with LoRA in the encoder")
	}
	frozen := NewLayout(vm.LM.Params()) // the encoder's LoRA factors frozen: the cache applies
	cacheCheck(t, "frozen encoder LoRA", vm, frozen, batch, vc)
	vm.Vision.Stack.Blocks[0].Q.LoRAScale *= 2
	cacheCheck(t, "encoder LoRA scale changed", vm, frozen, batch, vc)

	small := NewVisualCache(int64(4 * 3 * (m.Config.Patches() + 1) * m.Config.Width))
	cacheCheck(t, "budget of 3 images", m, l, batch, small)
	if len(small.tokens) != 3 || small.Bytes() <= small.bytes {
		t.Errorf("cache of 3 images' budget holds %d images, %d bytes in all", len(small.tokens), small.Bytes())
	}
}
