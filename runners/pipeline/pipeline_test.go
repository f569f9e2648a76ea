// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pipeline

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/methods"
	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/pretrain"
	"github.com/repro-dp/repro/reports/specout"
	"github.com/repro-dp/repro/runners"
)

// freshBase replaces the pretrained base by a freshly initialised smoke
// model, so the tests do not pretrain.
func freshBase(t *testing.T) {
	t.Helper()
	old := newBase
	newBase = func(ctx context.Context, dir, scale string, b experiments.BaseChoice, _ io.Writer) (*pretrain.Result, error) {
		cfg, err := nn.Preset(scale, datasets.Vocab().Len())
		if err != nil {
			return nil, err
		}
		if cfg, err = cfg.WithPatch(b.Patch); err != nil {
			return nil, err
		}
		m, err := nn.NewTinyMLLM(cfg)
		if err != nil {
			return nil, err
		}
		return &pretrain.Result{Model: m, Hash: "fresh-" + scale}, nil
	}
	cache.Lock()
	cache.bases = nil
	cache.Unlock()
	t.Cleanup(func() {
		newBase = old
		cache.Lock()
		cache.bases = nil
		cache.Unlock()
	})
}

const spec = `
name: pipe
description: pipeline test
scale: smoke
delta: 1e-5
tasks: [shapes-vqa]
methods:
  - name: nonprivate
    sweep: {epsilon: [inf]}
  - name: dpsgd
  - name: dpzo
params: {epochs: 1}
sweep:
  epsilon: [2, inf]
attacks: [loss-mia]
tables:
  - name: tab
    rows: [epsilon_target]
    columns: [method]
    metrics: [acc, mia_auc]
    best: max
    reference:
      - {at: {method: dpsgd, epsilon_target: 2}, metric: acc, value: 81.5, source: "a paper"}
plots:
  - {name: fig, kind: line, x: epsilon_target, y: acc, series: method, facet: task, band: std, logx: true}
`

// TestSweep runs every method of a small spec through runners.Sweep and
// checks what runs.parquet and the manifests hold.
func TestSweep(t *testing.T) {
	freshBase(t)
	s, err := experiments.Parse("pipe.yaml", []byte(spec), nil)
	if err != nil {
		t.Fatal(err)
	}
	root, rows := sweepParsed(t, s, 2, 5)
	if len(rows) != 5 {
		t.Fatalf("%d rows in runs.parquet, want 5", len(rows))
	}
	paths, _, err := specout.Write(root, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"tab.txt", "tab.md", "tab.tex", "fig-shapes-vqa.png", "fig-shapes-vqa.svg", "fig-shapes-vqa.pdf"} {
		if !slices.Contains(paths, filepath.Join(root, "pipe", name)) {
			t.Errorf("specout.Write wrote %v, want %s among them", paths, name)
		}
	}
	md, err := os.ReadFile(filepath.Join(root, "pipe", "tab.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"acc", "auc", "81.5", "a paper"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("tab.md does not contain %q:\n%s", want, md)
		}
	}
	for _, r := range rows {
		if r.Status != results.OK {
			t.Errorf("run %s: status %s (%s)", r.RunID, r.Status, r.Error)
		}
		if r.Epsilon > r.EpsilonTarget {
			t.Errorf("%s ε target %v: achieved ε %v exceeds it", r.Method, r.EpsilonTarget, r.Epsilon)
		}
		if r.Method != "nonprivate" && !math.IsInf(r.EpsilonTarget, 1) && !(r.Sigma > 0) {
			t.Errorf("%s at ε %v: σ = %v", r.Method, r.EpsilonTarget, r.Sigma)
		}
		for _, k := range []string{"acc", "img", "acc_majority", "mia_auc", "mia_balanced_accuracy", "mia_tpr_at_fpr_0_01", "mia_fpr_achieved_0_01", "epsilon_rdp", "epsilon_pld"} {
			v, ok := r.Results[k]
			if !ok || math.IsNaN(v) {
				t.Errorf("%s ε %v: result %s = %v, %v", r.Method, r.EpsilonTarget, k, v, ok)
			}
		}
		if acc := r.Results["acc"]; acc < 0 || acc > 100 {
			t.Errorf("acc %v outside [0, 100]", acc)
		}
		private := r.Method != "nonprivate" && !math.IsInf(r.EpsilonTarget, 1)
		if _, ok := r.Results["mia_tpr_bound_0_01"]; ok != private {
			t.Errorf("%s ε %v: TPR bound recorded %v, want %v", r.Method, r.EpsilonTarget, ok, private)
		}
		dir := results.RunDir(root, "pipe", r.RunID)
		scores, err := results.ReadScores(filepath.Join(dir, results.ScoresFile))
		if err != nil {
			t.Fatal(err)
		}
		if len(scores) == 0 || len(scores)%2 != 0 {
			t.Errorf("%d scores, want an equal positive number of members and non-members", len(scores))
		}
		metrics, err := results.ReadMetrics(filepath.Join(dir, results.MetricsFile))
		if err != nil {
			t.Fatal(err)
		}
		var loss bool
		for _, m := range metrics {
			loss = loss || (m.Split == "train" && m.Name == "loss")
		}
		if !loss {
			t.Error("no training loss in metrics.parquet")
		}
		m, err := results.ReadManifest(dir)
		if err != nil {
			t.Fatal(err)
		}
		if m.Privacy == nil || m.Privacy.Sampling != "poisson" || m.Steps == 0 {
			t.Errorf("manifest privacy %+v, steps %d", m.Privacy, m.Steps)
		}
	}
}

