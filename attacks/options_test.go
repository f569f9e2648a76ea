// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/internal/results"
)

// TestOptionDefaults checks every Optioned attack's declarations: each
// default is canonical and in canonical order, the zero value and
// WithOptions(nil) compute the same score sets, and the default sets are
// those the attacks computed before they took options: VL-MIA's 48
// MaxRényi-K% sets and Min-K% at 10 and 20%, spelt out here by hand.
func TestOptionDefaults(t *testing.T) {
	var renyi []string
	for _, sl := range []string{"img", "inst", "desp", "inst_desp"} {
		for _, a := range []string{"0_5", "1", "2", "inf"} {
			for _, k := range []string{"0", "10", "100"} {
				renyi = append(renyi, "renyi_"+sl+"_a"+a+"_k"+k)
			}
		}
	}
	want := map[string][]string{"maxrenyi-mia": renyi, "mink-mia": {"mink10", "mink20"}}
	for _, name := range Names() {
		a, _ := Lookup(name)
		oa, ok := a.(Optioned)
		if !ok {
			continue
		}
		if want[name] == nil {
			t.Errorf("%s takes options and has no expected default sets here", name)
		}
		if got := oa.Sets(); !slices.Equal(got, want[name]) {
			t.Errorf("%s: default sets %q, want %q", name, got, want[name])
		}
		for _, o := range oa.Options() {
			if o.Name == "" || o.Elem == "" || o.Doc == "" || len(o.Default) == 0 {
				t.Errorf("%s: option %+v lacks a name, elem, doc or default", name, o)
			}
			for _, v := range o.Default {
				if c, err := o.Canonical(v); err != nil || c != v {
					t.Errorf("%s: default %s %q: canonical %q, %v", name, o.Name, v, c, err)
				}
			}
			sorted := slices.Clone(o.Default)
			o.Sort(sorted)
			if !slices.Equal(sorted, o.Default) {
				t.Errorf("%s: default %s %q is not in canonical order", name, o.Name, o.Default)
			}
		}
		b, err := oa.WithOptions(nil)
		if err != nil {
			t.Fatalf("%s: WithOptions(nil): %v", name, err)
		}
		if got := b.(Optioned).Sets(); !slices.Equal(got, want[name]) {
			t.Errorf("%s: WithOptions(nil) sets %q, want %q", name, got, want[name])
		}
	}
}

// TestConfigure checks Configure's canonical forms, order and errors, each
// with its exact message.
func TestConfigure(t *testing.T) {
	for _, tc := range []struct {
		attack string
		opts   map[string][]string
		sets   []string
		err    string
	}{
		{"mink-mia", map[string][]string{"k": {"50", "12.50", "1e1"}}, []string{"mink10", "mink12_5", "mink50"}, ""},
		{"maxrenyi-mia", map[string][]string{"slices": {"desp", "img"}, "orders": {"inf", "0.5"}, "k": {"0"}},
			[]string{"renyi_img_a0_5_k0", "renyi_img_ainf_k0", "renyi_desp_a0_5_k0", "renyi_desp_ainf_k0"}, ""},
		{"maxrenyi-mia", map[string][]string{"orders": {"0", "3", "+Inf"}, "slices": {"inst_desp"}, "k": {"100"}},
			[]string{"renyi_inst_desp_a0_k100", "renyi_inst_desp_a3_k100", "renyi_inst_desp_ainf_k100"}, ""},
		{"loss-mia", nil, nil, ""},
		{"lossmia", nil, nil, `attacks: unknown attack "lossmia" (known: `},
		{"loss-mia", map[string][]string{"k": {"10"}}, nil, `attack loss-mia has no option "k" (it takes none)`},
		{"maxrenyi-mia", map[string][]string{"order": {"1"}}, nil, `attack maxrenyi-mia has no option "order" (known: slices, orders, k)`},
		{"maxrenyi-mia", map[string][]string{"slices": {"imgg"}}, nil, `attack maxrenyi-mia: unknown slice "imgg" (known: img, inst, desp, inst_desp)`},
		{"maxrenyi-mia", map[string][]string{"orders": {"-1"}}, nil, `attack maxrenyi-mia: order -1: must be ≥ 0 or inf`},
		{"maxrenyi-mia", map[string][]string{"orders": {"-inf"}}, nil, `attack maxrenyi-mia: order -inf: must be ≥ 0 or inf`},
		{"maxrenyi-mia", map[string][]string{"orders": {"NaN"}}, nil, `attack maxrenyi-mia: order is NaN`},
		{"maxrenyi-mia", map[string][]string{"orders": {"two"}}, nil, `attack maxrenyi-mia: order "two" is not a number`},
		{"maxrenyi-mia", map[string][]string{"orders": {"2", "2.0"}}, nil, `attack maxrenyi-mia: duplicate order 2`},
		{"maxrenyi-mia", map[string][]string{"k": {"101"}}, nil, `attack maxrenyi-mia: K 101: must be in [0, 100]`},
		{"mink-mia", map[string][]string{"k": {"-0.5"}}, nil, `attack mink-mia: K -0.5: must be in [0, 100]`},
		{"mink-mia", map[string][]string{"k": {}}, nil, `attack mink-mia: k: the list is empty`},
	} {
		a, err := Configure(tc.attack, tc.opts)
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("Configure(%s, %v): got error %v, want %q", tc.attack, tc.opts, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Configure(%s, %v): %v", tc.attack, tc.opts, err)
			continue
		}
		var sets []string
		if oa, ok := a.(Optioned); ok {
			sets = oa.Sets()
		}
		if tc.opts == nil {
			sets = nil
		}
		if !slices.Equal(sets, tc.sets) {
			t.Errorf("Configure(%s, %v): sets %q, want %q", tc.attack, tc.opts, sets, tc.sets)
		}
	}
	// WithOptions takes only canonical, ordered values (Configure's
	// output).
	for _, opts := range []map[string][]string{{"k": {"10.0"}}, {"k": {"20", "10"}}, {"k": {"10", "10"}}, {"kk": {"10"}}} {
		if _, err := (MinKMIA{}).WithOptions(opts); err == nil {
			t.Errorf("MinKMIA.WithOptions(%v): no error", opts)
		}
	}
}

