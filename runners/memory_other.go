// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build !linux

package runners

import "runtime"

// peakMemory returns the memory the Go runtime obtained from the system,
// an upper bound of the heap's peak (no portable peak RSS outside Linux).
func peakMemory() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Sys
}
