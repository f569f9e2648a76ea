// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package experiments

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The tests of this package run without the registries (runners/pipeline
// joins them; see its TestRegisteredNames): they register these fixed
// names, which accept every param.
func init() {
	RegisterNames(func() *Names {
		return &Names{
			Methods: []string{"nonprivate", "dpsgd", "dpzo", "dualpriv", "rapft", "dpmtv", "mtv", "zeroshot", "fewshot", "fedavg", "secmmfl", "ldpfed", "nbafl", "ldpfl", "fedmm-dp", "sparta"},
			Tasks:   []string{"fashion-vqa", "shapes-vqa", "fashion-cls", "records", "records-e2e", "records-echr", "icl", "fl-mm", "fl-mm-tune", "fashion-cls-tune", "fashion-cls-lira", "fashion-upper", "fashion-upper-tune", "shapes-vqa-mia", "fashion-vqa-mia", "shapes-vqa-lira", "fashion-vqa-lira", "shapes-vqa-tune", "fashion-vqa-tune", "shapes-vqa-tune-lira", "fashion-vqa-tune-lira"},
			Attacks: []string{"loss-mia", "zlib-mia", "mink-mia", "maxrenyi-mia", "audit-one-run", "lira-mia", "exposure", "pii-extraction", "pii-reconstruction", "gia", "gia-upload", "gia-round", "mean-audit"},
			Scales:  []string{"smoke", "small", "full"},
			// The options of maxrenyi-mia and mink-mia as package
			// attacks declares them (runners/pipeline tests the real
			// declarations against the same spec errors).
			AttackOptions: testAttackOptions,
			AttackSets:    testAttackSets,
			// A few metrics the runs record, for the spelling check.
			Metrics: testMetrics,
			Metric:  func(name string) bool { return slices.Contains(testMetrics, name) },
		}
	})
}

// testMetrics are the metrics the test registry knows.
var testMetrics = []string{"acc", "img", "acc_text", "mia_auc", "seconds", "label_acc"}

// testAttackOptions declares the options of maxrenyi-mia (slices, orders,
// k), mink-mia (k), gia (batch, trials, iterations), gia-upload
// (trials) and gia-round (trials, iterations, group, consistency).
func testAttackOptions(attack string) []AttackOption {
	slices4 := []string{"img", "inst", "desp", "inst_desp"}
	num := func(elem string, ok func(float64) bool, must string) func(any) (string, error) {
		return func(v any) (string, error) {
			x, isNum := v.(float64)
			if s, isStr := v.(string); isStr {
				var err error
				if x, err = strconv.ParseFloat(s, 64); err != nil {
					return "", fmt.Errorf("%s %q is not a number", elem, s)
				}
				isNum = true
			}
			if !isNum || math.IsNaN(x) {
				return "", fmt.Errorf("%s %v is not a number", elem, v)
			}
			if !ok(x) {
				return "", fmt.Errorf("%s %s: must be %s", elem, FormatFloat(x), must)
			}
			return FormatFloat(x), nil
		}
	}
	numSort := func(v []string) {
		slices.SortFunc(v, func(a, b string) int {
			x, _ := strconv.ParseFloat(a, 64)
			y, _ := strconv.ParseFloat(b, 64)
			return cmp.Compare(x, y)
		})
	}
	k := AttackOption{Name: "k", Elem: "K", Canonical: num("K", func(x float64) bool { return x >= 0 && x <= 100 }, "in [0, 100]"), Sort: numSort}
	switch attack {
	case "maxrenyi-mia":
		k.Default = []string{"0", "10", "100"}
		return []AttackOption{
			{Name: "slices", Elem: "slice", Default: slices4,
				Canonical: func(v any) (string, error) {
					if s, ok := v.(string); ok && slices.Contains(slices4, s) {
						return s, nil
					}
					if s, ok := v.(string); ok {
						v = strconv.Quote(s)
					}
					return "", fmt.Errorf("unknown slice %v (known: %s)", v, strings.Join(slices4, ", "))
				},
				Sort: func(v []string) {
					slices.SortFunc(v, func(a, b string) int { return slices.Index(slices4, a) - slices.Index(slices4, b) })
				}},
			{Name: "orders", Elem: "order", Default: []string{"0.5", "1", "2", "inf"},
				Canonical: num("order", func(x float64) bool { return x >= 0 }, "≥ 0 or inf"), Sort: numSort},
			k,
		}
	case "mink-mia":
		k.Default = []string{"10", "20"}
		return []AttackOption{k}
	case "gia":
		count := func(name, elem, def string) AttackOption {
			return AttackOption{Name: name, Elem: elem, Default: []string{def}, Sort: numSort,
				Canonical: num(elem, func(x float64) bool { return x >= 1 && x == math.Trunc(x) }, "a positive integer")}
		}
		b := count("batch", "batch size", "1")
		b.Default = []string{"1", "8"}
		text := AttackOption{Name: "text", Elem: "text attack", Default: []string{"0"}, Sort: numSort,
			Canonical: num("text attack", func(x float64) bool { return x == 0 || x == 1 || x == 2 }, "0, 1 or 2")}
		span := AttackOption{Name: "span", Elem: "span switch", Default: []string{"0"}, Sort: numSort,
			Canonical: num("span switch", func(x float64) bool { return x == 0 || x == 1 }, "0 or 1")}
		return []AttackOption{b, count("trials", "trials", "1"), count("iterations", "iterations", "300"), text, span}
	case "gia-upload":
		return []AttackOption{{Name: "trials", Elem: "trials", Default: []string{"1"}, Sort: numSort,
			Canonical: num("trials", func(x float64) bool { return x >= 1 && x == math.Trunc(x) }, "a positive integer")}}
	case "gia-round":
		count := func(name, def string) AttackOption {
			return AttackOption{Name: name, Elem: name, Default: []string{def}, Sort: numSort,
				Canonical: num(name, func(x float64) bool { return x >= 1 && x == math.Trunc(x) }, "a positive integer")}
		}
		cons := AttackOption{Name: "consistency", Elem: "consistency weight", Default: []string{"0"}, Sort: numSort,
			Canonical: num("consistency weight", func(x float64) bool { return x >= 0 && x <= 10 }, "in [0, 10]")}
		act := AttackOption{Name: "activity", Elem: "activity weight", Default: []string{"0"}, Sort: numSort,
			Canonical: num("activity weight", func(x float64) bool { return x >= 0 && x <= 100 }, "in [0, 100]")}
		sw := func(name string) AttackOption {
			return AttackOption{Name: name, Elem: name, Default: []string{"0"}, Sort: numSort,
				Canonical: num(name, func(x float64) bool { return x == 0 || x == 1 }, "0 or 1")}
		}
		lr := AttackOption{Name: "lr", Elem: "learning rate", Default: []string{"0.03"}, Sort: numSort,
			Canonical: num("learning rate", func(x float64) bool { return x > 0 && x <= 1 }, "in (0, 1]")}
		return []AttackOption{count("trials", "1"), count("iterations", "400"), count("group", "4"), cons, act, sw("perblock"), lr, sw("decay")}
	}
	return nil
}

// testAttackSets returns the score sets of maxrenyi-mia, mink-mia and gia with
// opts (renyi_<slice>_a<α>_k<K>, mink<K>, gia_b<B>), and the metrics each owns.
func testAttackSets(attack string, opts AttackOptions) ([]string, func(string) bool, error) {
	get := func(name string) []string {
		if v, ok := opts[name]; ok {
			return v
		}
		for _, o := range testAttackOptions(attack) {
			if o.Name == name {
				return o.Default
			}
		}
		return nil
	}
	under := func(s string) string { return strings.ReplaceAll(s, ".", "_") }
	var sets []string
	switch attack {
	case "maxrenyi-mia":
		for _, sl := range get("slices") {
			for _, a := range get("orders") {
				for _, k := range get("k") {
					sets = append(sets, "renyi_"+sl+"_a"+under(a)+"_k"+under(k))
				}
			}
		}
		return sets, func(m string) bool { return strings.HasPrefix(m, "renyi_") }, nil
	case "mink-mia":
		for _, k := range get("k") {
			sets = append(sets, "mink"+under(k))
		}
		return sets, func(m string) bool { return len(m) > 4 && strings.HasPrefix(m, "mink") && m[4] >= '0' && m[4] <= '9' }, nil
	case "gia":
		for _, b := range get("batch") {
			sets = append(sets, "gia_b"+b)
		}
		return sets, func(m string) bool { return strings.HasPrefix(m, "gia_b") }, nil
	case "gia-upload":
		return []string{"gia_upload"}, func(m string) bool { return strings.HasPrefix(m, "gia_upload_") }, nil
	case "gia-round":
		return []string{"gia_round"}, func(m string) bool { return strings.HasPrefix(m, "gia_round_") }, nil
	}
	return nil, nil, nil
}

// withParams returns the test names with a CheckParam that accepts, for
// each method, the params listed in known.
func withParams(known map[string][]string) *Names {
	n := Registered()
	n.CheckParam = func(method, name string, v any) error {
		if !slices.Contains(known[method], name) {
			return fmt.Errorf("method %s has no hyperparameter %q (known: %s)", method, name, strings.Join(known[method], ", "))
		}
		if i, ok := v.(int64); ok {
			v = float64(i)
		}
		if f, ok := v.(float64); ok && f < 0 {
			return fmt.Errorf("%s = %v: want a value ≥ 0", name, v)
		}
		return nil
	}
	n.Compatible = func(method, task string) error {
		if method == "dpzo" && task == "fashion-cls" {
			return fmt.Errorf("method dpzo fine-tunes a tinymllm; task fashion-cls is posed to a vit")
		}
		return nil
	}
	return n
}
