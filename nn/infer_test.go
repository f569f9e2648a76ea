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

// inferShapes returns models whose inference paths TestInferBitwise
// checks: the smoke and small presets with LoRA on every map of the
// language model, the anchor's shape (LoRA on q and v), adapters in the
// vision encoder, the projector and the language model, and rotary
// positions without smeared keys. Every LoRA B, adapter, smear logit and
// bias is drawn away from its initial zero, so that each map the
// inference tape fuses changes the result.
func inferShapes(t *testing.T) map[string]*TinyMLLM {
	t.Helper()
	shapes := map[string]Config{}
	for _, preset := range []string{"smoke", "small"} {
		c, err := Preset(preset, 120)
		if err != nil {
			t.Fatal(err)
		}
		c.PEFT = PEFT{Method: "lora", Rank: 4, Alpha: 8, Targets: []string{"q", "k", "v", "o", "fc1", "fc2"}}
		shapes[preset+"/lora"] = c
	}
	shapes["anchor"] = anchorConfig()
	c, _ := Preset("smoke", 120)
	c.PEFT = PEFT{Method: "adapter", Parts: []string{"vision", "projector", "lm"}, AdapterDim: 8}
	shapes["smoke/adapter"] = c
	c, _ = Preset("smoke", 120)
	c.Positions, c.SmearKeys, c.CLSLast, c.Layers = "rope", false, false, 2
	shapes["smoke/rope"] = c
	out := map[string]*TinyMLLM{}
	for name, c := range shapes {
		m, err := NewTinyMLLM(c)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rng := rand.New(rand.NewPCG(5, 5))
		for _, p := range m.Params() {
			switch p.Kind {
			case KindLoRAB, KindAdapter, KindSmear, KindBias:
				for j := range p.Data {
					p.Data[j] += float32(0.1 * rng.NormFloat64())
				}
			}
		}
		out[name] = m
	}
	return out
}

// inferBatch returns VQA sequences of varied lengths for m: one image,
// q question tokens and a answer tokens each, and one sequence with two
// images.
func inferBatch(m *TinyMLLM) []Sequence {
	rng := rand.New(rand.NewPCG(7, 7))
	var batch []Sequence
	for i := range 9 {
		batch = append(batch, vqa(rng, m.Config, 3+i%4, 1+i%3))
	}
	s := vqa(rng, m.Config, 3, 2)
	s.Tokens = slices.Insert(s.Tokens, 3, TokenImage)
	s.Loss = slices.Insert(s.Loss, 3, false)
	s.Images = append(s.Images, randImage(rng, m.Config))
	return append(batch, s)
}

// refLogits returns the reference of the inference path: the logits of
// every row of s's forward pass on an ordinary tape (Forward, every row
// through every block, nothing fused), and pos.
func refLogits(t *testing.T, m *TinyMLLM, s *Sequence, vt VisualTransform) (Tensor, []int) {
	t.Helper()
	tp := NewTape(nil, nil)
	hid, pos, err := m.Forward(tp, s, nil, nil, vt)
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]int, hid.Value.Rows())
	for i := range rows {
		rows[i] = i
	}
	return m.Logits(tp, hid, rows).Value, pos
}

