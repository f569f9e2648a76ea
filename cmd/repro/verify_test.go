// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/reports/specout"
)

// TestVerifyBaseline verifies table1's claims on the checked-in smoke
// baseline: every test of every claim gets a verdict. table1 has 56 checks:
// 34 of accuracy (per ε and task; dualpriv-rises-with-epsilon 2), 16 of
// Figure 2's memory and step time (dualpriv-less-memory-every-eps 8,
// dpzo-less-memory 4, dpzo-slower-step 4), all 50 tests in the Holm
// family, and 6 exact comparisons of the accounted ε
// (dualpriv-privacy-of-dpsgd-eps1, -eps3, -eps8), which are no tests.
func TestVerifyBaseline(t *testing.T) {
	out, _, err := run(t, "verify", baseline)
	if err != nil {
		t.Fatalf("repro verify: %v\n%s", err, out)
	}
	s, err := experiments.Load("table1", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range specout.ClaimsOf(s) {
		if !strings.Contains(out, c.Name+" ") {
			t.Errorf("no line for claim %s:\n%s", c.Name, out)
		}
	}
	if !strings.Contains(out, "Holm correction over the 50 tests") {
		t.Errorf("output lacks the Holm correction over 50 tests:\n%s", out)
	}
	jout, _, err := run(t, "verify", baseline, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Experiment string
		Checks     []struct{ Verdict string }
	}
	if err := json.Unmarshal([]byte(jout), &v); err != nil {
		t.Fatalf("--json output does not parse: %v\n%s", err, jout)
	}
	if v.Experiment != "table1" || len(v.Checks) != 56 {
		t.Errorf("--json: experiment %q with %d checks, want table1 with 56", v.Experiment, len(v.Checks))
	}
	for _, c := range v.Checks {
		switch c.Verdict {
		case "PASS", "FAIL", "CONTRADICTED", "INCONCLUSIVE", "NOT RUN":
		default:
			t.Errorf("verdict %q", c.Verdict)
		}
	}
}

// TestVerifyRequired checks the exit status: a required claim that FAILs
// is an error, one that is not required is not.
func TestVerifyRequired(t *testing.T) {
	// dpzo's IMG accuracy on fashion-vqa at ε = 8 planted about 30 points
	// below dpsgd's on every seed, with some noise (in a copy of the
	// baseline, whatever its values; a constant shift would have no
	// variance, and three seeds of a sign test are never significant): a
	// claim that it is above FAILs even alone.
	byDPSGD := map[int64]float64{}
	rows, err := results.ReadRuns(baseline)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Method == "dpsgd" && r.Task == "fashion-vqa" && r.EpsilonTarget == 8 {
			byDPSGD[r.Seed] = r.Results["img"]
		}
	}
	dir := plantRows(t, func(r *results.Run) {
		if v, ok := byDPSGD[r.Seed]; ok && r.Method == "dpzo" && r.Task == "fashion-vqa" && r.EpsilonTarget == 8 {
			r.Results["img"] = v - 30 + []float64{0, 1.5, -1}[(r.Seed-1)%3]
		}
	})
	spec := func(required bool) string {
		data, err := os.ReadFile(filepath.Join("..", "..", "experiments", "table1.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		src, _, _ := strings.Cut(string(data), "claims:")
		src += "claims:\n  - {name: dpzo-wins, metric: img, a: {method: dpzo, epsilon_target: 8, task: fashion-vqa}, " +
			"b: {method: dpsgd, epsilon_target: 8, task: fashion-vqa}, expect: greater, source: test"
		if required {
			src += ", required: true"
		}
		f := filepath.Join(t.TempDir(), "table1.yaml")
		if err := os.WriteFile(f, []byte(src+"}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	out, _, err := run(t, "verify", dir, "--spec", spec(true))
	if err == nil || !strings.Contains(err.Error(), "1 required claim failed: dpzo-wins") || !strings.Contains(out, "FAIL (required)") {
		t.Errorf("required FAIL: got error %v, output:\n%s", err, out)
	}
	out, _, err = run(t, "verify", dir, "--spec", spec(false))
	if err != nil || !strings.Contains(out, "FAIL") {
		t.Errorf("FAIL not required: got error %v, output:\n%s", err, out)
	}
	if _, _, err := run(t, "verify", dir, "--alpha", "0"); err == nil {
		t.Error("--alpha 0: no error")
	}
	if _, _, err := run(t, "verify", "table1", "--spec", "x"); err == nil || !strings.Contains(err.Error(), "--spec") {
		t.Errorf("--spec with an experiment: got %v, want an error naming --spec", err)
	}
}

// TestVerifySmallTables runs repro verify on two checked-in small tables
// and finds the verdicts that go beyond a t-test: on Rap-FT's Table I,
// where the paper's perplexities (another model, another corpus) differ
// from ours by a factor of four, the paper's effect is ruled out
// (CONTRADICTED, with the p of reaching it); on the β sweep, ε_tight is a
// deterministic metric compared exactly (no t-test, no p-value).
func TestVerifySmallTables(t *testing.T) {
	for _, tc := range []struct {
		table, claim string
		want         []string
	}{
		{"rapft-table1-small.parquet", "rapft-beats-dpsgd", []string{"p≥paper", "CONTRADICTED"}},
		{"rapft-beta-small.parquet", "tight-epsilon-grows-with-beta", []string{"exact n=3", "PASS"}},
	} {
		out, _, err := run(t, "verify", filepath.Join("..", "..", "results", "baselines", tc.table))
		if err != nil {
			t.Fatalf("repro verify %s: %v\n%s", tc.table, err, out)
		}
		found := false
		for _, l := range strings.Split(out, "\n") {
			if !strings.HasPrefix(l, tc.claim+" ") {
				continue
			}
			has := true
			for _, w := range tc.want {
				has = has && strings.Contains(l, w)
			}
			found = found || has
		}
		if !found {
			t.Errorf("repro verify %s: no line of %s with %q:\n%s", tc.table, tc.claim, tc.want, out)
		}
	}
}
