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

// decodeModel returns a smoke TinyMLLM with the given PEFT method and
// position scheme whose parameters are all perturbed by N(0, 0.2²): a
// fresh model's logits are nearly uniform, so ties within rounding would
// make greedy decoding fragile; perturbed, the logits are well apart and
// every module (LoRA B, adapters, smear logits) is non-trivial.
func decodeModel(t testing.TB, peft, positions string) *TinyMLLM {
	t.Helper()
	c := smokeConfig(t)
	c.Layers = 2
	c.PEFT.Method = peft
	c.Positions = positions
	m, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	for _, p := range m.Params() {
		for i := range p.Data {
			p.Data[i] += float32(0.2 * rng.NormFloat64())
		}
	}
	return m
}

// decodeCases are the model variants the cached decoder must match.
var decodeCases = []struct{ peft, positions string }{
	{"", ""}, {"lora", ""}, {"adapter", "rope"}, {"lora", "rope"},
}

// TestExtendMatchesForward checks the cached decoder against the model's
// full forward pass, the independent reference: the logits at every
// position of a prompt with an image, decoded as a prefill followed by
// single tokens, then by a block of three, equal Forward's within float32
// rounding (1e-4 relative to the logits' scale).
func TestExtendMatchesForward(t *testing.T) {
	t.Parallel()
	for _, tc := range decodeCases {
		t.Run(fmt.Sprintf("%s/%s", tc.peft, tc.positions), func(t *testing.T) {
			m := decodeModel(t, tc.peft, tc.positions)
			rng := rand.New(rand.NewPCG(5, 5))
			s := vqa(rng, m.Config, 4, 6)
			np := 5 // <bos> <image> and three question tokens
			tp := NewTape(nil, nil)
			hid, pos, err := m.Forward(tp, &Sequence{Tokens: s.Tokens, Images: s.Images}, nil, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			rows := make([]int, 0, len(s.Tokens)-np+1)
			for i := np - 1; i < len(s.Tokens); i++ {
				rows = append(rows, pos[i])
			}
			want := m.Logits(tp, hid, rows).Value.Data
			V := m.Config.Vocab
			c := m.NewKVCache()
			z, err := m.Prefill(c, &Sequence{Tokens: s.Tokens[:np], Images: s.Images}, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := slices.Clone(z.Data)
			for i := np; i < len(s.Tokens)-3; i++ {
				zs, err := m.Extend([]*KVCache{c}, [][]int{{s.Tokens[i]}})
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, zs[0].Data...)
			}
			zs, err := m.Extend([]*KVCache{c}, [][]int{s.Tokens[len(s.Tokens)-3:]})
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, zs[0].Data...)
			if len(got) != len(want) {
				t.Fatalf("got %d logits, want %d", len(got), len(want))
			}
			var scale float64
			for _, w := range want {
				scale = max(scale, math.Abs(float64(w)))
			}
			for i := range want {
				if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*scale {
					t.Fatalf("row %d token %d: cached logit %v, full forward %v", i/V, i%V, got[i], want[i])
				}
			}
			if c.Len() != hid.Value.Rows() {
				t.Errorf("cache holds %d positions, the sequence has %d", c.Len(), hid.Value.Rows())
			}
		})
	}
}

// TestGenerateBatch checks that batched cached decoding gives Generate's
// outputs exactly: greedy and top-k (each prompt with its own generator,
// seeded as for Generate), for prompts of different lengths decoded
// together, with and without images.
func TestGenerateBatch(t *testing.T) {
	t.Parallel()
	for _, tc := range decodeCases {
		t.Run(fmt.Sprintf("%s/%s", tc.peft, tc.positions), func(t *testing.T) {
			m := decodeModel(t, tc.peft, tc.positions)
			rng := rand.New(rand.NewPCG(7, 7))
			var prompts []Sequence
			for i := range 5 {
				s := vqa(rng, m.Config, 1+i, 0)
				p := Sequence{Tokens: s.Tokens[:len(s.Tokens)-1], Images: s.Images}
				if i%2 == 1 { // text only
					p = Sequence{Tokens: append([]int{TokenBOS}, s.Tokens[2:len(s.Tokens)-1]...)}
				}
				prompts = append(prompts, p)
			}
			for _, sm := range []Sampler{{}, {TopK: 5, Temperature: 0.8}} {
				rngs := make([]*rand.Rand, len(prompts))
				for i := range rngs {
					rngs[i] = rand.New(rand.NewPCG(11, uint64(i)))
				}
				got, err := m.GenerateBatch(prompts, 12, sm, rngs, nil)
				if err != nil {
					t.Fatal(err)
				}
				for i := range prompts {
					want, err := m.Generate(&prompts[i], 12, sm, rand.New(rand.NewPCG(11, uint64(i))), nil, nil)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got[i], want) {
						t.Errorf("sampler %+v prompt %d: batched %v, Generate %v", sm, i, got[i], want)
					}
				}
			}
		})
	}
}

