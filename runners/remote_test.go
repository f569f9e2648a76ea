// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package runners

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
)

// taskBackend is a Remote whose "tasks" are sweeps of one run each, with
// NoRunsFile, as a cluster's tasks are; it runs them in goroutines of this
// process and polls their folders, as the Slurm backend does.
type taskBackend struct {
	spec *experiments.Spec
	opts func() *Options
}

var _ Remote = (*taskBackend)(nil)

func (b *taskBackend) Dispatch(ctx context.Context, runs []*Run, exec func(*Run)) error {
	return b.Submit(ctx, runs, NewTracker(time.Now()))
}

func (b *taskBackend) Submit(ctx context.Context, runs []*Run, t *Tracker) error {
	var wg sync.WaitGroup
	errs := make(chan error, len(runs))
	for _, r := range runs {
		wg.Go(func() {
			o := b.opts()
			o.Only, o.NoRunsFile, o.Jobs = []string{r.ID}, true, 1
			_, err := Sweep(ctx, b.spec, o)
			errs <- err
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for {
		select {
		case <-done:
			if n := t.Poll(runs); n != len(runs) {
				return fmt.Errorf("ended %d of %d runs", n, len(runs))
			}
			close(errs)
			for err := range errs {
				if err != nil {
					return err
				}
			}
			return nil
		case <-time.After(time.Millisecond):
			t.Poll(runs)
		}
	}
}

func TestRemote(t *testing.T) {
	s := parse(t)
	local := t.TempDir()
	if _, err := Sweep(t.Context(), s, &Options{Root: local, Jobs: 2, Executor: fake}); err != nil {
		t.Fatal(err)
	}
	remote := t.TempDir()
	var progress bytes.Buffer
	b := &taskBackend{spec: s, opts: func() *Options { return &Options{Root: remote, Executor: fake} }}
	sum, err := Sweep(t.Context(), s, &Options{Root: remote, Executor: fake, Backend: b, Progress: &progress})
	if err != nil {
		t.Fatalf("Sweep on a Remote: %v", err)
	}
	if sum.OK != 18 || sum.Failed != 0 || sum.NotStarted != 0 {
		t.Errorf("Sweep on a Remote: got %d ok, %d failed, %d not run; want 18 ok", sum.OK, sum.Failed, sum.NotStarted)
	}
	if !strings.Contains(progress.String(), "exp: 18 runs: 18 ok") {
		t.Errorf("progress of a Remote sweep:\n%s", progress.String())
	}
	read := func(root string) []results.Run {
		rows, err := results.ReadRuns(filepath.Join(root, "exp", results.RunsFile))
		if err != nil {
			t.Fatal(err)
		}
		for i := range rows {
			// The time, and what it was measured under, differ.
			rows[i].Seconds, rows[i].LoadStart, rows[i].LoadEnd, rows[i].Jobs = 0, 0, 0, 0
		}
		return rows
	}
	if diff := cmp.Diff(read(local), read(remote), cmpopts.EquateNaNs(), cmpopts.SortSlices(func(a, b results.Run) bool { return a.RunID < b.RunID })); diff != "" {
		t.Errorf("runs.parquet of a Remote sweep differs from the local pool's (-local +remote):\n%s", diff)
	}
}

func TestNoRunsFile(t *testing.T) {
	root := t.TempDir()
	s := parse(t)
	if _, err := Sweep(t.Context(), s, &Options{Root: root, Executor: fake, NoRunsFile: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "exp", results.RunsFile)); !os.IsNotExist(err) {
		t.Errorf("Sweep with NoRunsFile wrote runs.parquet (stat: %v)", err)
	}
}

// TestTrackerRetry follows one run through a failed attempt and a retry
// that succeeds, as a task with --retries makes them, and checks the
// counts of the progress line at each step.
func TestTrackerRetry(t *testing.T) {
	root := t.TempDir()
	r := &Run{Experiment: "exp", ID: "r1", Dir: filepath.Join(root, "exp", "runs", "r1")}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	since := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	prog := newProgress(nil, 0, "exp", 1, 0, time.Now, nil)
	tr := &Tracker{prog: prog, since: since}
	write := func(status results.Status, started time.Time) {
		t.Helper()
		m := &results.Manifest{Format: results.Format, RunID: r.ID, Experiment: "exp", Status: status, Started: started}
		if status != results.Running {
			m.Files = []results.File{}
		}
		if err := results.WriteManifest(r.Dir, m); err != nil {
			t.Fatal(err)
		}
	}
	check := func(step string, wantEnded, running, done, failed int) {
		t.Helper()
		if got := tr.Poll([]*Run{r}); got != wantEnded || prog.running != running || prog.done != done || prog.failed != failed {
			t.Errorf("%s: got %d ended, %d running, %d done, %d failed; want %d, %d, %d, %d", step, got, prog.running, prog.done, prog.failed, wantEnded, running, done, failed)
		}
	}
	check("no manifest", 0, 0, 0, 0)
	write(results.Running, since.Add(-time.Hour))
	check("an older attempt", 0, 0, 0, 0)
	write(results.Running, since.Add(time.Second))
	check("running", 0, 1, 0, 0)
	write(results.Failed, since.Add(time.Second))
	check("failed", 1, 0, 1, 1)
	check("failed, polled again", 1, 0, 1, 1)
	write(results.Running, since.Add(2*time.Second))
	check("retried", 0, 1, 0, 0)
	write(results.OK, since.Add(2*time.Second))
	check("ok", 1, 0, 1, 0)
}
