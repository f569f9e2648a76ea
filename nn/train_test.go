// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math/rand/v2"
	"testing"
)

// TestLearns trains the smoke TinyMLLM with plain SGD on four VQA examples
// whose answer depends on the image (a bright or a dark image) and checks
// that the loss falls, for full fine-tuning and for LoRA (slower from a
// random base model, whose activations are small).
func TestLearns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		peft   PEFT
		lr     float32
		steps  int
		factor float64
	}{
		{PEFT{Method: "full"}, 0.5, 40, 0.2},
		{PEFT{Method: "lora", Targets: []string{"q", "v", "fc1", "fc2"}}, 1, 40, 0.9},
	} {
		c := smokeConfig(t)
		c.PEFT = tc.peft
		m, err := NewTinyMLLM(c)
		if err != nil {
			t.Fatal(err)
		}
		l := NewLayout(m.Params())
		rng := rand.New(rand.NewPCG(50, 50))
		var batch []Sequence
		for i := 0; i < 4; i++ {
			img := make([]float32, 3*28*28)
			v := float32(i % 2)
			for j := range img {
				img[j] = v*0.8 + 0.2*float32(rng.Float64())
			}
			// <bos> <image> 7 → answer 10 + (bright) <eos>
			batch = append(batch, Sequence{
				Tokens: []int{TokenBOS, TokenImage, 7, 10 + i%2, TokenEOS},
				Images: [][]float32{img},
				Loss:   []bool{false, false, false, true, true},
			})
		}
		mean := func(ls []float64) float64 {
			var s float64
			for _, v := range ls {
				s += v
			}
			return s / float64(len(ls))
		}
		var first, last float64
		for step := 0; step < tc.steps; step++ {
			g, losses, _, err := m.Gradient(l, batch, nil, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if step == 0 {
				first = mean(losses)
			}
			last = mean(losses)
			sgd(l, g, tc.lr/float32(len(batch)))
		}
		if last > tc.factor*first {
			t.Errorf("%s: loss %.4f after %d steps, from %.4f; want below %.2f×", tc.peft.Method, last, tc.steps, first, tc.factor)
		}
		t.Logf("%s: loss %.4f → %.4f", tc.peft.Method, first, last)
	}
}
