// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package runners

import (
	"context"
	"sync"
	"time"

	"github.com/repro-dp/repro/internal/results"
)

// A Remote is a [Backend] whose runs execute in other processes, such as
// the tasks of a cluster's job array, each a [Sweep] of one run into the
// same results folder, with the run's lock and atomic writes. [Sweep]
// calls Submit in place of Dispatch when its backend is a Remote, with a
// [Tracker] that turns what the run folders say into the sweep's progress
// line. Submit returns when every run it submitted has ended or left the
// queue, or when ctx is done, after cancelling what it submitted. The
// sweep then reads each run's outcome from its manifest.
type Remote interface {
	Backend
	Submit(ctx context.Context, runs []*Run, t *Tracker) error
}

// A Tracker follows runs that other processes execute, from their
// folders, and reports them on the sweep's progress line.
type Tracker struct {
	prog  *progress
	since time.Time

	mu   sync.Mutex
	seen map[*Run]string // "started", "ended", "failed" (ended) or "gone"
	// attempt holds the start of the attempt of each run last reported.
	attempt map[*Run]time.Time
}

// NewTracker returns a Tracker of runs started at or after since, which
// reports nowhere; [Sweep] makes its own for a [Remote].
func NewTracker(since time.Time) *Tracker {
	return &Tracker{since: since}
}

// Poll reads the manifest of each run and reports the runs that started
// or ended since the last call. It returns the number of runs of runs that
// have ended: their manifest says ok or failed and was written by an
// attempt that started at or after the tracker's start.
func (t *Tracker) Poll(runs []*Run) (ended int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.seen == nil {
		t.seen, t.attempt = map[*Run]string{}, map[*Run]time.Time{}
	}
	for _, r := range runs {
		if t.seen[r] == "ended" {
			ended++
			continue
		}
		m, err := results.ReadManifest(r.Dir)
		if err != nil || m.Started.Before(t.since) {
			if t.seen[r] == "failed" {
				ended++
			}
			continue
		}
		switch {
		case t.seen[r] == "failed" && m.Started.After(t.attempt[r]):
			// The task executes the failed run again (--retries).
			if t.prog != nil {
				t.prog.again(r)
			}
		case t.seen[r] == "failed":
			ended++
			continue
		case t.seen[r] == "" && t.prog != nil:
			t.prog.started(r)
		}
		t.seen[r], t.attempt[r] = "started", m.Started
		if m.Status == results.Running {
			continue
		}
		// A manifest that says ok but does not verify is damaged: it
		// counts as failed, as the sweep's record will.
		if m.Status == results.OK {
			if _, err := results.Check(r.Dir); err != nil {
				m.Status, m.Error = results.Failed, err.Error()
			}
		}
		t.seen[r] = "ended"
		if m.Status != results.OK {
			t.seen[r] = "failed" // until a retry starts
		}
		ended++
		if t.prog != nil {
			t.prog.finished(r, m)
		}
	}
	return ended
}

// Gone reports that r left the queue without ending (its task was killed
// or cancelled): it no longer counts as running.
func (t *Tracker) Gone(r *Run) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.seen[r] == "started" {
		t.seen[r] = "gone"
		if t.prog != nil {
			t.prog.finished(r, nil)
		}
	}
}
