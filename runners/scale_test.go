// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package runners

import (
	"bufio"
	"flag"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/repro-dp/repro/internal/results"
)

var updateTimings = flag.Bool("update-timings", false, "rewrite "+timingsFile+" from the checked-in run tables")

// timingsFile is the timing snapshot: per scale, method and task, the
// median seconds per step of the checked-in tables' finished runs
// counted at a quiet machine's share (newPrior at an unknown load today:
// rows with a load at their quiet speed, rows without at their scale's
// typical share), and how many runs that median is of.
const timingsFile = "testdata/scale-timings.tsv"

// timing is one line of the snapshot.
type timing struct {
	scale, key string // key: "method/task"
	perStep    float64
	runs       int
}

// liveTimings returns the snapshot the checked-in tables give now, sorted
// by scale and key.
func liveTimings() []timing {
	plan := func(r *Run) (int64, string) { return 0, "" }
	byScale := map[string][]results.Run{}
	for _, r := range embeddedRows() {
		byScale[r.Scale] = append(byScale[r.Scale], r)
	}
	var out []timing
	for _, sc := range slices.Sorted(maps.Keys(byScale)) {
		rows := byScale[sc]
		p := newPrior(rows, plan, load{})
		if p == nil {
			continue
		}
		runs := map[string]int{}
		for _, r := range rows {
			if r.Status == results.OK && r.Seconds > 0 && r.Steps > 0 {
				runs[r.Method+"/"+r.Task]++
			}
		}
		for _, k := range slices.Sorted(maps.Keys(p.medStep)) {
			if methodOf(k) != "" {
				out = append(out, timing{sc, k, p.medStep[k], runs[k]})
			}
		}
	}
	return out
}

// readTimings reads the snapshot.
func readTimings(t *testing.T) []timing {
	t.Helper()
	f, err := os.Open(timingsFile)
	if err != nil {
		t.Fatalf("%v (go test ./runners -run TestScaleConversionSnapshot -update-timings writes it)", err)
	}
	defer f.Close()
	var out []timing
	s := bufio.NewScanner(f)
	for n := 1; s.Scan(); n++ {
		line := s.Text()
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "scale\t") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			t.Fatalf("%s:%d: %d fields, want 4", timingsFile, n, len(f))
		}
		x, err := strconv.ParseFloat(f[2], 64)
		if err != nil || !(x > 0) {
			t.Fatalf("%s:%d: seconds per step %q: want a number > 0", timingsFile, n, f[2])
		}
		runs, err := strconv.Atoi(f[3])
		if err != nil {
			t.Fatalf("%s:%d: runs %q: %v", timingsFile, n, f[3], err)
		}
		out = append(out, timing{f[0], f[1], x, runs})
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// writeTimings writes ts as the snapshot.
func writeTimings(ts []timing) error {
	var b strings.Builder
	b.WriteString("# The timing snapshot of TestScaleConversionSnapshot: per scale, method and task, the median\n" +
		"# seconds per step of the checked-in run tables' finished runs at a quiet machine's share\n" +
		"# (runners.newPrior at an unknown load today), and how many runs it is of. Rewrite it with\n" +
		"#   go test ./runners -run TestScaleConversionSnapshot -update-timings\n" +
		"# after checking in tables that TestCheckedInTimingsDrift reports as moved.\n" +
		"scale\tmethod/task\tsec_per_step\truns\n")
	for _, x := range ts {
		fmt.Fprintf(&b, "%s\t%s\t%s\t%d\n", x.scale, x.key, strconv.FormatFloat(x.perStep, 'g', -1, 64), x.runs)
	}
	return os.WriteFile(timingsFile, []byte(b.String()), 0o644)
}

// crossScale predicts, for each method and task the timings hold at
// smoke and small, its seconds per step at small from the others (its own
// small line left out) through convertPrior, fed one run of 1,000 steps
// per line (a median of one run is its value), and returns the predictions
// and the factors by which they miss, by key.
func crossScale(ts []timing) (got, factor map[string]float64) {
	plan := func(r *Run) (int64, string) { return 0, "" }
	rowOf := func(x timing) results.Run {
		m, task, _ := strings.Cut(x.key, "/")
		return results.Run{Status: results.OK, Method: m, Task: task, Scale: x.scale, Seconds: x.perStep * 1000, Steps: 1000,
			LoadStart: math.NaN(), LoadEnd: math.NaN()}
	}
	at := map[string]map[string]float64{}
	for _, x := range ts {
		if at[x.scale] == nil {
			at[x.scale] = map[string]float64{}
		}
		at[x.scale][x.key] = x.perStep
	}
	got, factor = map[string]float64{}, map[string]float64{}
	for k, want := range at["small"] {
		if _, ok := at["smoke"][k]; !ok {
			continue
		}
		var rows []results.Run
		for _, x := range ts {
			if (x.scale == "smoke" || x.scale == "small") && !(x.scale == "small" && x.key == k) {
				rows = append(rows, rowOf(x))
			}
		}
		p := convertPrior(rows, "small", plan, load{}).perStep[k]
		got[k], factor[k] = p, max(p/want, want/p)
	}
	return got, factor
}

