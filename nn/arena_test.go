// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestArena checks that the arena hands out zeroed, disjoint slices and
// gives the same memory again after reset.
func TestArena(t *testing.T) {
	var a arena
	x := a.alloc(10)
	y := a.alloc(arenaSlab) // a second slab
	for i := range x {
		x[i] = 1
	}
	y[0] = 2
	if &x[0] == &y[0] || len(x) != 10 || cap(x) != 10 || len(y) != arenaSlab {
		t.Fatalf("alloc: overlapping or wrong-sized slices")
	}
	a.reset()
	x2 := a.alloc(10)
	if &x2[0] != &x[0] {
		t.Errorf("reset: the first slab is not reused")
	}
	if slices.ContainsFunc(x2, func(v float32) bool { return v != 0 }) {
		t.Errorf("alloc after reset: not zeroed: %v", x2)
	}
	if y2 := a.alloc(arenaSlab); y2[0] != 0 || &y2[0] != &y[0] {
		t.Errorf("alloc after reset: second slab not reused and zeroed")
	}
}

// TestReuseSameBits checks that PerSample and Gradient give the same bits
// with and without Options.Reuse, on full fine-tuning (every activation
// and gradient on the tape) and LoRA, and again on a second call whose
// arenas hold the first call's values.
func TestReuseSameBits(t *testing.T) {
	c := smokeConfig(t)
	rng := rand.New(rand.NewPCG(71, 71))
	batch := []Sequence{vqa(rng, c, 2, 1), vqa(rng, c, 4, 2), vqa(rng, c, 3, 3), vqa(rng, c, 5, 1)}
	for _, method := range []string{"full", "lora"} {
		c := c
		c.PEFT = PEFT{Method: method, BInitStd: 0.1}
		m, err := NewTinyMLLM(c)
		if err != nil {
			t.Fatal(err)
		}
		l := NewLayout(m.Params())
		loss := func(tp *Tape, i int) (*Node, error) { return m.Loss(tp, &batch[i], nil, nil) }
		want, err := PerSample(l, len(batch), loss, &Options{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		wantSum, _, _, err := Gradient(l, len(batch), loss, &Options{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		for pass := range 2 {
			got, err := PerSample(l, len(batch), loss, &Options{Workers: 2, Reuse: true})
			if err != nil {
				t.Fatal(err)
			}
			for i := range want.Grads {
				if !slices.Equal(got.Grads[i], want.Grads[i]) || got.Losses[i] != want.Losses[i] {
					t.Errorf("%s pass %d: example %d differs with Reuse", method, pass, i)
				}
			}
			sum, _, _, err := Gradient(l, len(batch), loss, &Options{Workers: 1, Reuse: true})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(sum, wantSum) {
				t.Errorf("%s pass %d: Gradient differs with Reuse", method, pass)
			}
		}
	}
}
