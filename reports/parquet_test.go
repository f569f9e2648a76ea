// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/parquet-go/parquet-go"
)

// parquetRun is a runs.parquet row as a results writer might declare it: an
// int64 seed, optional (nullable) metrics, a bool, an unsigned count, and a
// repeated and a nested column that a run table cannot hold.
type parquetRun struct {
	RunID         string   `parquet:"run_id"`
	Status        string   `parquet:"status"`
	Method        string   `parquet:"method"`
	Task          string   `parquet:"task"`
	Scale         string   `parquet:"scale"`
	Seed          int64    `parquet:"seed"`
	EpsilonTarget float64  `parquet:"epsilon_target"`
	Epsilon       float64  `parquet:"epsilon"`
	Delta         float64  `parquet:"delta"`
	Sigma         float64  `parquet:"sigma"`
	Acc           *float64 `parquet:"acc,optional"`
	ImgAcc        *float32 `parquet:"img_acc,optional"`
	Secure        bool     `parquet:"secure"`
	Steps         uint32   `parquet:"steps"`
	Shots         int32    `parquet:"shots"`
	Caveats       []string `parquet:"caveats,list"`
	Timing        struct {
		Total float64 `parquet:"total"`
	} `parquet:"timing"`
}

// toParquet converts table1Rows to parquetRun values, with img_acc present
// only for even seeds and a null acc wherever acc is NaN.
func toParquet(rows []Row) []parquetRun {
	out := make([]parquetRun, len(rows))
	for i, r := range rows {
		p := parquetRun{
			RunID:         r["run_id"].(string),
			Status:        r["status"].(string),
			Method:        r["method"].(string),
			Task:          r["task"].(string),
			Scale:         r["scale"].(string),
			Seed:          r["seed"].(int64),
			EpsilonTarget: r["epsilon_target"].(float64),
			Epsilon:       r["epsilon"].(float64),
			Delta:         r["delta"].(float64),
			Sigma:         r["sigma"].(float64),
			Secure:        i%2 == 0,
			Steps:         uint32(100 * (i + 1)),
			Shots:         int32(-i),
			Caveats:       []string{"a", "b"}[:i%3],
		}
		if acc := r["acc"].(float64); !math.IsNaN(acc) {
			p.Acc = &acc
		}
		if p.Seed%2 == 0 {
			img := float32(i) / 64 // exact in float32
			p.ImgAcc = &img
		}
		p.Timing.Total = float64(i)
		out[i] = p
	}
	return out
}

// wantRows returns what ReadRuns must return for toParquet(rows), as rows
// for NewRuns.
func wantRows(rows []Row) []Row {
	out := make([]Row, len(rows))
	for i, p := range toParquet(rows) {
		r := Row{
			"run_id": p.RunID, "status": p.Status, "method": p.Method, "task": p.Task,
			"scale": p.Scale, "seed": float64(p.Seed), "epsilon_target": p.EpsilonTarget,
			"epsilon": p.Epsilon, "delta": p.Delta, "sigma": p.Sigma,
			"acc": math.NaN(), "img_acc": math.NaN(),
			"secure": p.Secure, "steps": float64(p.Steps), "shots": float64(p.Shots),
		}
		if p.Acc != nil {
			r["acc"] = *p.Acc
		}
		if p.ImgAcc != nil {
			r["img_acc"] = float64(*p.ImgAcc)
		}
		out[i] = r
	}
	return out
}

// runsOptions compares run tables by content, NaN equal to NaN, in any
// column order.
var runsOptions = []cmp.Option{
	cmp.AllowUnexported(Runs{}),
	cmpopts.EquateNaNs(),
	cmpopts.IgnoreFields(Runs{}, "index", "skipped"),
	cmpopts.SortSlices(func(a, b Column) bool { return a.Name < b.Name }),
}