// TestOwns checks which metrics each attack claims.
func TestOwns(t *testing.T) {
	for _, tc := range []struct {
		a      Optioned
		metric string
		want   bool
	}{
		{MaxRenyiMIA{}, "renyi_img_a2_k10_auc", true},
		{MaxRenyiMIA{}, "mia_auc", false},
		{MinKMIA{}, "mink50_auc", true},
		{MinKMIA{}, "mink12_5_tpr_at_fpr_0_01", true},
		{MinKMIA{}, "minkowski", false},
		{MinKMIA{}, "renyi_img_a2_k10_auc", false},
	} {
		if got := tc.a.Owns(tc.metric); got != tc.want {
			t.Errorf("%s.Owns(%s) = %v, want %v", tc.a.Name(), tc.metric, got, tc.want)
		}
	}
}

// optionTarget returns a target of 10 members and 10 non-members of
// shapes-vqa at smoke scale on a freshly initialised model, with the
// bound check off (so that every result of a score set is a function of
// its scores alone).
func optionTarget(t testing.TB) *Target {
	t.Helper()
	d, err := datasets.Build("shapes-vqa", &datasets.Options{Scale: datasets.Smoke, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return &Target{Model: testModel(t), Members: examples(d.Private, 10), NonMembers: examples(d.Holdout, 10), Workers: 2}
}

// TestMaxRenyiSubset checks that MaxRényi-K% with options computes exactly
// the score sets it names, with the values of the full grid's sets of the
// same names: results, scores and their order. Orders outside VL-MIA's
// (0 and 3) are checked the same way against a run that computed them in
// the first pass (Target.Orders), and the set of order 3 against the
// closed-form check of TestRenyi's renyi through TestRenyiSetReference.
func TestMaxRenyiSubset(t *testing.T) {
	ctx := context.Background()
	full, err := MaxRenyiMIA{}.Run(ctx, optionTarget(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []map[string][]string{
		{"slices": {"img", "desp"}, "orders": {"0.5", "inf"}, "k": {"0", "10"}},
		{"orders": {"1"}},
		{"slices": {"inst_desp"}, "k": {"100"}},
	} {
		a, err := Configure("maxrenyi-mia", opts)
		if err != nil {
			t.Fatal(err)
		}
		sets := a.(Optioned).Sets()
		// The subset runs on a target whose passes another attack made
		// first, as in a run of several attacks.
		tg := optionTarget(t)
		if _, err := (LossMIA{}).Run(ctx, tg); err != nil {
			t.Fatal(err)
		}
		got, err := a.Run(ctx, tg)
		if err != nil {
			t.Fatal(err)
		}
		checkSubset(t, fmt.Sprint(opts), full, got, sets)
	}
	// New orders: added to the passes by a second forward pass, or
	// computed in the first one; the results agree.
	a, err := Configure("maxrenyi-mia", map[string][]string{"orders": {"0", "3"}, "slices": {"desp", "inst"}})
	if err != nil {
		t.Fatal(err)
	}
	tg := optionTarget(t)
	if _, err := (MaxRenyiMIA{}).Run(ctx, tg); err != nil {
		t.Fatal(err)
	}
	extended, err := a.Run(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	tg = optionTarget(t)
	tg.Orders = []float64{3, 0}
	first, err := a.Run(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	checkSubset(t, "orders 0, 3", first, extended, a.(Optioned).Sets())
	// H_0 is log V at every row: every score ties, AUC ½.
	if auc := extended.Results["renyi_desp_a0_k10_auc"]; auc != 0.5 {
		t.Errorf("order 0: AUC %v, want 0.5 (every score ties)", auc)
	}
}

// checkSubset checks that got holds exactly the results and scores of
// the score sets sets of full, with the same values.
func checkSubset(t *testing.T, desc string, full, got *Report, sets []string) {
	t.Helper()
	want := map[string]float64{}
	for k, v := range full.Results {
		for _, s := range sets {
			// No MaxRényi-K% set name followed by _ starts another's.
			if strings.HasPrefix(k, s+"_") {
				want[k] = v
			}
		}
	}
	if len(want) == 0 {
		t.Fatalf("%s: the full report has none of the sets %q", desc, sets)
	}
	if diff := cmp.Diff(want, got.Results, cmp.Comparer(func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) })); diff != "" {
		t.Errorf("%s: results differ from the full grid's (-full +subset):\n%s", desc, diff)
	}
	var ws []results.Score
	for _, s := range full.Scores {
		if slices.Contains(sets, s.Attack) {
			ws = append(ws, s)
		}
	}
	// The subset computes its sets in the full grid's order.
	if diff := cmp.Diff(ws, got.Scores); diff != "" {
		t.Errorf("%s: scores differ from the full grid's (-full +subset):\n%s", desc, diff)
	}
}

// renyiRef is an independent Rényi entropy of order α ∉ {1, ∞} of the
// softmax of logits z: the probabilities by direct normalisation of
// exp(z − max z), clamped as VL-MIA clamps them, and the closed form
// log(Σ p^α)/(1 − α).
func renyiRef(z []float32, alpha float64) float64 {
	mx := math.Inf(-1)
	for _, v := range z {
		mx = math.Max(mx, float64(v))
	}
	e := make([]float64, len(z))
	sum := 0.0
	for i, v := range z {
		e[i] = math.Exp(float64(v) - mx)
		sum += e[i]
	}
	s := 0.0
	for _, x := range e {
		p := math.Min(math.Max(x/sum, 1e-10), 1-1e-10)
		s += math.Pow(p, alpha)
	}
	return math.Log(s) / (1 - alpha)
}

// bruteAUC returns the AUC of members against non-members by counting
// pairs: P(member > non-member) + ½ P(tie).
func bruteAUC(members, nonMembers []float64) float64 {
	s := 0.0
	for _, a := range members {
		for _, b := range nonMembers {
			switch {
			case a > b:
				s++
			case a == b:
				s += 0.5
			}
		}
	}
	return s / float64(len(members)*len(nonMembers))
}

// TestRenyiSetReference checks a score set of an order VL-MIA does not use
// (α = 3, K = 50% on desp) against an independent computation from the
// answer logits that nn.TinyMLLM.TokenLosses returns: renyiRef at each
// answer row, the mean of the ⌊n/2⌋ (at least one) largest, and the AUC by
// pair counting.
func TestRenyiSetReference(t *testing.T) {
	tg := optionTarget(t)
	a, err := Configure("maxrenyi-mia", map[string][]string{"slices": {"desp"}, "orders": {"3"}, "k": {"50"}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := a.Run(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	V := tg.Model.Config.Vocab
	score := func(ex Example) float64 {
		_, z, err := tg.Model.TokenLosses(&ex.Seq, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		var h []float64
		for r := 0; r*V < len(z.Data); r++ {
			h = append(h, renyiRef(z.Data[r*V:(r+1)*V], 3))
		}
		sort.Sort(sort.Reverse(sort.Float64Slice(h)))
		k := max(1, len(h)/2)
		m := 0.0
		for _, v := range h[:k] {
			m += v
		}
		return -m / float64(k)
	}
	var sm, sn []float64
	for _, ex := range tg.Members {
		sm = append(sm, score(ex))
	}
	for _, ex := range tg.NonMembers {
		sn = append(sn, score(ex))
	}
	for i, s := range rep.Scores {
		want := sm
		j := i
		if !s.Member {
			want, j = sn, i-len(sm)
		}
		if math.Abs(s.Score-want[j]) > 1e-9 {
			t.Errorf("score %d: got %v, want %v", i, s.Score, want[j])
		}
	}
	if got, want := rep.Results["renyi_desp_a3_k50_auc"], bruteAUC(sm, sn); math.Abs(got-want) > 1e-12 {
		t.Errorf("AUC %v, want %v", got, want)
	}
}

// TestMinKOption checks Min-K% Prob at K = 50%, not a default, against an
// independent computation: the answer tokens' log-probabilities as minus
// nn.TinyMLLM.TokenLosses, the mean of the ⌊n/2⌋ (at least one) smallest,
// and the AUC by pair counting.
func TestMinKOption(t *testing.T) {
	tg := optionTarget(t)
	a, err := Configure("mink-mia", map[string][]string{"k": {"50"}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := a.Run(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	score := func(ex Example) float64 {
		ls, _, err := tg.Model.TokenLosses(&ex.Seq, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		lp := make([]float64, len(ls))
		for i, l := range ls {
			lp[i] = -l
		}
		sort.Float64s(lp)
		k := max(1, len(lp)/2)
		m := 0.0
		for _, v := range lp[:k] {
			m += v
		}
		return m / float64(k)
	}
	var sm, sn []float64
	for _, ex := range tg.Members {
		sm = append(sm, score(ex))
	}
	for _, ex := range tg.NonMembers {
		sn = append(sn, score(ex))
	}
	if len(rep.Scores) != len(sm)+len(sn) {
		t.Fatalf("%d scores, want %d", len(rep.Scores), len(sm)+len(sn))
	}
	for i, s := range rep.Scores {
		want := sm
		j := i
		if !s.Member {
			want, j = sn, i-len(sm)
		}
		if s.Attack != "mink50" || math.Abs(s.Score-want[j]) > 1e-9 {
			t.Errorf("score %d: got %v (%s), want %v (mink50)", i, s.Score, s.Attack, want[j])
		}
	}
	if got, want := rep.Results["mink50_auc"], bruteAUC(sm, sn); math.Abs(got-want) > 1e-12 {
		t.Errorf("mink50_auc = %v, want %v", got, want)
	}
	if _, ok := rep.Results["mink10_auc"]; ok {
		t.Error("K = 50 alone also reported mink10")
	}
}

// BenchmarkMaxRenyi times MaxRényi-K% on 10 members and 10 non-members of
// a smoke model, forward passes included: VL-MIA's 48 default sets
// against the 2 of `{slices: [img], orders: [inf], k: [0, 10]}` and 2
// sets of another order, the loss attack first, each with the Rényi
// orders of the shared passes set as the pipeline sets them.
func BenchmarkMaxRenyi(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts map[string][]string
	}{
		{"default-48", nil},
		{"img-inf-2", map[string][]string{"slices": {"img"}, "orders": {"inf"}, "k": {"0", "10"}}},
		{"img-3-2", map[string][]string{"slices": {"img"}, "orders": {"3"}, "k": {"0", "10"}}},
	} {
		a, err := Configure("maxrenyi-mia", bc.opts)
		if err != nil {
			b.Fatal(err)
		}
		tg := optionTarget(b)
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				// The orders of the shared passes, as the pipeline sets them.
				orders := a.(MaxRenyiMIA).Orders
				if orders == nil {
					orders = RenyiOrders
				}
				fresh := &Target{Model: tg.Model, Members: tg.Members, NonMembers: tg.NonMembers, Workers: 1, Orders: orders}
				if _, err := (LossMIA{}).Run(context.Background(), fresh); err != nil {
					b.Fatal(err)
				}
				if _, err := a.Run(context.Background(), fresh); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
