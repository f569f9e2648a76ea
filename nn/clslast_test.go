// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math/rand/v2"
	"testing"
)

// TestCLSLastIsARotation checks that Config.CLSLast gives the language model
// each image's visual tokens rotated by one row, [CLS] last: its token
// losses equal, bit for bit, those of the same model without CLSLast under
// a visual transform that makes the same rotation (the closed form of the
// option), and differ from the unrotated model's.
func TestCLSLastIsARotation(t *testing.T) {
	t.Parallel()
	c := smokeConfig(t)
	c.CLSLast = false
	plain, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	c.CLSLast = true
	last, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	perturbAll(plain, 4)
	perturbAll(last, 4) // CLSLast adds no tensor: the same values
	n := c.Patches() + 1
	var rot TokenMix
	for r := range n {
		rot.Rows = append(rot.Rows, MixRow{Src: []int{(r + 1) % n}, Weight: []float32{1}})
	}
	rotate := func(int, Tensor, Tensor) TokenMix { return rot }
	rng := rand.New(rand.NewPCG(8, 8))
	s := Sequence{
		Tokens: []int{TokenBOS, TokenImage, 7, 8, TokenImage, 9, TokenEOS},
		Images: [][]float32{randImage(rng, c), randImage(rng, c)},
		Loss:   []bool{false, false, true, true, false, true, true},
	}
	losses := func(m *TinyMLLM, vt VisualTransform) []float64 {
		t.Helper()
		l, _, err := m.TokenLosses(&s, nil, vt)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	want, got, unrotated := losses(plain, rotate), losses(last, nil), losses(plain, nil)
	differs := false
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("token loss %d: %v with CLSLast, %v with a rotating transform", i, got[i], want[i])
		}
		differs = differs || got[i] != unrotated[i]
	}
	if !differs {
		t.Error("CLSLast changes no token loss")
	}
	// One visual token, as the in-context stage of package pretrain feeds:
	// nothing to rotate.
	one := TokenMix{Rows: []MixRow{{Src: []int{0}, Weight: []float32{1}}}}
	keep := func(int, Tensor, Tensor) TokenMix { return one }
	a, b := losses(last, keep), losses(plain, keep)
	for i := range a {
		if a[i] != b[i] {
			t.Errorf("one visual token, token loss %d: %v with CLSLast, %v without", i, a[i], b[i])
		}
	}
}
