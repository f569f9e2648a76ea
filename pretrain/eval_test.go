// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pretrain

import (
	"math/rand/v2"
	"testing"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/nn"
)

// TestNearestNeighbourAccuracy checks the [CLS] nearest-neighbour reference
// on episodes whose query is a copy of one demonstration image: its cosine
// similarity is 1, the largest possible, so the neighbour is that image, and
// the accuracy is 1 when that image carries the answer word and 0 when it
// carries another.
func TestNearestNeighbourAccuracy(t *testing.T) {
	t.Parallel()
	cfg, err := nn.Preset("smoke", datasets.Vocab().Len())
	if err != nil {
		t.Fatal(err)
	}
	m, err := nn.NewTinyMLLM(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := &corpus{tSemi: 21}
	rng := rand.New(rand.NewPCG(4, 4))
	img := func() []float32 {
		px := make([]float32, 3*28*28)
		for i := range px {
			px[i] = rng.Float32()
		}
		return px
	}
	// Three demonstrations with words 30, 31, 32; the query copies demo k.
	ep := func(k, answer int) episode {
		var s nn.Sequence
		s.Tokens = []int{datasets.BOS}
		for j := range 3 {
			s.Images = append(s.Images, img())
			s.Tokens = append(s.Tokens, datasets.Image, 30+j, c.tSemi)
		}
		s.Images = append(s.Images, s.Images[k])
		s.Tokens = append(s.Tokens, datasets.Image, 30+answer, datasets.EOS)
		return episode{seq: s, words: []int{30, 31, 32}, answer: answer}
	}
	right := []episode{ep(0, 0), ep(1, 1), ep(2, 2), ep(1, 1)}
	wrong := []episode{ep(0, 1), ep(1, 2), ep(2, 0), ep(2, 1)}
	if acc := c.nearestNeighbourAccuracy(m, right); acc != 1 {
		t.Errorf("query equal to the answer's demonstration: accuracy %v, want 1", acc)
	}
	if acc := c.nearestNeighbourAccuracy(m, wrong); acc != 0 {
		t.Errorf("query equal to another word's demonstration: accuracy %v, want 0", acc)
	}
}
