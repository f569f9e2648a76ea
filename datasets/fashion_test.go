// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestEmbeddedFashion(t *testing.T) {
	t.Parallel()
	f, err := LoadFashion("")
	if err != nil {
		t.Fatal(err)
	}
	if f.Len() != embeddedFashionSz || len(f.Images) != 784*f.Len() || len(f.Origin) != f.Len() {
		t.Fatalf("embedded pool: %d labels, %d bytes, %d origins; want %d images", f.Len(), len(f.Images), len(f.Origin), embeddedFashionSz)
	}
	perClass := make([]int, 10)
	fromTest := 0
	seen := make(map[int32]bool)
	for i, l := range f.Labels {
		perClass[l]++
		if f.Origin[i] >= FashionTrainLen {
			fromTest++
		}
		if seen[f.Origin[i]] {
			t.Errorf("origin %d appears twice", f.Origin[i])
		}
		seen[f.Origin[i]] = true
	}
	for c, n := range perClass {
		if n != embeddedPerClass {
			t.Errorf("class %d has %d images, want %d", c, n, embeddedPerClass)
		}
	}
	if fromTest != 1000 {
		t.Errorf("%d images from the test file, want 1000", fromTest)
	}
	// The decoded hashes documented in data/fashion-mnist/README.md.
	for name, want := range map[string]string{
		embeddedImages: "3aa25504df401b05cf6ebd877c7a518bf29edd2ac0674b97f4ed672d648760c4",
		embeddedLabels: "a9869d7706c8bf29efa6987cd188a49886290741876bd7ca8bd329c21ea4637a",
		embeddedOrigin: "e09107059cb8f4c88824bcbe3b570058e1d9cf81f6dffe49c7a09a00b7a5f798",
	} {
		r, err := embeddedFashion.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		x, err := DecodeIDX(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := x.Sum256(); got != want {
			t.Errorf("%s: decoded SHA-256 %s, want %s (README)", name, got, want)
		}
	}
	img := f.Image(0)
	for i, g := range f.Images[:784] {
		if want := float32(g) / 255; img[i] != want || img[784+i] != want || img[2*784+i] != want {
			t.Fatalf("Image(0) pixel %d: got %v %v %v, want %v in every channel", i, img[i], img[784+i], img[2*784+i], want)
		}
	}
}

// TestEmbeddedMatchesRelease re-derives the embedded subset from Debian's
// files and compares it byte for byte.
func TestEmbeddedMatchesRelease(t *testing.T) {
	if !FashionDirPresent(DefaultFashionDir) {
		t.Skip("full Fashion-MNIST not installed in " + DefaultFashionDir)
	}
	if testing.Short() {
		t.Skip("decodes the full release")
	}
	full, err := LoadFashion(DefaultFashionDir)
	if err != nil {
		t.Fatal(err)
	}
	if full.Len() != FashionTrainLen+FashionTestLen {
		t.Fatalf("full release has %d images, want 70000", full.Len())
	}
	emb, err := LoadFashion("")
	if err != nil {
		t.Fatal(err)
	}
	img, lab, org := FashionSubset(full)
	if !bytes.Equal(img, emb.Images) || !bytes.Equal(lab, emb.Labels) {
		t.Fatal("embedded subset differs from FashionSubset of the release; rerun go run gen_fashion.go")
	}
	for i := range org {
		if org[i] != emb.Origin[i] {
			t.Fatalf("origin %d: embedded %d, release subset %d", i, emb.Origin[i], org[i])
		}
		// The embedded image is the release's image at its origin.
		o := int(org[i])
		if !bytes.Equal(full.Images[o*784:(o+1)*784], emb.Images[i*784:(i+1)*784]) {
			t.Fatalf("embedded image %d is not release image %d", i, o)
		}
	}
}

// writeFashionDir writes a fake release directory whose files hold the
// embedded subset (so the checksums cannot match) and returns it.
func writeFashionDir(t *testing.T, mutate func(name string, data []byte) []byte) string {
	t.Helper()
	f, err := LoadFashion("")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	n := 100
	for _, files := range fashionFiles {
		for _, x := range []struct {
			name string
			x    *IDX
		}{
			{files.images, &IDX{Type: IDXUint8, Dims: []int{n, 28, 28}, Uint8: f.Images[:n*784]}},
			{files.labels, &IDX{Type: IDXUint8, Dims: []int{n}, Uint8: f.Labels[:n]}},
		} {
			var raw, gz bytes.Buffer
			if err := EncodeIDX(&raw, x.x); err != nil {
				t.Fatal(err)
			}
			zw := gzip.NewWriter(&gz)
			zw.Write(raw.Bytes())
			zw.Close()
			data := mutate(x.name, gz.Bytes())
			if data == nil {
				continue
			}
			if err := os.WriteFile(filepath.Join(dir, x.name+".gz"), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

func TestFashionDirErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		desc   string
		mutate func(name string, data []byte) []byte
		file   string
		want   string
	}{
		{"wrong data", func(_ string, d []byte) []byte { return d }, "train-images-idx3-ubyte.gz", "not the Fashion-MNIST release"},
		{"truncated", func(name string, d []byte) []byte {
			if name == "train-labels-idx1-ubyte" {
				return d[:len(d)/2]
			}
			return d
		}, "train-labels-idx1-ubyte.gz", "truncated"},
		{"missing", func(name string, d []byte) []byte {
			if name == "t10k-images-idx3-ubyte" {
				return nil
			}
			return d
		}, "t10k-images-idx3-ubyte", "missing Fashion-MNIST file"},
	} {
		dir := writeFashionDir(t, tc.mutate)
		_, err := loadFashionDir(dir)
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, tc.file)) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got error %v, want one naming %s and containing %q", tc.desc, err, tc.file, tc.want)
		}
	}
}

