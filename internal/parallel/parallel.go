// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package parallel provides the one parallel loop of repro: For runs an
// index loop on a bounded number of goroutines. Each call writes only its
// own result slot, so results never depend on the number of goroutines.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// For calls f(i) for every i in [0, n) on up to workers goroutines (0 or
// less means GOMAXPROCS), handing out indices in increasing order, and
// returns when every call has returned. It returns the error of the
// lowest index whose call failed, or nil. Calls after a failure still run,
// so that f sees every index (callers that want to stop early check a
// context in f).
func For(n, workers int, f func(i int) error) error {
	if n <= 0 {
		return nil
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, n)
	errs := make([]error, n)
	if workers == 1 {
		for i := range n {
			errs[i] = f(i)
		}
	} else {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for {
					i := int(next.Add(1) - 1)
					if i >= n {
						return
					}
					errs[i] = f(i)
				}
			})
		}
		wg.Wait()
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
