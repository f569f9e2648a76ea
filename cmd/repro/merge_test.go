// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/repro-dp/repro/internal/results"
)

// mergeRow returns an ok run of table1 at smoke with the given method,
// seed, run id and acc, a fixed loss and a hyperparameter lr.
func mergeRow(id, method string, seed int64, acc float64) results.Run {
	nan := math.NaN()
	return results.Run{RunID: id, Experiment: "table1", Status: results.OK, Method: method, Task: "fashion-vqa", Scale: "smoke",
		Seed: seed, EpsilonTarget: 8, Epsilon: nan, Delta: 1e-5, Sigma: nan, SampleRate: nan, Steps: 100, Seconds: 10,
		LoadStart: nan, LoadEnd: nan, Params: map[string]any{"lr": 0.01}, Results: map[string]float64{"acc": acc, "loss": 1.5}}
}

// writeMergeTable writes rows to dir/name and returns its path.
func writeMergeTable(t *testing.T, dir, name string, rows ...results.Run) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := results.WriteRuns(path, rows); err != nil {
		t.Fatal(err)
	}
	return path
}

// tempFiles returns the names in dir that a write left (".NAME.tmp…").
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if strings.Contains(e.Name(), ".tmp") {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestMerge merges a rerun into a base table: a row with a new run id
// replaces its key's row in place (its acc moved, its loss did not), a row
// of a key the base lacks is added at the end, a row with the base's own
// run id is kept, and a failed run is left out. Without --write nothing is
// written; with it the table holds exactly the merge.
func TestMerge(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := []results.Run{
		mergeRow("a1", "dpsgd", 1, 0.50), mergeRow("a2", "dpsgd", 2, 0.52),
		mergeRow("b1", "dpzo", 1, 0.30), mergeRow("b2", "dpzo", 2, 0.31),
	}
	basePath := writeMergeTable(t, dir, "table1-smoke.parquet", base...)
	failed := mergeRow("f1", "dpsgd", 1, math.NaN())
	failed.Status, failed.Results = results.Failed, nil
	rerun := []results.Run{
		mergeRow("b1", "dpzo", 1, 0.30),  // the same run
		mergeRow("c2", "dpzo", 2, 0.41),  // replaces b2
		mergeRow("d3", "dpsgd", 3, 0.55), // a seed the base lacks
		failed,                           // left out
	}
	newDir := filepath.Join(dir, "table1")
	if err := os.Mkdir(newDir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeMergeTable(t, newDir, results.RunsFile, rerun...)
	before, err := os.ReadFile(basePath)
	if err != nil {
		t.Fatal(err)
	}

	out, errOut, err := run(t, "merge", basePath, newDir)
	if err != nil {
		t.Fatalf("repro merge (dry run): %v\n%s%s", err, out, errOut)
	}
	for _, want := range []string{
		"replaces 1 row:\n  dpzo fashion-vqa smoke ε=8 δ=1e-05 seed 2 lr=0.01: run b2 → c2\n",
		"adds 1 row:\n  dpsgd fashion-vqa smoke ε=8 δ=1e-05 seed 3 lr=0.01: run d3\n",
		"1 row of NEW already in BASE (same run id): kept\n",
		"left out: 1 run of NEW that did not finish ok (1 failed)\n",
		"metrics of the replaced rows that moved: acc (1 identical)\n",
		"dry run: nothing written; with --write, 5 rows go to " + basePath + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("repro merge printed\n%s\nwant the lines\n%s", out, want)
		}
	}
	if after, _ := os.ReadFile(basePath); !bytes.Equal(after, before) {
		t.Errorf("a dry run changed %s", basePath)
	}

	out, errOut, err = run(t, "merge", basePath, newDir, "--write")
	if err != nil {
		t.Fatalf("repro merge --write: %v\n%s%s", err, out, errOut)
	}
	if !strings.Contains(out, "wrote "+basePath+": 5 rows, read back and checked\n") {
		t.Errorf("repro merge --write printed\n%s\nwant that it wrote 5 rows", out)
	}
	got, err := results.ReadRuns(basePath)
	if err != nil {
		t.Fatal(err)
	}
	want := []results.Run{base[0], base[1], base[2], rerun[1], rerun[2]}
	var ids []string
	for i, r := range got {
		ids = append(ids, r.RunID)
		if i < len(want) {
			if d := sameRun(r, want[i]); d != "" {
				t.Errorf("row %d (%s): %s differs from %s's", i+1, r.RunID, d, want[i].RunID)
			}
		}
	}
	if wantIDs := []string{"a1", "a2", "b1", "c2", "d3"}; !slices.Equal(ids, wantIDs) {
		t.Errorf("merged run ids %v, want %v", ids, wantIDs)
	}
	if tmp := tempFiles(t, dir); len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
	}

	// Merged again: nothing to do.
	out, _, err = run(t, "merge", basePath, newDir, "--write")
	if err != nil || !strings.Contains(out, "nothing to merge: "+basePath+" is unchanged\n") {
		t.Errorf("repro merge again: %v\n%s\nwant nothing to merge", err, out)
	}
}

