// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Kind is the type of the values of a column.
type Kind int

const (
	// String columns hold text; a missing value is "".
	String Kind = iota + 1
	// Float columns hold float64 values; a missing value is NaN.
	Float
)

// String returns "string" or "float".
func (k Kind) String() string {
	switch k {
	case String:
		return "string"
	case Float:
		return "float"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Column is one named column of a run table. A String column uses Strings, a
// Float column uses Floats; the other slice is nil.
type Column struct {
	Name    string
	Kind    Kind
	Strings []string
	Floats  []float64
}

// Format returns the value of row i as text: strings as they are, floats as
// the shortest decimal that reads back exactly, +Inf as "∞", -Inf as "-∞", and
// a missing value (NaN or "") as "—".
func (c *Column) Format(i int) string {
	if c.Kind == String {
		if c.Strings[i] == "" {
			return missing
		}
		return c.Strings[i]
	}
	return formatKeyFloat(c.Floats[i])
}

// missing is how a missing value or cell is printed in text and Markdown.
const missing = "—"

func formatKeyFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return missing
	case math.IsInf(v, 1):
		return "∞"
	case math.IsInf(v, -1):
		return "-∞"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Runs is a run table: one row per run and flat named columns of strings or
// float64 values. It is read-only once built; methods may be called
// concurrently.
type Runs struct {
	cols    []Column
	index   map[string]int
	n       int
	skipped []string
}

// Len returns the number of runs (rows).
func (r *Runs) Len() int { return r.n }

// Columns returns the names of the columns in table order.
func (r *Runs) Columns() []string {
	names := make([]string, len(r.cols))
	for i, c := range r.cols {
		names[i] = c.Name
	}
	return names
}

// Column returns the column named name. The returned column is shared with r
// and must not be modified.
func (r *Runs) Column(name string) (*Column, bool) {
	i, ok := r.index[name]
	if !ok {
		return nil, false
	}
	return &r.cols[i], true
}

// Row is one run given as a map from column name to value, the input of
// [NewRuns]. A value is a string, a bool (stored as "true" or "false"), a
// float64, float32 or any Go integer (stored as float64), or nil for missing.
type Row map[string]any

// NewRuns returns the run table holding rows, with columns sorted by name. A
// column's kind is String if its values are strings or bools and Float if they
// are numbers; a column that mixes the two is an error. A column absent from a
// row, or nil in it, is missing there (NaN or ""). A column whose values are all
// nil is a Float column of NaN.
func NewRuns(rows []Row) (*Runs, error) {
	kinds := make(map[string]Kind)
	for i, row := range rows {
		for name, v := range row {
			k, err := kindOf(v)
			if err != nil {
				return nil, fmt.Errorf("reports: row %d, column %q: %w", i, name, err)
			}
			old, seen := kinds[name]
			switch {
			case !seen || old == 0:
				kinds[name] = k
			case k != 0 && k != old:
				return nil, fmt.Errorf("reports: row %d, column %q: %s value in a %s column", i, name, k, old)
			}
		}
	}
	names := make([]string, 0, len(kinds))
	for name := range kinds {
		names = append(names, name)
	}
	slices.Sort(names)

	r := &Runs{index: make(map[string]int, len(names)), n: len(rows)}
	for _, name := range names {
		c := Column{Name: name, Kind: kinds[name]}
		if c.Kind == 0 {
			c.Kind = Float
		}
		if c.Kind == String {
			c.Strings = make([]string, len(rows))
		} else {
			c.Floats = make([]float64, len(rows))
		}
		for i, row := range rows {
			v := row[name]
			if c.Kind == String {
				c.Strings[i] = stringOf(v)
			} else {
				c.Floats[i] = floatOf(v)
			}
		}
		r.index[name] = len(r.cols)
		r.cols = append(r.cols, c)
	}
	return r, nil
}

// kindOf returns the column kind of v, or 0 for nil.
func kindOf(v any) (Kind, error) {
	switch v.(type) {
	case nil:
		return 0, nil
	case string, bool:
		return String, nil
	case float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return Float, nil
	}
	return 0, fmt.Errorf("unsupported value type %T", v)
}

func stringOf(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	}
	return ""
}

func floatOf(v any) float64 {
	switch v := v.(type) {
	case float64:
		return v
	case float32:
		return float64(v)
	case int:
		return float64(v)
	case int8:
		return float64(v)
	case int16:
		return float64(v)
	case int32:
		return float64(v)
	case int64:
		return float64(v)
	case uint:
		return float64(v)
	case uint8:
		return float64(v)
	case uint16:
		return float64(v)
	case uint32:
		return float64(v)
	case uint64:
		return float64(v)
	}
	return math.NaN()
}

// addColumn appends c to r; it is used by readers that build a table column by
// column. c must have r.n values and a name not yet in r.
func (r *Runs) addColumn(c Column) {
	if r.index == nil {
		r.index = make(map[string]int)
	}
	r.index[c.Name] = len(r.cols)
	r.cols = append(r.cols, c)
}
