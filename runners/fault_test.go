// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package runners

// Fault injection (issue: never trust a damaged file, count every failure,
// leave no stale state): damaged result files, a full disk (injected
// through the atomic-write helper, and a real size-limited tmpfs where the
// test may mount one), and an interrupt that stops work in progress.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/repro-dp/repro/internal/results"
)

// TestFaultDamagedRuns damages finished runs (a truncated metrics file, an
// emptied scores file, a truncated manifest, a file removed) and checks
// that the next sweep names each one and runs exactly those again.
func TestFaultDamagedRuns(t *testing.T) {
	root := t.TempDir()
	s := parse(t)
	if _, err := Sweep(t.Context(), s, &Options{Root: root, Jobs: 2, Executor: fake}); err != nil {
		t.Fatal(err)
	}
	plan := mustPlan(t, s, root)
	damage := map[string]func() error{
		plan[0].ID: func() error { return os.Truncate(filepath.Join(plan[0].Dir, results.MetricsFile), 100) },
		plan[5].ID: func() error { return os.Truncate(filepath.Join(plan[5].Dir, results.ScoresFile), 0) },
		plan[9].ID: func() error { return os.Truncate(filepath.Join(plan[9].Dir, results.ManifestFile), 100) },
		plan[12].ID: func() error {
			return os.Remove(filepath.Join(plan[12].Dir, results.MetricsFile))
		},
	}
	for id, f := range damage {
		if err := f(); err != nil {
			t.Fatalf("damaging %s: %v", id, err)
		}
	}
	for _, r := range plan {
		st, _ := State(r.Dir)
		if want := map[bool]string{true: StateDamaged, false: "ok"}[damage[r.ID] != nil]; st != want {
			t.Errorf("State(run %s) = %s, want %s", r.ID, st, want)
		}
	}
	var calls atomic.Int64
	var progress bytes.Buffer
	sum, err := Sweep(t.Context(), s, &Options{Root: root, Jobs: 2, Progress: &progress, Executor: func(ctx context.Context, r *Run, rec *Recorder) error {
		calls.Add(1)
		if damage[r.ID] == nil {
			return fmt.Errorf("run %s is intact but was run again", r.ID)
		}
		return fake(ctx, r, rec)
	}})
	if err != nil || calls.Load() != 4 || sum.OK != 4 || sum.Cached != 14 || len(sum.Damaged) != 4 {
		t.Errorf("Sweep after damage: %d calls, %+v, %v; want the 4 damaged runs run again", calls.Load(), sum, err)
	}
	for id := range damage {
		if !strings.Contains(progress.String(), "run "+id) || !strings.Contains(progress.String(), "is damaged, running it again") {
			t.Errorf("progress does not name damaged run %s:\n%s", id, progress.String())
		}
	}
	for _, r := range plan {
		if !results.Finished(r.Dir) {
			t.Errorf("run %s is not finished after the repair", r.ID)
		}
	}
}

// TestFaultDiskFull fails writes as a full disk does, through the atomic
// write helper: every failed run is counted as failed (none as "not run"),
// no run is left "running", and a second sweep completes.
func TestFaultDiskFull(t *testing.T) {
	root := t.TempDir()
	s := parse(t)
	var faults atomic.Int64
	undo := results.InjectFault(func(name string) error {
		// Seed 2's runs cannot write their metrics; seed 3's runs cannot
		// write anything but their first manifest.
		dir := filepath.Base(filepath.Dir(name))
		m, err := results.ReadManifest(filepath.Dir(name))
		if err != nil || m.RunID != dir {
			return nil
		}
		switch {
		case m.Config.Seed == 2 && filepath.Base(name) == results.MetricsFile,
			m.Config.Seed == 3 && m.Status == results.Running && filepath.Base(name) != results.ManifestFile,
			m.Config.Seed == 3 && filepath.Base(name) == results.ManifestFile && m.Status == results.Running && hasData(filepath.Dir(name)):
			faults.Add(1)
			return syscall.ENOSPC
		}
		return nil
	})
	sum, err := Sweep(t.Context(), s, &Options{Root: root, Jobs: 2, Executor: fake})
	undo()
	if err == nil || sum.Failed != 12 || sum.OK != 6 || sum.NotStarted != 0 || faults.Load() == 0 {
		t.Errorf("Sweep on a full disk: %+v, %v (%d faults); want 12 failed, 6 ok, 0 not run", sum, err, faults.Load())
	}
	for _, f := range sum.Failures {
		if !strings.Contains(f.Err, "no space left on device") {
			t.Errorf("failure of run %s: %q, want no space left on device", f.ID, f.Err)
		}
	}
	noStaleState(t, root)
	sum, err = Sweep(t.Context(), s, &Options{Root: root, Jobs: 2, Executor: fake})
	if err != nil || sum.OK != 12 || sum.Cached != 6 {
		t.Errorf("Sweep after the disk is freed: %+v, %v; want 12 ok, 6 cached", sum, err)
	}
}

