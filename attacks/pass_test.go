// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/nn"
)

// TestRenyi checks renyi against closed forms. For p = (½, ¼, ¼):
// H_1 = 1.5 log 2, H_2 = −log(3/8), H_½ = 2 log(√½ + 1), H_∞ = log 2. For
// the uniform distribution on 7 outcomes every order gives log 7. For the
// point mass (1, 0, 0), VL-MIA's clamp to [1e-10, 1 − 1e-10] gives
// H_½ = 2 log(√(1 − 1e-10) + 2·1e-5) and H_2 = −log((1 − 1e-10)² + 2e-20)
// rather than 0 (values by hand with Python's math module). Orders a spec
// may add: H_3 = ½ log(32/5) for (½, ¼, ¼) (Σp³ = 5/32); H_0 is the log
// of the support size, log 3 even for the point mass once clamped; and
// H_α tends to Shannon's H_1 as α → 1 (at α = 1 ± 1e-6 the closed form
// log(½^α + 2·¼^α)/(1 − α) is within 1e-7 of it: dH_α/dα at 1 is minus
// half the variance of log p, −(log 2)²/8).
func TestRenyi(t *testing.T) {
	lg := func(p ...float64) []float64 {
		out := make([]float64, len(p))
		for i, v := range p {
			out[i] = math.Log(v)
		}
		return out
	}
	uni := lg(1, 1, 1, 1, 1, 1, 1)
	for i := range uni {
		uni[i] -= math.Log(7)
	}
	inf := math.Inf(1)
	for _, tc := range []struct {
		desc  string
		lp    []float64
		alpha float64
		want  float64
		tol   float64
	}{
		{"(½,¼,¼) α=1", lg(.5, .25, .25), 1, 1.0397207708399179, 1e-14},
		{"(½,¼,¼) α=2", lg(.5, .25, .25), 2, 0.9808292530117262, 1e-14},
		{"(½,¼,¼) α=½", lg(.5, .25, .25), 0.5, 1.0695999934791407, 1e-14},
		{"(½,¼,¼) α=∞", lg(.5, .25, .25), inf, 0.6931471805599453, 1e-14},
		{"uniform 7 α=1", uni, 1, math.Log(7), 1e-14},
		{"uniform 7 α=2", uni, 2, math.Log(7), 1e-14},
		{"uniform 7 α=½", uni, 0.5, math.Log(7), 1e-14},
		{"uniform 7 α=∞", uni, inf, math.Log(7), 1e-14},
		{"point mass α=½ clamped", []float64{0, math.Inf(-1), math.Inf(-1)}, 0.5, 3.99995000071429e-05, 1e-12},
		{"point mass α=2 clamped", []float64{0, math.Inf(-1), math.Inf(-1)}, 2, 2.000000165680742e-10, 1e-15},
		{"point mass α=1", []float64{0, -800, -800}, 1, 0, 1e-300},
		{"(½,¼,¼) α=3", lg(.5, .25, .25), 3, 0.9281489951828131, 1e-14},
		{"(½,¼,¼) α=0", lg(.5, .25, .25), 0, 1.0986122886681098, 1e-14},
		{"point mass α=0 clamped", []float64{0, math.Inf(-1), math.Inf(-1)}, 0, 1.0986122886681098, 1e-14},
		{"uniform 7 α=0", uni, 0, math.Log(7), 1e-14},
		{"uniform 7 α=3", uni, 3, math.Log(7), 1e-14},
		{"(½,¼,¼) α=1+1e-6", lg(.5, .25, .25), 1 + 1e-6, 1.039720710776649, 1e-9},
		{"(½,¼,¼) α=1−1e-6", lg(.5, .25, .25), 1 - 1e-6, 1.0397208309032482, 1e-9},
		{"(½,¼,¼) α=1+1e-6 near Shannon", lg(.5, .25, .25), 1 + 1e-6, 1.0397207708399179, 1e-7},
	} {
		if got := renyi(tc.lp, tc.alpha); math.Abs(got-tc.want) > tc.tol {
			t.Errorf("%s: got %v, want %v", tc.desc, got, tc.want)
		}
	}
}

