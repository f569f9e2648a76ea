// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package page

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
)

// fixtureSpec is a small experiment for the page's tests: a non-private
// baseline and DP-SGD at two ε, three seeds, one table, one figure and
// two claims. The claims key is on line 27, so the first claim starts on
// line 28.
const fixtureSpec = `# fixture mirrors Table 1 of "A Paper" (a venue, 2026) for the tests of
# package page.
name: fixture
description: a fixture of the page's tests
scale: smoke
delta: 1e-5
tasks: [fashion-vqa]
methods:
  - name: nonprivate
    sweep: {epsilon: [inf]}
  - name: dpsgd
sweep:
  epsilon: [1, 8]
  seed: [1, 2, 3]
attacks: [loss-mia]
tables:
  - name: acc
    title: "Accuracy (%) by ε"
    rows: [epsilon_target]
    columns: [method]
    metrics: [acc]
    best: max
    reference:
      - {at: {method: dpsgd, epsilon_target: 1}, metric: acc, value: 81.54, source: "A Paper, Table 1"}
plots:
  - {name: acc-eps, title: "Accuracy against ε", kind: line, x: epsilon_target, y: acc, series: method, logx: true}
claims:
  - name: dpsgd-rises
    text: "utility increases with ε"
    metric: acc
    a: {method: dpsgd, epsilon_target: 8}
    b: {method: dpsgd, epsilon_target: 1}
    expect: greater
    source: "A Paper, Table 1"
    paper:
      - {a: 82.52, b: 81.54}
  - name: nonprivate-beats-dpsgd
    text: "privacy costs utility"
    metric: acc
    a: {method: nonprivate}
    b: {method: dpsgd}
    each: [epsilon_target]
    expect: greater
    min_seeds: 3
    required: true
    source: "A Paper, §5"
`

// fixtureNow is the time the fixture's pages say they were written.
var fixtureNow = time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)

