// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"reflect"
	"regexp"
	"slices"

	"github.com/parquet-go/parquet-go"
)

// A Run is one row of runs.parquet. The file has the fixed columns below,
// in this order, then the timing columns (load_start, load_end,
// gomaxprocs, jobs: see [TimingColumns]), then one column per
// hyperparameter (Params, sorted by name), then one DOUBLE column per
// result (Results, sorted by name). A value that a run does not have is
// NULL in the file.
type Run struct {
	RunID      string // run_id
	Experiment string // experiment
	Status     Status // status
	Error      string // error ("" unless failed)
	Method     string // method
	Task       string // task
	Scale      string // scale
	Seed       int64  // seed
	// EpsilonTarget (epsilon_target) is the configured ε, +Inf for none.
	EpsilonTarget float64
	// Epsilon (epsilon), Sigma (sigma) and SampleRate (sample_rate) come
	// from the privacy record; NaN (NULL in the file) when the run has
	// none.
	Epsilon    float64
	Delta      float64 // delta
	Sigma      float64
	SampleRate float64
	Steps      int64   // steps (the privacy record's, else the manifest's)
	Seconds    float64 // seconds: the run's wall time
	// LoadStart (load_start) and LoadEnd (load_end) are the machine's
	// 1-minute load average when the run started and ended (the
	// manifest's), NaN (NULL) when unknown; GOMAXPROCS (gomaxprocs) and
	// Jobs (jobs) are the process's GOMAXPROCS and the number of runs it
	// executed at once, 0 (NULL) when unknown. They say under what load
	// Seconds was measured. A load says nothing without GOMAXPROCS (a
	// zero Run's 0 is no measurement); tables written before they were
	// recorded read as unknown.
	LoadStart, LoadEnd float64
	GOMAXPROCS, Jobs   int64
	// Params holds the hyperparameters and sweep values of the config
	// (int64, float64, string or bool), one column each: INT64 if every
	// run's value is an integer, DOUBLE if every value is a number,
	// BOOLEAN if every value is a boolean, and STRING otherwise.
	Params map[string]any
	// Results holds the run's results, one DOUBLE column each.
	Results map[string]float64
}

// RunOf returns the runs.parquet row of the run m describes.
func RunOf(m *Manifest) Run {
	r := Run{
		RunID:         m.RunID,
		Experiment:    m.Experiment,
		Status:        m.Status,
		Error:         m.Error,
		Method:        m.Config.Method,
		Task:          m.Config.Task,
		Scale:         m.Config.Scale,
		Seed:          m.Config.Seed,
		EpsilonTarget: float64(m.Config.Epsilon),
		Epsilon:       math.NaN(),
		Delta:         m.Config.Delta,
		Sigma:         math.NaN(),
		SampleRate:    math.NaN(),
		Steps:         m.Steps,
		Seconds:       m.Seconds,
		LoadStart:     math.NaN(),
		LoadEnd:       math.NaN(),
		GOMAXPROCS:    int64(m.Provenance.GOMAXPROCS),
		Jobs:          int64(m.Provenance.Jobs),
		Params:        maps.Clone(m.Config.Params),
		Results:       make(map[string]float64, len(m.Results)),
	}
	if m.LoadStart != nil {
		r.LoadStart = *m.LoadStart
	}
	if m.LoadEnd != nil {
		r.LoadEnd = *m.LoadEnd
	}
	if p := m.Privacy; p != nil {
		r.Epsilon, r.Sigma, r.SampleRate = float64(p.Epsilon), p.Sigma, p.SampleRate
		if p.Steps > 0 {
			r.Steps = p.Steps
		}
	}
	for k, v := range m.Results {
		r.Results[k] = float64(v)
	}
	return r
}

// fixed are the fixed columns, in file order.
var fixed = []struct {
	name string
	typ  reflect.Type
	get  func(*Run) any // nil for NULL
}{
	{"run_id", typeString, func(r *Run) any { return r.RunID }},
	{"experiment", typeString, func(r *Run) any { return r.Experiment }},
	{"status", typeString, func(r *Run) any { return string(r.Status) }},
	{"error", typeString, func(r *Run) any { return r.Error }},
	{"method", typeString, func(r *Run) any { return r.Method }},
	{"task", typeString, func(r *Run) any { return r.Task }},
	{"scale", typeString, func(r *Run) any { return r.Scale }},
	{"seed", typeInt, func(r *Run) any { return r.Seed }},
	{"epsilon_target", typeFloat, func(r *Run) any { return r.EpsilonTarget }},
	{"epsilon", typeFloat, func(r *Run) any { return nanNull(r.Epsilon) }},
	{"delta", typeFloat, func(r *Run) any { return r.Delta }},
	{"sigma", typeFloat, func(r *Run) any { return nanNull(r.Sigma) }},
	{"sample_rate", typeFloat, func(r *Run) any { return nanNull(r.SampleRate) }},
	{"steps", typeInt, func(r *Run) any { return r.Steps }},
	{"seconds", typeFloat, func(r *Run) any { return r.Seconds }},
}

