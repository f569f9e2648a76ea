// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package runners

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/repro-dp/repro/internal/results"
)

// progress reports a sweep's progress on w: on a terminal a single line
// rewritten in place every second, otherwise a line every interval and one
// per failed run.
type progress struct {
	w        io.Writer
	tty      bool
	exp      string
	now      func() time.Time
	start    time.Time
	mu       sync.Mutex
	total    int // pending runs
	cached   int
	running  int
	done     int
	failed   int
	lastLen  int
	notes    map[*Run]string // see Note
	eta      *eta            // nil: the throughput estimate
	stopTick chan struct{}
	wg       sync.WaitGroup
}

// newProgress starts the report of a sweep of total pending runs, whose
// ETA e predicts (nil: the throughput of the runs so far, which tells
// nothing before one has finished). The prediction is made before the
// first line, which then carries what a prior alone tells.
func newProgress(w io.Writer, interval time.Duration, exp string, total, cached int, now func() time.Time, e *eta) *progress {
	p := &progress{w: w, exp: exp, total: total, cached: cached, now: now, start: now(), eta: e}
	if w == nil || total == 0 {
		return p // nothing to run: only the summary
	}
	p.tty = isTerminal(w)
	if interval <= 0 {
		interval = 10 * time.Second
	}
	if p.tty {
		interval = time.Second
	}
	p.stopTick = make(chan struct{})
	p.wg.Go(func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				p.mu.Lock()
				p.print()
				p.mu.Unlock()
			case <-p.stopTick:
				return
			}
		}
	})
	p.mu.Lock()
	p.print()
	p.mu.Unlock()
	return p
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// started counts run r as running.
func (p *progress) started(r *Run) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running++
	if p.eta != nil {
		p.eta.start(r, p.now())
	}
	if p.tty {
		p.print()
	}
}

// skipped counts pending run r, which turned out not to need running here.
func (p *progress) skipped(r *Run) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if p.eta != nil {
		p.eta.skip(r)
	}
	if p.tty {
		p.print()
	}
}

// note sets the note of run r ("" clears it); see Note.
func (p *progress) note(r *Run, note string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.notes == nil {
		p.notes = map[*Run]string{}
	}
	if note == "" {
		delete(p.notes, r)
	} else {
		p.notes[r] = note
	}
	if p.tty {
		p.print()
	}
}

// finished counts a run that ended with manifest m; nil m means that an
// interrupt stopped it, which counts as not run.
func (p *progress) finished(r *Run, m *results.Manifest) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running--
	delete(p.notes, r)
	if p.eta != nil {
		p.eta.finish(r, m)
	}
	if m == nil {
		if p.tty {
			p.print()
		}
		return
	}
	p.done++
	if m.Status != results.OK {
		p.failed++
		if p.w != nil {
			p.clear()
			fmt.Fprintf(p.w, "%s: run %s (%s) failed: %s\n", p.exp, r.ID, r.Config.String(), firstLine(m.Error))
		}
	}
	if p.tty {
		p.print()
	}
}

// again uncounts failed run r, which is executed again (a remote task's
// retry): it counts as running once more.
func (p *progress) again(r *Run) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done--
	p.failed--
	p.running++
	if p.eta != nil {
		p.eta.start(r, p.now())
	}
	if p.tty {
		p.print()
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// line returns the progress line. p.mu is held.
func (p *progress) line() string {
	elapsed := p.now().Sub(p.start)
	eta := "?"
	switch {
	case p.eta != nil:
		// An estimate that is not yet this invocation's own (a prior's)
		// says so: "ETA ~12m0s (from checked-in timings)".
		// So does one that costs runs from their nearest recipe:
		// "ETA ~12m0s (from checked-in timings; 6 runs costed as their
		// nearest recipe)".
		if left, from, near, ok := p.eta.estimateNear(p.now()); ok {
			eta = roundDuration(left).String()
			if m := from.mark(); m != "" && p.done < p.total {
				if near > 0 {
					runs, their := "runs", "their"
					if near == 1 {
						runs, their = "run", "its"
					}
					m = fmt.Sprintf("%s; %d %s costed as %s nearest recipe)", strings.TrimSuffix(m, ")"), near, runs, their)
				}
				eta = "~" + eta + m
			}
		}
	case p.done > 0:
		// Throughput so far, which accounts for the workers.
		left := time.Duration(float64(elapsed) / float64(p.done) * float64(p.total-p.done))
		eta = roundDuration(left).String()
	}
	if p.done == p.total {
		eta = "0s"
	}
	eta = "ETA " + eta
	// A note (a base model pretraining) replaces the ETA, which the
	// throughput of the runs so far cannot predict then.
	if len(p.notes) > 0 {
		notes := slices.Sorted(maps.Values(p.notes))
		eta = notes[0]
		if len(notes) > 1 {
			eta += fmt.Sprintf(" (+%d more)", len(notes)-1)
		}
	}
	return fmt.Sprintf("%s: %d/%d runs done (%d failed, %d running, %d cached), %s elapsed, %s",
		p.exp, p.done, p.total, p.failed, p.running, p.cached, roundDuration(elapsed), eta)
}

func roundDuration(d time.Duration) time.Duration {
	if d < time.Minute {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

// print writes the progress line. p.mu is held.
func (p *progress) print() {
	if p.w == nil {
		return
	}
	l := p.line()
	if p.tty {
		fmt.Fprintf(p.w, "\r%s\x1b[K", l)
		p.lastLen = len(l)
		return
	}
	fmt.Fprintln(p.w, l)
}

// clear erases the terminal line before a plain line. p.mu is held.
func (p *progress) clear() {
	if p.tty && p.lastLen > 0 {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.lastLen = 0
	}
}

func (p *progress) summary(s *Summary) {
	p.close() // no progress line after the summary
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.w == nil {
		return
	}
	p.clear()
	reused := ""
	if s.Reused > 0 {
		reused = fmt.Sprintf(" (%d from other experiments)", s.Reused)
	}
	busy := ""
	if s.Adopted > 0 {
		busy = fmt.Sprintf(", %d finished by another process", s.Adopted)
	}
	if s.Busy > 0 {
		busy += fmt.Sprintf(", %d still run by another process", s.Busy)
	}
	fmt.Fprintf(p.w, "%s: %d runs: %d ok, %d failed, %d not run, %d cached%s%s; %s\n",
		s.Experiment, s.Selected, s.OK, s.Failed, s.NotStarted, s.Cached, reused, busy, roundDuration(s.Elapsed))
}

func (p *progress) close() {
	if p.stopTick != nil {
		close(p.stopTick)
		p.wg.Wait()
		p.stopTick = nil
	}
}
