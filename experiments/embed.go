// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package experiments

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
)

//go:embed *.yaml
var embedded embed.FS

// Info describes an embedded spec.
type Info struct {
	Name        string
	Description string
}

// List returns the embedded specs, sorted by name. It parses each with opts
// and returns the first error (an embedded spec that does not parse is a
// bug, caught by the tests).
func List(opts *Options) ([]Info, error) {
	files, err := fs.Glob(embedded, "*.yaml")
	if err != nil {
		return nil, err
	}
	var out []Info
	for _, f := range files {
		s, err := Load(strings.TrimSuffix(f, ".yaml"), opts)
		if err != nil {
			return nil, err
		}
		out = append(out, Info{Name: s.Name, Description: s.Description})
	}
	slices.SortFunc(out, func(a, b Info) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Load returns the spec called name: an embedded spec (table1), or, when
// name ends in .yaml or .yml, the spec in that file. The embedded spec's
// name must match its file name.
func Load(name string, opts *Options) (*Spec, error) {
	if strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml") {
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("experiments: %w", err)
		}
		return Parse(name, data, opts)
	}
	if !fileRE.MatchString(name) {
		return nil, fmt.Errorf("experiments: no experiment %q", name)
	}
	file := name + ".yaml"
	data, err := embedded.ReadFile(file)
	if err != nil {
		var known []string
		files, _ := fs.Glob(embedded, "*.yaml")
		for _, f := range files {
			known = append(known, strings.TrimSuffix(path.Base(f), ".yaml"))
		}
		return nil, fmt.Errorf("experiments: no experiment %q (embedded: %s; or give a .yaml file)", name, strings.Join(known, ", "))
	}
	s, err := Parse("experiments/"+file, data, opts)
	if err != nil {
		return nil, err
	}
	if s.Name != name {
		return nil, &SyntaxError{FileName: "experiments/" + file, Msg: fmt.Sprintf("name %q does not match the file name", s.Name)}
	}
	return s, nil
}

// Source returns the text of the file spec s was read from: the file
// FileName names or, when there is none, the embedded spec of an embedded
// experiment (FileName experiments/NAME.yaml).
func Source(s *Spec) ([]byte, error) {
	data, err := os.ReadFile(s.FileName)
	if err == nil {
		return data, nil
	}
	if name, ok := strings.CutPrefix(s.FileName, "experiments/"); ok && !strings.Contains(name, "/") {
		if data, err := embedded.ReadFile(name); err == nil {
			return data, nil
		}
	}
	return nil, fmt.Errorf("experiments: %w", err)
}

// Header returns the leading comment block of spec source data, without
// the comment markers, its lines joined by spaces: what an experiment
// mirrors, as each embedded spec states it. It is "" when data does not
// start with a comment.
func Header(data []byte) string {
	var words []string
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		text, ok := strings.CutPrefix(line, "#")
		if !ok {
			break
		}
		if text = strings.TrimSpace(text); text != "" {
			words = append(words, text)
		}
	}
	return strings.Join(words, " ")
}