// timing are the timing columns, in file order, after the fixed ones:
// what a run's wall time was measured under. A table written before they
// were recorded has none of them.
var timing = []column{
	{"load_start", typeFloat, func(r *Run) any { return nanNull(r.LoadStart) }},
	{"load_end", typeFloat, func(r *Run) any { return nanNull(r.LoadEnd) }},
	{"gomaxprocs", typeInt, func(r *Run) any { return zeroNull(r.GOMAXPROCS) }},
	{"jobs", typeInt, func(r *Run) any { return zeroNull(r.Jobs) }},
}

// TimingColumns returns the names of the timing columns of runs.parquet,
// in file order: load_start, load_end, gomaxprocs and jobs (see [Run]).
// They are bookkeeping, like steps and seconds, not results. A table
// lacks them when it was written before they were recorded, or when a
// param or result of its runs has one of their names.
func TimingColumns() []string {
	out := make([]string, len(timing))
	for i, c := range timing {
		out[i] = c.name
	}
	return out
}

var (
	typeString = reflect.TypeFor[string]()
	typeInt    = reflect.TypeFor[int64]()
	typeFloat  = reflect.TypeFor[float64]()
)

func nanNull(x float64) any {
	if math.IsNaN(x) {
		return nil
	}
	return x
}

func zeroNull(x int64) any {
	if x == 0 {
		return nil
	}
	return x
}

// Metadata keys of runs.parquet listing the param and result columns.
const (
	paramsKey  = "repro.params"
	resultsKey = "repro.results"
	// timingKey lists the timing columns, present when the file has
	// them.
	timingKey = "repro.timing"
)

var columnRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// WriteRuns writes rows to the file name atomically. Column names must
// match [a-z][a-z0-9_]*, and no name may be both a fixed column, a param
// and a result. The timing columns are left out when a param or result
// has one of their names: they are bookkeeping, the others are not.
func WriteRuns(name string, rows []Run) error {
	var cols []column
	seen := make(map[string]string)
	for _, f := range fixed {
		cols = append(cols, column{f.name, f.typ, f.get})
		seen[f.name] = "a fixed column"
	}
	paramTypes, err := paramColumnTypes(rows)
	if err != nil {
		return err
	}
	var timed []string
	if !timingClash(rows) {
		for _, c := range timing {
			cols = append(cols, c)
			seen[c.name] = "a timing column"
			timed = append(timed, c.name)
		}
	}
	params := slices.Sorted(maps.Keys(paramTypes))
	for _, k := range params {
		if what, dup := seen[k]; dup {
			return fmt.Errorf("results: param %s is also %s", k, what)
		}
		seen[k] = "a param"
		cols = append(cols, paramColumn(k, paramTypes[k]))
	}
	resultSet := make(map[string]bool)
	for _, r := range rows {
		for k := range r.Results {
			resultSet[k] = true
		}
	}
	resultNames := slices.Sorted(maps.Keys(resultSet))
	for _, k := range resultNames {
		if what, dup := seen[k]; dup {
			return fmt.Errorf("results: result %s is also %s", k, what)
		}
		seen[k] = "a result"
		cols = append(cols, column{k, typeFloat, func(r *Run) any {
			if v, ok := r.Results[k]; ok {
				return v
			}
			return nil
		}})
	}
	return writeColumns(name, rows, cols, timed, params, resultNames)
}

// timingClash reports whether a param or result of rows has the name of
// a timing column.
func timingClash(rows []Run) bool {
	for _, r := range rows {
		for _, c := range timing {
			_, p := r.Params[c.name]
			_, res := r.Results[c.name]
			if p || res {
				return true
			}
		}
	}
	return false
}

// A column is a column of runs.parquet: its name, its type and the value
// of a row (nil for NULL).
type column struct {
	name string
	typ  reflect.Type
	get  func(*Run) any
}

