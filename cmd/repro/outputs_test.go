// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/repro-dp/repro/runners"
)

// fakeOutputs are the tables and plots of the fake experiment of
// fakeSpec.
const fakeOutputs = "tables:\n  - {name: t1, title: fake accuracy, rows: [method], columns: [epsilon_target], metrics: [acc], best: max}\n" +
	"plots:\n  - {name: f1, title: fake accuracy, kind: line, x: epsilon_target, y: acc, series: method}\n"

func TestTableExperimentRunsThenRenders(t *testing.T) {
	dir := t.TempDir()
	spec := fakeSpec(t, fakeOutputs)
	fakeCalls.Store(0)
	out, stderr, err := run(t, "table", spec, "--results", dir, "--jobs", "2", "--format", "md")
	if err != nil {
		t.Fatalf("repro table %s: %v\nstderr:\n%s", spec, err, stderr)
	}
	if n := fakeCalls.Load(); n != 4 {
		t.Errorf("repro table ran %d runs, want the 4 of the spec", n)
	}
	md, err := os.ReadFile(filepath.Join(dir, "fake", "t1.md"))
	if err != nil {
		t.Fatalf("repro table did not write the spec's table: %v", err)
	}
	if out != string(md) || !strings.Contains(out, fakeMethod) || !strings.Contains(out, "| ") {
		t.Errorf("repro table printed:\n%s\nwant t1.md:\n%s", out, md)
	}
	for _, ext := range []string{".txt", ".tex"} {
		if _, err := os.Stat(filepath.Join(dir, "fake", "t1"+ext)); err != nil {
			t.Errorf("repro table: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "fake", "f1.png")); err == nil {
		t.Errorf("repro table drew the spec's plot")
	}

	// Again: every run is finished, nothing runs; --format text prints t1.txt.
	fakeCalls.Store(0)
	out, stderr, err = run(t, "table", spec, "--results", dir)
	txt, _ := os.ReadFile(filepath.Join(dir, "fake", "t1.txt"))
	if err != nil || fakeCalls.Load() != 0 || out != string(txt) || !strings.Contains(stderr, "4 cached") {
		t.Errorf("repro table again: %v, %d runs, printed:\n%s\nstderr:\n%s", err, fakeCalls.Load(), out, stderr)
	}
}

func TestPlotExperimentRunsThenDraws(t *testing.T) {
	dir := t.TempDir()
	spec := fakeSpec(t, fakeOutputs)
	fakeCalls.Store(0)
	out, stderr, err := run(t, "plot", spec, "--results", dir, "--jobs", "1")
	if err != nil {
		t.Fatalf("repro plot %s: %v\nstderr:\n%s", spec, err, stderr)
	}
	if n := fakeCalls.Load(); n != 4 {
		t.Errorf("repro plot ran %d runs, want the 4 of the spec", n)
	}
	var want []string
	for _, ext := range []string{".png", ".svg", ".pdf"} {
		want = append(want, filepath.Join(dir, "fake", "f1"+ext))
	}
	if got := strings.Fields(out); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("repro plot printed %q, want %q", got, want)
	}
	for _, p := range want {
		if fi, err := os.Stat(p); err != nil || fi.Size() == 0 {
			t.Errorf("repro plot: %s: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "fake", "t1.md")); err == nil {
		t.Errorf("repro plot wrote the spec's table")
	}
}

func TestTableExperimentNoRun(t *testing.T) {
	dir := t.TempDir()
	spec := fakeSpec(t, fakeOutputs)

	// Nothing finished: --no-run has nothing to show.
	fakeCalls.Store(0)
	_, _, err := run(t, "table", spec, "--results", dir, "--no-run")
	if err == nil || !strings.Contains(err.Error(), "none of its 4 runs at scale smoke is finished") {
		t.Errorf("repro table --no-run with no results: got %v, want an error saying no run is finished", err)
	}
	if _, _, err := run(t, "plot", spec, "--no-run", "--results", dir); err == nil || !strings.Contains(err.Error(), "none of its 4 runs at scale smoke is finished") {
		t.Errorf("repro plot --no-run with no results: got %v, want an error saying no run is finished", err)
	}

	// Half of the runs, by --set with commas in its value (never split).
	if _, stderr, err := run(t, "run", spec, "--results", dir, "--set", "sweep.epsilon=[1,8]", "--set", "sweep.seed=[1]"); err != nil {
		t.Fatalf("repro run: %v\n%s", err, stderr)
	}
	if n := fakeCalls.Load(); n != 2 {
		t.Fatalf("repro run --set sweep.seed=[1] ran %d runs, want 2", n)
	}
	fakeCalls.Store(0)
	out, stderr, err := run(t, "table", spec, "--no-run", "--results", dir, "--format", "tex")
	if err != nil {
		t.Fatalf("repro table --no-run: %v\n%s", err, stderr)
	}
	if n := fakeCalls.Load(); n != 0 {
		t.Errorf("repro table --no-run ran %d runs", n)
	}
	if !strings.Contains(stderr, "fake: warning: 2 of 4 runs at scale smoke are not finished (--no-run): 2 missing") {
		t.Errorf("repro table --no-run does not warn of the 2 missing runs; stderr:\n%s", stderr)
	}
	if !strings.Contains(out, `\toprule`) {
		t.Errorf("repro table --no-run --format tex printed:\n%s", out)
	}
	out, stderr, err = run(t, "plot", spec, "--no-run", "--results", dir)
	if err != nil || fakeCalls.Load() != 0 || !strings.Contains(stderr, "2 of 4 runs at scale smoke are not finished (--no-run): 2 missing") || !strings.Contains(out, "f1.png") {
		t.Errorf("repro plot --no-run: %v, %d runs, printed:\n%s\nstderr:\n%s", err, fakeCalls.Load(), out, stderr)
	}

	// At another scale, the message names the runs that are there.
	_, _, err = run(t, "table", spec, "--no-run", "--results", dir, "--scale", "small")
	if want := "holds 2 finished runs at scale smoke (--scale smoke reads them)"; err == nil || !strings.Contains(err.Error(), "at scale small is finished") || !strings.Contains(err.Error(), want) {
		t.Errorf("repro table --no-run --scale small: got %v, want it to say %q", err, want)
	}

	// The results folder itself keeps its meaning: a run table to read.
	out, _, err = run(t, "table", filepath.Join(dir, "fake"), "--metric", "acc", "--cols", "")
	if err != nil || !strings.Contains(out, fakeMethod) || fakeCalls.Load() != 0 {
		t.Errorf("repro table RESULTS-DIR: %v, printed:\n%s", err, out)
	}
}

func TestTableUnknownExperiment(t *testing.T) {
	for _, cmd := range []string{"table", "plot"} {
		_, _, err := run(t, cmd, "table9", "--results", t.TempDir())
		if err == nil {
			t.Errorf("repro %s table9: got nil error", cmd)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, cmd+": ") || !strings.Contains(msg, `no experiment "table9"`) || !strings.Contains(msg, "table1") || !strings.Contains(msg, "fig1") {
			t.Errorf("repro %s table9: %q, want it to name table9 and list table1 and fig1", cmd, msg)
		}
	}
}

// TestNoRunReadOnlyResults checks that a results folder that cannot be
// written still lets repro table --no-run and repro verify --no-run read
// its finished runs: the run table goes to a temporary folder, and
// standard error says where. A user who is not root gets a folder made
// read-only with chmod; root, whom chmod does not stop, gets writes into
// it refused with the error a read-only file system gives.
func TestNoRunReadOnlyResults(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // where the outputs go
	dir := t.TempDir()
	claims := "claims:\n  - {name: c1, text: more budget more accuracy, metric: acc, a: {epsilon_target: 8}, b: {epsilon_target: 1}, expect: greater, source: made up}\n"
	spec := fakeSpec(t, fakeOutputs+claims)
	if _, stderr, err := run(t, "run", spec, "--results", dir); err != nil {
		t.Fatalf("repro run: %v\n%s", err, stderr)
	}
	if os.Geteuid() == 0 {
		defer func(f func(string, string, []*runners.Run) error) { writeRuns = f }(writeRuns)
		inner := writeRuns
		writeRuns = func(root, exp string, plan []*runners.Run) error {
			if root == dir {
				return &fs.PathError{Op: "open", Path: filepath.Join(root, exp, "runs.parquet"), Err: syscall.EROFS}
			}
			return inner(root, exp, plan)
		}
	} else {
		var folders []string
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				folders = append(folders, p)
			}
			return nil
		})
		for _, f := range folders {
			if err := os.Chmod(f, 0o555); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() {
			for _, f := range folders {
				os.Chmod(f, 0o755)
			}
		})
	}
	before, err := os.ReadFile(filepath.Join(dir, "fake", "t1.md"))
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, err := run(t, "table", spec, "--no-run", "--results", dir, "--format", "md")
	if err != nil {
		t.Fatalf("repro table --no-run on a read-only folder: %v\n%s", err, stderr)
	}
	if out != string(before) {
		t.Errorf("repro table --no-run printed:\n%s\nwant the table of the finished runs:\n%s", out, before)
	}
	if !strings.Contains(stderr, "fake: warning: "+dir+" cannot be written") || !strings.Contains(stderr, "the run table and outputs go to ") {
		t.Errorf("repro table --no-run does not say where the outputs went; stderr:\n%s", stderr)
	}
	out, stderr, err = run(t, "verify", spec, "--no-run", "--results", dir)
	if err != nil || !strings.Contains(out, "c1") {
		t.Errorf("repro verify --no-run on a read-only folder: %v, printed:\n%s\nstderr:\n%s", err, out, stderr)
	}
}

