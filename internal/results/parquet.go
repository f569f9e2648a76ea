// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package results

import (
	"fmt"
	"io"
	"os"

	"github.com/parquet-go/parquet-go"

	"github.com/repro-dp/repro/internal/parquetcheck"
)

// A Metric is one row of metrics.parquet: the value of a named metric on a
// split at a step. Final metrics use the last step.
type Metric struct {
	Step  int64   `parquet:"step"`
	Split string  `parquet:"split"` // train, holdout, test, ...
	Name  string  `parquet:"name"`  // loss, acc, img, ...
	Value float64 `parquet:"value"`
}

// A Score is one row of scores.parquet: an attack's score for one example.
// Higher scores mean "more likely a member".
type Score struct {
	Attack    string  `parquet:"attack"`
	ExampleID int64   `parquet:"example_id"`
	Member    bool    `parquet:"member"`
	Score     float64 `parquet:"score"`
}

// A Prediction is one row of predictions.parquet: a trained model's
// output for one evaluation example, as lm-eval-harness logs its samples,
// so that two runs can be compared example by example (McNemar's test)
// and intervals resampled over examples.
type Prediction struct {
	Split     string `parquet:"split"`      // test, ...
	ExampleID string `parquet:"example_id"` // datasets.Example.ID, unique within the split
	// Prediction is the model's answer as text: the greedy decoding of
	// a generative model, the class index of a classifier.
	Prediction string `parquet:"prediction"`
	// Correct reports whether the prediction is the reference answer
	// (exact match), the example's share of the run's accuracy.
	Correct bool `parquet:"correct"`
	// Loss is the mean cross-entropy (nats per token) of the reference
	// answer under the model (teacher forcing), or of the label for a
	// classifier.
	Loss float64 `parquet:"loss"`
}

// writerOptions are the options of every parquet file repro writes.
func writerOptions(extra ...parquet.WriterOption) []parquet.WriterOption {
	return append([]parquet.WriterOption{
		parquet.Compression(&parquet.Snappy),
		parquet.CreatedBy("repro", "", ""),
	}, extra...)
}

// WriteMetrics writes rows to the file name atomically.
func WriteMetrics(name string, rows []Metric) error {
	return writeParquet(name, rows)
}

// ReadMetrics reads the rows of a metrics.parquet file.
func ReadMetrics(name string) ([]Metric, error) { return readParquet[Metric](name) }

// WriteScores writes rows to the file name atomically.
func WriteScores(name string, rows []Score) error {
	return writeParquet(name, rows)
}

// ReadScores reads the rows of a scores.parquet file.
func ReadScores(name string) ([]Score, error) { return readParquet[Score](name) }

// WritePredictions writes rows to the file name atomically.
func WritePredictions(name string, rows []Prediction) error {
	return writeParquet(name, rows)
}

// ReadPredictions reads the rows of a predictions.parquet file.
func ReadPredictions(name string) ([]Prediction, error) { return readParquet[Prediction](name) }

func writeParquet[T any](name string, rows []T) error {
	return Write(name, func(w io.Writer) error {
		return parquet.Write(w, rows, writerOptions()...)
	})
}

func readParquet[T any](name string) (rows []T, err error) {
	defer func() {
		// parquet-go can panic on a corrupt file; that is bad input,
		// not a bug of ours.
		if r := recover(); r != nil {
			rows, err = nil, fmt.Errorf("results: %s: corrupt parquet file: %v", name, r)
		}
	}()
	// Lengths in the file are checked before the decoder allocates by them.
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	if _, err := parquetcheck.Open(f, fi.Size(), nil); err != nil {
		return nil, fmt.Errorf("results: %s: %w", name, err)
	}
	rows, err = parquet.Read[T](f, fi.Size())
	if err != nil {
		return nil, fmt.Errorf("results: %s: %w", name, err)
	}
	return rows, nil
}
