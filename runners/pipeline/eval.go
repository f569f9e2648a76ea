// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/internal/parallel"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/methods"
	"github.com/repro-dp/repro/nn"
)

// Eval holds the test metrics of a trained model.
type Eval struct {
	// Acc is the exact-match accuracy (%) of greedy decoding on every test
	// example; Img on the examples whose answer needs the image
	// (datasets.Example.TextOnly false: Dual-Priv's IMG); Text on the
	// others (NaN if none).
	Acc, Img, Text float64
	// Majority is the accuracy (%) of always giving the most frequent
	// training answer of the example's question kind: the chance level a
	// model that ignores the image and the question's details reaches.
	Majority float64
	// N and NImg count the test examples and the IMG subset.
	N, NImg int
	// Predictions hold each test example's greedy answer, whether it
	// matches, and the mean loss of the reference answer, in test order.
	Predictions []results.Prediction
}

func (e *Eval) results() map[string]float64 {
	return map[string]float64{"acc": e.Acc, "img": e.Img, "acc_text": e.Text, "acc_majority": e.Majority}
}

// Evaluate decodes every test example's prompt greedily (up to the length
// of its answer, which ends with EOS) and counts exact matches of the
// answer; it also scores the reference answer (mean token cross-entropy
// under teacher forcing) for the example's prediction row, with the visual transform vt (nil: none) the trained model runs
// with. train gives the majority baseline. Examples are decoded on up to
// workers goroutines (0: GOMAXPROCS), each on its own, so the result does
// not depend on workers.
func Evaluate(ctx context.Context, m *nn.TinyMLLM, vt nn.VisualTransform, test, train []datasets.Example, workers int) (*Eval, error) {
	if len(test) == 0 {
		return nil, errors.New("pipeline: empty test split")
	}
	ok := make([]bool, len(test))
	preds := make([]results.Prediction, len(test))
	voc := datasets.Vocab()
	// The weights do not change during the pass: pack them once for all
	// its forward passes (the same bits).
	defer m.PackWeights()()
	err := parallel.For(len(test), workers, func(i int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		ex := &test[i]
		p := nn.Sequence{Tokens: ex.Prompt, Images: ex.Images}
		out, err := m.Generate(&p, len(ex.Answer), nn.Sampler{}, nil, nil, vt)
		if err != nil {
			return fmt.Errorf("pipeline: test example %s: %w", ex.ID, err)
		}
		ok[i] = slices.Equal(out, ex.Answer)
		s := methods.Sequence(ex)
		losses, _, err := m.TokenLosses(&s, nil, vt)
		if err != nil {
			return fmt.Errorf("pipeline: loss of test example %s: %w", ex.ID, err)
		}
		preds[i] = results.Prediction{Split: "test", ExampleID: ex.ID, Prediction: voc.Decode(out), Correct: ok[i], Loss: meanOf(losses)}
		return nil
	})
	if err != nil {
		return nil, err
	}
	majority := MajorityAnswers(train)
	e := Eval{Predictions: preds}
	var hit, hitImg, hitText, hitMaj int
	for i := range test {
		ex := &test[i]
		e.N++
		if ok[i] {
			hit++
		}
		if ex.TextOnly {
			if ok[i] {
				hitText++
			}
		} else {
			e.NImg++
			if ok[i] {
				hitImg++
			}
		}
		if majority[ex.Kind] == fmt.Sprint(ex.Answer) {
			hitMaj++
		}
	}
	pct := func(a, b int) float64 {
		if b == 0 {
			return math.NaN()
		}
		return 100 * float64(a) / float64(b)
	}
	e.Acc, e.Img, e.Text, e.Majority = pct(hit, e.N), pct(hitImg, e.NImg), pct(hitText, e.N-e.NImg), pct(hitMaj, e.N)
	return &e, nil
}

