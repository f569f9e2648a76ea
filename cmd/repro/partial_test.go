// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/repro-dp/repro/internal/results"
)

// TestReadDuringRun checks repro table --no-run and repro compare while
// another process (a child running repro run) holds a run of the
// experiment running: the table says once how many runs are running and
// missing and does not warn of the paper values of their cells, and
// compare reports the configurations as RUNNING or MISSING, not as
// regressions, and exits 2 for a partial comparison unless --partial.
func TestReadDuringRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	// A paper value of a cell whose runs are not finished.
	outputs := "tables:\n  - {name: t1, title: fake accuracy, rows: [method], columns: [epsilon_target], metrics: [acc], best: max,\n" +
		"      reference: [{at: {method: " + fakeMethod + ", epsilon_target: 8}, metric: acc, value: 0.5, source: paper}]}\n" +
		"regression:\n  - {metric: acc, better: max, threshold: 0.05}\n"
	spec := fakeSpec(t, outputs)
	old, dir := t.TempDir(), t.TempDir()
	if _, stderr, err := run(t, "run", spec, "--results", old); err != nil {
		t.Fatalf("repro run: %v\n%s", err, stderr)
	}
	if _, stderr, err := run(t, "run", spec, "--results", dir, "--set", "sweep.epsilon=[1]"); err != nil {
		t.Fatalf("repro run ε = 1: %v\n%s", err, stderr)
	}

	// Another repro runs the rest, one run at a time, each taking a minute.
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), slowEnv+"=60000", childEnv+"="+strings.Join([]string{"run", spec, "--jobs", "1", "--results", dir}, "\x1f"))
	var childErr bytes.Buffer
	cmd.Stderr = &childErr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		ms, _ := filepath.Glob(filepath.Join(dir, "fake", "runs", "*", results.ManifestFile))
		if len(ms) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child started no run in a minute; stderr:\n%s", childErr.String())
		}
	}

	_, stderr, err := run(t, "table", spec, "--no-run", "--results", dir)
	if err != nil {
		t.Fatalf("repro table --no-run during a run: %v\n%s", err, stderr)
	}
	if want := "fake: warning: 2 of 4 runs at scale smoke are not finished (--no-run): 1 running, 1 missing; showing the 2 finished\n"; !strings.Contains(stderr, want) {
		t.Errorf("repro table --no-run during a run: standard error lacks %q:\n%s", want, stderr)
	}
	if strings.Contains(stderr, "matches no cell") || strings.Contains(stderr, `status "running"`) {
		t.Errorf("repro table --no-run during a run warns of the unfinished runs' cells:\n%s", stderr)
	}

	// compare reads the run table repro table --no-run wrote, which has
	// the running run: ε = 8 is RUNNING.
	oldRuns, newRuns := filepath.Join(old, "fake"), filepath.Join(dir, "fake")
	out, _, err := run(t, "compare", oldRuns, newRuns, "--spec", spec, "--metric", "acc")
	if ec, ok := errors.AsType[cli.ExitCoder](err); !ok || ec.ExitCode() != 2 {
		t.Errorf("repro compare during a run: %v, want exit status 2 (partial)", err)
	}
	for _, want := range []string{"RUNNING", "0 regressions", "partial: 1 of 2 configurations have no finished run in new (1 running, 0 missing)"} {
		if !strings.Contains(out, want) {
			t.Errorf("repro compare during a run: output lacks %q:\n%s", want, out)
		}
	}
	// Without a run table, the running run is read from its folder, and
	// the finished ones, not in a run table yet, are MISSING.
	if err := os.Remove(filepath.Join(newRuns, results.RunsFile)); err != nil {
		t.Fatal(err)
	}
	out, _, err = run(t, "compare", oldRuns, newRuns, "--spec", spec, "--metric", "acc", "--partial")
	if err != nil {
		t.Errorf("repro compare --partial during a run: %v, want exit status 0", err)
	}
	for _, want := range []string{"RUNNING", "MISSING", "partial: 2 of 2 configurations have no finished run in new (1 running, 1 missing)"} {
		if !strings.Contains(out, want) {
			t.Errorf("repro compare --partial during a run: output lacks %q:\n%s", want, out)
		}
	}
}