// TestMergeOut writes the merge to --out, leaving BASE alone.
func TestMergeOut(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	basePath := writeMergeTable(t, dir, "base.parquet", mergeRow("a1", "dpsgd", 1, 0.5))
	newPath := writeMergeTable(t, dir, "new.parquet", mergeRow("a9", "dpsgd", 1, 0.5))
	out := filepath.Join(dir, "merged.parquet")
	before, _ := os.ReadFile(basePath)
	stdout, errOut, err := run(t, "merge", basePath, newPath, "--out", out, "--write")
	if err != nil {
		t.Fatalf("repro merge --out: %v\n%s%s", err, stdout, errOut)
	}
	if !strings.Contains(stdout, "metrics of the replaced rows: all 2 identical, old and new (acc, loss)\n") {
		t.Errorf("repro merge printed\n%s\nwant every metric identical", stdout)
	}
	if after, _ := os.ReadFile(basePath); !bytes.Equal(after, before) {
		t.Errorf("--out changed BASE")
	}
	got, err := results.ReadRuns(out)
	if err != nil || len(got) != 1 || got[0].RunID != "a9" {
		t.Errorf("%s: %v, %v; want the one row a9", out, got, err)
	}
}

// TestMergeRefuses checks that tables that cannot merge are refused with
// a clear error and nothing written.
func TestMergeRefuses(t *testing.T) {
	t.Parallel()
	base := []results.Run{mergeRow("a1", "dpsgd", 1, 0.5), mergeRow("a2", "dpsgd", 2, 0.5)}
	other := mergeRow("x1", "dpsgd", 1, 0.5)
	other.Experiment = "fig2"
	small := mergeRow("x1", "dpsgd", 1, 0.5)
	small.Scale = "small"
	param := mergeRow("x1", "dpsgd", 1, 0.5)
	param.Params["retention"] = 0.2
	metric := mergeRow("x1", "dpsgd", 1, 0.5)
	metric.Results["mia_auc"] = 0.6
	for _, tc := range []struct {
		desc      string
		base, new []results.Run
		want      string
	}{
		{"another experiment", base, []results.Run{other}, "NEW holds runs of experiment fig2, BASE of table1"},
		{"another scale", base, []results.Run{small}, "NEW holds runs at scale small, BASE none (it holds smoke)"},
		{"a new hyperparameter", base, []results.Run{param}, "hyperparameter column retention that BASE's lack"},
		{"a new metric", base, []results.Run{metric}, "result column mia_auc that BASE's lack"},
		{"a key twice in BASE", []results.Run{mergeRow("a1", "dpsgd", 1, 0.5), mergeRow("a3", "dpsgd", 1, 0.6)},
			[]results.Run{mergeRow("x1", "dpsgd", 1, 0.5)}, "BASE rows 1 and 2 (runs a1 and a3) have the same key"},
		{"a key twice in NEW", base, []results.Run{mergeRow("x1", "dpsgd", 1, 0.5), mergeRow("x2", "dpsgd", 1, 0.5)},
			"NEW runs x1 and x2 have the same key"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			dir := t.TempDir()
			basePath := writeMergeTable(t, dir, "base.parquet", tc.base...)
			newPath := writeMergeTable(t, dir, "new.parquet", tc.new...)
			before, _ := os.ReadFile(basePath)
			_, _, err := run(t, "merge", basePath, newPath, "--write")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("repro merge: %v, want an error with %q", err, tc.want)
			}
			if after, _ := os.ReadFile(basePath); !bytes.Equal(after, before) {
				t.Errorf("a refused merge changed BASE")
			}
		})
	}
}

// TestMergeAtomic checks that a merge whose write fails (a full disk,
// injected) or whose table does not read back as merged leaves BASE as it
// was and no temporary file. Not parallel: the fault is the process's.
func TestMergeAtomic(t *testing.T) {
	dir := t.TempDir()
	basePath := writeMergeTable(t, dir, "base.parquet", mergeRow("a1", "dpsgd", 1, 0.5))
	newPath := writeMergeTable(t, dir, "new.parquet", mergeRow("a9", "dpsgd", 1, 0.6))
	before, _ := os.ReadFile(basePath)
	check := func(desc string, err error, want string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), basePath+" is left as it was") {
			t.Errorf("%s: %v, want an error with %q that says BASE is left as it was", desc, err, want)
		}
		if after, _ := os.ReadFile(basePath); !bytes.Equal(after, before) {
			t.Errorf("%s: BASE changed", desc)
		}
		if tmp := tempFiles(t, dir); len(tmp) > 0 {
			t.Errorf("%s: temporary files left: %v", desc, tmp)
		}
	}

	undo := results.InjectFault(func(name string) error {
		if strings.HasPrefix(filepath.Base(name), ".base.parquet.tmp") {
			return syscall.ENOSPC
		}
		return nil
	})
	_, _, err := run(t, "merge", basePath, newPath, "--write")
	undo()
	check("full disk", err, syscall.ENOSPC.Error())

	readBack = func(name string) ([]results.Run, error) {
		rows, err := results.ReadRuns(name)
		if len(rows) > 0 {
			rows[0].Results["acc"] = 0.7 // as a damaged write would read
		}
		return rows, err
	}
	defer func() { readBack = results.ReadRuns }()
	_, _, err = run(t, "merge", basePath, newPath, "--write")
	check("read back differs", err, "the merged table read back differs at row 1 (run a9): result acc")
}