// equalBits reports whether a and b hold the same float32 bit patterns.
func equalBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// TestInferBitwise checks the inference path (infer.go) against the
// ordinary tape bit for bit on every shape of inferShapes: the logits and
// losses of TokenLosses, the mean losses of TinyMLLM.MeanLosses (batched,
// the last block on the loss rows only, with and without the visual
// cache), the hidden states of ForwardBatch on an inference tape, and
// greedy generation's tokens; and TokenLosses and generation with
// Dual-Priv's token pruning as the visual transform.
func TestInferBitwise(t *testing.T) {
	for name, m := range inferShapes(t) {
		batch := inferBatch(m)
		V := m.Config.Vocab
		want := make([]float64, len(batch))
		for e := range batch {
			s := &batch[e]
			ref, pos := refLogits(t, m, s, nil)
			var rows, targets []int
			for i, l := range s.Loss {
				if l {
					rows, targets = append(rows, pos[i]-1), append(targets, s.Tokens[i])
				}
			}
			refz := NewTensor(len(rows), V)
			for r, row := range rows {
				copy(refz.Row(r), ref.Row(row))
			}
			// The reference losses from softmaxRow, the
			// probabilities' normaliser.
			refLosses := make([]float64, len(targets))
			probs := make([]float32, V)
			for r, tg := range targets {
				refLosses[r] = softmaxRow(refz.Row(r), probs) - float64(refz.Row(r)[tg])
			}
			losses, z, err := m.TokenLosses(s, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !equalBits(z.Data, refz.Data) || !slices.Equal(losses, refLosses) {
				t.Errorf("%s: sequence %d: TokenLosses differ from the ordinary tape's", name, e)
			}
			for _, l := range refLosses {
				want[e] += l
			}
			want[e] /= float64(len(refLosses))

			// Greedy generation against the ordinary tape's argmax of
			// the last row, token by token.
			k := slices.Index(s.Loss, true)
			p := Sequence{Tokens: s.Tokens[:k], Images: s.Images}
			got, err := m.Generate(&p, 3, Sampler{}, nil, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			toks := slices.Clone(p.Tokens)
			for range got {
				ref, _ := refLogits(t, m, &Sequence{Tokens: toks, Images: s.Images}, nil)
				last := slices.Clone(ref.Row(ref.Rows() - 1))
				last[TokenImage] = float32(math.Inf(-1))
				toks = append(toks, Sampler{}.Next(last, nil))
			}
			if !slices.Equal(got, toks[k:]) {
				t.Errorf("%s: sequence %d: generated %v, the ordinary tape %v", name, e, got, toks[k:])
			}
		}
		l := NewLayout(m.Params())
		for _, opt := range []*Options{{}, {Visual: NewVisualCache(1 << 24)}} {
			for range 2 { // the second pass reads the cache
				got := make([]float64, len(batch))
				if err := m.MeanLosses(l, batch, opt, got); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s: MeanLosses (cache %v) = %v, the ordinary tape's %v", name, opt.Visual != nil, got, want)
				}
			}
		}
		vt := TokenPruning{Retention: 0.4, Contextual: 0.3}.Transform()
		for e := range batch {
			s := &batch[e]
			ref, pos := refLogits(t, m, s, vt)
			var rows []int
			for i, l := range s.Loss {
				if l {
					rows = append(rows, pos[i]-1)
				}
			}
			_, z, err := m.TokenLosses(s, nil, vt)
			if err != nil {
				t.Fatal(err)
			}
			for r, row := range rows {
				if !equalBits(z.Row(r), ref.Row(row)) {
					t.Errorf("%s: sequence %d, pruned: TokenLosses' logits differ from the ordinary tape's", name, e)
					break
				}
			}
			k := slices.Index(s.Loss, true)
			p := Sequence{Tokens: s.Tokens[:k], Images: s.Images}
			got, err := m.Generate(&p, 2, Sampler{}, nil, nil, vt)
			if err != nil {
				t.Fatal(err)
			}
			toks := slices.Clone(p.Tokens)
			for range got {
				ref, _ := refLogits(t, m, &Sequence{Tokens: toks, Images: s.Images}, vt)
				last := slices.Clone(ref.Row(ref.Rows() - 1))
				last[TokenImage] = float32(math.Inf(-1))
				toks = append(toks, Sampler{}.Next(last, nil))
			}
			if !slices.Equal(got, toks[k:]) {
				t.Errorf("%s: sequence %d, pruned: generated %v, the ordinary tape %v", name, e, got, toks[k:])
			}
		}
		tp := NewInferenceTape()
		hid, off, _, err := m.ForwardBatch(tp, batch)
		if err != nil {
			t.Fatal(err)
		}
		ref := NewTape(nil, nil)
		refHid, refOff, _, err := m.ForwardBatch(ref, batch)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(off, refOff) || !equalBits(hid.Value.Data, refHid.Value.Data) {
			t.Errorf("%s: ForwardBatch on an inference tape differs from the ordinary tape's", name)
		}
		tp.Release()
	}
}

// TestAttentionRows holds Tape.attentionRows, attention at some rows
// only, to the rows of Tape.attention's output on every row, bit for bit:
// stacked sequences of several lengths (one of a single row, one empty),
// causal and not, heads of width 24 and 8, with the kept rows a random
// subset in a random order (runs of rows of one sequence and rows that
// come back to an earlier sequence).
func TestAttentionRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, tc := range []struct {
		lens  []int
		D, hs int
	}{
		{[]int{29, 1, 17, 0, 40}, 96, 4},
		{[]int{7}, 32, 4},
		{[]int{3, 70, 12}, 64, 8},
	} {
		segs := []int{0}
		for _, n := range tc.lens {
			segs = append(segs, segs[len(segs)-1]+n)
		}
		T := segs[len(segs)-1]
		draw := func() *Node {
			v := make([]float32, T*tc.D)
			for i := range v {
				v[i] = float32(rng.NormFloat64())
			}
			return &Node{Value: Tensor{Shape: []int{T, tc.D}, Data: v}}
		}
		q, k, v := draw(), draw(), draw()
		for _, causal := range []bool{true, false} {
			ref := NewTape(nil, nil)
			want, _ := ref.attention(q, k, v, tc.hs, causal, segs)
			for trial := range 6 {
				rows := rng.Perm(T)[:1+rng.IntN(T)]
				if trial%2 == 0 {
					slices.Sort(rows)
				}
				tp := NewInferenceTape()
				got := tp.attentionRows(tp.Gather(q, rows), k, v, rows, tc.hs, causal, segs)
				for i, r := range rows {
					a := want.Value.Data[r*tc.D : (r+1)*tc.D]
					b := got.Value.Data[i*tc.D : (i+1)*tc.D]
					for c := range a {
						if math.Float32bits(a[c]) != math.Float32bits(b[c]) {
							t.Fatalf("lens %v causal %v: row %d col %d: %v, attention gives %v", tc.lens, causal, r, c, b[c], a[c])
						}
					}
				}
				tp.Release()
			}
		}
	}
}