// LabelAccuracy returns the share (%) of the in-context test episodes
// (already posed) whose first answer token gets the highest logit among
// the task's label words (mapping: one word per class): the accuracy of
// the class choice alone, apart from answering in the task's format (the
// exact match of Evaluate needs both). The pretrained base's in-context
// metrics are measured the same way.
func LabelAccuracy(ctx context.Context, m *nn.TinyMLLM, vt nn.VisualTransform, test []datasets.Example, mapping []string) (float64, error) {
	v := datasets.Vocab()
	words := make([]int, len(mapping))
	for k, w := range mapping {
		id, ok := v.ID(w)
		if !ok {
			return 0, fmt.Errorf("pipeline: label word %q is not one token", w)
		}
		words[k] = id
	}
	hit := make([]bool, len(test))
	defer m.PackWeights()()
	err := parallel.For(len(test), 0, func(i int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		ex := &test[i]
		toks := append(slices.Clone(ex.Prompt), ex.Answer[0])
		loss := make([]bool, len(toks))
		loss[len(toks)-1] = true
		_, z, err := m.TokenLosses(&nn.Sequence{Tokens: toks, Images: ex.Images, Loss: loss}, nil, vt)
		if err != nil {
			return fmt.Errorf("pipeline: test example %s: %w", ex.ID, err)
		}
		row, best := z.Row(0), words[0]
		for _, w := range words[1:] {
			if row[w] > row[best] {
				best = w
			}
		}
		hit[i] = best == ex.Answer[0]
		return nil
	})
	if err != nil {
		return 0, err
	}
	return percentTrue(hit), nil
}

// classifierAccuracy returns the accuracy (%) of a classifier (*nn.ViT,
// *nn.CNN or *nn.Fusion) on test: the share of examples whose most probable class is
// their label, and each example's prediction row (the class index, and
// the loss −ln p(label)). Examples are predicted in parallel, each on its
// own, so the result does not depend on the number of goroutines.
func classifierAccuracy(ctx context.Context, model nn.Model, test []datasets.Example) (float64, []results.Prediction, error) {
	if len(test) == 0 {
		return 0, nil, errors.New("pipeline: empty test split")
	}
	hit := make([]bool, len(test))
	preds := make([]results.Prediction, len(test))
	err := parallel.For(len(test), 0, func(i int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		ex := &test[i]
		if len(ex.Images) == 0 {
			return fmt.Errorf("pipeline: test example %s has no image", ex.ID)
		}
		var pred int
		var probs []float64
		var err error
		switch m := model.(type) {
		case *nn.ViT:
			pred, probs, err = m.Predict(ex.Images[0])
		case *nn.CNN:
			pred, probs, err = m.Predict(ex.Images[0])
		case *nn.Fusion:
			pred, probs, err = m.Predict(ex.Images[0], ex.Prompt)
		default:
			arch, _ := model.Describe()
			return fmt.Errorf("pipeline: a %s is not a classifier", arch)
		}
		if err != nil {
			return fmt.Errorf("pipeline: test example %s: %w", ex.ID, err)
		}
		hit[i] = pred == ex.Label
		loss := math.NaN()
		if ex.Label >= 0 && ex.Label < len(probs) {
			loss = -math.Log(probs[ex.Label])
		}
		preds[i] = results.Prediction{Split: "test", ExampleID: ex.ID, Prediction: strconv.Itoa(pred), Correct: hit[i], Loss: loss}
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	return percentTrue(hit), preds, nil
}

// meanOf returns the mean of x (NaN if empty).
func meanOf(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// percentTrue returns the share (%) of true values in hit.
func percentTrue(hit []bool) float64 {
	n := 0
	for _, h := range hit {
		if h {
			n++
		}
	}
	return 100 * float64(n) / float64(len(hit))
}

// MajorityAnswers returns the most frequent answer of train's
// non-canary examples for each question kind, keyed by the answer's
// fmt.Sprint form; ties go to the lowest.
func MajorityAnswers(train []datasets.Example) map[string]string {
	counts := map[string]map[string]int{}
	for i := range train {
		ex := &train[i]
		if ex.Canary >= 0 {
			continue
		}
		if counts[ex.Kind] == nil {
			counts[ex.Kind] = map[string]int{}
		}
		counts[ex.Kind][fmt.Sprint(ex.Answer)]++
	}
	majority := map[string]string{}
	for kind, c := range counts {
		best, bestN := "", -1
		for a, n := range c {
			if n > bestN || (n == bestN && a < best) {
				best, bestN = a, n
			}
		}
		majority[kind] = best
	}
	return majority
}
