// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package experiments

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// withAttacks returns base with its attacks line replaced by lines, which
// start at line 15.
func withAttacks(lines string) string {
	return strings.Replace(base, "attacks: [loss-mia]\n", lines, 1)
}

func TestAttackOptions(t *testing.T) {
	src := withAttacks(`attacks:
  - loss-mia
  - name: maxrenyi-mia
    slices: [desp, img]
    orders: [inf, 0.5, 3]
    k: 10
  - {name: mink-mia, k: [50, 10, 20]}
  - {k: [10, 20], name: zlib-mia}
`)
	_, err := Parse("t.yaml", []byte(src), nil)
	// zlib-mia takes no options; the error is at its key.
	if err == nil || err.Error() != `t.yaml:22: attack zlib-mia has no option "k" (it takes none)` {
		t.Fatalf("Parse: got %v, want the zlib-mia option error", err)
	}
	src = strings.Replace(src, "  - {k: [10, 20], name: zlib-mia}\n", "  - zlib-mia\n", 1)
	s, err := Parse("t.yaml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Canonical spelling and order; mink's k keeps only what differs
	// from the default.
	want := map[string]AttackOptions{
		"maxrenyi-mia": {"slices": {"img", "desp"}, "orders": {"0.5", "3", "inf"}, "k": {"10"}},
		"mink-mia":     {"k": {"10", "20", "50"}},
	}
	if diff := cmp.Diff([]string{"loss-mia", "maxrenyi-mia", "mink-mia", "zlib-mia"}, s.Attacks); diff != "" {
		t.Errorf("Attacks (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, s.AttackOptions); diff != "" {
		t.Errorf("AttackOptions (-want +got):\n%s", diff)
	}
	for _, c := range s.Expand() {
		if diff := cmp.Diff(want, c.AttackOptions); diff != "" {
			t.Fatalf("%v: AttackOptions (-want +got):\n%s", &c, diff)
		}
	}
	// Each config owns its options.
	cs := s.Expand()
	cs[0].AttackOptions["mink-mia"]["k"][0] = "99"
	if cs[1].AttackOptions["mink-mia"]["k"][0] != "10" || s.AttackOptions["mink-mia"]["k"][0] != "10" {
		t.Error("configs share their attack options")
	}
}

// TestAttackOptionsDefault checks that options equal to an attack's
// defaults, in any order and spelling, are dropped: such a spec has the
// run ids of the spec that names the attack alone.
func TestAttackOptionsDefault(t *testing.T) {
	plain, err := Parse("t.yaml", []byte(withAttacks("attacks: [loss-mia, maxrenyi-mia, mink-mia]\n")), nil)
	if err != nil {
		t.Fatal(err)
	}
	spelt, err := Parse("t.yaml", []byte(withAttacks(`attacks:
  - loss-mia
  - {name: maxrenyi-mia, slices: [inst_desp, desp, inst, img], orders: [∞, 2, 1.0, 0.5], k: [100, 1e1, 0]}
  - {name: mink-mia, k: [20, 10]}
`)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if spelt.AttackOptions != nil {
		t.Errorf("AttackOptions = %v, want none", spelt.AttackOptions)
	}
	a, b := plain.Expand(), spelt.Expand()
	for i := range a {
		if a[i].ID(Inputs{}) != b[i].ID(Inputs{}) {
			t.Errorf("run %d: id %s with the defaults spelt out, %s without", i, b[i].ID(Inputs{}), a[i].ID(Inputs{}))
		}
	}
}

// TestAttackOptionErrors checks each error of the attacks grammar with its
// exact message and line.
func TestAttackOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		desc, attacks string
		want          string
	}{
		{"unknown attack", "attacks: [loss-mia, renyi-mia]\n",
			`bad.yaml:15: unknown attack "renyi-mia" (known: loss-mia, zlib-mia, mink-mia, maxrenyi-mia, audit-one-run, lira-mia, exposure, pii-extraction, pii-reconstruction, gia, gia-upload, gia-round, mean-audit)`},
		{"unknown attack in a mapping", "attacks:\n  - {name: maxrenyi, k: [10]}\n",
			`bad.yaml:16: unknown attack "maxrenyi" (known: loss-mia, zlib-mia, mink-mia, maxrenyi-mia, audit-one-run, lira-mia, exposure, pii-extraction, pii-reconstruction, gia, gia-upload, gia-round, mean-audit)`},
		{"no name", "attacks:\n  - loss-mia\n  - k: [10]\n",
			`bad.yaml:17: attack: missing key "name"`},
		{"duplicate attack", "attacks:\n  - mink-mia\n  - {name: mink-mia, k: 50}\n",
			`bad.yaml:17: duplicate attack "mink-mia"`},
		{"unknown option", "attacks:\n  - name: maxrenyi-mia\n    slices: [img]\n    order: [1]\n",
			`bad.yaml:18: attack maxrenyi-mia has no option "order" (known: slices, orders, k)`},
		{"option of an attack without options", "attacks:\n  - name: loss-mia\n    k: 10\n",
			`bad.yaml:17: attack loss-mia has no option "k" (it takes none)`},
		{"unknown slice", "attacks:\n  - name: maxrenyi-mia\n    slices:\n      - img\n      - imgs\n",
			`bad.yaml:19: attack maxrenyi-mia: unknown slice "imgs" (known: img, inst, desp, inst_desp)`},
		{"slice number", "attacks:\n  - {name: maxrenyi-mia, slices: [1]}\n",
			`bad.yaml:16: attack maxrenyi-mia: unknown slice 1 (known: img, inst, desp, inst_desp)`},
		{"negative order", "attacks:\n  - name: maxrenyi-mia\n    orders: [0.5, -1]\n",
			`bad.yaml:17: attack maxrenyi-mia: order -1: must be ≥ 0 or inf`},
		{"order -inf", "attacks:\n  - name: maxrenyi-mia\n    orders: [-.inf]\n",
			`bad.yaml:17: attack maxrenyi-mia: order -inf: must be ≥ 0 or inf`},
		{"order nan", "attacks:\n  - name: maxrenyi-mia\n    orders: [.nan]\n",
			`bad.yaml:17: attack maxrenyi-mia: order NaN is not a number`},
		{"order word", "attacks:\n  - name: maxrenyi-mia\n    orders: [shannon]\n",
			`bad.yaml:17: attack maxrenyi-mia: order "shannon" is not a number`},
		{"K above 100", "attacks:\n  - name: maxrenyi-mia\n    k: [0, 10, 110]\n",
			`bad.yaml:17: attack maxrenyi-mia: K 110: must be in [0, 100]`},
		{"K below 0", "attacks:\n  - {name: mink-mia, k: -5}\n",
			`bad.yaml:16: attack mink-mia: K -5: must be in [0, 100]`},
		{"K inf", "attacks:\n  - {name: mink-mia, k: inf}\n",
			`bad.yaml:16: attack mink-mia: K inf: must be in [0, 100]`},
		{"duplicate K", "attacks:\n  - name: mink-mia\n    k: [10, 50, 10.0]\n",
			`bad.yaml:17: attack mink-mia: duplicate K 10`},
		{"duplicate slice", "attacks:\n  - name: maxrenyi-mia\n    slices: [img, img]\n",
			`bad.yaml:17: attack maxrenyi-mia: duplicate slice img`},
		{"duplicate option", "attacks:\n  - name: maxrenyi-mia\n    k: [0]\n    k: [10]\n",
			`bad.yaml:18: attack maxrenyi-mia: duplicate key "k"`},
		{"empty list", "attacks:\n  - name: maxrenyi-mia\n    orders: []\n",
			`bad.yaml:17: attack maxrenyi-mia: orders: the list is empty`},
		{"nested list", "attacks:\n  - name: maxrenyi-mia\n    orders: [[1, 2]]\n",
			`bad.yaml:17: attack maxrenyi-mia: orders must be a value or a list of values`},
		{"attack not a name", "attacks:\n  - [loss-mia]\n",
			`bad.yaml:16: attack must be a name or a mapping with a name and options`},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(withAttacks(tc.attacks)), nil)
			if err == nil || err.Error() != tc.want {
				t.Errorf("Parse: got %v, want %s", err, tc.want)
			}
		})
	}
}

