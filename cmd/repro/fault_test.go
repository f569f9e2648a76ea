// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestRunHugeSeeds checks that a huge --seeds is refused before anything is
// built, and that a large dry run (table1 with 1000 seeds: the pipeline's
// inputs, not a stub) costs a small record per run: it allocates well
// under what building one dataset per seed took (4.2 GB, out of memory).
func TestRunHugeSeeds(t *testing.T) {
	if testing.Short() {
		t.Skip("plans 26000 runs")
	}
	dir := t.TempDir()
	_, _, err := run(t, "run", "table1", "--dry-run", "--scale", "smoke", "--seeds", "100000000", "--results", dir)
	if err == nil || !strings.Contains(err.Error(), "more than the 100000 runs") {
		t.Errorf("repro run --seeds 100000000: %v, want a refusal", err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out, _, err := run(t, "run", "table1", "--dry-run", "--scale", "smoke", "--seeds", "1000", "--results", dir)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(out, "\n")
	var n int
	if _, err := fmt.Sscanf(first, "table1: %d runs", &n); err != nil || n < 1000 {
		t.Fatalf("dry run's first line %q, want table1: N runs with N ≥ 1000", first)
	}
	// A run's record (config, params, id, folder, its line of output)
	// takes a few KiB to make; a smoke dataset takes megabytes.
	const perRun = 32 << 10
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(n)*perRun {
		t.Errorf("a dry run of %d runs allocated %d MiB, want at most %d KiB a run", n, alloc>>20, perRun>>10)
	}
}
