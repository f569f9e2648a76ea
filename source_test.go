// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package repro

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
)

func TestHashSources(t *testing.T) {
	t.Parallel()
	base := fstest.MapFS{
		"methods/dpsgd.go":      {Data: []byte("package methods\n")},
		"methods/dpsgd_test.go": {Data: []byte("package methods\n// test\n")},
		"nn/optim/adam.go":      {Data: []byte("package optim\n")},
	}
	want, err := hashSources(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		desc    string
		edit    func(fstest.MapFS)
		changes bool
	}{
		{"nothing", func(fstest.MapFS) {}, false},
		{"a source changes", func(m fstest.MapFS) { m["methods/dpsgd.go"] = &fstest.MapFile{Data: []byte("package methods\n\n")} }, true},
		{"a source in a subfolder changes", func(m fstest.MapFS) { m["nn/optim/adam.go"] = &fstest.MapFile{Data: []byte("package optim // β\n")} }, true},
		{"a source is added", func(m fstest.MapFS) { m["methods/sparta.go"] = &fstest.MapFile{Data: []byte("package methods\n")} }, true},
		{"a source is removed", func(m fstest.MapFS) { delete(m, "nn/optim/adam.go") }, true},
		{"a source is renamed", func(m fstest.MapFS) { m["methods/dpsgd2.go"] = m["methods/dpsgd.go"]; delete(m, "methods/dpsgd.go") }, true},
		{"text moves between files", func(m fstest.MapFS) {
			m["methods/dpsgd.go"] = &fstest.MapFile{Data: []byte("package methods\npackage optim\n")}
			m["nn/optim/adam.go"] = &fstest.MapFile{Data: nil}
		}, true},
		{"a test changes", func(m fstest.MapFS) { m["methods/dpsgd_test.go"] = &fstest.MapFile{Data: []byte("package methods\n")} }, false},
		{"a non-Go file is added", func(m fstest.MapFS) { m["methods/README.md"] = &fstest.MapFile{Data: []byte("# methods\n")} }, false},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			m := fstest.MapFS{}
			for k, v := range base {
				m[k] = v
			}
			tc.edit(m)
			got, err := hashSources(m)
			if err != nil {
				t.Fatal(err)
			}
			if changed := got != want; changed != tc.changes {
				t.Errorf("fingerprint changed: %v, want %v (before %s, after %s)", changed, tc.changes, want, got)
			}
		})
	}
}

// leftOut are the packages on a run's path that Code deliberately does not
// cover, each with the reason.
var leftOut = map[string]string{
	"runners":               "schedules runs; results never depend on it (runners doc: Determinism)",
	"internal/results":      "the recording format, versioned by results.Format",
	"internal/buildinfo":    "build information, recorded in the manifest",
	"internal/parquetcheck": "checks parquet files before they are read; writes nothing a run records",
	"reports":               "reads results from disk; it never computes them",
}

// TestCodeCoversRunPath checks that every package runners/pipeline imports,
// directly or not, is embedded (or listed in leftOut), reading the import
// graph from the sources on disk. A new package on a run's path fails it
// until source.go embeds it.
func TestCodeCoversRunPath(t *testing.T) {
	const module = "github.com/repro-dp/repro/"
	covered := map[string]bool{}
	fs.WalkDir(sources, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			covered[path.Dir(p)] = true
		}
		return err
	})
	seen := map[string]bool{}
	queue := []string{"runners/pipeline"}
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		if seen[dir] {
			continue
		}
		seen[dir] = true
		if !covered[dir] && leftOut[dir] == "" {
			t.Errorf("package %s is on a run's path but source.go does not embed it: add //go:embed %s/*.go", dir, dir)
		}
		for _, imp := range imports(t, dir) {
			if rel, ok := strings.CutPrefix(imp, module); ok {
				queue = append(queue, rel)
			}
		}
	}
	for dir := range covered {
		if !seen[dir] {
			// Harmless (its changes re-run runs that do not need it),
			// and expected for a helper that is about to be used.
			t.Logf("source.go embeds %s, which runners/pipeline does not import", dir)
		}
	}
}

// imports returns the imports of the non-test Go files in dir.
func imports(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fset := token.NewFileSet()
	for _, e := range ents {
		if !isSource(e.Name()) {
			continue
		}
		f, err := parser.ParseFile(fset, path.Join(dir, e.Name()), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range f.Imports {
			p, _ := strconv.Unquote(s.Path.Value)
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// TestCodeIsDisk checks that Code hashes the sources on disk: the files of
// the covered folders, read from the working tree.
func TestCodeIsDisk(t *testing.T) {
	m := fstest.MapFS{}
	dirs := map[string]bool{}
	fs.WalkDir(sources, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			dirs[path.Dir(p)] = true
		}
		return err
	})
	for p := range dirs {
		ents, err := os.ReadDir(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if isSource(e.Name()) {
				b, err := os.ReadFile(path.Join(p, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				m[path.Join(p, e.Name())] = &fstest.MapFile{Data: b}
			}
		}
	}
	want, err := hashSources(m)
	if err != nil {
		t.Fatal(err)
	}
	if got := Code(); got != want || len(got) != 64 {
		t.Errorf("Code() = %s, want %s, the hash of the %d sources on disk", got, want, len(m))
	}
}
