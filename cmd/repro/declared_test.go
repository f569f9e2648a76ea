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

// TestTableFromUndeclaredRuns checks repro table EXP --from on a run table
// with one run the spec does not declare (its declared run is changed to
// lr 0.5, a param the spec does not set, and acc 0.987) and so one
// declared run missing: the table is the one drawn from the three
// declared runs alone, and standard error names both cells.
func TestTableFromUndeclaredRuns(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // where the outputs go
	spec, dir, all, only := undeclaredTables(t)

	missing := "fake: warning: 1 declared run at scale smoke missing from the run table (method " + fakeMethod + ", task fashion-vqa: 1)\n"
	want, wantErr, err := run(t, "table", spec, "--from", only, "--format", "md")
	if err != nil || !strings.Contains(wantErr, missing) || strings.Contains(wantErr, " not declared by ") {
		t.Fatalf("repro table --from the declared runs: %v; stderr:\n%s\nwant the line\n%s", err, wantErr, missing)
	}

	undeclared := "fake: warning: 1 run not declared by fake at scale smoke (method " + fakeMethod + ", task fashion-vqa, lr 0.5: 1): left out; --all-runs keeps them\n"
	out, stderr, err := run(t, "table", spec, "--from", all, "--format", "md")
	if err != nil || out != want {
		t.Errorf("repro table --from a table with an undeclared run: %v, printed:\n%s\nwant the table of the declared runs:\n%s", err, out, want)
	}
	for _, line := range []string{undeclared, missing} {
		if !strings.Contains(stderr, line) {
			t.Errorf("repro table --from a table with an undeclared run: stderr:\n%s\nwant the line\n%s", stderr, line)
		}
	}

	out, stderr, err = run(t, "table", spec, "--from", all, "--format", "md", "--all-runs")
	kept := "(method " + fakeMethod + ", task fashion-vqa, lr 0.5: 1): kept (--all-runs)\n"
	if err != nil || out == want || !strings.Contains(stderr, kept) {
		t.Errorf("repro table --from --all-runs: %v, printed:\n%s\nstderr:\n%s\nwant a table other than the declared runs' and %q", err, out, stderr, kept)
	}

	// No run declared: an error, not an empty table.
	_, _, err = run(t, "table", spec, "--from", all, "--set", "sweep.seed=[9]")
	if err == nil || !strings.Contains(err.Error(), "none of its 4 runs is declared by fake (--all-runs keeps them)") {
		t.Errorf("repro table --from a table none of whose runs is declared: got %v, want an error", err)
	}

	// A results folder: its runs.parquet, every run declared.
	full, err := os.ReadFile(filepath.Join(dir, "fake", "t1.md"))
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, err = run(t, "table", spec, "--from", filepath.Join(dir, "fake"), "--format", "md")
	if err != nil || out != string(full) || strings.Contains(stderr, " not declared by ") || strings.Contains(stderr, "missing from the run table") {
		t.Errorf("repro table --from a results folder: %v, printed:\n%s\nwant its t1.md:\n%s\nstderr:\n%s", err, out, full, stderr)
	}

	for _, args := range [][]string{
		{"table", spec, "--all-runs"},
		{"table", all, "--metric", "acc", "--all-runs"},
	} {
		if _, _, err := run(t, args...); err == nil || !strings.Contains(err.Error(), "--all-runs applies only") {
			t.Errorf("repro %s: got %v, want a usage error", strings.Join(args, " "), err)
		}
	}
}

