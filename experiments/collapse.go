// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package experiments

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Collapses returns a warning for each set of distinct values of a swept
// param that give runs the same effective setting (see
// [Names.Effective]) at the spec's scale, and a last line counting the
// distinct settings among the runs: the sweep then spends runs on
// repeats of one configuration, which no table shows. It returns nil when
// nothing collapses or the registered names know no effective settings.
func (s *Spec) Collapses() []string {
	eff := Registered().Effective
	if eff == nil {
		return nil
	}
	// Values collapse when they give one setting in runs that differ in
	// nothing else but the seed and ε (a warning per ε would repeat).
	type where struct{ method, task, param, setting, rest string }
	values := make(map[where][]string)
	settings := make(map[string]bool)
	runs := s.Expand()
	for _, c := range runs {
		e := eff(&c)
		key := c
		key.Params = maps.Clone(c.Params)
		for name, setting := range e {
			rest := c
			rest.Seed, rest.Epsilon = 0, 0
			rest.Params = maps.Clone(c.Params)
			delete(rest.Params, name)
			method := c.Method
			if v, ok := c.Params[VariantParam]; ok {
				method = fmt.Sprintf("%s (%v)", c.Method, v)
			}
			w := where{method, c.Task, name, setting, rest.String()}
			if v := fmt.Sprint(c.Params[name]); !slices.Contains(values[w], v) {
				values[w] = append(values[w], v)
			}
			key.Params[name] = "≡ " + setting
		}
		settings[key.String()] = true
	}
	var out []string
	for _, w := range slices.SortedFunc(maps.Keys(values), func(a, b where) int {
		return strings.Compare(a.method+a.task+a.param+a.setting+a.rest, b.method+b.task+b.param+b.setting+b.rest)
	}) {
		if vs := values[w]; len(vs) > 1 {
			line := fmt.Sprintf("%s on %s at scale %s: %s %s all give %s", w.method, w.task, s.Scale, w.param, strings.Join(vs, ", "), w.setting)
			if !slices.Contains(out, line) {
				out = append(out, line)
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return append(out, fmt.Sprintf("%d runs give %d distinct settings; a larger --scale separates them", len(runs), len(settings)))
}