// TestScaleConversionSnapshot tests the conversion of a step's cost from
// smoke to small (convertPrior) on a fixed snapshot of the checked-in
// tables' timings (testdata/scale-timings.tsv), so that a table checked
// in cannot move it: each method and task timed at both scales is
// predicted at small from its smoke median and the ratio of the others
// (itself left out), against its own small median.
//
// On the snapshot, the conversion by the method's other tasks first (see
// checkedInPrior) misses by a median factor of 1.45, 16 of 17 within ×3
// (sparta/fashion-cls-lira ×3.75: its smoke runs are 70 steps, whose
// fixed costs weigh more than in the 254 of small). The conversion it
// replaced, every method's median ratio (4.42), misses the same snapshot
// by 2.02, 15 within ×3 (nonprivate/records ×5.22, dualpriv/shapes-vqa
// ×3.82); with no ratio at all (a step costs the same at both scales), by
// 4.41, 6 within ×3; with the ratio inverted, by 19.3, 3 within ×3. The
// limits, a median factor of 1.6 and all but one within ×3, fail each of
// them.
//
// Checking in a table changes the live tables, not this snapshot:
// TestCheckedInTimingsDrift reports how far they have moved from it, and
// -update-timings rewrites it (a reviewed change, like a golden file).
func TestScaleConversionSnapshot(t *testing.T) {
	if *updateTimings {
		if err := writeTimings(liveTimings()); err != nil {
			t.Fatal(err)
		}
	}
	ts := readTimings(t)
	got, factor := crossScale(ts)
	if len(factor) < 10 {
		t.Fatalf("%d methods and tasks timed at smoke and small in the snapshot, want ≥ 10", len(factor))
	}
	var fs []float64
	within := 0
	for _, k := range slices.Sorted(maps.Keys(factor)) {
		t.Logf("%-28s predicted at small %.4f s/step (×%.2f)", k, got[k], factor[k])
		fs = append(fs, factor[k])
		if factor[k] <= 3 {
			within++
		}
	}
	m := median(fs)
	t.Logf("%d methods and tasks: median factor %.2f, %d within ×3", len(fs), m, within)
	if m > 1.6 || within < len(fs)-1 {
		t.Errorf("on the snapshot, median factor %.2f (want ≤ 1.6), %d of %d within ×3 (want all but one)", m, within, len(fs))
	}
}

// TestCheckedInTimingsDrift reports how far the checked-in tables'
// timings have moved from the snapshot that TestScaleConversionSnapshot
// tests the conversion on: each method and task's median seconds per
// step that moved by more than ×1.5 (runs of a scale recorded at other
// loads, or on a changed engine), that is new or gone, and the live
// tables' cross-scale factors. It reports rather than fails: a table
// checked in is data, not a fault of the conversion; a reported drift
// asks for a look and, if the conversion still holds on the new data,
// -update-timings. It fails only when the tables no longer give timings
// at smoke and small.
func TestCheckedInTimingsDrift(t *testing.T) {
	const drift = 1.5
	snap := map[string]timing{}
	for _, x := range readTimings(t) {
		snap[x.scale+" "+x.key] = x
	}
	live := liveTimings()
	moved := 0
	seen := map[string]bool{}
	for _, x := range live {
		k := x.scale + " " + x.key
		seen[k] = true
		s, ok := snap[k]
		switch {
		case !ok:
			t.Logf("drift: %s is new (%.4f s/step over %d runs)", k, x.perStep, x.runs)
			moved++
		case max(x.perStep/s.perStep, s.perStep/x.perStep) > drift:
			t.Logf("drift: %s %.4f s/step over %d runs, the snapshot %.4f over %d (×%.2f)", k, x.perStep, x.runs, s.perStep, s.runs,
				max(x.perStep/s.perStep, s.perStep/x.perStep))
			moved++
		}
	}
	for _, k := range slices.Sorted(maps.Keys(snap)) {
		if !seen[k] {
			t.Logf("drift: %s is in the snapshot, not in the tables", k)
			moved++
		}
	}
	_, factor := crossScale(live)
	if len(factor) < 5 {
		t.Fatalf("the checked-in tables time %d methods and tasks at smoke and small, want ≥ 5", len(factor))
	}
	var fs []float64
	within := 0
	for _, f := range factor {
		fs = append(fs, f)
		if f <= 3 {
			within++
		}
	}
	t.Logf("the checked-in tables: %d methods and tasks at both scales, median factor %.2f, %d within ×3", len(fs), median(fs), within)
	if moved > 0 {
		t.Logf("%d timings moved by more than ×%.1f from %s: if the conversion holds on them, rewrite it with -update-timings", moved, drift, timingsFile)
	}
}

