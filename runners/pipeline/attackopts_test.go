// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pipeline

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/repro-dp/repro/attacks"
	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/reports"
)

const optionSpec = `
name: opts
description: attack options
scale: smoke
tasks: [shapes-vqa]
methods:
  - name: nonprivate
params: {epochs: 1}
attacks:
  - loss-mia
  - name: maxrenyi-mia
    slices: [desp]
    orders: [inf, 3]
    k: 50
  - {name: mink-mia, k: [50]}
tables:
  - {name: tab, rows: [method], columns: [task], metrics: [renyi_desp_a3_k50_auc, mink50_auc]}
`

// TestAttackOptionErrorsRegistered checks the spec errors of attack options
// with the registries' own declarations (the experiments tests use a
// fixture of them).
func TestAttackOptionErrorsRegistered(t *testing.T) {
	specErrors(t, "o.yaml", optionSpec, []specEdit{
		{"orders: [inf, 3]", "order: [inf, 3]", `o.yaml:13: attack maxrenyi-mia has no option "order" (known: slices, orders, k)`},
		{"slices: [desp]", "slices: [desp, text]", `o.yaml:12: attack maxrenyi-mia: unknown slice "text" (known: img, inst, desp, inst_desp)`},
		{"orders: [inf, 3]", "orders: [inf, -3]", `o.yaml:13: attack maxrenyi-mia: order -3: must be ≥ 0 or inf`},
		{"k: [50]", "k: [50, 101]", `o.yaml:15: attack mink-mia: K 101: must be in [0, 100]`},
		{"  - loss-mia", "  - {name: loss-mia, k: 1}", `o.yaml:10: attack loss-mia has no option "k" (it takes none)`},
		{"mink50_auc", "mink10_auc", `o.yaml:17: table tab: metric "mink10_auc" is not a result of attack mink-mia with the spec's options (k: [50])`},
		{"renyi_desp_a3_k50_auc", "renyi_desp_a2_k50_auc", `o.yaml:17: table tab: metric "renyi_desp_a2_k50_auc" is not a result of attack maxrenyi-mia with the spec's options (k: [50]; orders: [3, inf]; slices: [desp])`},
	})
}

// TestAttackOptionsRun runs a spec whose attacks have options and checks
// that the run records exactly the score sets the options name.
func TestAttackOptionsRun(t *testing.T) {
	freshBase(t)
	_, rows := sweepSpec(t, "o.yaml", optionSpec, 1, 1)
	var sets []string
	for k := range rows[0].Results {
		if strings.HasSuffix(k, "_auc") && !strings.HasPrefix(k, "mia_") {
			sets = append(sets, strings.TrimSuffix(k, "_auc"))
		}
	}
	slices.Sort(sets)
	if want := []string{"mink50", "renyi_desp_a3_k50", "renyi_desp_ainf_k50"}; !slices.Equal(sets, want) {
		t.Errorf("score sets %q, want %q", sets, want)
	}
	if _, ok := rows[0].Results["mia_auc"]; !ok {
		t.Error("loss-mia did not run")
	}
}

// TestImagesDir keeps the folder the pipeline writes the attacks' images
// to the one the grid plot kind reads.
func TestImagesDir(t *testing.T) {
	if attacks.ImagesDir != reports.ImagesDir {
		t.Errorf("attacks.ImagesDir %q, reports.ImagesDir %q", attacks.ImagesDir, reports.ImagesDir)
	}
}

const giaSpec = `
name: gia-test
description: gradient inversion on the run path
scale: smoke
tasks: [fashion-vqa]
methods:
  - name: nonprivate
params: {epochs: 1}
attacks:
  - {name: gia, batch: [1, 2], trials: 1, iterations: 2}
tables:
  - {name: tab, rows: [method], columns: [task], metrics: [gia_b2_psnr_mean]}
`

// TestGIASpecErrors checks the spec errors of the gia attack's options.
func TestGIASpecErrors(t *testing.T) {
	specErrors(t, "g.yaml", giaSpec, []specEdit{
		{"batch: [1, 2]", "batch: [0, 2]", `g.yaml:10: attack gia: batch size 0: must be an integer in [1, 64]`},
		{"batch: [1, 2]", "batch: [1.5]", `g.yaml:10: attack gia: batch size 1.5: must be an integer in [1, 64]`},
		{"trials: 1", "trials: [1, 2]", `g.yaml:10: attack gia: option trials takes one value, got 2`},
		{"gia_b2_psnr_mean", "gia_b8_psnr_mean", `g.yaml:12: table tab: metric "gia_b8_psnr_mean" is not a result of attack gia with the spec's options (batch: [1, 2]; iterations: [2])`},
	})
}

// A specEdit replaces old by new in a spec, which must then fail to parse
// with the error want.
type specEdit struct{ old, new, want string }

// specErrors applies each edit to the spec src, named file in errors, and
// checks the error Parse gives.
func specErrors(t *testing.T, file, src string, edits []specEdit) {
	t.Helper()
	for _, e := range edits {
		bad := strings.Replace(src, e.old, e.new, 1)
		if bad == src {
			t.Errorf("%s: the edit %q → %q changes nothing", file, e.old, e.new)
			continue
		}
		if _, err := experiments.Parse(file, []byte(bad), nil); err == nil || err.Error() != e.want {
			t.Errorf("%s → %s: got %v, want %s", e.old, e.new, err, e.want)
		}
	}
}

// TestGIARun runs the gia attack on the run path and checks its results
// and the images it writes for the grid plots.
func TestGIARun(t *testing.T) {
	freshBase(t)
	root, rows := sweepSpec(t, "g.yaml", giaSpec, 1, 1)
	for _, k := range []string{"gia_b1_psnr_mean", "gia_b2_psnr_max", "gia_b2_ssim", "gia_b1_baseline_psnr", "gia_b2_seconds_per_image"} {
		if v, ok := rows[0].Results[k]; !ok || v != v {
			t.Errorf("result %s = %v, %v", k, v, ok)
		}
	}
	id := rows[0].RunID
	for _, name := range []string{"b1-orig-0", "b1-recon-0", "b2-orig-1", "b2-recon-1"} {
		if _, err := os.Stat(filepath.Join(root, "gia-test", "runs", id, attacks.ImagesDir, name+".png")); err != nil {
			t.Error(err)
		}
	}
}