// TestTopMean checks MaxRényi-K%'s and Min-K%'s k = max(1, ⌊len·K⌋).
func TestTopMean(t *testing.T) {
	x := []float64{3, 1, 2, 5, 4}
	for _, tc := range []struct {
		frac     float64
		smallest bool
		want     float64
	}{
		{0, false, 5}, {0.1, false, 5}, {0.4, false, 4.5}, {1, false, 3},
		{0, true, 1}, {0.2, true, 1}, {0.5, true, 1.5}, {1, true, 3},
	} {
		if got := topMean(x, tc.frac, tc.smallest); got != tc.want {
			t.Errorf("topMean(%v, %v, %v) = %v, want %v", x, tc.frac, tc.smallest, got, tc.want)
		}
	}
	if x[0] != 3 || !math.IsNaN(topMean(nil, 0.5, false)) {
		t.Error("topMean modified its input or gave a value for no input")
	}
}

// TestForward checks one pass against the model's own per-token losses and
// logits (nn.TinyMLLM.TokenLosses, a separate code path): the answer's
// log-probabilities are minus the token losses, the desp entropies are
// those of the logits TokenLosses returns, and the slices have the
// expected sizes: one img row per visual token, one inst row per prompt
// token after <bos> except the placeholder.
func TestForward(t *testing.T) {
	cfg, err := nn.Preset("smoke", datasets.Vocab().Len())
	if err != nil {
		t.Fatal(err)
	}
	m, err := nn.NewTinyMLLM(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d, err := datasets.Build("shapes-vqa", &datasets.Options{Scale: datasets.Smoke, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	exs := examples(d.Holdout, 3)
	ps, err := passes(context.Background(), m, nil, exs, RenyiOrders, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range ps {
		s := &exs[i].Seq
		ls, z, err := m.TokenLosses(s, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.logp[1]) != len(ls) {
			t.Fatalf("example %d: %d answer log-probabilities, want %d", i, len(p.logp[1]), len(ls))
		}
		V := cfg.Vocab
		lp := make([]float64, V)
		for j, l := range ls {
			if math.Abs(p.logp[1][j]+l) > 1e-9 {
				t.Errorf("example %d token %d: log-prob %v, want %v", i, j, p.logp[1][j], -l)
			}
			logSoftmax(lp, z.Data[j*V:(j+1)*V])
			for o, a := range RenyiOrders {
				if got, want := p.ent[o][2][j], renyi(lp, a); math.Abs(got-want) > 1e-9 {
					t.Errorf("example %d token %d α=%v: entropy %v, want %v", i, j, a, got, want)
				}
			}
		}
		prompt := 0
		for j, id := range s.Tokens {
			if j > 0 && id != nn.TokenImage && !s.Loss[j] {
				prompt++
			}
		}
		if len(p.logp[0]) != prompt || len(p.ent[0][1]) != prompt {
			t.Errorf("example %d: %d inst rows, want %d", i, len(p.logp[0]), prompt)
		}
		if got := len(p.ent[0][0]); got == 0 || got >= cfg.MaxLen {
			t.Errorf("example %d: %d img rows", i, got)
		}
		if got, want := len(slice(p.ent[1], SliceInstDesp)), prompt+len(ls); got != want {
			t.Errorf("example %d: inst_desp has %d rows, want %d", i, got, want)
		}
	}
}

// testModel returns a freshly initialised smoke-preset TinyMLLM.
func testModel(t testing.TB) *nn.TinyMLLM {
	t.Helper()
	cfg, err := nn.Preset("smoke", datasets.Vocab().Len())
	if err != nil {
		t.Fatal(err)
	}
	m, err := nn.NewTinyMLLM(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestEmptySlice checks that MaxRényi-K% on text-only examples (records:
// no image, so no img positions) leaves the img score sets out with a
// warning each and reports the others.
func TestEmptySlice(t *testing.T) {
	d, err := datasets.Build("records", &datasets.Options{Scale: datasets.Smoke, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	tg := &Target{Model: testModel(t), Members: examples(d.Private, 8), NonMembers: examples(d.Holdout, 8)}
	rep, err := MaxRenyiMIA{}.Run(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	img, left := 0, 0
	for _, w := range rep.Warnings {
		if strings.Contains(w, "undefined") {
			left++
			if strings.Contains(w, "renyi_img_") {
				img++
			}
		}
	}
	if want := len(RenyiOrders) * len(TopFractions); img != want {
		t.Errorf("%d warnings about the img slice, want %d: %q", img, want, rep.Warnings)
	}
	sets := 0
	for k := range rep.Results {
		if strings.HasSuffix(k, "_auc") {
			sets++
		}
	}
	if sets+left != len(RenyiOrders)*len(TopFractions)*len(Slices) {
		t.Errorf("%d sets reported and %d left out, want %d in all", sets, left, len(RenyiOrders)*len(TopFractions)*len(Slices))
	}
	if _, ok := rep.Results["renyi_img_a1_k0_auc"]; ok {
		t.Error("an img score set was reported")
	}
	if _, ok := rep.Results["renyi_desp_a1_k0_auc"]; !ok {
		t.Error("no desp score set")
	}
	if n := len(rep.Scores); n != 16*sets {
		t.Errorf("%d scores, want 16 for each of the %d reported sets", n, sets)
	}
}

// TestPassesGrouped checks that the batched passes (groups of passGroup
// examples on one tape) equal forward's pass of each example on its own
// bit for bit, for a mix of VQA examples with an image and text-only
// records in a number that leaves a partial group, and that they do not
// depend on the number of workers.
func TestPassesGrouped(t *testing.T) {
	m := testModel(t)
	var exs []Example
	for _, task := range []string{"shapes-vqa", "records"} {
		d, err := datasets.Build(task, &datasets.Options{Scale: datasets.Smoke, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		exs = append(exs, examples(d.Holdout, 11)...)
	}
	ss := make([]*nn.Sequence, len(exs))
	for i := range exs {
		ss[i] = &exs[i].Seq
	}
	for _, orders := range [][]float64{nil, {1, math.Inf(1)}} {
		want := make([]*pass, len(exs))
		for i := range exs {
			var err error
			if want[i], err = forward(m, nil, &exs[i].Seq, orders); err != nil {
				t.Fatal(err)
			}
		}
		// forwardGroup itself (passes falls back to forward on an error).
		group, err := forwardGroup(m, ss, orders)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(group, want) {
			t.Errorf("orders %v: forwardGroup's passes differ from the examples' own", orders)
		}
		for _, workers := range []int{1, 3} {
			ps, err := passes(context.Background(), m, nil, exs, orders, workers)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ps, want) {
				t.Errorf("orders %v, workers %d: the grouped passes differ from the examples' own", orders, workers)
			}
		}
	}
}

// BenchmarkPasses times the shared forward passes of 32 shapes-vqa
// examples on the smoke model, one worker: each example on its own tape
// (forward) against groups of passGroup on one batched tape (passes), with
// no Rényi entropies (the loss attacks) and with VL-MIA's four orders.
func BenchmarkPasses(b *testing.B) {
	m := testModel(b)
	d, err := datasets.Build("shapes-vqa", &datasets.Options{Scale: datasets.Smoke, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	exs := examples(d.Holdout, 32)
	for _, oc := range []struct {
		name   string
		orders []float64
	}{{"orders=none", nil}, {"orders=4", RenyiOrders}} {
		b.Run("each/"+oc.name, func(b *testing.B) {
			for b.Loop() {
				for i := range exs {
					if _, err := forward(m, nil, &exs[i].Seq, oc.orders); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run("grouped/"+oc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := passes(context.Background(), m, nil, exs, oc.orders, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
