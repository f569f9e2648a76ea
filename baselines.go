// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package repro

import (
	"embed"
	"io/fs"
)

// baselines holds the run tables checked in under results/baselines.
//
//go:embed results/baselines/*.parquet
var baselines embed.FS

// Baselines returns the run tables checked in under results/baselines
// (EXP-SCALE.parquet, one row per run) as the binary was built with them.
// The runner's ETA reads their recorded seconds when no run table under
// the results folder tells how long a run takes (a fresh --results
// folder, or a scale with no table of its own), counted at today's load
// where a row records the load it ran under (its timing columns, which
// add about 2% to a table).
func Baselines() fs.FS {
	sub, err := fs.Sub(baselines, "results/baselines")
	if err != nil {
		// A constant, valid path into an in-memory FS.
		panic("repro: " + err.Error())
	}
	return sub
}
