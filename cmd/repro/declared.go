// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
)

// maxCells is the number of cells a declared-runs warning names before
// it counts the others ("… 2 more cells").
const maxCells = 4

// declaredCheck is the comparison of a run table with the runs its spec
// declares at the table's scales.
type declaredCheck struct {
	keep       []results.Run  // the runs the spec declares, in file order
	undeclared []results.Run  // the others, in file order
	missing    []string       // the cells of declared runs with no run, one entry per run
	scales     []string       // the scales compared, sorted
	cells      map[string]int // undeclared runs per cell
}

// checkDeclared compares runs with the configs that expand(scale) returns
// for each scale the runs are at. A run is declared when a config has the
// same method, task, scale, seed, ε, δ and params (the hyperparameters,
// sweep values and variant): run ids are not compared, since they hash
// the code on a run's path as well and so move with every change to it.
// Numbers compare by value, whatever their type in the file.
func checkDeclared(runs []results.Run, expand func(scale string) ([]experiments.Config, error)) (*declaredCheck, error) {
	byScale := map[string]bool{}
	for _, r := range runs {
		byScale[r.Scale] = true
	}
	d := &declaredCheck{scales: slices.Sorted(maps.Keys(byScale)), cells: map[string]int{}}
	declared := map[string]bool{}
	var configs []experiments.Config
	for _, sc := range d.scales {
		cs, err := expand(sc)
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			declared[configKey(c.Method, c.Task, c.Scale, c.Seed, float64(c.Epsilon), c.Delta, c.Params)] = true
		}
		configs = append(configs, cs...)
	}
	found := map[string]bool{}
	for _, r := range runs {
		key := configKey(r.Method, r.Task, r.Scale, r.Seed, r.EpsilonTarget, r.Delta, r.Params)
		if declared[key] {
			found[key] = true
			d.keep = append(d.keep, r)
			continue
		}
		d.undeclared = append(d.undeclared, r)
		d.cells[undeclaredCell(r, configs)]++
	}
	for _, c := range configs {
		if !found[configKey(c.Method, c.Task, c.Scale, c.Seed, float64(c.Epsilon), c.Delta, c.Params)] {
			d.missing = append(d.missing, cellOf(c.Method, c.Params)+", task "+c.Task)
		}
	}
	return d, nil
}

// undeclaredCell names the cell of the undeclared run r: its variant (or
// method) and task, then how it differs from the nearest of configs with
// the same ones, if any ("variant mp, task fashion-upper, lr 0.03"): the
// values it differs in, "no k" for a param the config has and r lacks.
func undeclaredCell(r results.Run, configs []experiments.Config) string {
	name := cellOf(r.Method, r.Params)
	cell := name + ", task " + r.Task
	var best []string
	for _, c := range configs {
		if c.Method != r.Method || c.Task != r.Task || c.Scale != r.Scale || cellOf(c.Method, c.Params) != name {
			continue
		}
		var diff []string
		if float64(c.Epsilon) != r.EpsilonTarget {
			diff = append(diff, "ε "+num64(r.EpsilonTarget))
		}
		if c.Delta != r.Delta {
			diff = append(diff, "δ "+num64(r.Delta))
		}
		if c.Seed != r.Seed {
			diff = append(diff, fmt.Sprintf("seed %d", r.Seed))
		}
		keys := slices.Sorted(maps.Keys(r.Params))
		for k := range c.Params {
			if _, ok := r.Params[k]; !ok {
				keys = append(keys, k)
			}
		}
		for _, k := range keys {
			v, ok := r.Params[k]
			cv, cok := c.Params[k]
			switch {
			case !ok:
				diff = append(diff, "no "+k)
			case !cok || paramString(v) != paramString(cv):
				diff = append(diff, k+" "+paramString(v))
			}
		}
		if best == nil || len(diff) < len(best) {
			best = diff
		}
	}
	for _, d := range best {
		cell += ", " + d
	}
	return cell
}

// warnings returns the warning lines of d for experiment exp: the runs
// left out (or kept, with all) and the declared runs missing.
func (d *declaredCheck) warnings(exp string, all bool) []string {
	var out []string
	at := strings.Join(d.scales, ", ")
	if n := len(d.undeclared); n > 0 {
		what := "left out; --all-runs keeps them"
		if all {
			what = "kept (--all-runs)"
		}
		out = append(out, fmt.Sprintf("%d %s not declared by %s at scale %s (%s): %s",
			n, plural(n, "run", "runs"), exp, at, counted(d.cells), what))
	}
	if n := len(d.missing); n > 0 {
		cells := map[string]int{}
		for _, c := range d.missing {
			cells[c]++
		}
		out = append(out, fmt.Sprintf("%d declared %s at scale %s missing from the run table (%s)",
			n, plural(n, "run", "runs"), at, counted(cells)))
	}
	return out
}

// counted returns the first maxCells cells, sorted, each with its count,
// then how many more there are: "variant mp, task fashion-upper: 9; … 2 more cells".
func counted(cells map[string]int) string {
	keys := slices.Sorted(maps.Keys(cells))
	var parts []string
	for i, k := range keys {
		if i == maxCells {
			parts = append(parts, fmt.Sprintf("… %d more cells", len(keys)-maxCells))
			break
		}
		parts = append(parts, fmt.Sprintf("%s: %d", k, cells[k]))
	}
	return strings.Join(parts, "; ")
}

// cellOf names the method of a run: its variant, else its method.
func cellOf(method string, params map[string]any) string {
	if v, ok := params[experiments.VariantParam]; ok {
		return "variant " + paramString(v)
	}
	return "method " + method
}

// configKey returns the key that identifies a run's configuration, with
// numbers in one form whatever their type.
func configKey(method, task, scale string, seed int64, eps, delta float64, params map[string]any) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\x00%s\x00%s\x00%d\x00%s\x00%s", method, task, scale, seed, num64(eps), num64(delta))
	for _, k := range slices.Sorted(maps.Keys(params)) {
		fmt.Fprintf(&b, "\x00%s=%s", k, paramString(params[k]))
	}
	return b.String()
}

// paramString formats a param value: numbers (int64, float64, or a
// string that reads as one, as a run table stores a param whose values
// mix types) in their shortest float64 form, so that 1, 1.0 and "1" agree.
func paramString(v any) string {
	switch x := v.(type) {
	case int64:
		return num64(float64(x))
	case float64:
		return num64(x)
	case string:
		if f, err := strconv.ParseFloat(x, 64); err == nil {
			return num64(f)
		}
		return x
	}
	return fmt.Sprint(v)
}

func num64(x float64) string {
	if math.IsInf(x, 1) {
		return "inf"
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}
