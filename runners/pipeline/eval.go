// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/repro-dp/repro/datasets"
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
}

func (e *Eval) results() map[string]float64 {
	return map[string]float64{"acc": e.Acc, "img": e.Img, "acc_text": e.Text, "acc_majority": e.Majority}
}

// Evaluate decodes every test example's prompt greedily (up to the length
// of its answer, which ends with EOS) and counts exact matches of the
// answer. train gives the majority baseline. Examples are decoded on up to
// workers goroutines (0: GOMAXPROCS), each on its own, so the result does
// not depend on workers.
func Evaluate(ctx context.Context, m *nn.TinyMLLM, test, train []datasets.Example, workers int) (*Eval, error) {
	if len(test) == 0 {
		return nil, errors.New("pipeline: empty test split")
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(test))
	ok := make([]bool, len(test))
	errs := make([]error, len(test))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(test); i += workers {
				if err := ctx.Err(); err != nil {
					errs[i] = err
					continue
				}
				ex := &test[i]
				p := nn.Sequence{Tokens: ex.Prompt, Images: ex.Images}
				out, err := m.Generate(&p, len(ex.Answer), nn.Sampler{}, nil, nil, nil)
				if err != nil {
					errs[i] = fmt.Errorf("pipeline: test example %s: %w", ex.ID, err)
					continue
				}
				ok[i] = slices.Equal(out, ex.Answer)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	// The most frequent training answer per question kind.
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
	var e Eval
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
