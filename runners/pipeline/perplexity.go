// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pipeline

import (
	"context"
	"fmt"
	"strings"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/internal/parallel"
	"github.com/repro-dp/repro/methods"
	"github.com/repro-dp/repro/nn"
)

// textTask reports whether task is one of the records text-generation
// tasks, whose test metric is perplexity (Rap-FT's Table I).
func textTask(task string) bool { return task == "records" || strings.HasPrefix(task, "records-") }

// Perplexities returns the test perplexity of m on test (datasets.
// Perplexity over the answer tokens): "ppl" over every example and, when
// the split mixes kinds, "ppl_<kind>" per record kind (e2e, echr). Token
// losses are computed on up to workers goroutines (0: GOMAXPROCS), one
// example each, so the result does not depend on workers.
func Perplexities(ctx context.Context, m *nn.TinyMLLM, vt nn.VisualTransform, test []datasets.Example, workers int) (map[string]float64, error) {
	nlls := make([][]float64, len(test))
	err := parallel.For(len(test), workers, func(i int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		s := methods.Sequence(&test[i])
		l, _, err := m.TokenLosses(&s, nil, vt)
		if err != nil {
			return fmt.Errorf("pipeline: perplexity of test example %s: %w", test[i].ID, err)
		}
		nlls[i] = l
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := map[string]float64{"ppl": datasets.Perplexity(nlls)}
	byKind := map[string][][]float64{}
	for i := range test {
		byKind[test[i].Kind] = append(byKind[test[i].Kind], nlls[i])
	}
	if len(byKind) > 1 {
		for k, v := range byKind {
			out["ppl_"+k] = datasets.Perplexity(v)
		}
	}
	return out, nil
}
