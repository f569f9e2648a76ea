// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math/rand/v2"
	"testing"
)

// TestTrainableCounts checks the per-family counts against closed forms
// for the smoke TinyMLLM (width d = 32, one language-model block, MLP
// ratio 4): LoRA of rank r on q and v has 2·(r·d + d·r); two Houlsby
// adapters of width a have 2·(d·a + a + a·d + d); BitFit trains the
// biases of q, k, v, o (4d), fc1 (4d), fc2 (d), both LayerNorms (2d) and
// the final LayerNorm (d).
func TestTrainableCounts(t *testing.T) {
	const d, r, a = 32, 4, 8
	for _, tc := range []struct {
		peft PEFT
		kind string
		want float64
	}{
		{PEFT{Method: "lora", Rank: r, Targets: []string{"q", "v"}}, "lora_a", 2 * (r*d + d*r)},
		{PEFT{Method: "adapter", AdapterDim: a}, "adapter", 2 * (d*a + a + a*d + d)},
		{PEFT{Method: "bitfit", Parts: []string{"lm"}}, "bias", 4*d + 4*d + d + 2*d + d},
	} {
		c := smokeConfig(t)
		c.PEFT = tc.peft
		m, err := NewTinyMLLM(c)
		if err != nil {
			t.Fatal(err)
		}
		got := TrainableCounts(m)
		if got["trainable_params"] != tc.want {
			t.Errorf("%s: %v trainable, want %v", tc.peft.Method, got, tc.want)
		}
		if got["trainable_params_"+tc.kind] == 0 {
			t.Errorf("%s: no count for kind %s: %v", tc.peft.Method, tc.kind, got)
		}
	}
}

// TestBitFitGradient checks the gradient of BitFit's tensors (every bias
// of the language model) against finite differences.
func TestBitFitGradient(t *testing.T) {
	t.Parallel()
	c := smokeConfig(t)
	c.PEFT = PEFT{Method: "bitfit", Parts: []string{"lm"}}
	m, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	perturbAll(m, 13)
	l := NewLayout(m.Params())
	s := textSeq(rand.New(rand.NewPCG(1, 5)), c, 4, 3)
	directionalCheck(t, l, func(tp *Tape) *Node {
		out, err := m.Loss(tp, &s, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}, 1e-4, 2e-3)
}
