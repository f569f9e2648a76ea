// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
