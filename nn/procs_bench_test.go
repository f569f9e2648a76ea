// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"flag"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// benchSeen holds the names of the benchmarks benchProcs has seen.
var benchSeen sync.Map

// benchProcs sets GOMAXPROCS, the first time it sees benchmark b, to the
// first value of -test.cpu. The testing package runs a benchmark's first
// -test.cpu entry before it sets GOMAXPROCS for that entry, under the value
// the previous benchmark (or the tests) left, which is the last of the
// -test.cpu list (golang/go#49980). A b.Loop benchmark measures
// everything in that first run, so with -cpu 1,2 its row labelled 1 ran
// under GOMAXPROCS 2: a product of 1024³, for instance, then ran on two
// goroutines, and the process CPU time was twice the wall time. Later
// entries already run under their own value.
func benchProcs(b *testing.B) {
	if _, seen := benchSeen.LoadOrStore(b.Name(), true); seen {
		return
	}
	f := flag.Lookup("test.cpu")
	if f == nil {
		return
	}
	first, _, _ := strings.Cut(f.Value.String(), ",")
	if n, err := strconv.Atoi(strings.TrimSpace(first)); err == nil && n > 0 {
		runtime.GOMAXPROCS(n)
	}
}

// BenchmarkProcsProbe reports the GOMAXPROCS its loop ran under (metric
// procs); TestBenchProcs runs it. It is skipped unless REPRO_PROCS_PROBE
// is set, so that it adds no row to the package's benchmarks.
func BenchmarkProcsProbe(b *testing.B) {
	if os.Getenv("REPRO_PROCS_PROBE") == "" {
		b.Skip("run by TestBenchProcs")
	}
	cpu := startCPU(b)
	procs := 0
	for b.Loop() {
		procs = runtime.GOMAXPROCS(0)
	}
	cpu.stop(b)
	b.ReportMetric(float64(procs), "procs")
}

// TestBenchProcs runs BenchmarkProcsProbe in a child process with
// -test.cpu 3,1 and -test.count 2 and checks that every row ran under the
// GOMAXPROCS its name says (golang/go#49980; see benchProcs).
func TestBenchProcs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the test binary again")
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^$", "-test.bench", "^BenchmarkProcsProbe$",
		"-test.cpu", "3,1", "-test.count", "2", "-test.benchtime", "10x")
	cmd.Env = append(os.Environ(), "REPRO_PROCS_PROBE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	row := regexp.MustCompile(`(?m)^BenchmarkProcsProbe(-(\d+))?\s.*\s([0-9.]+) procs`)
	rows := row.FindAllStringSubmatch(string(out), -1)
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 4:\n%s", len(rows), out)
	}
	for _, r := range rows {
		want := 1.0
		if r[2] != "" {
			want, _ = strconv.ParseFloat(r[2], 64)
		}
		if got, _ := strconv.ParseFloat(r[3], 64); got != want {
			t.Errorf("row %q ran under GOMAXPROCS %v", strings.TrimSpace(r[0]), got)
		}
	}
}
