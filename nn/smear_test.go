// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSmearKeysLimits checks SmearKeys against its closed forms: logit 0
// averages each row with the one before (the first with zero), a large
// logit keeps x, a very negative one shifts x down by one row.
func TestSmearKeysLimits(t *testing.T) {
	t.Parallel()
	const T, heads, dh = 4, 2, 3
	D := heads * dh
	x := randTensor(rand.New(rand.NewPCG(5, 5)), 1, T, D)
	prev := func(j, c int) float64 {
		if j == 0 {
			return 0
		}
		return float64(x.Data[(j-1)*D+c])
	}
	for _, tc := range []struct {
		desc  string
		logit []float32
		want  func(j, c int) float64
	}{
		{"mean", []float32{0, 0}, func(j, c int) float64 { return (float64(x.Data[j*D+c]) + prev(j, c)) / 2 }},
		{"keep", []float32{40, 40}, func(j, c int) float64 { return float64(x.Data[j*D+c]) }},
		{"shift", []float32{-40, -40}, prev},
		{"per head", []float32{40, -40}, func(j, c int) float64 {
			if c < dh {
				return float64(x.Data[j*D+c])
			}
			return prev(j, c)
		}},
	} {
		tp := NewTape(nil, nil)
		y := tp.SmearKeys(tp.Input(x, false), tp.Input(Tensor{Shape: []int{heads}, Data: tc.logit}, false), heads)
		for j := range T {
			for c := range D {
				if got, want := float64(y.Value.Data[j*D+c]), tc.want(j, c); math.Abs(got-want) > 1e-6 {
					t.Errorf("%s: row %d column %d = %v, want %v", tc.desc, j, c, got, want)
				}
			}
		}
	}
}

func TestSmearKeysConfig(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{false, true} {
		c := smokeConfig(t)
		c.SmearKeys = on
		m, err := NewTinyMLLM(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range m.LM.Blocks {
			p := Lookup(m, b.Name+".attn.smear")
			switch {
			case on && (b.Smear == nil || p != b.Smear):
				t.Errorf("%s: no smear logits among the parameters", b.Name)
			case on && (p.Kind != KindSmear || len(p.Data) != c.Heads):
				t.Errorf("%s: smear logits of kind %s and length %d, want %s and %d", b.Name, p.Kind, len(p.Data), KindSmear, c.Heads)
			case !on && (b.Smear != nil || p != nil):
				t.Errorf("%s: smear logits with SmearKeys off", b.Name)
			}
		}
		for _, b := range m.Vision.Stack.Blocks {
			if b.Smear != nil {
				t.Errorf("%s: the vision encoder smears its keys", b.Name)
			}
		}
	}
}
