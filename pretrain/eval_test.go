// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pretrain

import (
	"math/rand/v2"
	"slices"
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

// TestEpisodeLayout checks that pretraining's episodes have the layout of
// the icl task's examples, which the private side (DP-MTV's chunks) uses:
// token for token the same kinds (<bos>, <image>, ";", <eos> or a label
// word) for the same number of shots, and a zero-shot query that is the
// episode's last image, word and <eos> after <bos>.
func TestEpisodeLayout(t *testing.T) {
	t.Parallel()
	b, err := prepare(Options{Scale: "smoke"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.loadData(); err != nil {
		t.Fatal(err)
	}
	c := b.corpus
	kinds := func(toks []int) string {
		var s []byte
		for _, tk := range toks {
			switch tk {
			case datasets.BOS:
				s = append(s, 'B')
			case datasets.Image:
				s = append(s, 'I')
			case datasets.EOS:
				s = append(s, 'E')
			case c.tSemi:
				s = append(s, ';')
			default:
				s = append(s, 'w')
			}
		}
		return string(s)
	}
	ex := &c.data[srcICL].Public[0]
	want := kinds(append(slices.Clone(ex.Prompt), ex.Answer...))
	e := c.newEpisode(rand.New(rand.NewPCG(1, 1)), c.iclTrain, c.shots, true)
	if got := kinds(e.seq.Tokens); got != want {
		t.Errorf("episode layout %s, the icl task's %s", got, want)
	}
	if len(e.seq.Images) != len(ex.Images) || len(e.seq.Loss) != len(e.seq.Tokens) {
		t.Errorf("%d images and %d loss marks for %d tokens, want %d images", len(e.seq.Images), len(e.seq.Loss), len(e.seq.Tokens), len(ex.Images))
	}
	z := e.zeroShot()
	if got := kinds(z.Tokens); got != "BIwE" || z.Tokens[2] != e.words[e.answer] || len(z.Images) != 1 || !z.Loss[2] {
		t.Errorf("zero-shot query %s (tokens %v, loss %v), want BIwE with the answer marked", got, z.Tokens, z.Loss)
	}
}
