// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package results provides the on-disk format of repro's results: the run
// manifests and the parquet files that runners write and reports read.
//
// # Layout
//
//	results/<experiment>/runs/<run-id>/manifest.json   one run: config, status, provenance, privacy
//	results/<experiment>/runs/<run-id>/metrics.parquet  long: step, split, name, value
//	results/<experiment>/runs/<run-id>/scores.parquet   per-example attack scores
//	results/<experiment>/runs/<run-id>/predictions.parquet  per-example test outputs:
//	                                                    split, example_id, prediction, correct, loss
//	results/<experiment>/runs.parquet                   one row per run, flat columns
//
// A run is finished iff its manifest says status "ok"; the manifest is
// written last, so a run killed half way is never taken for a finished one.
// Every file is written atomically ([Write]): a temporary file in the same
// folder, fsync, rename, fsync of the folder. A reader sees the old file or
// the new one, never half of one.
//
// The parquet files use plain types (INT64, DOUBLE, BOOLEAN, UTF-8 byte
// arrays), no nesting and Snappy compression, so DuckDB, pandas and polars
// read them directly; ε = ∞ is stored as the IEEE +Inf double.
package results
