// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// batchCase is a model of the batched engine's tests.
type batchCase struct {
	desc      string
	peft      PEFT
	positions string
	smear     bool
	clsLast   bool
	// fewer checks two batch sizes instead of four, to keep the tests
	// short: the cases added with BitFit and the encoder's LoRA.
	fewer bool
}

// sizes returns the batch sizes of tc among all.
func (tc batchCase) sizes(all []int) []int {
	if tc.fewer {
		return []int{all[1], all[3]}
	}
	return all
}

// batchCases are the models the batched engine is checked on: the
// default LoRA on q and v, LoRA on every map with rotary positions and
// smeared keys, adapters with the [CLS] token last, BitFit in its default
// parts (the projector and the language model) and in every part, and
// LoRA and adapters in the vision encoder (whose rows are images).
var batchCases = []batchCase{
	{"lora q v", PEFT{Method: "lora", Targets: []string{"q", "v"}, BInitStd: 0.1}, "", false, false, false},
	{"lora all rope smear", PEFT{Method: "lora", Targets: []string{"q", "k", "v", "o", "fc1", "fc2"}, BInitStd: 0.1}, "rope", true, false, false},
	{"adapter clslast", PEFT{Method: "adapter"}, "learned", false, true, false},
	{"bitfit", PEFT{Method: "bitfit"}, "", false, false, true},
	{"bitfit every part rope smear clslast", PEFT{Method: "bitfit", Parts: []string{"vision", "projector", "lm"}}, "rope", true, true, true},
	{"lora vision lm", PEFT{Method: "lora", Targets: []string{"q", "v", "fc1"}, Parts: []string{"vision", "lm"}, BInitStd: 0.1}, "", false, false, true},
	{"adapter vision", PEFT{Method: "adapter", Parts: []string{"vision"}}, "rope", false, false, true},
}

// batchModel builds the model of tc on the smoke preset, with every tensor
// perturbed (adapters start as the identity).
func batchModel(t *testing.T, tc batchCase) (*TinyMLLM, *Layout) {
	t.Helper()
	c := smokeConfig(t)
	c.PEFT, c.Positions, c.SmearKeys, c.CLSLast = tc.peft, tc.positions, tc.smear, tc.clsLast
	m, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	if tc.peft.Method != "lora" {
		perturbAll(m, 81) // adapters start as the identity, biases at zero
	}
	return m, NewLayout(m.Params())
}

// raggedBatch returns n examples of different lengths: VQA sequences with
// questions of 1 to 7 tokens and answers of 1 to 3, one text-only
// sequence and one with two images.
func raggedBatch(rng *rand.Rand, c Config, n int) []Sequence {
	b := make([]Sequence, n)
	for i := range b {
		b[i] = vqa(rng, c, 1+rng.IntN(7), 1+rng.IntN(3))
		switch i % 5 {
		case 2: // text only: drop the image
			s := &b[i]
			s.Tokens = slices.Delete(s.Tokens, 1, 2)
			s.Loss = slices.Delete(s.Loss, 1, 2)
			s.Images = nil
		case 4: // a second image after the question
			s := &b[i]
			at := len(s.Tokens) - 2
			s.Tokens = slices.Insert(s.Tokens, at, TokenImage)
			s.Loss = slices.Insert(s.Loss, at, false)
			s.Images = append(s.Images, randImage(rng, c))
		}
	}
	return b
}

