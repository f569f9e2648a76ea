// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package experiments

import (
	"slices"

	"gopkg.in/yaml.v3"
)

// checkSpelling checks the metrics that tables, plots and claims name for
// misspellings (see [Names.Metrics]): a name that is not a known metric
// nor a run column of s, but within two edits of a known metric or of a
// run column, is an error at its line that names the likely one.
func (d *decoder) checkSpelling(s *Spec, columns []string, at func(string) *yaml.Node) error {
	if d.names.Metrics == nil || d.names.Metric == nil {
		return nil
	}
	known := slices.Concat(d.names.Metrics, columns)
	check := func(n *yaml.Node, what, metric string) error {
		if metric == "" || d.names.Metric(metric) || has(columns, metric) {
			return nil
		}
		if near, ok := nearest(metric, known); ok {
			return d.errorf(n, "%s: no run records a metric %q; did you mean %q?", what, metric, near)
		}
		return nil
	}
	return eachMetric(s, at, check)
}

// nearest returns the name in known closest to name in edit distance
// (the first of equals), if within the distance a misspelling of a name
// that long plausibly is: one edit for names of up to four characters
// (img, acc), two for longer ones.
func nearest(name string, known []string) (string, bool) {
	limit := 2
	if len([]rune(name)) <= 4 {
		limit = 1
	}
	best, bestD := "", limit+1
	for _, k := range known {
		if k == name {
			return "", false
		}
		if d := editDistance(name, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best, bestD <= limit
}

// editDistance returns the optimal-string-alignment distance between a
// and b: the fewest insertions, deletions, substitutions and swaps of two
// adjacent characters that turn a into b (Damerau, "A technique for
// computer detection and correction of spelling errors", Communications
// of the ACM, 1964, with no substring edited twice).
func editDistance(a, b string) int {
	s, t := []rune(a), []rune(b)
	d := make([][]int, len(s)+1)
	for i := range d {
		d[i] = make([]int, len(t)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(s); i++ {
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(s)][len(t)]
}