// paramColumnTypes returns the column type of each param of rows: the
// narrowest that holds every value.
func paramColumnTypes(rows []Run) (map[string]reflect.Type, error) {
	paramTypes := make(map[string]reflect.Type)
	for _, r := range rows {
		for k, v := range r.Params {
			t := reflect.TypeOf(v)
			switch v.(type) {
			case int64, float64, string, bool:
			default:
				return nil, fmt.Errorf("results: run %s: param %s has type %T", r.RunID, k, v)
			}
			switch prev, ok := paramTypes[k]; {
			case !ok || prev == t:
				paramTypes[k] = t
			case (prev == typeInt && t == typeFloat) || (prev == typeFloat && t == typeInt):
				paramTypes[k] = typeFloat
			default:
				paramTypes[k] = typeString
			}
		}
	}
	return paramTypes, nil
}

// paramColumn returns the column of param k, of type typ.
func paramColumn(k string, typ reflect.Type) column {
	return column{k, typ, func(r *Run) any {
		v, ok := r.Params[k]
		if !ok {
			return nil
		}
		switch {
		case typ == typeString:
			if s, ok := v.(string); ok {
				return s
			}
			return fmt.Sprint(v)
		case typ == typeFloat:
			if i, ok := v.(int64); ok {
				return float64(i)
			}
		}
		return v
	}}
}

// writeColumns writes rows as the columns cols to the file name, with the
// timing, param and result names in the file's metadata (no timing key
// when timed is empty).
func writeColumns(name string, rows []Run, cols []column, timed, params, resultNames []string) error {
	fields := make([]reflect.StructField, len(cols))
	for i, c := range cols {
		if !columnRE.MatchString(c.name) {
			return fmt.Errorf("results: column name %q must match [a-z][a-z0-9_]*", c.name)
		}
		fields[i] = reflect.StructField{
			Name: fmt.Sprintf("C%d", i),
			Type: reflect.PointerTo(c.typ),
			Tag:  reflect.StructTag(fmt.Sprintf(`parquet:"%s,optional"`, c.name)),
		}
	}
	rowType := reflect.StructOf(fields)
	schema := parquet.SchemaOf(reflect.New(rowType).Interface())
	pj, _ := json.Marshal(params)
	rj, _ := json.Marshal(resultNames)
	meta := []parquet.WriterOption{schema,
		parquet.KeyValueMetadata(paramsKey, string(pj)),
		parquet.KeyValueMetadata(resultsKey, string(rj)),
	}
	if len(timed) > 0 {
		tj, _ := json.Marshal(timed)
		meta = append(meta, parquet.KeyValueMetadata(timingKey, string(tj)))
	}
	return Write(name, func(w io.Writer) error {
		pw := parquet.NewWriter(w, writerOptions(meta...)...)
		for i := range rows {
			row := reflect.New(rowType).Elem()
			for j, c := range cols {
				v := c.get(&rows[i])
				if v == nil {
					continue
				}
				p := reflect.New(c.typ)
				p.Elem().Set(reflect.ValueOf(v))
				row.Field(j).Set(p)
			}
			if err := pw.Write(row.Addr().Interface()); err != nil {
				return err
			}
		}
		return pw.Close()
	})
}

// ReadRuns reads the rows of a runs.parquet file written by [WriteRuns].
func ReadRuns(name string) (rows []Run, err error) {
	defer func() {
		if r := recover(); r != nil {
			rows, err = nil, fmt.Errorf("results: %s: corrupt parquet file: %v", name, r)
		}
	}()
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	return ReadRunsAt(f, st.Size(), name)
}