func TestFashionDirUnchecked(t *testing.T) {
	t.Parallel()
	// Without checksums the fake directory decodes: shapes and origins.
	dir := writeFashionDir(t, func(_ string, d []byte) []byte { return d })
	f := &Fashion{}
	for part, files := range fashionFiles {
		img, _, err := readIDXFile(os.DirFS(dir), dir, files.images, "")
		if err != nil {
			t.Fatal(err)
		}
		lab, _, err := readIDXFile(os.DirFS(dir), dir, files.labels, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := f.appendPart(img, lab, nil, int32(part*FashionTrainLen)); err != nil {
			t.Fatal(err)
		}
	}
	if f.Len() != 200 || f.Origin[99] != 99 || f.Origin[100] != FashionTrainLen {
		t.Errorf("got %d images, origins %d and %d; want 200, 99 and %d", f.Len(), f.Origin[99], f.Origin[100], FashionTrainLen)
	}
	bad := &IDX{Type: IDXUint8, Dims: []int{1}, Uint8: []byte{10}}
	img := &IDX{Type: IDXUint8, Dims: []int{1, 28, 28}, Uint8: make([]byte, 784)}
	if err := f.appendPart(img, bad, nil, 0); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("label 10: got error %v, want out of range", err)
	}
}

func TestShade(t *testing.T) {
	t.Parallel()
	img := make([]byte, 784)
	if got := Shade(img); got != "dark" {
		t.Errorf("blank image: got %s, want dark", got)
	}
	img[0], img[1] = 255, 50 // mean of ink (255+50)/2/255 ≈ 0.598 ≥ 0.59
	if got := Shade(img); got != "light" {
		t.Errorf("ink mean 0.598: got %s, want light", got)
	}
	img[1] = 45 // (255+45)/2/255 ≈ 0.588 < 0.59
	if got := Shade(img); got != "dark" {
		t.Errorf("ink mean 0.588: got %s, want dark", got)
	}
}

// TestFashionUpper checks fashion-upper against fashion-cls, built
// independently: its public split is fashion-cls's (the same images and
// coarse labels, so the same base pretraining); its private, holdout and
// test examples are private-side images of the four upper-body garments,
// each labelled with its fine label's position in FashionUpper (the
// label read back from the pool), all in the one coarse category; the
// splits have upperSizes' sizes at smoke and small (the embedded subset's
// 1947 private-side upper-body images bound small); canary labels are
// among the four classes.
func TestFashionUpper(t *testing.T) {
	t.Parallel()
	f, err := LoadFashion("")
	if err != nil {
		t.Fatal(err)
	}
	label := make(map[string]uint8, f.Len())
	for i := range f.Len() {
		label[fashionItem(f, i)] = f.Labels[i]
	}
	d, cls := smoke(t, "fashion-upper", 0), smoke(t, "fashion-cls", 0)
	if want := []string{"tshirt", "pullover", "coat", "shirt"}; !slices.Equal(d.Classes, want) || !slices.Equal(d.PublicClasses, FashionCoarse) {
		t.Fatalf("classes %v, public classes %v; want %v and %v", d.Classes, d.PublicClasses, want, FashionCoarse)
	}
	if len(d.Public) != len(cls.Public) {
		t.Fatalf("public split has %d examples, fashion-cls's %d", len(d.Public), len(cls.Public))
	}
	for i, ex := range d.Public {
		if c := cls.Public[i]; !slices.Equal(ex.Items, c.Items) || ex.Label != c.Label {
			t.Fatalf("public %d: %v label %d, fashion-cls has %v label %d", i, ex.Items, ex.Label, c.Items, c.Label)
		}
	}
	sz := upperSizes[Smoke]
	if len(d.Holdout) != sz.Holdout || len(d.Test) != sz.Test {
		t.Fatalf("holdout, test have %d, %d examples, want %d, %d", len(d.Holdout), len(d.Test), sz.Holdout, sz.Test)
	}
	regular := 0
	for _, split := range privateSide {
		for _, ex := range d.Split(split) {
			if ex.Canary >= 0 {
				if ex.Label < 0 || ex.Label >= 4 {
					t.Fatalf("%s: canary label %d", ex.ID, ex.Label)
				}
				continue
			}
			if split == "private" {
				regular++
			}
			fine, ok := label[ex.Items[0]]
			if !ok {
				t.Fatalf("%s: item %s not in the pool", ex.ID, ex.Items[0])
			}
			if ex.Label < 0 || ex.Label >= 4 || FashionUpper[ex.Label] != int(fine) || FashionCoarseOf[fine] != 0 {
				t.Fatalf("%s: label %d for fine label %d (%s)", ex.ID, ex.Label, fine, FashionClasses[fine])
			}
		}
	}
	if regular != sz.Private {
		t.Errorf("private split has %d regular examples, want %d", regular, sz.Private)
	}
	if _, err := Build("fashion-upper", &Options{Scale: Small}); err != nil {
		t.Errorf("small: %v", err)
	}
}
