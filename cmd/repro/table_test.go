// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// reportsRun is a runs.parquet row as the results writer declares one.
type reportsRun struct {
	RunID         string   `parquet:"run_id"`
	Status        string   `parquet:"status"`
	Method        string   `parquet:"method"`
	Task          string   `parquet:"task"`
	Seed          int64    `parquet:"seed"`
	EpsilonTarget float64  `parquet:"epsilon_target"`
	Acc           *float64 `parquet:"acc,optional"`
	MiaAUC        *float64 `parquet:"mia_auc,optional"`
}

// writeReportsRuns writes a small run table to a parquet file in a temporary
// directory and returns its path. Accuracies are centre + (seed−1)·0.01, so
// each full cell has mean = centre and sample std = 0.01:
//
//	nonprivate ε=∞: 0.84; dpsgd ε=1: 0.52, ε=8: 0.70; dpzo ε=1: 0.45, ε=8: 0.50
//
// on task fashion-vqa, and dpzo ε=8 seed 2 failed. mia_auc is 0.50 + 0.01·seed.
func writeReportsRuns(t *testing.T) string {
	t.Helper()
	cells := []struct {
		method string
		eps    float64
		centre float64
	}{
		{"nonprivate", math.Inf(1), 0.84},
		{"dpsgd", 1, 0.52},
		{"dpsgd", 8, 0.70},
		{"dpzo", 1, 0.45},
		{"dpzo", 8, 0.50},
	}
	var rows []reportsRun
	for _, c := range cells {
		for seed := range 3 {
			acc := c.centre + float64(seed-1)*0.01
			auc := 0.5 + float64(seed)*0.01
			r := reportsRun{RunID: c.method + string(rune('a'+seed)), Status: "ok", Method: c.method,
				Task: "fashion-vqa", Seed: int64(seed), EpsilonTarget: c.eps, Acc: &acc, MiaAUC: &auc}
			if c.method == "dpzo" && c.eps == 8 && seed == 2 {
				r.Status, r.Acc, r.MiaAUC = "failed", nil, nil
			}
			rows = append(rows, r)
		}
	}
	path := filepath.Join(t.TempDir(), "runs.parquet")
	if err := parquet.WriteFile(path, rows); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestTableCommand(t *testing.T) {
	path := writeReportsRuns(t)
	for _, tc := range []struct {
		desc string
		args []string
		want []string // lines or fragments the output must contain
		// stderr are fragments standard error must contain: the warnings,
		// which stay out of the table.
		stderr []string
	}{
		{
			desc: "text",
			args: []string{"--metric", "acc", "--best", "max", "--factor", "100", "--precision", "1"},
			want: []string{
				"acc (mean ± std over 2–3 runs)",
				// dpsgd ε=1: 51, 52, 53 → 52.0 ± 1.0, best of its column.
				"52.0 ± 1.0 *",
				// dpzo ε=8: 49, 50 (seed 2 failed) → 49.5 ± 0.7 (0.01·100/√2 = 0.707).
				"49.5 ± 0.7   (n=2)",
				"│ fashion-vqa  │", "│     ε=∞      │", // header parts stacked one per line
			},
			stderr: []string{"warning: 1 run failed\n", "warning: n=2–3 seeds < 10\n"},
		},
		{
			desc: "markdown",
			args: []string{"--metric", "acc", "--cols", "epsilon_target", "--format", "md", "--best", "max"},
			want: []string{"| method     |", "**0.70 ± 0.01**", "| nonprivate |"},
		},
		{
			desc: "latex",
			args: []string{"--metric", "acc", "--cols", "epsilon_target", "--format", "tex", "--min-seeds", "0", "--precision", "0", "--factor", "100"},
			want: []string{`\begin{tabular}{lrrr}`, `$\varepsilon=\infty$`, `84 $\pm$ 1`, `\bottomrule`},
		},
		{
			desc: "flags before and after the file",
			args: []string{"--where", "method=dpsgd", "--cols", "epsilon_target", "--metric", "acc", "--format", "md"},
			want: []string{"| dpsgd  |", "0.52 ± 0.01", "0.70 ± 0.01"},
		},
		{
			desc: "two metrics, best among methods",
			args: []string{"--metric", "acc,mia_auc", "--rows", "epsilon_target", "--cols", "method", "--best", "max", "--format", "md", "--min-seeds", "0"},
			want: []string{"| ε   | nonprivate acc | nonprivate mia\\_auc |", "**0.52 ± 0.01**", "- **bold**: best method (max)"},
		},
		{
			desc: "where, single column",
			args: []string{"--metric", "acc", "--cols", "", "--where", "method=dpsgd", "--rows", "epsilon_target"},
			want: []string{"│ ε ", "0.52 ± 0.01", "0.70 ± 0.01"},
		},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			// The first two arguments go before the file, the rest after it.
			args := append(append(append([]string{"table"}, tc.args[:2]...), path), tc.args[2:]...)
			out, errOut, err := run(t, args...)
			if err != nil {
				t.Fatalf("repro table %v: %v", tc.args, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("repro table %v: output lacks %q:\n%s", tc.args, w, out)
				}
			}
			for _, w := range tc.stderr {
				if !strings.Contains(errOut, w) {
					t.Errorf("repro table %v: standard error lacks %q:\n%s", tc.args, w, errOut)
				}
			}
			if strings.Contains(out, "warning") {
				t.Errorf("repro table %v: a warning in the table:\n%s", tc.args, out)
			}
		})
	}
	// A results directory stands for its runs.parquet; --out writes files.
	prefix := filepath.Join(t.TempDir(), "t1")
	out, _, err := run(t, "table", filepath.Dir(path), "--metric", "acc", "--out", prefix)
	if want := prefix + ".txt\n" + prefix + ".md\n" + prefix + ".tex\n"; err != nil || out != want {
		t.Errorf("repro table DIR --out: printed %q, error %v; want %q", out, err, want)
	}
	if md, err := os.ReadFile(prefix + ".md"); err != nil || !strings.Contains(string(md), "| nonprivate |") {
		t.Errorf("%s.md: %v\n%s", prefix, err, md)
	}
	if out, _, _ := run(t, "table", path, "--metric", "acc", "--min-seeds", "0"); strings.Contains(out, "seeds <") {
		t.Errorf("--min-seeds 0 still warns about seeds:\n%s", out)
	}
}

