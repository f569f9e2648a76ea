// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package experiments

import (
	"io/fs"
	"os"
	"regexp"
	"strings"
	"testing"
)

// indexEntries returns the lines of an index in Markdown that can give an
// experiment its entry: the section headings, and the first cell of each
// table row (a family's section lists its specs in a table, one per row).
func indexEntries(md string) []string {
	var out []string
	for _, line := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(line, "#"):
			out = append(out, line)
		case strings.HasPrefix(line, "| "):
			cell, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " |")
			out = append(out, cell)
		}
	}
	return out
}

// indexed reports whether one of entries names the experiment name as a
// whole word (table1 is not named by table10 or rapft-table1), or names its
// family: a family's section may name its specs as `prefix-*` (sparta-*
// names sparta-table1 and sparta-fig3, but not sparta itself).
func indexed(entries []string, name string) bool {
	re := regexp.MustCompile(`(^|[^a-z0-9-])` + regexp.QuoteMeta(name) + `($|[^a-z0-9-])`)
	family := regexp.MustCompile(`(?:^|[^a-z0-9-])([a-z0-9-]+-)\*`)
	for _, e := range entries {
		if re.MatchString(e) {
			return true
		}
		for _, m := range family.FindAllStringSubmatch(e, -1) {
			if strings.HasPrefix(name, m[1]) && len(name) > len(m[1]) {
				return true
			}
		}
	}
	return false
}

func TestIndexEntries(t *testing.T) {
	md := "# Experiments\n\nsee table1 and mia here\n\n## table10 — strict budgets\n\n" +
		"| spec | mirrors |\n| --- | --- |\n| `rapft-table1` | Table I, like table5 |\n\n    repro run table5\n\n" +
		"## SPARTA — `sparta-*`\n\nlike dpmtv-*\n"
	entries := indexEntries(md)
	for _, c := range []struct {
		name string
		want bool
	}{
		{"table10", true},      // a heading
		{"rapft-table1", true}, // a table row's first cell
		{"table1", false},      // only in prose, in table10 and in rapft-table1
		{"mia", false},         // only in prose
		{"table5", false},      // in a later cell and in a command
		{"sparta-speed", true}, // its family, sparta-*, in a heading
		{"sparta", false},      // not a member of sparta-*
		{"dpmtv-fig3", false},  // its family only in prose
	} {
		if got := indexed(entries, c.name); got != c.want {
			t.Errorf("indexed(%q) = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestEveryExperimentIndexed checks that EXPERIMENTS.md, the index of the
// experiments, gives every embedded spec an entry: a section heading or a
// row of its family's table that names it.
func TestEveryExperimentIndexed(t *testing.T) {
	data, err := os.ReadFile("../EXPERIMENTS.md")
	if err != nil {
		t.Fatal(err)
	}
	entries := indexEntries(string(data))
	files, err := fs.Glob(embedded, "*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no embedded specs")
	}
	for _, f := range files {
		name := strings.TrimSuffix(f, ".yaml")
		if !indexed(entries, name) {
			t.Errorf("EXPERIMENTS.md has no section heading or family-table row naming the experiment %s (experiments/%s)", name, f)
		}
	}
}