func TestReadRunsRoundTrip(t *testing.T) {
	rows := table1Rows()
	path := filepath.Join(t.TempDir(), "runs.parquet")
	// Two row groups, to check that reading goes on after the first.
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[parquetRun](&buf)
	data := toParquet(rows)
	half := len(data) / 2
	for _, part := range [][]parquetRun{data[:half], data[half:]} {
		if _, err := w.Write(part); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	got, err := ReadRuns(path)
	if err != nil {
		t.Fatalf("ReadRuns: %v", err)
	}
	want := mustRuns(t, wantRows(rows))
	if diff := cmp.Diff(want, got, runsOptions...); diff != "" {
		t.Errorf("ReadRuns mismatch (-want +got):\n%s", diff)
	}
	if skipped := got.Skipped(); !cmp.Equal(skipped, []string{"caveats", "timing"}) {
		t.Errorf("got skipped columns %q, want [caveats timing]", skipped)
	}
	// Columns keep the file's order.
	wantOrder := []string{"run_id", "status", "method", "task", "scale", "seed", "epsilon_target",
		"epsilon", "delta", "sigma", "acc", "img_acc", "secure", "steps", "shots"}
	if order := got.Columns(); !cmp.Equal(order, wantOrder) {
		t.Errorf("got column order %q, want %q", order, wantOrder)
	}

	// The table built from the file equals the one built from memory.
	tab := table1()
	gFile, err := tab.Build(got)
	if err != nil {
		t.Fatal(err)
	}
	gMem, err := tab.Build(mustRuns(t, rows))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(gMem, gFile, cmpopts.EquateNaNs(), cmp.Comparer(func(a, b error) bool { return a.Error() == b.Error() })); diff != "" {
		t.Errorf("table from parquet differs from table from memory (-mem +file):\n%s", diff)
	}
}

func TestReadRunsErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadRuns(filepath.Join(dir, "missing.parquet")); err == nil {
		t.Errorf("ReadRuns of a missing file: got nil error")
	}
	bad := filepath.Join(dir, "bad.parquet")
	if err := os.WriteFile(bad, []byte("PAR1 this is not parquet PAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRuns(bad); err == nil {
		t.Errorf("ReadRuns of a corrupt file: got nil error")
	}
}

// FuzzDecodeRuns checks that no input makes the decoder panic or allocate
// more than a bound that grows with the input: corrupt lengths in a footer
// or page header once made parquet-go allocate 256 MiB for a 2 KiB file
// (the oom-* inputs of testdata/fuzz/FuzzDecodeRuns).
func FuzzDecodeRuns(f *testing.F) {
	var buf bytes.Buffer
	if err := parquet.Write(&buf, toParquet(table1Rows()[:4])); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte("PAR1PAR1"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		runs, err := DecodeRuns(bytes.NewReader(data), int64(len(data)))
		runtime.ReadMemStats(&after)
		if err == nil && runs.Len() < 0 {
			t.Errorf("negative length")
		}
		// A decoded table of n bytes needs far less than 4 KiB a byte;
		// the 64 MiB floor covers the decoder's fixed buffers.
		if bound := uint64(64<<20 + 4096*len(data)); after.TotalAlloc-before.TotalAlloc > bound {
			t.Errorf("decoding %d bytes allocated %d MiB, more than %d MiB (err %v)", len(data), (after.TotalAlloc-before.TotalAlloc)>>20, bound>>20, err)
		}
	})
}

func TestNewRunsErrors(t *testing.T) {
	for _, tc := range []struct {
		desc string
		rows []Row
	}{
		{"mixed kinds", []Row{{"a": "x"}, {"a": 1.0}}},
		{"unsupported type", []Row{{"a": []int{1}}}},
	} {
		if _, err := NewRuns(tc.rows); err == nil {
			t.Errorf("%s: got nil error", tc.desc)
		}
	}
	// Nil values and absent columns are missing.
	runs := mustRuns(t, []Row{{"a": nil, "b": "x"}, {"a": 2}})
	a, _ := runs.Column("a")
	b, _ := runs.Column("b")
	if a.Kind != Float || !math.IsNaN(a.Floats[0]) || a.Floats[1] != 2 || b.Kind != String || b.Strings[1] != "" {
		t.Errorf("got a=%+v b=%+v, want a=[NaN 2] (float), b=[x \"\"] (string)", a, b)
	}
}