// hasData reports whether the run folder dir holds a file besides the
// manifest: the run has ended and is writing its final manifest.
func hasData(dir string) bool {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() != results.ManifestFile && !strings.HasPrefix(e.Name(), ".") {
			return true
		}
	}
	return false
}

// noStaleState fails if a run under root is left running or
// interrupted.
func noStaleState(t *testing.T, root string) {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(root, "*", "runs", "*"))
	for _, d := range dirs {
		if st, _ := State(d); st == string(results.Running) || st == StateInterrupted {
			t.Errorf("run %s is left %s", filepath.Base(d), st)
		}
	}
}

// TestFaultTinyDisk runs a sweep on a real size-limited filesystem (a tmpfs
// of 64 KiB, which needs root to mount) that fills up half way, then grows
// it and resumes.
func TestFaultTinyDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts a filesystem")
	}
	root := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", root).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a size-limited tmpfs here (needs root): %v: %s", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() { exec.Command("umount", root).Run() })
	s := parse(t)
	sum, err := Sweep(t.Context(), s, &Options{Root: root, Jobs: 2, Executor: fake})
	if err == nil || sum.Failed == 0 || sum.OK+sum.Failed != 18 || sum.NotStarted != 0 {
		t.Errorf("Sweep on a 64 KiB disk: %+v, %v; want some failed, every run ok or failed", sum, err)
	}
	for _, f := range sum.Failures {
		if !strings.Contains(f.Err, "no space left on device") {
			t.Errorf("failure of run %s: %q, want no space left on device", f.ID, f.Err)
		}
	}
	noStaleState(t, root)
	if out, err := exec.Command("mount", "-o", "remount,size=4m", root).CombinedOutput(); err != nil {
		t.Fatalf("growing the tmpfs: %v: %s", err, out)
	}
	sum2, err := Sweep(t.Context(), s, &Options{Root: root, Jobs: 2, Executor: fake})
	if err != nil || sum2.OK != sum.Failed || sum2.Cached != sum.OK {
		t.Errorf("Sweep after the disk grew: %+v, %v; want the %d failed runs ok", sum2, err, sum.Failed)
	}
}

// TestFaultInterruptStopsDiscardableWork interrupts a sweep while its runs
// wait on work that uses StopContext (as pretraining a base does): the
// work stops at once, the runs are recorded as not run (no folder, no
// failure), and the next sweep runs them.
func TestFaultInterruptStopsDiscardableWork(t *testing.T) {
	root := t.TempDir()
	s := parse(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var notes atomic.Int64
	exec := func(c context.Context, r *Run, rec *Recorder) error {
		if c.Err() != nil {
			return errors.New("the executor's own context was cancelled")
		}
		Note(c, "pretraining")
		notes.Add(1)
		cancel() // the first interrupt arrives while the base pretrains
		<-StopContext(c).Done()
		return fmt.Errorf("pretraining: %w", StopContext(c).Err())
	}
	sum, err := Sweep(ctx, s, &Options{Root: root, Jobs: 2, Executor: exec})
	if !errors.Is(err, context.Canceled) || sum.NotStarted != 18 || sum.Failed != 0 || notes.Load() == 0 {
		t.Errorf("Sweep interrupted while pretraining: %+v, %v; want 18 not run, none failed", sum, err)
	}
	if dirs, _ := filepath.Glob(filepath.Join(root, "exp", "runs", "*")); len(dirs) != 0 {
		t.Errorf("the interrupted runs left %d folders", len(dirs))
	}
	sum, err = Sweep(t.Context(), s, &Options{Root: root, Jobs: 2, Executor: fake})
	if err != nil || sum.OK != 18 {
		t.Errorf("Sweep after the interrupt: %+v, %v; want 18 ok", sum, err)
	}
}
