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
			rows[i].Seconds = 0
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