func TestTableCommandErrors(t *testing.T) {
	path := writeReportsRuns(t)
	for _, tc := range []struct {
		desc string
		args []string
		want string
	}{
		{"no file", []string{"table", "--metric", "acc"}, "want exactly one FILE.parquet"},
		{"no metric", []string{"table", path}, "metric"},
		{"unknown metric", []string{"table", path, "--metric", "nope"}, `metric column "nope" not in the run table`},
		{"metric twice", []string{"table", path, "--metric", "acc,acc"}, "twice"},
		{"bad format", []string{"table", path, "--metric", "acc", "--format", "html"}, "unknown table format"},
		{"bad best", []string{"table", path, "--metric", "acc", "--best", "most"}, "unknown best rule"},
		{"bad where", []string{"table", path, "--metric", "acc", "--where", "method"}, "want column=value"},
		{"bad factor", []string{"table", path, "--metric", "acc", "--factor", "0"}, "--factor"},
		{"two files", []string{"table", path, path, "--metric", "acc"}, "want exactly one"},
		{"unknown flag after the file", []string{"table", path, "--metric", "acc", "--nope"}, "nope"},
		{"missing file", []string{"table", filepath.Join(t.TempDir(), "none.parquet"), "--metric", "acc"}, "no such file"},
	} {
		_, _, err := run(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: repro %v: got error %v, want one containing %q", tc.desc, tc.args, err, tc.want)
		}
	}
}

// TestTableExperimentFileFlags checks that the flags that shape a table
// drawn from a run table are a usage error with an experiment, whose spec
// sets its tables, and that --format and the experiment flags are not.
func TestTableExperimentFileFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		desc string
		args []string
		want string
	}{
		{"one flag", []string{"table1", "--metric", "acc"},
			`table: flag --metric applies only to a FILE.parquet or RESULTS-DIR argument; "table1" is neither, so it names an experiment, whose spec sets its tables`},
		{"several flags, before and after", []string{"--where", "method=dpsgd", "table1", "--best", "max", "--out", "t"},
			`table: flags --best, --where, --out apply only to a FILE.parquet or RESULTS-DIR argument; "table1" is neither`},
		{"a missing directory", []string{filepath.Join(dir, "none"), "--rows", "task"}, "table: flag --rows applies only to a FILE.parquet"},
		{"format and experiment flags", []string{"table1", "--format", "md", "--scale", "smoke", "--jobs", "1", "--set", "delta=1e-6", "--no-run", "--results", dir},
			"table: table1: none of its"},
	} {
		_, _, err := run(t, append([]string{"table"}, tc.args...)...)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: repro table %s: got error %v, want one starting %q", tc.desc, strings.Join(tc.args, " "), err, tc.want)
		}
	}
}

// TestTableFileExperimentFlags checks the converse of
// TestTableExperimentFileFlags: experiment flags with a run table argument
// are a usage error, not silently ignored.
func TestTableFileExperimentFlags(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "runs.parquet")
	if err := os.WriteFile(file, []byte("not read"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{file, "--metric", "acc", "--scale", "smoke"}, `table: flag --scale applies only to an experiment argument; "` + file + `" is a run table`},
		{[]string{"--no-run", dir, "--metric", "acc", "--jobs", "2"}, "table: flags --jobs, --no-run apply only to an experiment argument"},
	} {
		_, _, err := run(t, append([]string{"table"}, tc.args...)...)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("repro table %s: got error %v, want one starting %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
	_, _, err := run(t, "plot", file, "--x", "epsilon", "--y", "acc", "--out", filepath.Join(dir, "p"), "--set", "delta=1e-6")
	if want := "plot: flag --set applies only to an experiment argument"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("repro plot FILE --set: got error %v, want one starting %q", err, want)
	}
}
