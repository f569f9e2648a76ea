// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/methods"
)

// writeAuditRun writes the manifest of a finished run with the given
// accounted ε, audit results (none if lb < 0) and caveats.
func writeAuditRun(t *testing.T, root, id string, eps, lb float64, caveats ...string) {
	t.Helper()
	m := &results.Manifest{Format: results.Format, RunID: id, Experiment: "aud", Status: results.OK,
		Config:  experiments.Config{Method: "dpsgd", Task: "shapes-vqa-mia", Epsilon: experiments.Epsilon(eps), Delta: 1e-5, Seed: 1},
		Privacy: &results.Privacy{Accountant: "rdp", Epsilon: results.Float(eps), EpsilonTarget: results.Float(eps), Delta: 1e-5, Caveats: caveats},
	}
	if lb >= 0 {
		m.Results = map[string]results.Float{"audit_epsilon_lb": results.Float(lb), "audit_epsilon_median": 2,
			"audit_correct": 30, "audit_guesses": 32, "audit_canaries": 64, "audit_epsilon": results.Float(eps), "audit_pass": 1}
	}
	dir := results.RunDir(root, "aud", id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
}

func TestAudit(t *testing.T) {
	root := t.TempDir()
	planted := methods.PlantedCaveat + ": the noise is 0.0001 × the calibrated σ"
	writeAuditRun(t, root, "aaaa000000000001", 1, 0.3)
	writeAuditRun(t, root, "aaaa000000000002", 0.1, 0.45, planted)
	writeAuditRun(t, root, "aaaa000000000003", 8, -1)
	writeAuditRun(t, root, "bbbb000000000004", math.Inf(1), 0.67)
	out, _, err := run(t, "audit", "aud", "--results", root)
	if err != nil {
		t.Fatalf("repro audit aud: %v\n%s", err, out)
	}
	for _, want := range []string{
		"aaaa000000000001  dpsgd", "0.300", "[0.300, ∞)", "30 of 32 on 64 canaries", "PASS",
		"FAIL (planted under-noised control: expected)",
		"not audited: the run has no audit-one-run attack",
		"∞",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("repro audit aud: output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "\n"); n != 5 {
		t.Errorf("repro audit aud: %d lines, want a header and 4 runs:\n%s", n, out)
	}
	// An honest run whose bound exceeds its ε fails the command.
	writeAuditRun(t, root, "cccc000000000005", 0.1, 0.45)
	out, _, err = run(t, "audit", "cccc", "--results", root)
	if err == nil || !strings.Contains(out, "FAIL: the privacy guarantee does not hold") {
		t.Errorf("repro audit cccc: error %v, output\n%s\nwant a failed audit", err, out)
	}
	for _, tc := range []struct{ arg, want string }{
		{"nope", "no experiment or run"},
		{"aaaa", "ambiguous"},
		{"a*", "bad run"},
	} {
		if _, _, err := run(t, "audit", tc.arg, "--results", root); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("repro audit %s: error %v, want %q", tc.arg, err, tc.want)
		}
	}
}

// TestAuditRunTable reads the checked-in one-run audit (results/README.md:
// "`repro audit` reads it") from its run table, without run folders: its
// two planted under-noised controls at ε ≈ 1 and 8 are marked by their
// noise_scale, and the honest runs pass.
func TestAuditRunTable(t *testing.T) {
	out, _, err := run(t, "audit", "../../results/baselines/audit-small.parquet", "--results", t.TempDir())
	if err != nil {
		t.Fatalf("repro audit FILE: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "RUN") {
		t.Fatalf("got %q, want a header and one row per run", out)
	}
	planted, pass := 0, 0
	for _, l := range lines[1:] {
		if strings.Contains(l, "planted under-noised control") {
			planted++
		} else if strings.HasSuffix(l, "PASS") {
			pass++
		}
	}
	if planted != 3 || pass != len(lines)-4 {
		t.Errorf("got %d planted and %d passing rows of %d, want 3 planted and the rest passing:\n%s", planted, pass, len(lines)-1, out)
	}
}