func TestBaseID(t *testing.T) {
	a, err := BaseID("smoke")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := BaseID("smoke")
	c, _ := BaseID("small")
	if a != b || a == c || len(a) != len("pretrain-")+64 {
		t.Errorf("BaseID: smoke %q twice %q, small %q", a, b, c)
	}
	if _, err := BaseID("huge"); err == nil {
		t.Error("BaseID(huge): no error")
	}
	in, err := Inputs(&experiments.Config{Task: "fashion-vqa", Scale: "smoke", Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if in.Base != a || len(in.Data) != len("data-")+64 {
		t.Errorf("Inputs = %+v", in)
	}
	// The base param vision_patch selects another base; the preset's own patch
	// side or none is the preset's base.
	if p, _ := BaseIDAt("smoke", experiments.BaseChoice{}); p != a {
		t.Errorf("BaseIDAt(smoke, 0) = %q, want BaseID's %q", p, a)
	}
	p7, err := BaseIDAt("smoke", experiments.BaseChoice{Patch: 7})
	if err != nil || p7 == a {
		t.Errorf("BaseIDAt(smoke, 7) = %q, %v; want another base than %q", p7, err, a)
	}
	in, err = Inputs(&experiments.Config{Task: "fashion-vqa", Scale: "smoke", Seed: 1, Params: map[string]any{"vision_patch": int64(7)}})
	if err != nil || in.Base != p7 {
		t.Errorf("Inputs with patch 7 = %+v, %v; want base %q", in, err, p7)
	}
	if _, err := BaseIDAt("smoke", experiments.BaseChoice{Patch: 5}); err == nil {
		t.Error("BaseIDAt(smoke, 5): no error")
	}
	// vision_scenes 1 selects the scenes base (another plan), 0 the
	// preset's; with a patch side, a fourth base.
	sc, err := BaseIDAt("smoke", experiments.BaseChoice{Scenes: true})
	if err != nil || sc == a || sc == p7 {
		t.Errorf("BaseIDAt(smoke, scenes) = %q, %v; want another base than %q and %q", sc, err, a, p7)
	}
	for v, want := range map[int64]string{0: a, 1: sc} {
		in, err = Inputs(&experiments.Config{Task: "shapes-vqa", Scale: "smoke", Seed: 1, Params: map[string]any{"vision_scenes": v}})
		if err != nil || in.Base != want {
			t.Errorf("Inputs with vision_scenes %d = %+v, %v; want base %q", v, in, err, want)
		}
	}
	if sp, err := BaseIDAt("smoke", experiments.BaseChoice{Patch: 7, Scenes: true}); err != nil || sp == sc || sp == p7 {
		t.Errorf("BaseIDAt(smoke, patch 7, scenes) = %q, %v; want a base of its own", sp, err)
	}
	// shapes_questions 1 selects the shapes-questions base (another
	// plan), 0 the preset's.
	sq, err := BaseIDAt("smoke", experiments.BaseChoice{ShapesQuestions: true})
	if err != nil || sq == a || sq == sc || sq == p7 {
		t.Errorf("BaseIDAt(smoke, shapes questions) = %q, %v; want another base than %q, %q and %q", sq, err, a, sc, p7)
	}
	for v, want := range map[int64]string{0: a, 1: sq} {
		in, err = Inputs(&experiments.Config{Task: "shapes-vqa", Scale: "smoke", Seed: 1, Params: map[string]any{"shapes_questions": v}})
		if err != nil || in.Base != want {
			t.Errorf("Inputs with shapes_questions %d = %+v, %v; want base %q", v, in, err, want)
		}
	}
	// caption_stage 1 selects the captions base (another plan), 0 or
	// absent the preset's, whose id the new plan fields leave as it was.
	cp, err := BaseIDAt("smoke", experiments.BaseChoice{Captions: true})
	if err != nil || cp == a || cp == sq || cp == sc || cp == p7 {
		t.Errorf("BaseIDAt(smoke, captions) = %q, %v; want another base than %q, %q, %q and %q", cp, err, a, sq, sc, p7)
	}
	for v, want := range map[int64]string{0: a, 1: cp} {
		in, err = Inputs(&experiments.Config{Task: "shapes-vqa", Scale: "smoke", Seed: 1, Params: map[string]any{"caption_stage": v}})
		if err != nil || in.Base != want {
			t.Errorf("Inputs with caption_stage %d = %+v, %v; want base %q", v, in, err, want)
		}
	}
	// cell_captions N selects the cell-captions base of N times the
	// steps (another plan each), 0 or absent the preset's.
	c1, err := BaseIDAt("smoke", experiments.BaseChoice{CellCaptions: 1})
	if err != nil || c1 == a || c1 == cp || c1 == sq || c1 == sc || c1 == p7 {
		t.Errorf("BaseIDAt(smoke, cell captions 1) = %q, %v; want a base of its own", c1, err)
	}
	c4, err := BaseIDAt("smoke", experiments.BaseChoice{CellCaptions: 4})
	if err != nil || c4 == c1 || c4 == a {
		t.Errorf("BaseIDAt(smoke, cell captions 4) = %q, %v; want another base than %q", c4, err, c1)
	}
	for v, want := range map[int64]string{0: a, 1: c1, 4: c4} {
		in, err = Inputs(&experiments.Config{Task: "shapes-vqa", Scale: "smoke", Seed: 1, Params: map[string]any{"cell_captions": v}})
		if err != nil || in.Base != want {
			t.Errorf("Inputs with cell_captions %d = %+v, %v; want base %q", v, in, err, want)
		}
	}
	// cell_form N ≥ 1 selects another form of the cell-captions base
	// (another plan each), 0 or absent the fixed order's; without
	// cell_captions it is refused.
	forms := map[string]bool{c4: true}
	for f := 1; f < len(pretrain.CellForms); f++ {
		cf, err := BaseIDAt("smoke", experiments.BaseChoice{CellCaptions: 4, CellForm: f})
		if err != nil || forms[cf] || cf == a {
			t.Errorf("BaseIDAt(smoke, cell captions 4, form %d) = %q, %v; want a base of its own", f, cf, err)
		}
		forms[cf] = true
		in, err = Inputs(&experiments.Config{Task: "shapes-vqa", Scale: "smoke", Seed: 1, Params: map[string]any{"cell_captions": int64(4), "cell_form": int64(f)}})
		if err != nil || in.Base != cf {
			t.Errorf("Inputs with cell_form %d = %+v, %v; want base %q", f, in, err, cf)
		}
	}
	in, err = Inputs(&experiments.Config{Task: "shapes-vqa", Scale: "smoke", Seed: 1, Params: map[string]any{"cell_captions": int64(4), "cell_form": int64(0)}})
	if err != nil || in.Base != c4 {
		t.Errorf("Inputs with cell_form 0 = %+v, %v; want the fixed order's base %q", in, err, c4)
	}
	if _, err := BaseIDAt("smoke", experiments.BaseChoice{CellForm: 2}); err == nil {
		t.Error("BaseIDAt(smoke, cell form 2 without cell captions): no error")
	}
}

// TestEvaluate compares greedy decoding's exact match with the
// teacher-forced check of package pretrain (every answer token is the
// model's most likely next token), which is the same thing computed
// another way, on a model fine-tuned enough to get some answers right.
func TestEvaluate(t *testing.T) {
	d, err := Data("fashion-vqa", "smoke", 3)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := nn.Preset("smoke", datasets.Vocab().Len())
	cfg.Seed = 3 // seed 1 got nothing right with the 394-token vocabulary
	m, err := nn.NewTinyMLLM(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := methods.Defaults("nonprivate", "smoke")
	h.LR = 1e-2
	job := &methods.Job{Model: m, Data: d, Hyper: h, Epsilon: math.Inf(1), Delta: 1e-5, Seed: 3}
	if _, err := (methods.NonPrivate{}).FineTune(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	ev, err := Evaluate(context.Background(), m, nil, d.Test, d.Private, 0)
	if err != nil {
		t.Fatal(err)
	}
	test := make([]nn.Sequence, len(d.Test))
	var img []nn.Sequence
	for i := range d.Test {
		test[i] = methods.Sequence(&d.Test[i])
		if !d.Test[i].TextOnly {
			img = append(img, test[i])
		}
	}
	acc, _, err := pretrain.ExactMatch(m, test)
	if err != nil {
		t.Fatal(err)
	}
	accImg, _, err := pretrain.ExactMatch(m, img)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(ev.Acc-100*acc) > 1e-9 || math.Abs(ev.Img-100*accImg) > 1e-9 {
		t.Errorf("Evaluate acc %v img %v; teacher-forced exact match %v, %v", ev.Acc, ev.Img, 100*acc, 100*accImg)
	}
	if ev.Acc == 0 || ev.N != len(d.Test) || ev.NImg != len(img) || ev.NImg == ev.N {
		t.Errorf("Evaluate: %+v (a test that compares nothing)", ev)
	}
	if !(ev.Majority > 0 && ev.Majority < 100) {
		t.Errorf("majority baseline %v", ev.Majority)
	}
	// The prediction rows: one per test example in order, their correct
	// flags giving acc, their losses the training loss of the example
	// (nn's Loss on a tape, another path to the same mean cross-entropy).
	if len(ev.Predictions) != len(d.Test) {
		t.Fatalf("%d predictions for %d test examples", len(ev.Predictions), len(d.Test))
	}
	hit := 0
	for i, p := range ev.Predictions {
		if p.Split != "test" || p.ExampleID != d.Test[i].ID || p.Prediction == "" {
			t.Errorf("prediction %d = %+v, want test example %s", i, p, d.Test[i].ID)
		}
		if p.Correct {
			hit++
		}
		if i%16 == 0 {
			loss, err := m.Loss(nn.NewTape(nil, nil), &test[i], nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The tape computes in float32: agreement to 1e-4 relative.
			if want := float64(loss.Value.Row(0)[0]); math.Abs(p.Loss-want) > 1e-4*math.Max(1, want) {
				t.Errorf("prediction %d: loss %v, Loss on a tape %v", i, p.Loss, want)
			}
		}
	}
	if got := 100 * float64(hit) / float64(len(d.Test)); math.Abs(got-ev.Acc) > 1e-9 {
		t.Errorf("predictions give acc %v, Evaluate %v", got, ev.Acc)
	}
}

// TestBaseInterrupt interrupts the pretraining of a base (the real one, in
// an empty cache): Base returns the interrupt's error, caches nothing on
// disk or in memory, and the next call builds the base.
func TestBaseInterrupt(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Base(ctx, dir, "smoke"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Base with an interrupted context: %v, want context.Canceled", err)
	}
	if ms, _ := filepath.Glob(filepath.Join(dir, "*", "manifest.json")); len(ms) != 0 {
		t.Errorf("the interrupted pretraining cached %q", ms)
	}
	freshBase(t)
	if r, err := Base(t.Context(), dir, "smoke"); err != nil || r.Hash != "fresh-smoke" {
		t.Errorf("Base after the interrupt: %v, %v; want it built again", r, err)
	}
}

// TestData checks that a dataset is shared while it is in use, and that
// DataID tells datasets apart without building them.
func TestData(t *testing.T) {
	a, err := Data("shapes-vqa", "smoke", 7)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := Data("shapes-vqa", "smoke", 7); b != a {
		t.Errorf("Data built a dataset twice while the first was in use")
	}
	ids := map[string]bool{}
	for _, c := range []struct {
		task, scale string
		seed        int64
	}{{"shapes-vqa", "smoke", 7}, {"shapes-vqa", "smoke", 8}, {"fashion-vqa", "smoke", 7}, {"shapes-vqa", "small", 7}} {
		id, err := DataID(c.task, c.scale, c.seed)
		if err != nil || ids[id] {
			t.Errorf("DataID%v = %s, %v: not distinct", c, id, err)
		}
		ids[id] = true
	}
	if _, err := DataID("shapes-vqa", "huge", 1); err == nil {
		t.Errorf("DataID at scale huge: no error")
	}
	// A zero partition keeps DataID's identity; each field tells data
	// apart, and DataPart builds the partition asked for.
	if a, b := must(DataID("fl-mm", "smoke", 1)), must(DataIDPart("fl-mm", "smoke", 1, experiments.Partition{})); a != b {
		t.Errorf("DataIDPart with a zero partition = %s, want DataID's %s", b, a)
	}
	for _, p := range []experiments.Partition{{Clients: 2}, {Alpha: 0.1}, {Clients: 2, Alpha: 0.1}} {
		id := must(DataIDPart("fl-mm", "smoke", 1, p))
		if ids[id] {
			t.Errorf("DataIDPart(%+v) = %s: not distinct", p, id)
		}
		ids[id] = true
	}
	d, err := DataPart("fl-mm", "smoke", 1, experiments.Partition{Clients: 2, Alpha: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if d.Clients != 2 || d.Alpha != 0.1 {
		t.Errorf("DataPart built %d clients at α = %v, want 2 and 0.1", d.Clients, d.Alpha)
	}
	// shapes_balanced tells shapes-vqa's data apart, and the run's params
	// carry it to the build (the balanced build's fingerprint).
	bal := must(DataIDPart("shapes-vqa", "smoke", 7, experiments.Partition{ShapesBalanced: true}))
	if ids[bal] {
		t.Errorf("DataIDPart(shapes-vqa, balanced) = %s: not distinct", bal)
	}
	cfg := &experiments.Config{Task: "shapes-vqa", Scale: "smoke", Seed: 7, Params: map[string]any{"shapes_balanced": int64(1)}}
	if in, err := Inputs(cfg); err != nil || in.Data != bal {
		t.Errorf("Inputs with shapes_balanced 1 = %+v, %v; want data %s", in, err, bal)
	}
	fcfg := &experiments.Config{Task: "fashion-vqa", Scale: "smoke", Seed: 7, Params: map[string]any{"shapes_balanced": int64(1)}}
	if in, err := Inputs(fcfg); err != nil || in.Data != must(DataID("fashion-vqa", "smoke", 7)) {
		t.Errorf("Inputs of fashion-vqa with shapes_balanced 1 = %+v, %v; want fashion-vqa's own data id", in, err)
	}
	db, err := DataPart("shapes-vqa", "smoke", 7, cfg.Partition())
	if err != nil {
		t.Fatal(err)
	}
	want, err := datasets.Build("shapes-vqa", &datasets.Options{Scale: datasets.Smoke, Seed: 7, ShapesBalanced: true})
	if err != nil {
		t.Fatal(err)
	}
	if db.Fingerprint() != want.Fingerprint() || db.Fingerprint() == a.Fingerprint() {
		t.Errorf("DataPart with shapes_balanced 1: fingerprint %.12s, want the balanced build's %.12s (plain %.12s)", db.Fingerprint(), want.Fingerprint(), a.Fingerprint())
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// sweepSpec parses the spec src (named file in errors), runs it through
// runners.Sweep with jobs workers under a fresh root, fails the test
// unless exactly ok runs finish, and returns the root and the rows of the
// experiment's runs.parquet.
func sweepSpec(t *testing.T, file, src string, jobs, ok int) (string, []results.Run) {
	t.Helper()
	s, err := experiments.Parse(file, []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	return sweepParsed(t, s, jobs, ok)
}

// sweepParsed is sweepSpec for a parsed spec.
func sweepParsed(t *testing.T, s *experiments.Spec, jobs, ok int) (string, []results.Run) {
	t.Helper()
	root := t.TempDir()
	sum, err := runners.Sweep(context.Background(), s, &runners.Options{Root: root, Jobs: jobs})
	if err != nil || sum.OK != ok {
		t.Fatalf("sweep %s: %v (%+v), want %d runs ok", s.Name, err, sum, ok)
	}
	rows, err := results.ReadRuns(filepath.Join(root, s.Name, results.RunsFile))
	if err != nil {
		t.Fatal(err)
	}
	return root, rows
}
