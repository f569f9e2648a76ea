// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package optim

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Step updates every element independently of the others, with coefficients
// fixed before the update starts, so the elements can be split among
// goroutines without changing a single bit of the result: the output does
// not depend on GOMAXPROCS.

const (
	// chunkLen is the number of elements one goroutine updates at a time.
	chunkLen = 1 << 14
	// minParallel is the number of elements below which a step runs on the
	// calling goroutine only.
	minParallel = 1 << 16
)

// span is a range [lo, hi) of the elements of job j.
type span struct{ j, lo, hi int }

// scheduler splits the jobs of one step into spans and runs them.
type scheduler struct {
	// workers is the number of goroutines; 0 means GOMAXPROCS.
	workers int
	spans   []span
	total   int
}

// add queues the n elements of job j.
func (s *scheduler) add(j, n int) {
	for lo := 0; lo < n; lo += chunkLen {
		s.spans = append(s.spans, span{j, lo, min(lo+chunkLen, n)})
	}
	s.total += n
}

// run calls f on every queued span, from several goroutines when the step is
// large enough, and empties the queue. The loop is the package's own, not
// internal/parallel.For, because nn and its sub-packages import nothing of
// repro.
func (s *scheduler) run(f func(sp span)) {
	defer func() { s.spans, s.total = s.spans[:0], 0 }()
	w := s.workers
	if w == 0 {
		w = runtime.GOMAXPROCS(0)
	}
	w = min(w, len(s.spans))
	if w <= 1 || s.total < minParallel {
		for _, sp := range s.spans {
			f(sp)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1) - 1)
				if k >= len(s.spans) {
					return
				}
				f(s.spans[k])
			}
		}()
	}
	wg.Wait()
}
