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

func TestStatusAndTask(t *testing.T) {
	dir := t.TempDir()
	spec := fakeSpec(t, "")
	seeds := []string{"--set", "sweep.seed=[1, 13]"}
	out, _, err := run(t, append([]string{"status", "--results", dir, spec}, seeds...)...)
	if err != nil || !strings.Contains(out, "fake: 4 runs (scale smoke): 4 to run\n") {
		t.Fatalf("repro status before any run: got %q, %v", out, err)
	}
	// Seed 13 fails (see fakeMethod): 2 runs ok, 2 failed.
	if _, _, err := run(t, append([]string{"run", "--results", dir, "--jobs", "1", spec}, seeds...)...); err == nil {
		t.Fatal("repro run of a spec with failing runs: no error")
	}
	out, _, err = run(t, append([]string{"status", "--results", dir, spec}, seeds...)...)
	if err != nil || !strings.Contains(out, "4 runs (scale smoke): 2 ok, 2 failed\n") || strings.Count(out, "unlucky seed") != 2 {
		t.Errorf("repro status after the run: got %q, %v; want 2 ok and 2 failed, each with its error", out, err)
	}

	// repro task executes one run and leaves runs.parquet alone.
	runsFile := filepath.Join(dir, "fake", results.RunsFile)
	before, err := os.ReadFile(runsFile)
	if err != nil {
		t.Fatal(err)
	}
	dirs, _ := filepath.Glob(filepath.Join(dir, "fake", "runs", "*"))
	var okRun string
	for _, d := range dirs {
		if results.Finished(d) {
			okRun = d
			break
		}
	}
	if err := os.RemoveAll(okRun); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := run(t, append([]string{"task", "--results", dir}, append(seeds, spec, filepath.Base(okRun))...)...); err != nil {
		t.Fatalf("repro task: %v\n%s", err, stderr)
	}
	if !results.Finished(okRun) {
		t.Errorf("repro task did not execute run %s", filepath.Base(okRun))
	}
	if after, _ := os.ReadFile(runsFile); string(after) != string(before) {
		t.Error("repro task rewrote runs.parquet")
	}
	if _, _, err := run(t, append([]string{"task", "--results", dir}, append(seeds, spec, "0123456789abcdef")...)...); err == nil || !strings.Contains(err.Error(), "has no run 0123456789abcdef") {
		t.Errorf("repro task of an unknown run: got %v", err)
	}
	// No Slurm submission: repro cancel has nothing to cancel.
	out, _, err = run(t, "cancel", "--results", dir, spec)
	if err != nil || !strings.Contains(out, "no Slurm job") {
		t.Errorf("repro cancel without submissions: got %q, %v", out, err)
	}
}
