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

// lastHeads returns the per-head outputs of every language-model block at
// the last position of s (Observe's "attn.heads", before any patch), per
// layer [heads·dh].
func lastHeads(t *testing.T, m *TinyMLLM, s *Sequence) [][]float32 {
	t.Helper()
	out := make([][]float32, len(m.LM.Blocks))
	h := &Hooks{Observe: func(site string, x Tensor) {
		for l, b := range m.LM.Blocks {
			if site == b.Name+".attn.heads" {
				D := x.Cols()
				out[l] = slices.Clone(x.Data[(x.Rows()-1)*D:])
			}
		}
	}}
	if _, _, err := m.Forward(NewTape(nil, nil), &Sequence{Tokens: s.Tokens, Images: s.Images}, nil, h, nil); err != nil {
		t.Fatal(err)
	}
	return out
}

// allHeads returns the steering of every head of m with values drawn
// from N(0, 1) (random) or taken from own (per layer [heads·dh]).
func allHeads(m *TinyMLLM, own [][]float32, rng *rand.Rand) *Steering {
	H := m.Config.Heads
	dh := m.Config.Width / H
	s := &Steering{}
	for l := range m.LM.Blocks {
		for h := range H {
			v := make([]float32, dh)
			for i := range v {
				if own != nil {
					v[i] = own[l][h*dh+i]
				} else {
					v[i] = float32(rng.NormFloat64())
				}
			}
			s.Heads = append(s.Heads, SteeredHead{Layer: l, Head: h, Value: v})
		}
	}
	return s
}

