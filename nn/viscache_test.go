// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
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
	if vm.VisualCacheFor(lv, &Options{Visual: vc}) != nil {
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

// pruneTransform is a miniature of Dual-Priv's token pruning for the cache
// tests: [CLS], the patch [CLS] attends to most (mean over heads), and
// the others merged into one token, plus an offset that depends on the
// image's index and [CLS] token (as Dual-Priv's fusion noise depends on
// its stream).
func pruneTransform(index int, tokens, cls Tensor) TokenMix {
	n1, width := tokens.Rows(), tokens.Cols()
	heads := cls.Rows()
	best, bestScore := 1, float32(-1)
	for j := 1; j < n1; j++ {
		s := float32(0)
		for h := range heads {
			s += cls.Data[h*n1+j]
		}
		if s > bestScore {
			best, bestScore = j, s
		}
	}
	var rest []int
	var w []float32
	for j := 1; j < n1; j++ {
		if j != best {
			rest = append(rest, j)
			w = append(w, 1/float32(n1-2))
		}
	}
	add := make([]float32, width)
	for d := range add {
		add[d] = 0.01 * float32(index+1) * tokens.Data[d]
	}
	return TokenMix{Rows: []MixRow{{Src: []int{0}, Weight: []float32{1}}, {Src: []int{best}, Weight: []float32{1}},
		{Src: rest, Weight: w, Add: add}}}
}

// TestLossCached checks that LossCached with the cache of encoder outputs
// gives the per-sample losses and gradients of Loss, bit for bit, under a
// pruning transform, with 1, 2 and 3 workers, the cache empty, then
// filled, and arenas on; that the cache is read (shifted entries change a
// loss), and emptied when a frozen encoder weight changes; and that
// VisualCacheFor gives no cache where the encoder is trainable.
func TestLossCached(t *testing.T) {
	t.Parallel()
	for _, tc := range batchCases {
		t.Run(tc.desc, func(t *testing.T) {
			m, l := batchModel(t, tc)
			opt := &Options{Visual: NewVisualCache(1 << 30)}
			vc := m.VisualCacheFor(l, opt)
			if vc == nil {
				for _, p := range m.visualParams() {
					if l.Index(p) >= 0 {
						return // trainable encoder or projector: no cache, as it should be
					}
				}
				t.Fatal("no cache for a frozen encoder and projector")
			}
			batch := raggedBatch(rand.New(rand.NewPCG(93, 93)), m.Config, 9)
			plain := func(tp *Tape, i int) (*Node, error) { return m.Loss(tp, &batch[i], nil, pruneTransform) }
			cached := func(tp *Tape, i int) (*Node, error) { return m.LossCached(tp, &batch[i], pruneTransform, vc) }
			want, err := PerSample(l, len(batch), plain, &Options{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range []int{1, 2, 3} {
				for pass := range 2 {
					got, err := PerSample(l, len(batch), cached, &Options{Workers: w, Reuse: true, Visual: vc})
					if err != nil {
						t.Fatal(err)
					}
					if !bitsEqual64(got.Losses, want.Losses) {
						t.Errorf("%d workers, pass %d: losses differ from Loss's", w, pass)
					}
					for i := range batch {
						if !bitsEqual(got.Grads[i], want.Grads[i]) {
							t.Errorf("%d workers, pass %d: gradient of example %d differs from Loss's", w, pass, i)
						}
					}
				}
			}
			if len(vc.encoded) == 0 {
				t.Fatal("the cache holds no encoder output")
			}
			for _, e := range vc.encoded {
				for i := range e.tokens.Data {
					e.tokens.Data[i] += 0.5
				}
			}
			got, err := PerSample(l, len(batch), cached, &Options{Workers: 2, Visual: vc})
			if err != nil {
				t.Fatal(err)
			}
			if bitsEqual64(got.Losses, want.Losses) {
				t.Error("shifted cache entries change no loss: the cache is not read")
			}
			// A frozen encoder weight changes: the next step's cache must
			// not serve the old outputs.
			m.Vision.PatchEmbed.W.Data[0] += 0.25
			if vc = m.VisualCacheFor(l, opt); len(vc.encoded) != 0 {
				t.Fatal("the cache kept its entries after an encoder weight changed")
			}
			want, err = PerSample(l, len(batch), plain, &Options{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			got, err = PerSample(l, len(batch), cached, &Options{Workers: 3, Visual: vc})
			if err != nil {
				t.Fatal(err)
			}
			if !bitsEqual64(got.Losses, want.Losses) {
				t.Error("after an encoder change: losses differ from Loss's")
			}
		})
	}
}

// TestImageKey checks the streamed key against the SHA-256 of all the
// image's little-endian bytes at once, across the 1 KiB chunk boundary.
func TestImageKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, n := range []int{0, 1, 255, 256, 257, 784, 1000} {
		img := make([]float32, n)
		buf := make([]byte, 4*n)
		for i := range img {
			img[i] = float32(rng.NormFloat64())
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(img[i]))
		}
		if got, want := imageKey(img), sha256.Sum256(buf); got != want {
			t.Errorf("%d values: key %x, want %x", n, got, want)
		}
	}
}