// TestScaleRatioByMethod checks by hand that a method and task recorded
// at one scale only converts by the ratio of its method's other tasks,
// before every method's: at smoke and small, method a's task t1 costs
// 0.01 and 0.1 s a step (×10), t2 0.02 and 0.16 (×8); b's u1 0.01 and
// 0.02 (×2), u2 0.03 and 0.06 (×2), u3 0.05 and 0.1 (×2). At smoke only,
// a/t3 costs 0.03: a's median ratio is 9, so 0.27 at small (every
// method's median, 2, would say 0.06); b/u4 0.04: 0.08; c/v1, of a method
// timed at one scale only, 0.5 × every method's median, 2: 1.
//
// The snapshot's two worst pairs under every method's ratio, worked by
// hand from testdata/scale-timings.tsv (rounded to four figures):
// nonprivate/records costs 0.05126 s a step at smoke and 0.04335 at
// small; non-private's other tasks grow
// by 0.01955 / 0.01215 = 1.609 (fashion-vqa) and 0.01828 / 0.01016 = 1.799
// (shapes-vqa), median 1.704, so 0.08735 (×2.02; python3) where every method's
// median ratio, 4.42, said 0.2265 (×5.22). Dual-Priv on shapes-vqa: 0.01706 and
// 0.01972; its other tasks 0.03871 / 0.01942 = 1.993 (fashion-vqa) and
// 0.16359 / 0.03694 = 4.429 (fashion-vqa-tune), median 3.211, so 0.05478
// (×2.78) where 4.42 said 0.0754 (×3.82). Their own ratios (0.85 and
// 1.16) are real: both are mostly work that does not grow with the model
// (see docs/eta.md, "Why the conversion misses where it does").
func TestScaleRatioByMethod(t *testing.T) {
	plan := func(r *Run) (int64, string) { return 0, "" }
	row := func(key, scale string, perStep float64) results.Run {
		m, task, _ := strings.Cut(key, "/")
		return results.Run{Status: results.OK, Method: m, Task: task, Scale: scale, Seconds: perStep * 100, Steps: 100,
			LoadStart: math.NaN(), LoadEnd: math.NaN()}
	}
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-9*want }
	rows := []results.Run{
		row("a/t1", "smoke", 0.01), row("a/t1", "small", 0.1),
		row("a/t2", "smoke", 0.02), row("a/t2", "small", 0.16),
		row("b/u1", "smoke", 0.01), row("b/u1", "small", 0.02),
		row("b/u2", "smoke", 0.03), row("b/u2", "small", 0.06),
		row("b/u3", "smoke", 0.05), row("b/u3", "small", 0.1),
		row("a/t3", "smoke", 0.03), row("b/u4", "smoke", 0.04), row("c/v1", "smoke", 0.5),
	}
	p := convertPrior(rows, "small", plan, load{})
	for k, want := range map[string]float64{"a/t3": 0.27, "b/u4": 0.08, "c/v1": 1, "a/t1": 0.1} {
		if got := p.perStep[k]; !near(got, want) {
			t.Errorf("small, per step of %s = %v, want %v", k, got, want)
		}
	}

	// The snapshot's values, as in the comment.
	snap := []results.Run{
		row("nonprivate/fashion-vqa", "smoke", 0.01215), row("nonprivate/fashion-vqa", "small", 0.01955),
		row("nonprivate/shapes-vqa", "smoke", 0.01016), row("nonprivate/shapes-vqa", "small", 0.01828),
		row("nonprivate/records", "smoke", 0.05126),
		row("dualpriv/fashion-vqa", "smoke", 0.01942), row("dualpriv/fashion-vqa", "small", 0.03871),
		row("dualpriv/fashion-vqa-tune", "smoke", 0.03694), row("dualpriv/fashion-vqa-tune", "small", 0.16359),
		row("dualpriv/shapes-vqa", "smoke", 0.01706),
	}
	p = convertPrior(snap, "small", plan, load{})
	for k, want := range map[string]float64{
		"nonprivate/records":  0.05126 * (0.01955/0.01215 + 0.01828/0.01016) / 2,
		"dualpriv/shapes-vqa": 0.01706 * (0.03871/0.01942 + 0.16359/0.03694) / 2,
	} {
		if got := p.perStep[k]; !near(got, want) {
			t.Errorf("small, per step of %s = %v, want %v", k, got, want)
		}
	}
	if got := p.perStep["nonprivate/records"]; math.Abs(got-0.08735) > 5e-6 {
		t.Errorf("nonprivate/records at small = %.5f, want 0.08735 (worked by hand)", got)
	}
	if got := p.perStep["dualpriv/shapes-vqa"]; math.Abs(got-0.05478) > 5e-6 {
		t.Errorf("dualpriv/shapes-vqa at small = %.5f, want 0.05478 (worked by hand)", got)
	}
}
