// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pretrain

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/internal/parallel"
	"github.com/repro-dp/repro/nn"
)

// answerKey returns the tokens of s that its loss mask marks, joined: the
// answer, for majority baselines.
func answerKey(s *nn.Sequence) string {
	var b strings.Builder
	for i, l := range s.Loss {
		if l {
			fmt.Fprintf(&b, "%d ", s.Tokens[i])
		}
	}
	return b.String()
}

// ExactMatch returns the fraction of seqs whose marked tokens are all the
// model's most likely next token given the tokens before them (teacher
// forcing), which is whether greedy decoding of the prompt reproduces the
// answer exactly. It also returns the accuracy of always giving the most
// frequent answer of seqs (the majority baseline).
func ExactMatch(m *nn.TinyMLLM, seqs []nn.Sequence) (acc, majority float64, err error) {
	return exactMatch(m, seqs, nil)
}

// exactMatch is ExactMatch with the images through the visual transform vt
// (nil: every visual token).
func exactMatch(m *nn.TinyMLLM, seqs []nn.Sequence, vt nn.VisualTransform) (acc, majority float64, err error) {
	ok := make([]bool, len(seqs))
	err = parallel.For(len(seqs), 0, func(i int) error {
		s := &seqs[i]
		_, z, err := m.TokenLosses(s, nil, vt)
		if err != nil {
			return err
		}
		V := z.Cols()
		r := 0
		ok[i] = true
		for j, l := range s.Loss {
			if !l {
				continue
			}
			if argmax(z.Data[r*V:(r+1)*V]) != s.Tokens[j] {
				ok[i] = false
				break
			}
			r++
		}
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("pretrain: %w", err)
	}
	count := map[string]int{}
	best, n := 0, 0
	for i := range seqs {
		k := answerKey(&seqs[i])
		count[k]++
		best = max(best, count[k])
		if ok[i] {
			n++
		}
	}
	return float64(n) / float64(len(seqs)), float64(best) / float64(len(seqs)), nil
}

// perplexity returns exp of the mean loss over every marked token of seqs.
func perplexity(m *nn.TinyMLLM, seqs []nn.Sequence) (float64, error) {
	sums := make([]float64, len(seqs))
	counts := make([]int, len(seqs))
	err := parallel.For(len(seqs), 0, func(i int) error {
		ls, _, err := m.TokenLosses(&seqs[i], nil, nil)
		for _, l := range ls {
			sums[i] += l
		}
		counts[i] = len(ls)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("pretrain: %w", err)
	}
	var s float64
	n := 0
	for i := range seqs {
		s += sums[i]
		n += counts[i]
	}
	return math.Exp(s / float64(n)), nil
}

// episodeAccuracy returns the fraction of episodes whose answer word gets
// the highest logit among the episode's label words, with the
// demonstrations (zero false) or without them (zero true).
func episodeAccuracy(m *nn.TinyMLLM, eps []episode, zero bool) (float64, error) {
	ok := make([]bool, len(eps))
	err := parallel.For(len(eps), 0, func(i int) error {
		e := &eps[i]
		s := e.seq
		if zero {
			s = e.zeroShot()
		}
		_, z, err := m.TokenLosses(&s, nil, nil)
		if err != nil {
			return err
		}
		row := z.Row(0) // the answer word is the first marked token
		best := 0
		for k, w := range e.words {
			if row[w] > row[e.words[best]] {
				best = k
			}
		}
		ok[i] = best == e.answer
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("pretrain: %w", err)
	}
	n := 0
	for i := range eps {
		if ok[i] {
			n++
		}
	}
	return float64(n) / float64(len(eps)), nil
}

// nearestNeighbourAccuracy returns the fraction of episodes whose query
// image's nearest demonstration, by cosine similarity of the vision
// encoder's [CLS] outputs, carries the query's word. It needs no language
// model: it measures how well the base's image features alone could support
// in-context learning on the same episodes (a reference for
// icl_few_shot_acc, which must also learn to match and copy in context).
func (c *corpus) nearestNeighbourAccuracy(m *nn.TinyMLLM, eps []episode) float64 {
	cls := func(px []float32) []float32 { // the [CLS] row of the encoder output
		v, _ := m.EncodeImage(nn.NewTape(nil, nil), px, 0, false, nil, nil)
		return v.Encoder.Value.Data[:v.Encoder.Value.Cols()]
	}
	ok := make([]bool, len(eps))
	parallel.For(len(eps), 0, func(i int) error {
		e := &eps[i]
		var words []int // the word after each image: demonstrations, then the answer
		for j, tk := range e.seq.Tokens[:len(e.seq.Tokens)-1] {
			if tk == datasets.Image {
				words = append(words, e.seq.Tokens[j+1])
			}
		}
		n := len(e.seq.Images) - 1
		q := cls(e.seq.Images[n])
		best, word := math.Inf(-1), -1
		for j := range n {
			// cosine similarity up to the query's norm, the same for every j
			f := cls(e.seq.Images[j])
			if s := nn.Dot(f, q) / nn.Norm(f); s > best {
				best, word = s, words[j]
			}
		}
		ok[i] = word == e.words[e.answer]
		return nil
	})
	n := 0
	for _, o := range ok {
		if o {
			n++
		}
	}
	return float64(n) / float64(len(eps))
}

func argmax(x []float32) int {
	b := 0
	for i, v := range x {
		if v > x[b] {
			b = i
		}
	}
	return b
}

// evalRetention is the retention of the pruned-token metrics
// (fashion_class_acc_pruned, shapes_vqa_acc_pruned): Dual-Priv's default.
const evalRetention = 0.4

// evaluate measures the pretrained TinyMLLM m on held-out public data and
// runs the fine-tuning check, filling b.metrics and b.chance.
func (b *builder) evaluate(ctx context.Context, m *nn.TinyMLLM) error {
	c, p := b.corpus, b.plan
	pruned := nn.TokenPruning{Retention: evalRetention, Contextual: dualPrivContextual}.Transform()
	for _, e := range []struct{ metric, set string }{
		{"fashion_class_acc", "fashion_class"},
		{"coarse_acc", srcCoarse},
		{"shapes_vqa_acc", srcShapes},
	} {
		seqs := c.eval[e.set]
		if e.set == srcShapes {
			seqs = nil
			for i := range c.data[srcShapes].Public {
				ex := &c.data[srcShapes].Public[i]
				if ex.Kind != "caption" && heldOut(ex.Items) {
					seqs = append(seqs, toSeq(ex))
				}
			}
		}
		seqs = seqs[:min(len(seqs), p.Eval)]
		acc, maj, err := ExactMatch(m, seqs)
		if err != nil {
			return err
		}
		b.metrics[e.metric], b.chance[e.metric] = acc, maj
		if e.set == srcCoarse {
			continue
		}
		// The same questions with Dual-Priv's token pruning (Mechanism 1
		// at its default retention, no noise), what a dualpriv run that
		// learnt nothing answers with.
		acc, _, err = exactMatch(m, seqs, pruned)
		if err != nil {
			return err
		}
		b.metrics[e.metric+"_pruned"], b.chance[e.metric+"_pruned"] = acc, maj
	}
	recs := c.eval[srcRecords]
	ppl, err := perplexity(m, recs[:min(len(recs), p.Eval)])
	if err != nil {
		return err
	}
	b.metrics["records_ppl"] = ppl
	b.chance["records_ppl"] = float64(m.Config.Vocab)

	rng := rand.New(rand.NewPCG(b.seed, streamEval))
	eps := make([]episode, p.Eval)
	for i := range eps {
		eps[i] = c.newEpisode(rng, c.iclEval, c.shots, false)
	}
	zero, err := episodeAccuracy(m, eps, true)
	if err != nil {
		return err
	}
	few, err := episodeAccuracy(m, eps, false)
	if err != nil {
		return err
	}
	b.metrics["icl_zero_shot_acc"], b.metrics["icl_few_shot_acc"] = zero, few
	b.metrics["icl_gain"] = few - zero
	b.metrics["icl_shots"] = float64(c.shots)
	b.metrics["icl_nn_acc"] = c.nearestNeighbourAccuracy(m, eps)
	b.chance["icl_nn_acc"] = 1 / float64(c.ways)
	b.chance["icl_zero_shot_acc"] = 1 / float64(c.ways)
	b.chance["icl_few_shot_acc"] = 1 / float64(c.ways)
	if err := ctx.Err(); err != nil {
		return err
	}
	return b.fineTuneCheck(ctx, m)
}

// fineTuneCheck fine-tunes a copy of m with LoRA, without privacy, on the
// private train split of fashion-vqa and records the exact-match accuracy on
// its test split before and after.
func (b *builder) fineTuneCheck(ctx context.Context, base *nn.TinyMLLM) error {
	ft := b.plan.FineTune
	d := b.data[srcFashion]
	var train, test []nn.Sequence
	for i := range d.Private {
		if d.Private[i].Canary < 0 {
			train = append(train, toSeq(&d.Private[i]))
		}
	}
	for i := range d.Test[:min(len(d.Test), b.plan.Eval)] {
		test = append(test, toSeq(&d.Test[i]))
	}
	m, err := clone(base)
	if err != nil {
		return err
	}
	before, maj, err := ExactMatch(m, test)
	if err != nil {
		return err
	}
	peft := m.Config.PEFT
	peft.Method, peft.Targets, peft.Parts = "lora", ft.Targets, nil
	layout, err := m.SetPEFT(peft)
	if err != nil {
		return fmt.Errorf("pretrain: %w", err)
	}
	tr, err := newTrainer(layout, ft.LR, ft.LR/10, 0, ft.Steps, 0, 1)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(b.seed, streamFineTune))
	var order []int
	prog := newProgress(b.opt.Progress, fmt.Sprintf("pretrain %s %s: fine-tuning check", b.arch, b.scale), ft.Steps)
	t0 := time.Now()
	for step := range ft.Steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch := make([]nn.Sequence, 0, ft.Batch)
		for range ft.Batch {
			if len(order) == 0 {
				order = rng.Perm(len(train))
			}
			batch = append(batch, train[order[0]])
			order = order[1:]
		}
		g, losses, _, err := m.Gradient(layout, batch, nil, nil, nil)
		if err != nil {
			return fmt.Errorf("pretrain: %w", err)
		}
		tr.step(step, g, len(batch))
		prog.update(step+1, mean(losses))
	}
	after, _, err := ExactMatch(m, test)
	if err != nil {
		return err
	}
	b.metrics["finetune_base_acc"], b.metrics["finetune_acc"] = before, after
	b.metrics["finetune_gain"] = after - before
	b.timings.FineTune = time.Since(t0).Seconds()
	b.chance["finetune_base_acc"], b.chance["finetune_acc"] = maj, maj
	return nil
}

// clone returns an independent copy of m (same configuration and values).
func clone(m *nn.TinyMLLM) (*nn.TinyMLLM, error) {
	c, err := nn.NewTinyMLLM(m.Config)
	if err != nil {
		return nil, fmt.Errorf("pretrain: %w", err)
	}
	src := m.Params()
	dst := c.Params()
	if len(src) != len(dst) {
		return nil, fmt.Errorf("pretrain: clone: %d tensors, want %d", len(dst), len(src))
	}
	for i := range src {
		if src[i].Name != dst[i].Name || len(src[i].Data) != len(dst[i].Data) {
			return nil, fmt.Errorf("pretrain: clone: tensor %s does not match %s", dst[i].Name, src[i].Name)
		}
		copy(dst[i].Data, src[i].Data)
	}
	return c, nil
}
