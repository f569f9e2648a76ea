// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/repro-dp/repro/internal/parquetcheck"
)

// ReadRuns reads the run table in the parquet file at path, such as an
// experiment's runs.parquet. It reads any parquet file generically: every
// top-level, non-repeated leaf column becomes a column of the table, in file
// order. Floating-point and integer columns become Float columns (a null is
// NaN); strings, byte arrays and booleans become String columns (a null is "").
// Nested and repeated columns are skipped and listed by [Runs.Skipped].
func ReadRuns(path string) (*Runs, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	r, err := DecodeRuns(f, fi.Size())
	if err != nil {
		return nil, fmt.Errorf("%w (reading %s)", err, path)
	}
	return r, nil
}

// DecodeRuns reads a run table from the parquet data of the given size in r;
// see [ReadRuns]. Malformed input is an error, never a panic, and never an
// allocation larger than the file's structure can justify: every length in
// the footer and the page headers is checked first (package
// internal/parquetcheck), and a run table holds at most 1<<24 rows.
func DecodeRuns(r io.ReaderAt, size int64) (runs *Runs, err error) {
	// The parquet decoder may panic on corrupt input; this is the boundary
	// where that becomes an error.
	defer func() {
		if e := recover(); e != nil {
			runs, err = nil, fmt.Errorf("reports: malformed parquet: %v", e)
		}
	}()
	// Lengths in the file are checked before the decoder allocates by them.
	f, err := parquetcheck.Open(r, size, nil)
	if err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	n := f.NumRows()
	if n < 0 || n > math.MaxInt32 {
		return nil, fmt.Errorf("reports: malformed parquet: %d rows", n)
	}

	cols, targets, skipped, err := schemaColumns(f.Schema(), n)
	if err != nil {
		return nil, err
	}
	if err := readRows(f, cols, targets); err != nil {
		return nil, err
	}
	runs = &Runs{skipped: skipped}
	for _, c := range cols {
		l := len(c.Floats)
		if c.Kind == String {
			l = len(c.Strings)
		}
		if int64(l) != n {
			return nil, fmt.Errorf("reports: malformed parquet: column %q has %d values, want %d", c.Name, l, n)
		}
		runs.addColumn(c)
	}
	runs.n = int(n)
	return runs, nil
}

// target is where the values of one parquet column go: a column of the run
// table and a conversion.
type target struct {
	col  int // index into the run table's columns
	conv func(parquet.Value) (string, float64)
}

// schemaColumns returns the run-table columns of schema (with room for up
// to n rows, trusted only so far), the target of each parquet column index,
// and the names of the columns skipped.
func schemaColumns(schema *parquet.Schema, n int64) (cols []Column, targets map[int]target, skipped []string, err error) {
	targets = make(map[int]target)
	seen := make(map[string]bool)
	for _, path := range schema.Columns() {
		leaf, ok := schema.Lookup(path...)
		if !ok {
			return nil, nil, nil, fmt.Errorf("reports: malformed parquet: no column %q", path)
		}
		name := path[0]
		if len(path) != 1 || leaf.MaxRepetitionLevel > 0 {
			if !seen[name] {
				skipped = append(skipped, name)
				seen[name] = true
			}
			continue
		}
		kind, conv := converter(leaf.Node.Type())
		if kind == 0 {
			skipped = append(skipped, name)
			seen[name] = true
			continue
		}
		if seen[name] {
			return nil, nil, nil, fmt.Errorf("reports: malformed parquet: duplicate column %q", name)
		}
		seen[name] = true
		c := Column{Name: name, Kind: kind}
		// The row count comes from the file: trust it only so far.
		if capacity := int(min(n, 1<<16)); kind == String {
			c.Strings = make([]string, 0, capacity)
		} else {
			c.Floats = make([]float64, 0, capacity)
		}
		targets[leaf.ColumnIndex] = target{col: len(cols), conv: conv}
		cols = append(cols, c)
	}
	return cols, targets, skipped, nil
}

// readRows appends the values of every row of f to cols, missing values as
// "" or NaN.
func readRows(f *parquet.File, cols []Column, targets map[int]target) error {
	buf := make([]parquet.Row, 64)
	for _, g := range f.RowGroups() {
		rows := g.Rows()
		for {
			k, err := rows.ReadRows(buf)
			for _, row := range buf[:k] {
				appendRow(cols, targets, row)
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				rows.Close()
				return fmt.Errorf("reports: %w", err)
			}
			if k == 0 {
				rows.Close()
				return errors.New("reports: malformed parquet: no progress reading rows")
			}
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("reports: %w", err)
		}
	}
	return nil
}

// appendRow appends one parquet row to cols.
func appendRow(cols []Column, targets map[int]target, row parquet.Row) {
	for i := range cols {
		if cols[i].Kind == String {
			cols[i].Strings = append(cols[i].Strings, "")
		} else {
			cols[i].Floats = append(cols[i].Floats, math.NaN())
		}
	}
	for _, v := range row {
		t, ok := targets[v.Column()]
		if !ok || v.IsNull() {
			continue
		}
		c := &cols[t.col]
		s, x := t.conv(v)
		if c.Kind == String {
			c.Strings[len(c.Strings)-1] = s
		} else {
			c.Floats[len(c.Floats)-1] = x
		}
	}
}

// Skipped returns the names of the parquet columns that [ReadRuns] skipped
// because they are nested, repeated or of a type it does not read.
func (r *Runs) Skipped() []string { return r.skipped }

// converter returns the column kind for values of parquet type t and a
// function converting a non-null value, or kind 0 for types that are not read.
func converter(t parquet.Type) (Kind, func(parquet.Value) (string, float64)) {
	unsigned := false
	if lt := t.LogicalType(); lt != nil {
		if it, ok := lt.Value.(*format.IntType); ok {
			unsigned = !it.IsSigned
		}
	}
	switch t.Kind() {
	case parquet.Boolean:
		return String, func(v parquet.Value) (string, float64) { return strconv.FormatBool(v.Boolean()), 0 }
	case parquet.Int32:
		if unsigned {
			return Float, func(v parquet.Value) (string, float64) { return "", float64(v.Uint32()) }
		}
		return Float, func(v parquet.Value) (string, float64) { return "", float64(v.Int32()) }
	case parquet.Int64:
		if unsigned {
			return Float, func(v parquet.Value) (string, float64) { return "", float64(v.Uint64()) }
		}
		return Float, func(v parquet.Value) (string, float64) { return "", float64(v.Int64()) }
	case parquet.Float:
		return Float, func(v parquet.Value) (string, float64) { return "", float64(v.Float()) }
	case parquet.Double:
		return Float, func(v parquet.Value) (string, float64) { return "", v.Double() }
	case parquet.ByteArray, parquet.FixedLenByteArray:
		return String, func(v parquet.Value) (string, float64) { return string(bytes.Clone(v.ByteArray())), 0 }
	}
	return 0, nil
}
