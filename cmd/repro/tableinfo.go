// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/repro-dp/repro/internal/results"
)

// tableInfoHelp is the paragraph of repro table's help on --info.
const tableInfoHelp = "With --info, given one or more run tables (FILE.parquet or RESULTS-DIR), it prints\n" +
	"what each holds instead of a table: its experiments and scales, its runs by status,\n" +
	"its seeds, its hyperparameter and metric columns, and whether its runs recorded the\n" +
	"load their seconds were measured under (load_start, load_end, gomaxprocs, jobs: how\n" +
	"the time estimate counts them). A table written before loads were recorded says so;\n" +
	"nothing fills in a load that was not measured.\n\n" +
	"   $ repro table --info results/baselines/*.parquet\n\n"

// tableInfo writes what each run table of paths holds to w (see
// tableInfoHelp); the tables that do not read are errors, after the
// others.
func tableInfo(w io.Writer, paths []string) error {
	var errs []error
	for i, p := range paths {
		file := p
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			file = filepath.Join(p, results.RunsFile)
		}
		rows, err := results.ReadRuns(file)
		if err != nil {
			errs = append(errs, fmt.Errorf("table: --info: %w", err))
			continue
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		writeTableInfo(w, file, rows)
	}
	return errors.Join(errs...)
}

// writeTableInfo writes the summary of the run table file's rows.
func writeTableInfo(w io.Writer, file string, rows []results.Run) {
	exps, scales, status := map[string]int{}, map[string]int{}, map[results.Status]int{}
	seeds := map[int64]bool{}
	var loaded []results.Run
	for _, r := range rows {
		exps[r.Experiment]++
		scales[r.Scale]++
		status[r.Status]++
		seeds[r.Seed] = true
		if r.GOMAXPROCS > 0 && (!math.IsNaN(r.LoadStart) || !math.IsNaN(r.LoadEnd)) {
			loaded = append(loaded, r)
		}
	}
	counted := func(m map[string]int) string {
		var out []string
		for _, k := range slices.Sorted(maps.Keys(m)) {
			out = append(out, fmt.Sprintf("%s (%d)", k, m[k]))
		}
		return strings.Join(out, ", ")
	}
	var st []string
	for _, s := range slices.Sorted(maps.Keys(status)) {
		st = append(st, fmt.Sprintf("%d %s", status[s], s))
	}
	fmt.Fprintf(w, "%s: %d %s (%s)\n", file, len(rows), plural(len(rows), "run", "runs"), strings.Join(st, ", "))
	fmt.Fprintf(w, "  experiment: %s; scale: %s\n", counted(exps), counted(scales))
	fmt.Fprintf(w, "  seeds: %s\n", seedRanges(slices.Sorted(maps.Keys(seeds))))
	params, metrics := columns(rows)
	list := func(m map[string]bool) string {
		if len(m) == 0 {
			return "none"
		}
		return strings.Join(slices.Sorted(maps.Keys(m)), ", ")
	}
	fmt.Fprintf(w, "  hyperparameters: %s\n", list(params))
	fmt.Fprintf(w, "  metrics (%d): %s\n", len(metrics), list(metrics))
	switch {
	case len(rows) == 0:
	case len(loaded) == 0:
		fmt.Fprintf(w, "  load: none of its runs recorded one: their seconds were measured under an unknown load (the time estimate takes them at the median share of the runs of their scale that recorded one)\n")
	default:
		lo, hi := math.Inf(1), math.Inf(-1)
		procs, jobs := map[string]int{}, map[string]int{}
		for _, r := range loaded {
			for _, x := range []float64{r.LoadStart, r.LoadEnd} {
				if !math.IsNaN(x) {
					lo, hi = min(lo, x), max(hi, x)
				}
			}
			procs[strconv.FormatInt(r.GOMAXPROCS, 10)]++
			j := "unknown"
			if r.Jobs > 0 {
				j = strconv.FormatInt(r.Jobs, 10)
			}
			jobs[j]++
		}
		others := ""
		if n := len(rows) - len(loaded); n > 0 {
			others = fmt.Sprintf("; the other %d recorded none (the time estimate takes them at the median share of the runs of their scale that recorded one)", n)
		}
		fmt.Fprintf(w, "  load: recorded by %d of %d runs: load average %.2f–%.2f, GOMAXPROCS %s, jobs %s%s\n",
			len(loaded), len(rows), lo, hi, counted(procs), counted(jobs), others)
	}
}

// seedRanges writes sorted seeds as ranges: "1–3, 5".
func seedRanges(seeds []int64) string {
	var out []string
	for i := 0; i < len(seeds); {
		j := i
		for j+1 < len(seeds) && seeds[j+1] == seeds[j]+1 {
			j++
		}
		switch {
		case j == i:
			out = append(out, strconv.FormatInt(seeds[i], 10))
		default:
			out = append(out, fmt.Sprintf("%d–%d", seeds[i], seeds[j]))
		}
		i = j + 1
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}
