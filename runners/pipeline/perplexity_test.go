// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pipeline

import (
	"context"
	"math"
	"testing"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/methods"
	"github.com/repro-dp/repro/nn"
)

// TestPerplexities checks the test perplexity against a second path: the
// mean cross-entropy of each example (TinyMLLM.Loss on a tape) weighted by
// its answer length, exponentiated; and that the mixed records task gets a
// perplexity per kind.
func TestPerplexities(t *testing.T) {
	d, err := datasets.Build("records", &datasets.Options{Scale: datasets.Smoke, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := nn.Preset("smoke", datasets.Vocab().Len())
	if err != nil {
		t.Fatal(err)
	}
	m, err := nn.NewTinyMLLM(cfg)
	if err != nil {
		t.Fatal(err)
	}
	test := d.Test[:12]
	got, err := Perplexities(context.Background(), m, nil, test, 2)
	if err != nil {
		t.Fatal(err)
	}
	sum, n := map[string]float64{}, map[string]float64{}
	for i := range test {
		s := methods.Sequence(&test[i])
		l, err := m.Loss(nn.NewTape(nil, nil), &s, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		k := 0
		for _, b := range s.Loss {
			if b {
				k++
			}
		}
		for _, key := range []string{"ppl", "ppl_" + test[i].Kind} {
			sum[key] += float64(l.Value.Data[0]) * float64(k)
			n[key] += float64(k)
		}
	}
	if len(got) != 3 {
		t.Errorf("got %v, want ppl, ppl_e2e and ppl_echr", got)
	}
	for key, s := range sum {
		want := math.Exp(s / n[key])
		if math.Abs(got[key]-want) > 1e-4*want {
			t.Errorf("%s = %v, want %v", key, got[key], want)
		}
	}
}