// TestPlotFromUndeclaredRuns checks that repro plot EXP --from compares
// the run table with the spec as repro table does (fromRunTable, the same
// code): drawn from the table with the undeclared run, the spec's plot
// is the one drawn from the declared runs alone, and standard error says
// what was left out; --all-runs draws the undeclared run too (its acc,
// 0.987, moves the point at ε = 8).
func TestPlotFromUndeclaredRuns(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // where the outputs go
	spec, _, all, only := undeclaredTables(t)
	svg := func(args ...string) (string, string) {
		t.Helper()
		out, stderr, err := run(t, append([]string{"plot", spec, "--from"}, args...)...)
		if err != nil {
			t.Fatalf("repro plot --from %v: %v\n%s", args, err, stderr)
		}
		for _, p := range strings.Fields(out) {
			if strings.HasSuffix(p, "f1.svg") {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				return string(b), stderr
			}
		}
		t.Fatalf("repro plot --from %v printed no f1.svg:\n%s", args, out)
		return "", ""
	}
	want, _ := svg(only)
	got, stderr := svg(all)
	if got != want {
		t.Errorf("repro plot --from a table with an undeclared run drew another plot than the declared runs'")
	}
	undeclared := "fake: warning: 1 run not declared by fake at scale smoke (method " + fakeMethod + ", task fashion-vqa, lr 0.5: 1): left out; --all-runs keeps them\n"
	if !strings.Contains(stderr, undeclared) {
		t.Errorf("repro plot --from a table with an undeclared run: stderr:\n%s\nwant the line\n%s", stderr, undeclared)
	}
	got, stderr = svg(all, "--all-runs")
	if got == want || !strings.Contains(stderr, "lr 0.5: 1): kept (--all-runs)\n") {
		t.Errorf("repro plot --from --all-runs: drew the declared runs' plot or did not warn:\n%s", stderr)
	}
	for _, args := range [][]string{
		{"plot", spec, "--all-runs"},
		{"plot", all, "--x", "epsilon_target", "--y", "acc", "--out", filepath.Join(t.TempDir(), "p"), "--all-runs"},
	} {
		if _, _, err := run(t, args...); err == nil || !strings.Contains(err.Error(), "plot: --all-runs applies only") {
			t.Errorf("repro %s: got %v, want a usage error", strings.Join(args, " "), err)
		}
	}
}

// undeclaredTables runs the fake experiment into a results folder, dir,
// and writes two run tables of it: all, its four runs with the one at
// ε = 8, seed 2 changed to lr 0.5 (a param the spec does not set) and
// acc 0.987, so that one run is undeclared and one declared run missing;
// and only, the three declared runs alone.
func undeclaredTables(t *testing.T) (spec, dir, all, only string) {
	t.Helper()
	dir = t.TempDir()
	spec = fakeSpec(t, fakeOutputs)
	if _, stderr, err := run(t, "run", spec, "--results", dir); err != nil {
		t.Fatalf("repro run: %v\n%s", err, stderr)
	}
	rows, err := results.ReadRuns(filepath.Join(dir, "fake", results.RunsFile))
	if err != nil || len(rows) != 4 {
		t.Fatalf("the fake run table: %d runs, %v; want 4", len(rows), err)
	}
	var declared []results.Run
	stale := -1
	for i, r := range rows {
		if r.EpsilonTarget == 8 && r.Seed == 2 {
			stale = i
			continue
		}
		declared = append(declared, r)
	}
	if stale < 0 {
		t.Fatal("the fake run table has no run at ε = 8, seed 2")
	}
	rows[stale].Params["lr"] = 0.5
	rows[stale].Results["acc"] = 0.987
	all = filepath.Join(t.TempDir(), "fake-smoke.parquet")
	only = filepath.Join(t.TempDir(), "fake-smoke.parquet")
	if err := results.WriteRuns(all, rows); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteRuns(only, declared); err != nil {
		t.Fatal(err)
	}
	return spec, dir, all, only
}

// TestConfigKeyNumbers checks that a param compares by value whatever
// type the run table gives it: INT64 for a column whose values are all
// integers, STRING for one whose values mix types.
func TestConfigKeyNumbers(t *testing.T) {
	key := func(v any) string {
		return configKey("m", "t", "smoke", 1, 8, 1e-5, map[string]any{"x": v})
	}
	for _, v := range []any{int64(1), float64(1), "1", "1.0"} {
		if key(v) != key(1.0) {
			t.Errorf("param %T %v has key %q, want that of 1.0, %q", v, v, key(v), key(1.0))
		}
	}
	for _, v := range []any{int64(2), 1.5, "a", true} {
		if key(v) == key(1.0) {
			t.Errorf("param %T %v has the key of 1.0", v, v)
		}
	}
}