// ReadRunsAt reads the rows of a runs.parquet file of size bytes from r
// (an embedded table, say); name names it in errors.
func ReadRunsAt(r io.ReaderAt, size int64, name string) (rows []Run, err error) {
	defer func() {
		if r := recover(); r != nil {
			rows, err = nil, fmt.Errorf("results: %s: corrupt parquet file: %v", name, r)
		}
	}()
	pf, err := parquet.OpenFile(r, size)
	if err != nil {
		return nil, fmt.Errorf("results: %s: %w", name, err)
	}
	var params, resultNames []string
	for key, dst := range map[string]*[]string{paramsKey: &params, resultsKey: &resultNames} {
		v, ok := pf.Lookup(key)
		if !ok {
			return nil, fmt.Errorf("results: %s: no %s metadata (not written by repro?)", name, key)
		}
		if err := json.Unmarshal([]byte(v), dst); err != nil {
			return nil, fmt.Errorf("results: %s: bad %s metadata: %w", name, key, err)
		}
	}
	// The timing columns follow the fixed ones where the metadata lists
	// them (tables written before they were recorded have none).
	var timed []string
	if v, ok := pf.Lookup(timingKey); ok {
		if err := json.Unmarshal([]byte(v), &timed); err != nil {
			return nil, fmt.Errorf("results: %s: bad %s metadata: %w", name, timingKey, err)
		}
		if !slices.Equal(timed, TimingColumns()) {
			return nil, fmt.Errorf("results: %s: timing columns %q, want %q", name, timed, TimingColumns())
		}
	}
	fields := pf.Schema().Fields()
	names := make([]string, len(fields))
	for i, fl := range fields {
		names[i] = fl.Name()
	}
	for i, f := range fixed {
		if i >= len(names) || names[i] != f.name {
			return nil, fmt.Errorf("results: %s: column %d is not %s", name, i, f.name)
		}
	}
	if want := slices.Concat(names[:len(fixed)], timed, params, resultNames); !slices.Equal(names, want) {
		return nil, fmt.Errorf("results: %s: columns %q do not match the metadata", name, names)
	}
	pr := parquet.NewReader(pf)
	defer pr.Close()
	buf := make([]parquet.Row, 64)
	for {
		n, err := pr.ReadRows(buf)
		for _, row := range buf[:n] {
			run, rerr := decodeRun(row, names, len(fixed)+len(timed), len(fixed)+len(timed)+len(params))
			if rerr != nil {
				return nil, fmt.Errorf("results: %s: row %d: %w", name, len(rows), rerr)
			}
			rows = append(rows, run)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("results: %s: %w", name, err)
		}
	}
	return rows, nil
}

// decodeRun decodes row, whose columns are names: the fixed and timing
// columns up to endFixed, the params up to endParams, then the results.
func decodeRun(row parquet.Row, names []string, endFixed, endParams int) (Run, error) {
	r := Run{Epsilon: math.NaN(), Sigma: math.NaN(), SampleRate: math.NaN(), LoadStart: math.NaN(), LoadEnd: math.NaN(),
		Params: map[string]any{}, Results: map[string]float64{}}
	for _, v := range row {
		c := v.Column()
		if c < 0 || c >= len(names) {
			return r, fmt.Errorf("column index %d out of range", c)
		}
		if v.IsNull() {
			continue
		}
		var x any
		switch v.Kind() {
		case parquet.ByteArray:
			x = string(v.ByteArray())
		case parquet.Int64:
			x = v.Int64()
		case parquet.Double:
			x = v.Double()
		case parquet.Boolean:
			x = v.Boolean()
		default:
			return r, fmt.Errorf("column %s has unexpected kind %v", names[c], v.Kind())
		}
		name := names[c]
		var ok bool
		switch {
		case c >= endParams:
			r.Results[name], ok = x.(float64)
		case c >= endFixed:
			r.Params[name], ok = x, true
		default:
			ok = setFixed(&r, name, x)
		}
		if !ok {
			return r, fmt.Errorf("column %s has type %T", name, x)
		}
	}
	return r, nil
}

func setFixed(r *Run, name string, x any) (ok bool) {
	switch name {
	case "run_id":
		r.RunID, ok = x.(string)
	case "experiment":
		r.Experiment, ok = x.(string)
	case "status":
		var s string
		s, ok = x.(string)
		r.Status = Status(s)
	case "error":
		r.Error, ok = x.(string)
	case "method":
		r.Method, ok = x.(string)
	case "task":
		r.Task, ok = x.(string)
	case "scale":
		r.Scale, ok = x.(string)
	case "seed":
		r.Seed, ok = x.(int64)
	case "epsilon_target":
		r.EpsilonTarget, ok = x.(float64)
	case "epsilon":
		r.Epsilon, ok = x.(float64)
	case "delta":
		r.Delta, ok = x.(float64)
	case "sigma":
		r.Sigma, ok = x.(float64)
	case "sample_rate":
		r.SampleRate, ok = x.(float64)
	case "steps":
		r.Steps, ok = x.(int64)
	case "seconds":
		r.Seconds, ok = x.(float64)
	case "load_start":
		r.LoadStart, ok = x.(float64)
	case "load_end":
		r.LoadEnd, ok = x.(float64)
	case "gomaxprocs":
		r.GOMAXPROCS, ok = x.(int64)
	case "jobs":
		r.Jobs, ok = x.(int64)
	}
	return ok
}
