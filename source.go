// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package repro provides the fingerprint of the code on a run's path, which
// run ids hash so that cached results never outlive the code that made
// them. The commands live in cmd/repro; the packages are described in
// README.md.
//
// The fingerprint covers the non-test Go sources of every package a run
// executes: the spec expansion (experiments), the run lifecycle
// (runners/pipeline), the methods, attacks, privacy accountants, datasets,
// the pretraining and the tensor engine (nn and its subpackages), and the
// internal helpers they share. They are embedded in the binary, so the
// fingerprint is computed from the sources the binary was built from and
// can never be stale; a file added to a covered folder is picked up by the
// build. A test checks that every package runners/pipeline imports,
// directly or not, is covered or deliberately left out (the scheduler in
// runners, the recording format in internal/results, which has its own
// format version, and the build information).
package repro

import (
	"crypto/sha256"
	"embed"
	"encoding/binary"
	"encoding/hex"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
)

// sources holds the Go files of the packages on a run's path. A folder
// gets its own pattern: embed patterns do not cross into subfolders.
//
//go:embed experiments/*.go
//go:embed runners/pipeline/*.go
//go:embed methods/*.go methods/fl/*.go methods/mi/*.go
//go:embed attacks/*.go attacks/gia/*.go
//go:embed privacy/*.go
//go:embed datasets/*.go
//go:embed pretrain/*.go
//go:embed nn/*.go nn/optim/*.go nn/safetensors/*.go
//go:embed internal/parallel/*.go internal/registry/*.go
var sources embed.FS

// Code returns the fingerprint of the code on a run's path: the hex
// SHA-256 of the name, length and contents of each embedded non-test Go
// source, in lexical order of path. It is computed once per process.
func Code() string { return codeOnce() }

var codeOnce = sync.OnceValue(func() string {
	s, err := hashSources(sources)
	if err != nil {
		// The embedded FS is in memory: reading it cannot fail.
		panic("repro: " + err.Error())
	}
	return s
})

// hashSources returns the hex SHA-256 over the non-test .go files of fsys
// (see [Code]).
func hashSources(fsys fs.FS) (string, error) {
	var names []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && isSource(p) {
			names = append(names, p)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	slices.Sort(names)
	h := sha256.New()
	var n [8]byte
	for _, name := range names {
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return "", err
		}
		// Length-prefixed fields: no two file sets hash the same text.
		binary.LittleEndian.PutUint64(n[:], uint64(len(name)))
		h.Write(n[:])
		h.Write([]byte(name))
		binary.LittleEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// isSource reports whether p names a non-test Go file.
func isSource(p string) bool {
	base := path.Base(p)
	return strings.HasSuffix(base, ".go") && !strings.HasSuffix(base, "_test.go")
}