// TestOutputsFromRunTable checks --from: an experiment's tables and plots
// drawn from a run table file (a checked-in baseline) without its runs'
// folders and without running anything.
func TestOutputsFromRunTable(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // where the outputs go
	dir := t.TempDir()
	spec := fakeSpec(t, fakeOutputs)
	if _, stderr, err := run(t, "run", spec, "--results", dir); err != nil {
		t.Fatalf("repro run: %v\n%s", err, stderr)
	}
	file := filepath.Join(t.TempDir(), "fake-smoke.parquet")
	data, err := os.ReadFile(filepath.Join(dir, "fake", "runs.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(dir, "fake", "t1.md"))
	if err != nil {
		t.Fatal(err)
	}
	fakeCalls.Store(0)
	empty := t.TempDir()
	out, stderr, err := run(t, "table", spec, "--from", file, "--results", empty, "--format", "md")
	if err != nil || out != string(want) || fakeCalls.Load() != 0 {
		t.Errorf("repro table --from: %v, %d runs, printed:\n%s\nwant:\n%s\nstderr:\n%s", err, fakeCalls.Load(), out, want, stderr)
	}
	if !strings.Contains(stderr, "fake: reading 4 runs from "+file+" (4 at scale smoke)") {
		t.Errorf("repro table --from does not say what it reads; stderr:\n%s", stderr)
	}
	out, _, err = run(t, "plot", spec, "--from", file, "--results", empty)
	if err != nil || !strings.Contains(out, filepath.Join("fake", "f1.png")) {
		t.Errorf("repro plot --from: %v, printed:\n%s", err, out)
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Errorf("--from wrote under --results: %v", entries)
	}
	_, _, err = run(t, "table", "table1", "--from", file)
	if err == nil || !strings.Contains(err.Error(), "holds runs of experiment fake, not table1") {
		t.Errorf("repro table table1 --from a fake run table: got %v, want an error", err)
	}
}