// TestKVCacheEdges checks the cache's bookkeeping: a truncated cache
// extended again equals a fresh one, a clone is independent of its
// original, a prompt that fills MaxLen generates nothing (as Generate),
// and an over-long extension is an error.
func TestKVCacheEdges(t *testing.T) {
	t.Parallel()
	m := decodeModel(t, "lora", "")
	toks := []int{TokenBOS, 7, 9, 11, 13}
	c := m.NewKVCache()
	if _, err := m.Prefill(c, &Sequence{Tokens: toks}, nil); err != nil {
		t.Fatal(err)
	}
	d := c.Clone()
	z1, _ := m.Extend([]*KVCache{c}, [][]int{{15, 16}})
	c.Truncate(len(toks))
	z2, _ := m.Extend([]*KVCache{c}, [][]int{{15, 16}})
	z3, _ := m.Extend([]*KVCache{d}, [][]int{{15, 16}})
	if !slices.Equal(z1[0].Data, z2[0].Data) || !slices.Equal(z1[0].Data, z3[0].Data) {
		t.Errorf("extension after truncate or clone differs from the first")
	}
	if c.Len() != 7 || d.Len() != 7 {
		t.Errorf("lengths %d and %d, want 7", c.Len(), d.Len())
	}
	full := Sequence{Tokens: make([]int, m.Config.MaxLen)}
	full.Tokens[0] = TokenBOS
	for i := 1; i < len(full.Tokens); i++ {
		full.Tokens[i] = 5 + i%10
	}
	g, err := m.GenerateBatch([]Sequence{full}, 3, Sampler{}, nil, nil)
	if want, _ := m.Generate(&full, 3, Sampler{}, nil, nil, nil); err != nil || !slices.Equal(g[0], want) {
		t.Errorf("prompt of maximum length: batched %v (%v), Generate %v", g[0], err, want)
	}
	e := m.NewKVCache()
	if _, err := m.Prefill(e, &full, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Extend([]*KVCache{e}, [][]int{{5}}); err == nil {
		t.Errorf("extension past MaxLen: no error")
	}
	if _, err := m.Extend([]*KVCache{m.NewKVCache()}, [][]int{{TokenImage}}); err == nil {
		t.Errorf("extension with <image>: no error")
	}
}

// BenchmarkDecode measures decoding throughput at the small preset (LoRA,
// 600-word vocabulary): 32 text prompts of 8 tokens continued by 24 greedy
// tokens each, by Generate (the whole sequence rerun at every step) and by
// GenerateBatch (KV cache, the 32 sequences batched), reported as
// generated tokens per second of wall time (tokens/s) and per CPU second.
func BenchmarkDecode(b *testing.B) {
	c, err := Preset("small", 600)
	if err != nil {
		b.Fatal(err)
	}
	c.PEFT.Method = "lora"
	m, err := NewTinyMLLM(c)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	prompts := make([]Sequence, 32)
	for i := range prompts {
		toks := []int{TokenBOS}
		for range 7 {
			toks = append(toks, 5+rng.IntN(c.Vocab-5))
		}
		prompts[i] = Sequence{Tokens: toks}
	}
	const maxNew = 24
	// Both decoders give the same tokens (TestGenerateBatch), so the
	// counts agree; a sequence that ends early at <eos> counts its tokens.
	for _, bc := range []struct {
		name string
		run  func() ([][]int, error)
	}{
		{"generate", func() ([][]int, error) {
			out := make([][]int, len(prompts))
			for i := range prompts {
				g, err := m.Generate(&prompts[i], maxNew, Sampler{}, nil, nil, nil)
				if err != nil {
					return nil, err
				}
				out[i] = g
			}
			return out, nil
		}},
		{"kvcache-batch32", func() ([][]int, error) { return m.GenerateBatch(prompts, maxNew, Sampler{}, nil, nil) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cpu := startCPU(b)
			var toks int
			for b.Loop() {
				out, err := bc.run()
				if err != nil {
					b.Fatal(err)
				}
				for _, o := range out {
					toks += len(o)
				}
			}
			cpu.stop(b)
			b.ReportMetric(float64(toks)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}
