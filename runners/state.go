// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package runners

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/repro-dp/repro/internal/results"
)

// States of a run folder, as [State] returns them; a manifest's status
// (ok, failed, running) is returned as it is.
const (
	// StateToRun: the folder holds no manifest.
	StateToRun = "to run"
	// StateDamaged: the manifest does not read back, or it says ok but
	// a file does not verify; the next sweep runs it again.
	StateDamaged = "damaged"
	// StateInterrupted: the manifest says running but no process holds
	// the run's lock: the process that ran it was killed.
	StateInterrupted = "interrupted"
)

// State returns the state of the run folder dir (results/EXP/runs/ID):
// [StateToRun], [StateDamaged], [StateInterrupted], or the status of its
// manifest (ok, failed, or running while a process holds its lock). The
// error says why a run is damaged; it is nil otherwise.
func State(dir string) (string, error) {
	m, err := results.Check(dir)
	switch {
	case errors.As(err, new(*results.DamagedError)):
		return StateDamaged, err
	case errors.Is(err, fs.ErrNotExist):
		return StateToRun, nil
	case err != nil:
		return StateDamaged, err
	case m.Status == results.Running:
		lock := filepath.Join(filepath.Dir(filepath.Dir(dir)), ".locks", filepath.Base(dir)+".lock")
		if h, err := held(lock); err == nil && !h {
			return StateInterrupted, nil
		}
	}
	return string(m.Status), nil
}

// waitLock waits until no process holds the lock on the file name, or ctx
// is done.
func waitLock(ctx context.Context, name string) error {
	for {
		h, err := held(name)
		if err != nil || !h {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