// TestSteerOwnValueIsNoOp checks that steering every head at the last
// position with the value it computes there leaves the hidden states
// unchanged bit for bit, and that other values change them (so the
// comparison can fail).
func TestSteerOwnValueIsNoOp(t *testing.T) {
	t.Parallel()
	m := decodeModel(t, "", "")
	rng := rand.New(rand.NewPCG(7, 7))
	s := vqa(rng, m.Config, 3, 1)
	prompt := Sequence{Tokens: s.Tokens[:5], Images: s.Images}
	hidden := func() []float32 {
		hid, _, err := m.Forward(NewTape(nil, nil), &prompt, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return hid.Value.Data
	}
	want := hidden()
	m.Steer = allHeads(m, lastHeads(t, m, &prompt), nil)
	if err := m.CheckSteering(m.Steer); err != nil {
		t.Fatal(err)
	}
	if got := hidden(); !slices.Equal(got, want) {
		t.Fatal("steering with the heads' own values changed the hidden states")
	}
	m.Steer = allHeads(m, nil, rng)
	got := hidden()
	T, D := len(got)/m.Config.Width, m.Config.Width
	if !slices.Equal(got[:(T-1)*D], want[:(T-1)*D]) {
		t.Error("steering at the last position changed an earlier position")
	}
	if slices.Equal(got[(T-1)*D:], want[(T-1)*D:]) {
		t.Error("steering with random values left the last position unchanged")
	}
}

// TestSteerPaths checks that every inference path of a steered model
// computes the same thing: the per-sequence tape (Forward, the
// reference), the batched engine (ForwardBatch, MeanLosses) bit for bit,
// the key-value cache (Prefill and Extend) within float32 rounding, and
// greedy decoding with and without the cache (Generate, GenerateBatch).
// The steered positions are the answer's: a teacher-forced sequence is
// steered from the position that predicts its first answer token on,
// which is what decoding does position by position (or from that
// position alone, with Once).
func TestSteerPaths(t *testing.T) {
	t.Parallel()
	for _, once := range []bool{false, true} {
		t.Run(map[bool]string{false: "every", true: "once"}[once], func(t *testing.T) { steerPaths(t, once) })
	}
}

func steerPaths(t *testing.T, once bool) {
	m := decodeModel(t, "", "")
	rng := rand.New(rand.NewPCG(9, 9))
	seqs := []Sequence{vqa(rng, m.Config, 3, 2), vqa(rng, m.Config, 2, 1)}
	m.Steer = allHeads(m, nil, rng)
	m.Steer.Heads = m.Steer.Heads[1:] // not every head
	m.Steer.Once = once
	V := m.Config.Vocab
	var ref [][]float32 // per sequence, the logits at the answer rows
	for i := range seqs {
		s := &seqs[i]
		tp := NewTape(nil, nil)
		hid, pos, err := m.Forward(tp, s, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		var rows []int
		for j, l := range s.Loss {
			if l {
				rows = append(rows, pos[j]-1)
			}
		}
		ref = append(ref, m.Logits(tp, hid, rows).Value.Data)
	}
	t.Run("batched", func(t *testing.T) {
		tp := NewTape(nil, nil)
		hid, off, pos, err := m.ForwardBatch(tp, seqs)
		if err != nil {
			t.Fatal(err)
		}
		for i := range seqs {
			var rows []int
			for j, l := range seqs[i].Loss {
				if l {
					rows = append(rows, off[i]+pos[i][j]-1)
				}
			}
			if got := m.Logits(tp, hid, rows).Value.Data; !slices.Equal(got, ref[i]) {
				t.Errorf("sequence %d: ForwardBatch's logits differ from Forward's", i)
			}
		}
		out := make([]float64, len(seqs))
		if err := m.MeanLosses(NewLayout(nil), seqs, nil, out); err != nil {
			t.Fatal(err)
		}
		for i := range seqs {
			ls, _, err := m.TokenLosses(&seqs[i], nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := 0.0
			for _, l := range ls {
				want += l / float64(len(ls))
			}
			if math.Abs(out[i]-want) > 1e-9*want {
				t.Errorf("sequence %d: MeanLosses %v, TokenLosses' mean %v", i, out[i], want)
			}
		}
	})
	t.Run("cache", func(t *testing.T) {
		for i := range seqs {
			s := &seqs[i]
			np := slices.Index(s.Loss, true)
			c := m.NewKVCache()
			z, err := m.Prefill(c, &Sequence{Tokens: s.Tokens[:np], Images: s.Images}, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := slices.Clone(z.Data)
			if rest := s.Tokens[np : len(s.Tokens)-1]; len(rest) > 0 {
				zs, err := m.Extend([]*KVCache{c}, [][]int{rest})
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, zs[0].Data...)
			}
			scale := 0.0
			for _, v := range ref[i] {
				scale = math.Max(scale, math.Abs(float64(v)))
			}
			for j := range got {
				if d := math.Abs(float64(got[j] - ref[i][j])); d > 1e-4*scale {
					t.Fatalf("sequence %d: logit %d of %d: cache %v, forward %v", i, j%V, j/V, got[j], ref[i][j])
				}
			}
		}
	})
	t.Run("generate", func(t *testing.T) {
		prompts := make([]Sequence, len(seqs))
		for i := range seqs {
			np := slices.Index(seqs[i].Loss, true)
			prompts[i] = Sequence{Tokens: seqs[i].Tokens[:np], Images: seqs[i].Images}
		}
		batch, err := m.GenerateBatch(prompts, 4, Sampler{}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range prompts {
			one, err := m.Generate(&prompts[i], 4, Sampler{}, nil, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(one, batch[i]) {
				t.Errorf("prompt %d: Generate %v, GenerateBatch %v", i, one, batch[i])
			}
		}
		// The steering matters: without it both decoders say otherwise.
		st := m.Steer
		m.Steer = nil
		plain, err := m.GenerateBatch(prompts, 4, Sampler{}, nil, nil)
		m.Steer = st
		if err != nil {
			t.Fatal(err)
		}
		if slices.EqualFunc(plain, batch, func(a, b []int) bool { return slices.Equal(a, b) }) {
			t.Errorf("steered and plain decoding agree: %v", plain)
		}
	})
}

// TestCheckSteering checks the errors of CheckSteering.
func TestCheckSteering(t *testing.T) {
	t.Parallel()
	m := decodeModel(t, "", "")
	dh := m.Config.Width / m.Config.Heads
	v := make([]float32, dh)
	for _, tc := range []struct {
		name  string
		heads []SteeredHead
	}{
		{"layer", []SteeredHead{{Layer: len(m.LM.Blocks), Value: v}}},
		{"negative layer", []SteeredHead{{Layer: -1, Value: v}}},
		{"head", []SteeredHead{{Head: m.Config.Heads, Value: v}}},
		{"length", []SteeredHead{{Value: v[1:]}}},
		{"twice", []SteeredHead{{Value: v}, {Value: v}}},
	} {
		if err := m.CheckSteering(&Steering{Heads: tc.heads}); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	if err := m.CheckSteering(&Steering{Heads: []SteeredHead{{Value: v}}}); err != nil {
		t.Errorf("valid steering: %v", err)
	}
}

// TestSteerOnce checks that Once patches the prompt's last position only:
// the hidden states there are those of steering every position, and the
// next position's differ.
func TestSteerOnce(t *testing.T) {
	t.Parallel()
	m := decodeModel(t, "", "")
	rng := rand.New(rand.NewPCG(11, 11))
	s := vqa(rng, m.Config, 3, 2)
	m.Steer = allHeads(m, nil, rng)
	hidden := func(once bool) ([]float32, int) {
		m.Steer.Once = once
		hid, pos, err := m.Forward(NewTape(nil, nil), &s, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return hid.Value.Data, pos[slices.Index(s.Loss, true)] - 1
	}
	every, from := hidden(false)
	once, _ := hidden(true)
	D := m.Config.Width
	if !slices.Equal(every[:(from+1)*D], once[:(from+1)*D]) {
		t.Error("Once changed the positions up to the prompt's last")
	}
	if slices.Equal(every[(from+1)*D:(from+2)*D], once[(from+1)*D:(from+2)*D]) {
		t.Error("Once patched the first answer position too")
	}
}
