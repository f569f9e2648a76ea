// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/runners/pipeline"
)

func TestDataInfoJSON(t *testing.T) {
	for _, task := range datasets.Tasks() {
		out, _, err := run(t, "data", "info", task, "--scale", "smoke", "--json")
		if err != nil {
			t.Fatalf("repro data info %s: %v", task, err)
		}
		var got struct {
			Splits      map[string]int `json:"splits"`
			Fingerprint string         `json:"fingerprint"`
			VocabSize   int            `json:"vocab_size"`
			Canaries    map[string]int `json:"canaries"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("repro data info %s --json: %v in %q", task, err, out)
		}
		d, err := datasets.Build(task, &datasets.Options{Scale: datasets.Smoke, Seed: 1}) // the default --seed, the first run seed
		if err != nil {
			t.Fatal(err)
		}
		if got.Fingerprint != d.Fingerprint() || got.Splits["private"] != len(d.Private) || got.Splits["test"] != len(d.Test) ||
			got.VocabSize != datasets.Vocab().Len() || got.Canaries["16"] != 1 && !strings.HasSuffix(task, "-mia") && !strings.HasSuffix(task, "-lira") && !strings.HasSuffix(task, datasets.TuneSuffix) {
			t.Errorf("%s: got %+v, want fingerprint %s, private %d, test %d", task, got, d.Fingerprint(), len(d.Private), len(d.Test))
		}
	}
}

func TestDataInfoText(t *testing.T) {
	out, _, err := run(t, "data", "info", "--seed", "2", "records", "--scale", "smoke")
	if err != nil {
		t.Fatal(err)
	}
	d, err := datasets.Build("records", &datasets.Options{Scale: datasets.Smoke, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"task         records", "seed         2", "fingerprint  " + d.Fingerprint(), "canaries     1×1, 1×4, 1×16 inserted (21 copies in private), 1 reference", "  private      277  "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestDataInfoDefault runs every task at the default (small) scale from the
// embedded data.
func TestDataInfoDefault(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every task's small preset")
	}
	for _, task := range datasets.Tasks() {
		out, _, err := run(t, "data", "info", task)
		if err != nil {
			t.Fatalf("repro data info %s: %v", task, err)
		}
		if !strings.Contains(out, "scale        small") || !strings.Contains(out, "fingerprint  ") {
			t.Errorf("repro data info %s printed:\n%s", task, out)
		}
	}
}

func TestDataInfoExamples(t *testing.T) {
	out, _, err := run(t, "data", "info", "records", "--scale", "smoke", "--examples", "1")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\nrecords/public/0 [", "\nrecords/test/0 [", "{name "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestDataInfoErrors(t *testing.T) {
	dir := t.TempDir()
	// A truncated training-images file.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte{0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 28, 0, 0, 0, 28, 1, 2, 3})
	zw.Close()
	bad := filepath.Join(dir, "train-images-idx3-ubyte.gz")
	if err := os.WriteFile(bad, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"data", "info", "fashion-vqa", "--scale", "huge"}, `data info: --scale "huge": want one of smoke, small, full`},
		{[]string{"data", "info", "cifar"}, `data info: unknown TASK "cifar": want one of fashion-cls, fashion-cls-lira, fashion-cls-tune, fashion-upper, fashion-upper-tune, fashion-vqa, fashion-vqa-lira, fashion-vqa-mia, fashion-vqa-tune, fashion-vqa-tune-lira, fl-mm, fl-mm-tune, icl, records, records-e2e, records-echr, shapes-vqa, shapes-vqa-lira, shapes-vqa-mia, shapes-vqa-tune, shapes-vqa-tune-lira`},
		{[]string{"data", "info"}, "want one TASK argument"},
		{[]string{"data", "info", "records", "--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"data", "info", "records", "--examples", "-1"}, "--examples -1: want N ≥ 0"},
		{[]string{"data", "info", "fashion-cls", "--scale", "smoke", "--data-dir", dir}, bad + ": idx data: truncated"},
	} {
		_, _, err := run(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("repro %s: got error %v, want one line containing %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
}

func TestDataInfoRelease(t *testing.T) {
	if !datasets.FashionDirPresent(datasets.DefaultFashionDir) {
		t.Skip("full Fashion-MNIST not installed in " + datasets.DefaultFashionDir)
	}
	if testing.Short() {
		t.Skip("decodes the full release")
	}
	out, _, err := run(t, "data", "info", "fashion-cls", "--scale", "smoke", "--data-dir", datasets.DefaultFashionDir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "source       "+datasets.DefaultFashionDir+" (70000 Fashion-MNIST images)") {
		t.Errorf("output does not name the release directory as source:\n%s", out)
	}
	f, err := datasets.LoadFashion(datasets.DefaultFashionDir)
	if err != nil || f.Len() != 70000 {
		t.Fatalf("release: %v images, error %v; want all 70000", f.Len(), err)
	}
}

// TestDataInfoSeedIsRunSeed checks what repro data info --help says of
// --seed: the data it shows for --seed N is the data the runs of seed N
// train on, as the run pipeline builds it (pipeline.Data, the reference).
func TestDataInfoSeedIsRunSeed(t *testing.T) {
	seen := map[string]int64{}
	for _, seed := range []int64{1, 2} {
		out, _, err := run(t, "data", "info", "records", "--scale", "smoke", "--json", "--seed", strconv.FormatInt(seed, 10))
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Fingerprint string `json:"fingerprint"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		d, err := pipeline.Data("records", "smoke", seed)
		if err != nil {
			t.Fatal(err)
		}
		if got.Fingerprint != d.Fingerprint() {
			t.Errorf("repro data info records --seed %d: fingerprint %s, the runs of seed %d train on %s", seed, got.Fingerprint, seed, d.Fingerprint())
		}
		if s, ok := seen[got.Fingerprint]; ok {
			t.Errorf("seeds %d and %d give the same data: the test cannot tell them apart", s, seed)
		}
		seen[got.Fingerprint] = seed
	}
}
