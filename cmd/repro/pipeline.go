// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/reports/specout"
	// The run lifecycle: importing it registers the executor of every
	// method (base → fine-tune → evaluation → attacks → record) and the
	// runs' inputs (data fingerprint, base identity) with the runners.
	_ "github.com/repro-dp/repro/runners/pipeline"
)

// writeOutputs writes the tables and plots of s after its sweep, if the
// sweep wrote a run table, and prints the paths to w and the warnings to
// wErr.
//
// With partial set (the runs were a --only selection), a table or plot
// that cannot be built from the runs there are is a warning, not an error:
// the runs themselves succeeded.
func writeOutputs(w, wErr io.Writer, root string, s *experiments.Spec, partial bool) error {
	if _, err := os.Stat(filepath.Join(root, s.Name, results.RunsFile)); err != nil {
		return nil
	}
	paths, warnings, err := specout.Write(root, s)
	for _, p := range paths {
		fmt.Fprintf(w, "wrote %s\n", p)
	}
	for _, warn := range warnings {
		fmt.Fprintf(wErr, "%s: warning: %s\n", s.Name, warn)
	}
	if err != nil && partial {
		fmt.Fprintf(wErr, "%s: warning: %v (the runs are a --only selection; run without --only, or repro table, for every table and plot)\n", s.Name, err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("run: %s: %w", s.Name, err)
	}
	return nil
}