// TestBatchedPerSampleBitwise checks that the batched engine's per-sample
// gradients and losses are bit for bit those of one tape per example (the
// order of every sum is unchanged, see batch.go), for LoRA on q and v and
// on every map, adapters, rotary positions, smeared keys and [CLS] last,
// batches of 1 to 19 ragged examples (one to five groups), any number of
// workers and with an element mask.
func TestBatchedPerSampleBitwise(t *testing.T) {
	t.Parallel()
	for _, tc := range batchCases {
		m, l := batchModel(t, tc)
		rng := rand.New(rand.NewPCG(82, 82))
		for _, n := range tc.sizes([]int{1, 3, 8, 19}) {
			batch := raggedBatch(rng, m.Config, n)
			if !m.batchable(l, batch, nil, nil, nil) {
				t.Fatalf("%s: batch of %d not batchable", tc.desc, n)
			}
			old, err := PerSample(l, n, func(tp *Tape, i int) (*Node, error) { return m.Loss(tp, &batch[i], nil, nil) }, &Options{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range []int{1, 2, 5} {
				r, err := m.PerSample(l, batch, nil, nil, &Options{Workers: w, Reuse: w == 2})
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(r.Losses, old.Losses) {
					t.Errorf("%s, n %d, workers %d: losses %v, want %v", tc.desc, n, w, r.Losses, old.Losses)
				}
				for i := range batch {
					if !bitsEqual(r.Grads[i], old.Grads[i]) {
						t.Errorf("%s, n %d, workers %d: gradient of example %d differs from its own tape's", tc.desc, n, w, i)
					}
				}
			}
			if p := stillTensor(l, old.Grads); p != "" {
				t.Errorf("%s, n %d: no example moves %s, the check is vacuous there", tc.desc, n, p)
			}
		}
	}
	m, l := batchModel(t, batchCases[0])
	batch := raggedBatch(rand.New(rand.NewPCG(83, 83)), m.Config, 5)
	mask := l.Mask(func(p *Param) bool { return p.Kind == KindLoRAB })
	old, err := PerSample(l, len(batch), func(tp *Tape, i int) (*Node, error) { return m.Loss(tp, &batch[i], nil, nil) }, &Options{Mask: mask})
	if err != nil {
		t.Fatal(err)
	}
	r, err := m.PerSample(l, batch, nil, nil, &Options{Mask: mask})
	if err != nil {
		t.Fatal(err)
	}
	for i := range batch {
		if !bitsEqual(r.Grads[i], old.Grads[i]) {
			t.Errorf("masked gradient of example %d differs", i)
		}
	}
}

// stillTensor returns the name of a tensor of l whose gradient is zero in
// every one of grads, or "" when every tensor has a non-zero entry.
func stillTensor(l *Layout, grads [][]float32) string {
	for i, p := range l.Params {
		moved := false
		for _, g := range grads {
			if Norm(g[l.Offsets[i]:l.Offsets[i+1]]) != 0 {
				moved = true
				break
			}
		}
		if !moved {
			return p.Name
		}
	}
	return ""
}

func bitsEqual(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

// TestBatchedGradient checks that the batched summed gradient and losses
// are bit for bit those of Gradient's one tape per example (each chunk
// adds its examples' products in the same order), for batches of 1 to 37
// examples (chunks of one to three examples, groups of one or more
// chunks), any number of workers and with an element mask.
func TestBatchedGradient(t *testing.T) {
	t.Parallel()
	for _, tc := range batchCases {
		m, l := batchModel(t, tc)
		rng := rand.New(rand.NewPCG(84, 84))
		mask := l.Mask(func(p *Param) bool { return p.Kind != KindLoRAA })
		for _, n := range tc.sizes([]int{1, 6, 19, 37}) {
			batch := raggedBatch(rng, m.Config, n)
			for _, opt := range []*Options{nil, {Workers: 3, Reuse: true}, {Workers: 2, Mask: mask}} {
				old, oldLosses, _, err := Gradient(l, n, func(tp *Tape, i int) (*Node, error) { return m.Loss(tp, &batch[i], nil, nil) }, opt)
				if err != nil {
					t.Fatal(err)
				}
				g, losses, _, err := m.Gradient(l, batch, nil, nil, opt)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(losses, oldLosses) {
					t.Errorf("%s, n %d: losses differ", tc.desc, n)
				}
				if !bitsEqual(g, old) {
					t.Errorf("%s, n %d, options %+v: gradient differs from the sum of the examples' own tapes", tc.desc, n, opt)
				}
				if Norm(old) == 0 {
					t.Errorf("%s: zero gradient, the check is vacuous", tc.desc)
				}
			}
		}
	}
}

// TestBatchedFallback checks that the batched engine is used only where it
// is exact: not with hooks, a visual transform or dropout in training, not
// for tensors other than LoRA factors, adapters and biases (full
// fine-tuning's weights, gains and embeddings), and not for an invalid example, whose error the per-example path
// returns.
func TestBatchedFallback(t *testing.T) {
	t.Parallel()
	m, l := batchModel(t, batchCases[0])
	batch := raggedBatch(rand.New(rand.NewPCG(85, 85)), m.Config, 3)
	if m.batchable(l, batch, &Hooks{}, nil, nil) || m.batchable(l, batch, nil, func(int, Tensor, Tensor) TokenMix { return TokenMix{} }, nil) {
		t.Error("batchable with hooks or a visual transform")
	}
	c := m.Config
	for _, p := range []PEFT{{Method: "full", Parts: []string{"projector"}}, {Method: "full", Parts: []string{"lm"}}, {Method: "full", Parts: []string{"vision"}}} {
		c.PEFT = p
		v, err := NewTinyMLLM(c)
		if err != nil {
			t.Fatal(err)
		}
		if v.batchable(NewLayout(v.Params()), batch, nil, nil, nil) {
			t.Errorf("batchable with full fine-tuning of %v (weights, gains, embeddings)", p.Parts)
		}
	}
	c.Dropout = 0.1
	c.PEFT = m.Config.PEFT
	d, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	if d.batchable(NewLayout(d.Params()), batch, nil, nil, &Options{Train: true}) {
		t.Error("batchable with dropout in training")
	}
	bad := slices.Clone(batch)
	bad[1].Loss = make([]bool, len(bad[1].Tokens))
	if m.batchable(l, bad, nil, nil, nil) {
		t.Error("batchable with an example without loss positions")
	}
	if _, err := m.PerSample(l, bad, nil, nil, nil); err == nil {
		t.Error("no error for an example without loss positions")
	}
}

// TestBatchedTapeGuard checks that a batched tape refuses a trainable
// parameter in any operation but Affine, rather than summing its
// per-example gradients.
func TestBatchedTapeGuard(t *testing.T) {
	g := &Param{Name: "g", Shape: []int{2}, Data: []float32{1, 1}, Trainable: true}
	l := NewLayout([]*Param{g})
	tp := &Tape{layout: l, params: map[*Param]*Node{}, batch: &batchRows{rows: rowMap{off: []int{0, 1}}, grads: [][]float32{make([]float32, 2)}}}
	x := tp.Input(Tensor{Shape: []int{1, 2}, Data: []float32{1, 2}}, false)
	y := tp.Sum(tp.LayerNorm(x, tp.Param(g), nil, 1e-5))
	defer func() {
		if r := recover(); r != errBatchParam {
			t.Errorf("recovered %v, want %v", r, errBatchParam)
		}
	}()
	tp.Backward(y)
}

// TestForwardBatch checks that ForwardBatch gives every sequence the bits
// Forward gives it on a tape of its own, on the batched engine's models
// and a ragged batch (text only, one image, two images, different
// lengths), and that an invalid sequence is an error naming it.
func TestForwardBatch(t *testing.T) {
	t.Parallel()
	for _, tc := range batchCases {
		t.Run(tc.desc, func(t *testing.T) {
			m, _ := batchModel(t, tc)
			batch := raggedBatch(rand.New(rand.NewPCG(5, 5)), m.Config, 7)
			hid, off, pos, err := m.ForwardBatch(NewTape(nil, nil), batch)
			if err != nil {
				t.Fatal(err)
			}
			D := m.Config.Width
			for e := range batch {
				want, wantPos, err := m.Forward(NewTape(nil, nil), &batch[e], nil, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				got := hid.Value.Data[off[e]*D : off[e+1]*D]
				if !slices.Equal(got, want.Value.Data) || !slices.Equal(pos[e], wantPos) {
					t.Errorf("sequence %d: batched rows differ from Forward's (%d rows, want %d)", e, off[e+1]-off[e], want.Value.Rows())
				}
			}
			bad := append(slices.Clone(batch), Sequence{})
			if _, _, _, err := m.ForwardBatch(NewTape(nil, nil), bad); err == nil || !strings.Contains(err.Error(), "sequence 7") {
				t.Errorf("an empty sequence: error %v, want one naming sequence 7", err)
			}
		})
	}
}