// TestAttackMetrics checks the metrics that tables, plots and claims name
// against the score sets of the spec's attacks and options.
func TestAttackMetrics(t *testing.T) {
	const renyi = "attacks:\n  - name: maxrenyi-mia\n    orders: [inf]\n    k: [0, 10]\n  - mink-mia\n"
	for _, tc := range []struct {
		desc, attacks, old, new, want string
	}{
		{"computed", renyi, "metrics: [acc]", "metrics: [acc, renyi_img_ainf_k10_auc, mink20_auc]", ""},
		{"order left out", renyi, "metrics: [acc]", "metrics: [acc, renyi_img_a2_k10_auc]",
			`bad.yaml:21: table tab: metric "renyi_img_a2_k10_auc" is not a result of attack maxrenyi-mia with the spec's options (k: [0, 10]; orders: [inf])`},
		{"default K left out", renyi, "metrics: [acc]", "metrics: [acc, mink50_auc]",
			`bad.yaml:21: table tab: metric "mink50_auc" is not a result of attack mink-mia with its default options`},
		{"attack not run", "attacks: [loss-mia]\n", "y: acc", "y: renyi_desp_a1_k0_auc",
			`bad.yaml:19: plot fig: metric "renyi_desp_a1_k0_auc" is a result of attack maxrenyi-mia, which the spec does not run`},
		{"radar spoke", renyi, "x: epsilon_target, y: acc, series: method", "kind: radar, metrics: [renyi_img_ainf_k0_auc, renyi_img_ainf_k10_auc, renyi_img_ainf_k100_auc], series: method",
			`bad.yaml:23: plot fig: metric "renyi_img_ainf_k100_auc" is not a result of attack maxrenyi-mia with the spec's options (k: [0, 10]; orders: [inf])`},
		{"claim", renyi, "plots:", "claims:\n  - {name: c, metric: renyi_inst_a1_k0_auc, a: {method: dpsgd}, b: {method: nonprivate}, expect: greater, source: s}\nplots:",
			`bad.yaml:23: claim c: metric "renyi_inst_a1_k0_auc" is not a result of attack maxrenyi-mia with the spec's options (k: [0, 10]; orders: [inf])`},
		{"claim of several metrics", renyi, "plots:", "claims:\n  - name: c\n    metrics: [renyi_img_ainf_k0_auc,\n      renyi_inst_a1_k0_auc]\n    a: {method: dpsgd}\n    b: {method: nonprivate}\n    expect: greater\n    source: s\nplots:",
			`bad.yaml:25: claim c-renyi_inst_a1_k0_auc: metric "renyi_inst_a1_k0_auc" is not a result of attack maxrenyi-mia with the spec's options (k: [0, 10]; orders: [inf])`},
		{"other metrics unchecked", renyi, "metrics: [acc]", "metrics: [acc, mia_auc, whatever]", ""},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			src := strings.Replace(withAttacks(tc.attacks), tc.old, tc.new, 1)
			_, err := Parse("bad.yaml", []byte(src), nil)
			if tc.want == "" {
				if err != nil {
					t.Errorf("Parse: %v", err)
				}
				return
			}
			if err == nil || err.Error() != tc.want {
				t.Errorf("Parse: got %v, want %s\n%s", err, tc.want, src)
			}
		})
	}
}

