// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/repro-dp/repro/internal/results"
)

// TestTableInfo checks repro table --info on two made-up tables, one
// whose runs recorded their load (two of three: load 12 → 14 and 20 →
// 18 on 2 cores, one job) and one written without loads, and on the
// checked-in table1 smoke table, whose 78 runs all recorded theirs.
func TestTableInfo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b, c := mergeRow("a1", "dpsgd", 1, 0.5), mergeRow("a2", "dpsgd", 2, 0.5), mergeRow("a5", "dpzo", 5, 0.3)
	a.LoadStart, a.LoadEnd, a.GOMAXPROCS, a.Jobs = 12, 14, 2, 1
	b.LoadStart, b.LoadEnd, b.GOMAXPROCS, b.Jobs = 20, 18, 2, 1
	c.Status, c.Results = results.Failed, nil
	loaded := writeMergeTable(t, dir, "loaded.parquet", a, b, c)
	plain := filepath.Join(dir, "fig2")
	if err := os.Mkdir(plain, 0o755); err != nil {
		t.Fatal(err)
	}
	writeMergeTable(t, plain, results.RunsFile, mergeRow("b1", "dpsgd", 1, 0.5))
	out, errOut, err := run(t, "table", "--info", loaded, plain, "../../results/baselines/table1-smoke.parquet")
	if err != nil {
		t.Fatalf("repro table --info: %v\n%s", err, errOut)
	}
	for _, want := range []string{
		loaded + ": 3 runs (1 failed, 2 ok)\n  experiment: table1 (3); scale: smoke (3)\n  seeds: 1–2, 5\n  hyperparameters: lr\n  metrics (2): acc, loss\n",
		"  load: recorded by 2 of 3 runs: load average 12.00–20.00, GOMAXPROCS 2 (2), jobs 1 (2); the other 1 recorded none",
		filepath.Join(plain, results.RunsFile) + ": 1 run (1 ok)\n",
		"  load: none of its runs recorded one: their seconds were measured under an unknown load",
		"../../results/baselines/table1-smoke.parquet: 78 runs (78 ok)\n  experiment: table1 (78); scale: smoke (78)\n  seeds: 1–3\n",
		"  load: recorded by 78 of 78 runs: load average 11.36–27.37, GOMAXPROCS 2 (78), jobs 1 (78)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("repro table --info printed\n%s\nwant\n%s", out, want)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"table", "--info"}, "--info wants one or more"},
		{[]string{"table", "--info", "table1"}, `"table1" is no run table`},
		{[]string{"table", "--info", loaded, "--metric", "acc"}, "--info takes no other flag (got --metric)"},
		{[]string{"table", "--info", filepath.Join(dir, "none.parquet")}, "none.parquet"},
	} {
		if _, _, err := run(t, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("repro %s: %v, want an error with %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
}
