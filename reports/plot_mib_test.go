package reports

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"gonum.org/v1/plot"
)

// TestMiBTicks checks that a bytes axis is ticked in mebibytes: the labels
// are DefaultTicks' over the range in MiB, the values stay in bytes.
func TestMiBTicks(t *testing.T) {
	const lo, hi = 30 * mib, 34 * mib
	got := mibTicks{}.Ticks(lo, hi)
	want := plot.DefaultTicks{}.Ticks(30, 34)
	if len(got) != len(want) || len(got) == 0 {
		t.Fatalf("got %d ticks, want %d (> 0)", len(got), len(want))
	}
	for i := range got {
		if got[i].Label != want[i].Label || got[i].Value != want[i].Value*mib {
			t.Errorf("tick %d = %+v, want label %q at %v bytes", i, got[i], want[i].Label, want[i].Value*mib)
		}
	}
	if got[0].Label == "" {
		t.Errorf("the first tick has no label: %+v", got)
	}
}

// TestTableMiB checks that a table shows a *_bytes metric in mebibytes,
// as the plots' axis does, under a header that says so: runs of 1, 2 and
// 3 MiB (1 MiB = 2²⁰ bytes) give 2.00 ± 1.00 (the sample std of 1, 2, 3
// is 1), and a paper value in bytes is shown in MiB too.
func TestTableMiB(t *testing.T) {
	var rows []Row
	for i := int64(1); i <= 3; i++ {
		rows = append(rows, Row{"run_id": fmt.Sprint(i), "status": "ok", "method": "dpsgd", "seed": i, "acc": 50.0, "train_peak_bytes": float64(i * mib)})
	}
	runs, err := NewRuns(rows)
	if err != nil {
		t.Fatal(err)
	}
	tab := &Table{Rows: []string{"method"}, Metrics: []string{"acc", "train_peak_bytes"},
		References: []Reference{{At: map[string]string{"method": "dpsgd"}, Metric: "train_peak_bytes", Value: 4 * mib}}}
	g, err := tab.Build(runs)
	if err != nil {
		t.Fatal(err)
	}
	if c := g.Cells[0][1]; c.Mean != 2 || c.Std != 1 || c.Ref != 4 {
		t.Errorf("memory cell %+v, want mean 2, std 1, paper value 4 (MiB)", c)
	}
	if c := g.Cells[0][0]; c.Mean != 50 {
		t.Errorf("accuracy cell %+v, want mean 50 (not scaled)", c)
	}
	var buf bytes.Buffer
	if err := g.Write(&buf, Text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "train_peak (MiB)") || strings.Contains(buf.String(), "train_peak_bytes") {
		t.Errorf("header does not say MiB:\n%s", buf.String())
	}
}