// TestAttackOptionOverrides checks --set on attack options, including on
// an attack the spec names bare.
func TestAttackOptionOverrides(t *testing.T) {
	src := withAttacks("attacks: [loss-mia, maxrenyi-mia]\n")
	s, err := Parse("t.yaml", []byte(src), &Options{Overrides: []string{"attacks.maxrenyi-mia.orders=[inf, 1]"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]AttackOptions{"maxrenyi-mia": {"orders": {"1", "inf"}}}, s.AttackOptions); diff != "" {
		t.Errorf("AttackOptions (-want +got):\n%s", diff)
	}
	_, err = Parse("t.yaml", []byte(src), &Options{Overrides: []string{"attacks.maxrenyi-mia.orders=[-2]"}})
	if err == nil || err.Error() != "--set attacks.maxrenyi-mia.orders=[-2]: attack maxrenyi-mia: order -2: must be ≥ 0 or inf" {
		t.Errorf("override with a bad order: got %v", err)
	}
	_, err = Parse("t.yaml", []byte(src), &Options{Overrides: []string{"attacks.loss-mia.k=10"}})
	if err == nil || err.Error() != `--set attacks.loss-mia.k=10: attack loss-mia has no option "k" (it takes none)` {
		t.Errorf("override with an option of loss-mia: got %v", err)
	}
}

// TestIDWithoutAttackOptions pins the run ids of configs without attack
// options to the ids they had before attacks took options (computed with
// the code of commit b4e3545, the code fingerprint replaced as below), so
// that cached runs keep their ids; options change the id.
func TestIDWithoutAttackOptions(t *testing.T) {
	saved := code
	code = func() string { return "pinned code fingerprint" }
	defer func() { code = saved }()
	c := Config{Method: "dpsgd", Task: "shapes-vqa-mia", Scale: "small", Seed: 3, Epsilon: Epsilon(math.Inf(1)), Delta: 1e-5,
		Attacks: []string{"loss-mia", "maxrenyi-mia"}, Params: map[string]any{"lr": 0.001, "k": int64(2), "peft": "lora", "on": true}}
	in := Inputs{Data: "d1", Base: "b1"}
	if got, want := c.ID(in), "8abdf6a8fed1463a"; got != want {
		t.Errorf("ID = %s, want %s (the id before attack options)", got, want)
	}
	// audit.yaml sets no attack option; its first run is the one mia.yaml
	// began with, under the same id, before mia moved to the LiRA pool.
	s, err := Load("audit", nil)
	if err != nil {
		t.Fatal(err)
	}
	cs := s.Expand()
	if got, want := [2]string{cs[0].ID(Inputs{}), cs[len(cs)-1].ID(Inputs{})}, [2]string{"9b657005f88fe099", "a1fbf2b74e159533"}; got != want {
		t.Errorf("audit: first and last ids %v, want %v (the ids before attack options)", got, want)
	}
	c.AttackOptions = map[string]AttackOptions{"maxrenyi-mia": {"orders": {"inf"}}}
	if c.ID(in) == "8abdf6a8fed1463a" {
		t.Error("attack options do not change the id")
	}
	b, err := c.canonical(in)
	if err != nil || !strings.Contains(string(b), `"attack_options":{"maxrenyi-mia":{"orders":["inf"]}}`) {
		t.Errorf("canonical JSON %s, %v: want the options in it", b, err)
	}
}