// writeFixture writes the spec above to dir/fixture.yaml and the runs it
// expands into under dir/results/fixture, with one run of each kind a
// page must show: dpsgd ε = 8 seed 3 damaged (a file changed after its
// manifest), dpsgd ε = 1 seed 3 failed, nonprivate seed 3 missing (no
// folder). The accuracies are made up, chosen so that the claims have
// clear verdicts: acc = 60 + 5·log10(ε) + seed for dpsgd, 75 + seed for
// nonprivate. It returns the results folder and the spec.
func writeFixture(t *testing.T, dir string) (string, *experiments.Spec) {
	t.Helper()
	specFile := filepath.Join(dir, "fixture.yaml")
	if err := os.WriteFile(specFile, []byte(fixtureSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	names := &experiments.Names{Methods: []string{"nonprivate", "dpsgd"}, Tasks: []string{"fashion-vqa"}, Scales: []string{"smoke"}, Attacks: []string{"loss-mia"}}
	s, err := experiments.Load(specFile, &experiments.Options{Names: names})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	root := filepath.Join(dir, "results")
	in := experiments.Inputs{Data: "data-fixture", Base: "pretrain-fixture"}
	var rows []results.Run
	for i, c := range s.Expand() {
		eps := float64(c.Epsilon)
		if c.Method == "nonprivate" && c.Seed == 3 {
			continue // missing
		}
		id := c.ID(in)
		d := results.RunDir(root, s.Name, id)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "notes.txt"), []byte("fixture run "+id+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		files, err := results.HashFiles(d)
		if err != nil {
			t.Fatal(err)
		}
		start := fixtureNow.Add(-time.Hour + time.Duration(i)*time.Minute)
		m := &results.Manifest{
			Format: results.Format, RunID: id, Experiment: s.Name, Status: results.OK, Config: c, Inputs: in,
			Started: start, Finished: start.Add(30 * time.Second), Seconds: 30 + float64(i), Steps: 70,
			PeakMemoryBytes: 200 << 20,
			Provenance:      results.Provenance{Revision: "fixture", Code: "code-fixture", GoVersion: "go1.26", OS: "linux", Arch: "amd64", CPUs: 2, Jobs: 1},
			Files:           files,
			Warnings:        []string{"a warning of the fixture"},
		}
		acc := 75 + float64(c.Seed)
		m.Privacy = &results.Privacy{Accountant: "none", EpsilonTarget: results.Float(math.Inf(1)), Epsilon: results.Float(math.Inf(1)), Delta: c.Delta, Sampling: "poisson", Neighbouring: "add-remove", SampleRate: 0.1, Steps: 70}
		if c.Method == "dpsgd" {
			acc = 60 + 5*math.Log10(eps) + float64(c.Seed)
			m.Privacy = &results.Privacy{
				Accountant: "rdp", EpsilonTarget: results.Float(eps), Epsilon: results.Float(eps * 0.999), Delta: c.Delta,
				Sigma: 1 / eps, SampleRate: 0.1, Steps: 70, Sampling: "poisson", Neighbouring: "add-remove", ClipNorm: 1,
				Caveats: []string{"a caveat of the fixture"},
			}
		}
		m.Results = map[string]results.Float{"acc": results.Float(acc), "mia_auc": 0.5, "mia_auc_lo": 0.45, "mia_auc_hi": 0.55}
		if c.Method == "dpsgd" && eps == 1 && c.Seed == 3 {
			m.Status, m.Error, m.Results = results.Failed, "fixture: diverged", nil
		}
		if err := results.WriteManifest(d, m); err != nil {
			t.Fatal(err)
		}
		if c.Method == "dpsgd" && eps == 8 && c.Seed == 3 {
			if err := os.WriteFile(filepath.Join(d, "notes.txt"), []byte("changed\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		rows = append(rows, results.RunOf(m))
	}
	if err := results.WriteRuns(filepath.Join(root, s.Name, results.RunsFile), rows); err != nil {
		t.Fatal(err)
	}
	return root, s
}

// fixtureID returns the run id of the fixture's run of method at ε eps
// and seed.
func fixtureID(t *testing.T, s *experiments.Spec, method string, eps float64, seed int64) string {
	t.Helper()
	for _, c := range s.Expand() {
		if c.Method == method && float64(c.Epsilon) == eps && c.Seed == seed {
			return c.ID(experiments.Inputs{Data: "data-fixture", Base: "pretrain-fixture"})
		}
	}
	panic(fmt.Sprintf("no fixture run %s ε=%v seed %d", method, eps, seed))
}

// interactionSpec is a fixture with an interaction claim: Dual-Priv's
// gain over DP-SGD is larger at ε = 1 than at ε = 8 (true of the runs
// writeInteractionFixture writes), and the same claim the other way
// round (false of them). The paper's values give gains 6 and 1.
const interactionSpec = `# interaction is a fixture of the page's tests.
name: interaction
description: an interaction claim
scale: smoke
delta: 1e-5
tasks: [fashion-vqa]
methods:
  - name: dpsgd
  - name: dualpriv
sweep:
  epsilon: [1, 8]
  seed: [1, 2, 3]
claims:
  - name: gain-larger-at-eps1
    text: "the gain of Dual-Priv over DP-SGD shrinks as ε grows"
    metric: acc
    a: {method: dualpriv}
    b: {method: dpsgd}
    x1: {epsilon_target: 1}
    x2: {epsilon_target: 8}
    expect: greater
    source: "A Paper, Table 1"
    paper:
      - {a: 70, b: 64, a2: 72, b2: 71}
  - name: gain-smaller-at-eps1
    text: "the gain of Dual-Priv over DP-SGD grows with ε"
    metric: acc
    a: {method: dualpriv}
    b: {method: dpsgd}
    x1: {epsilon_target: 1}
    x2: {epsilon_target: 8}
    expect: less
    source: "A Paper, §5"
`

// interactionNoise is the seed's noise on Dual-Priv's accuracy at ε = 1
// and at ε = 8 in writeInteractionFixture's runs.
var interactionNoise = map[float64]map[int64]float64{
	1: {1: 0.3, 2: -0.2, 3: 0.5},
	8: {1: -0.1, 2: 0.4, 3: 0},
}

// writeInteractionFixture writes interactionSpec to dir and its runs, all
// ok, under dir/results/interaction: DP-SGD's accuracy is 60 + seed at
// ε = 1 and 64 + seed at ε = 8; Dual-Priv's is DP-SGD's plus 6 at ε = 1
// and 2 at ε = 8, plus interactionNoise. It returns the results folder
// and the spec.
func writeInteractionFixture(t *testing.T, dir string) (string, *experiments.Spec) {
	t.Helper()
	specFile := filepath.Join(dir, "interaction.yaml")
	if err := os.WriteFile(specFile, []byte(interactionSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	names := &experiments.Names{Methods: []string{"dpsgd", "dualpriv"}, Tasks: []string{"fashion-vqa"}, Scales: []string{"smoke"}}
	s, err := experiments.Load(specFile, &experiments.Options{Names: names})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	root := filepath.Join(dir, "results")
	in := experiments.Inputs{Data: "data-fixture", Base: "pretrain-fixture"}
	var rows []results.Run
	for i, c := range s.Expand() {
		eps := float64(c.Epsilon)
		id := c.ID(in)
		d := results.RunDir(root, s.Name, id)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		start := fixtureNow.Add(-time.Hour + time.Duration(i)*time.Minute)
		acc := 60 + float64(c.Seed)
		if eps == 8 {
			acc += 4
		}
		if c.Method == "dualpriv" {
			acc += 6 + interactionNoise[eps][c.Seed]
			if eps == 8 {
				acc -= 4
			}
		}
		m := &results.Manifest{
			Format: results.Format, RunID: id, Experiment: s.Name, Status: results.OK, Config: c, Inputs: in,
			Started: start, Finished: start.Add(30 * time.Second), Seconds: 30, Steps: 70,
			Provenance: results.Provenance{Revision: "fixture", Code: "code-fixture", GoVersion: "go1.26", OS: "linux", Arch: "amd64", CPUs: 2, Jobs: 1},
			Privacy: &results.Privacy{
				Accountant: "rdp", EpsilonTarget: results.Float(eps), Epsilon: results.Float(eps), Delta: c.Delta,
				Sigma: 1 / eps, SampleRate: 0.1, Steps: 70, Sampling: "poisson", Neighbouring: "add-remove", ClipNorm: 1,
			},
			Results: map[string]results.Float{"acc": results.Float(acc)},
		}
		if err := results.WriteManifest(d, m); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, results.RunOf(m))
	}
	if err := results.WriteRuns(filepath.Join(root, s.Name, results.RunsFile), rows); err != nil {
		t.Fatal(err)
	}
	return root, s
}
