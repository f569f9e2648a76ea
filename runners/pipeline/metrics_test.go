// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
)

// TestKnownMetricsCoverBaselines checks the spelling check against what
// runs really record: every result and param of every checked-in run table
// is a known metric or of a known family, so no spec that names one is
// taken for a misspelling.
func TestKnownMetricsCoverBaselines(t *testing.T) {
	files, err := filepath.Glob("../../results/baselines/*.parquet")
	if err != nil || len(files) == 0 {
		t.Fatalf("no baselines: %v", err)
	}
	for _, f := range files {
		runs, err := results.ReadRuns(f)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, r := range runs {
			for name := range r.Results {
				if !seen[name] && !knownMetric(name) {
					t.Errorf("%s: result %s is not a known metric", filepath.Base(f), name)
				}
				seen[name] = true
			}
		}
	}
}

// TestMisspeltMetricInEmbeddedSpec checks the registry's spelling check
// end to end: table1 with acc misspelt in its plot fails at parse time,
// at the plot's y.
func TestMisspeltMetricInEmbeddedSpec(t *testing.T) {
	data, err := os.ReadFile("../../experiments/table1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := experiments.Parse("table1.yaml", data, nil); err != nil {
		t.Fatalf("table1 as it is: %v", err)
	}
	bad := strings.Replace(string(data), "    y: acc\n", "    y: acx\n", 1)
	if bad == string(data) {
		t.Fatal("table1 has no plot of y: acc")
	}
	_, err = experiments.Parse("table1.yaml", []byte(bad), nil)
	if err == nil || !strings.Contains(err.Error(), `no run records a metric "acx"; did you mean "acc"?`) || !strings.HasPrefix(err.Error(), "table1.yaml:") {
		t.Errorf("got %v, want table1.yaml:LINE: … did you mean \"acc\"?", err)
	}
}

// TestCollapsingSweep checks the warning of a sweep whose distinct values
// give one effective setting: at smoke an image has 4 patches, so fig3's
// retentions 0.1, 0.2 and 0.3 all keep round(r·4) = 0 → 1 patch token
// (nn.TokenPruning.Split keeps at least one), and 5 ratios × 5 retentions
// × 3 seeds = 75 runs hold 5 × 3 × 3 = 45 distinct settings. At small (16
// patches: 2, 3 and 5 tokens) nothing collapses.
func TestCollapsingSweep(t *testing.T) {
	smoke, err := experiments.Load("fig3", &experiments.Options{Overrides: []string{"scale=smoke"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"dualpriv on fashion-vqa at scale smoke: retention 0.1, 0.2, 0.3 all give 1 dominant + 0 contextual tokens of 4 patches",
		"75 runs give 45 distinct settings; a larger --scale separates them",
	}
	if diff := cmp.Diff(want, smoke.Collapses()); diff != "" {
		t.Errorf("fig3 at smoke (-want +got):\n%s", diff)
	}
	small, err := experiments.Load("fig3", &experiments.Options{Overrides: []string{"scale=small"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := small.Collapses(); got != nil {
		t.Errorf("fig3 at small: got %q, want no warning", got)
	}
}

// TestCollapsingSweepMethods checks the collapse warnings of the methods
// other than Dual-Priv's retention, each through a spec whose method has
// a variant (whose label is not a hyperparameter: the warning must still
// resolve the run's hyperparameters). The counts are worked by hand from
// the smoke preset: SPARTA's ViT has 32 rows in patch, q, k, v, o and fc2
// and 128 in fc1, so sparsity 0.1 keeps ⌈3.2⌉ = 4 and ⌈12.8⌉ = 13 rows
// and 0.101 keeps ⌈3.232⌉ = 4 and ⌈12.928⌉ = 13; Dual-Priv's LoRA at
// smoke has J = 12 gradient blocks, so update ratios 0.45 and 0.5 both
// update ⌈5.4⌉ = ⌈6⌉ = 6; DP-MTV's icl episodes have 4 demonstrations at
// smoke, so shots 0 (every one) and 4 are one setting (the chunks axis
// takes no 0, and a count above the episodes is an error, so chunks
// cannot collapse in a sweep).
func TestCollapsingSweepMethods(t *testing.T) {
	for _, tc := range []struct {
		name, spec string
		want       []string
	}{
		{"sparta", `tasks: [fashion-cls]
methods: [{name: sparta, variant: rows, params: {mask: sparta}, sweep: {sparsity: [0.1, 0.101, 0.2]}}]`, []string{
			"sparta (rows) on fashion-cls at scale smoke: sparsity 0.1, 0.101 all give rows kept per layer: 4 of 32 (patch, q, k, v, o, fc2), 13 of 128 (fc1)",
			"3 runs give 2 distinct settings; a larger --scale separates them",
		}},
		{"dualpriv", `tasks: [fashion-vqa]
methods: [{name: dualpriv, variant: blocks, params: {tokens: none}, sweep: {update_ratio: [0.45, 0.5, 0.8]}}]`, []string{
			"dualpriv (blocks) on fashion-vqa at scale smoke: update_ratio 0.45, 0.5 all give 6 of 12 gradient blocks",
			"3 runs give 2 distinct settings; a larger --scale separates them",
		}},
		{"dpmtv", `tasks: [icl]
methods: [{name: dpmtv, variant: n, sweep: {shots: [0, 2, 4]}}]`, []string{
			"dpmtv (n) on icl at scale smoke: shots 0, 4 all give N = 4 demonstrations per chunk",
			"3 runs give 2 distinct settings; a larger --scale separates them",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "name: collapse\ndescription: a collapsing sweep\nscale: smoke\n" + tc.spec + "\nsweep: {epsilon: [1], seed: [1]}\n"
			s, err := experiments.Parse("collapse.yaml", []byte(src), nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, s.Collapses()); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPlannedSteps checks the steps the runner's ETA predicts before a run
// (methods.Stepper) against the steps every run of a method that plans
// them recorded in the checked-in run tables.
func TestPlannedSteps(t *testing.T) {
	files, err := filepath.Glob("../../results/baselines/*.parquet")
	if err != nil || len(files) == 0 {
		t.Fatalf("no baselines: %v", err)
	}
	checked := map[string]int{}
	for _, f := range files {
		runs, err := results.ReadRuns(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			c := experiments.Config{Method: r.Method, Task: r.Task, Scale: r.Scale, Epsilon: experiments.Epsilon(r.EpsilonTarget), Params: map[string]any{}}
			for k, v := range r.Params {
				if v != nil {
					c.Params[k] = v
				}
			}
			steps, _ := plannedSteps(&c)
			if steps == 0 || r.Status != results.OK {
				continue
			}
			checked[r.Method]++
			if steps != r.Steps {
				t.Errorf("%s: run %s (%s): planned %d steps, ran %d", filepath.Base(f), r.RunID, c.String(), steps, r.Steps)
			}
		}
	}
	for _, m := range []string{"nonprivate", "dpsgd", "dpzo", "dualpriv", "rapft"} {
		if checked[m] == 0 {
			t.Errorf("no run of %s checked", m)
		}
	}
	t.Logf("runs checked by method: %v", checked)
}
