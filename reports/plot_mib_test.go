package reports

import (
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
