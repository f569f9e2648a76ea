// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// defaultLabels are the labels of well-known run-table columns.
var defaultLabels = map[string]string{
	"epsilon_target": "ε",
	"epsilon":        "ε achieved",
	"delta":          "δ",
	"sigma":          "σ",
}

// axisLabels are the labels of plot axes, legend titles and colour bars
// for run-table columns: the swept knobs of the specs and the run
// columns, so that no figure shows a raw column name. A ratio is a
// fraction in [0, 1], and its label says of what. Tables keep the short
// defaultLabels, whose headers must stay narrow.
var axisLabels = map[string]string{
	"epsilon_target": "ε",
	"epsilon":        "ε achieved",
	"epsilon_tight":  "ε (tight accounting)",
	"delta":          "δ",
	"sigma":          "σ (noise multiplier)",
	"sample_rate":    "sampling rate q",
	"steps":          "steps",
	"seed":           "seed",
	"method":         "method",
	"task":           "task",
	"variant":        "variant",
	"scale":          "scale",
	"update_ratio":   "update ratio P_K (fraction of blocks)",
	"retention":      "token retention (fraction of visual tokens)",
	"beta":           "irrelevance ratio β",
	"sparsity":       "sparsity s (fraction of rows)",
	"chunks":         "chunk count K",
	"shots":          "shots N per chunk",
	"clip":           "clipping norm C",
	"lambda":         "MINE penalty λ",
	"clients":        "clients",
	"lr":             "learning rate",
	"batch_size":     "batch size",
	"epochs":         "epochs",
	"noise_scale":    "noise scale (× calibrated σ)",
	"peft":           "PEFT family",
	"lora_rank":      "LoRA rank r",
}

// label returns the label of column name: overrides[name] if set, else the
// default label of a well-known column, else name itself.
func label(overrides map[string]string, name string) string {
	if l, ok := overrides[name]; ok {
		return l
	}
	if l, ok := defaultLabels[name]; ok {
		return l
	}
	return name
}

// AxisLabel returns the label of column name on a plot: overrides[name]
// if set, else the label of a well-known metric with its unit, else the
// axis label of a well-known column, else the name with its underscores
// as spaces.
func AxisLabel(overrides map[string]string, name string) string {
	if l, ok := overrides[name]; ok {
		return l
	}
	if l, ok := metricLabels[name]; ok {
		return l
	}
	if l, ok := axisLabels[name]; ok {
		return l
	}
	if l, ok := familyLabel(name); ok {
		return l
	}
	return strings.ReplaceAll(name, "_", " ")
}

// renyiMetric and minkMetric match the AUCs of the MaxRényi-K% and Min-K%
// membership-inference scores, named by slice, order α and K:
// renyi_img_a0_5_k10_auc, mink20_auc.
var (
	renyiMetric = regexp.MustCompile(`^renyi_([a-z_]+?)_a([0-9_]+|inf)_k([0-9]+)_(auc)$`)
	minkMetric  = regexp.MustCompile(`^mink([0-9]+)_(auc)$`)
)

// familyLabel returns the label of a metric of a family that attacks name
// by their options: exposure_rep<r> of the extraction suite (bits; Carlini
// et al., "The Secret Sharer", USENIX Security 2019), gia_b<k>_<stat> of
// gradient inversion, and the AUCs of MaxRényi-K% (renyi_<slice>_a<α>_k<K>_auc)
// and Min-K% (mink<K>_auc).
func familyLabel(name string) (string, bool) {
	if r, ok := strings.CutPrefix(name, "exposure_rep"); ok && r != "" && strings.Trim(r, "0123456789") == "" {
		return "exposure of the " + r + "× canaries (bits)", true
	}
	if m := renyiMetric.FindStringSubmatch(name); m != nil {
		alpha := strings.ReplaceAll(m[2], "_", ".")
		if alpha == "inf" {
			alpha = "∞"
		}
		return "α = " + alpha + ", K = " + m[3] + "% (MaxRényi-K% " + m[1] + " " + strings.ToUpper(m[4]) + ")", true
	}
	if m := minkMetric.FindStringSubmatch(name); m != nil {
		return "K = " + m[1] + "% (Min-K% " + strings.ToUpper(m[2]) + ")", true
	}
	if rest, ok := strings.CutPrefix(name, "gia_b"); ok {
		k, stat, ok := strings.Cut(rest, "_")
		if ok && k != "" && strings.Trim(k, "0123456789") == "" {
			switch stat {
			case "psnr_mean":
				return "reconstruction PSNR, batch of " + k + " (dB)", true
			case "psnr_max":
				return "best reconstruction PSNR, batch of " + k + " (dB)", true
			case "ssim":
				return "reconstruction SSIM, batch of " + k, true
			}
		}
	}
	return "", false
}

// metricLabels are the axis labels of well-known metrics, with their unit:
// the accuracies of package runners/pipeline are percentages.
var metricLabels = map[string]string{
	"acc":                   "accuracy (%)",
	"img":                   "IMG accuracy (%)",
	"acc_text":              "text-only accuracy (%)",
	"acc_majority":          "majority-answer accuracy (%)",
	"label_acc":             "label accuracy (%)",
	"mia_auc":               "MIA AUC",
	"mia_advantage":         "MIA advantage (TPR − FPR)",
	"mia_balanced_accuracy": "MIA balanced accuracy",
	"seconds":               "wall time (s)",
	"step_seconds":          "time per step (s)",
	"train_peak_bytes":      "peak training memory (MiB)",
	"ppl":                   "perplexity",
	"records_ppl":           "perplexity",
	"mtv_cosine":            "cos(μ̃, μ̄)",
	"visual_tokens":         "visual tokens kept",
	"trainable_params":      "trainable parameters",
	"audit_epsilon_lb":      "audited ε lower bound (95%)",
}

// shortLabel returns the label of column name without its parenthesised
// unit or gloss ("update ratio P_K" for "update ratio P_K (fraction of
// blocks)"), for titles and legend entries.
func shortLabel(l string) string {
	if i := strings.LastIndex(l, " ("); i > 0 && strings.HasSuffix(l, ")") {
		return l[:i]
	}
	return l
}

// metricLabel returns the axis label of metric name: overrides[name] if
// set, else the label with its unit of a well-known metric, else the label
// of the column (see label).
func metricLabel(overrides map[string]string, name string) string {
	if l, ok := overrides[name]; ok {
		return l
	}
	if l, ok := metricLabels[name]; ok {
		return l
	}
	return label(nil, name)
}

// Key is the value of a composite key (the row key or the column key of a
// table cell, or the series of a plot) as formatted text, one part per key
// column.
type Key []string

// String returns the parts of k joined by spaces.
func (k Key) String() string { return strings.Join(k, " ") }

// keyer groups the runs of a table by the values of some key columns.
type keyer struct {
	names []string
	cols  []*Column
	// rank orders string values by first appearance, per key column.
	rank []map[string]int
}

// newKeyer returns a keyer over the named columns of runs. It returns an error
// naming what is wrong if a column does not exist.
func newKeyer(runs *Runs, what string, names []string) (*keyer, error) {
	k := &keyer{names: names}
	for _, name := range names {
		c, ok := runs.Column(name)
		if !ok {
			return nil, fmt.Errorf("reports: %s column %q not in the run table (columns: %s)", what, name, strings.Join(runs.Columns(), ", "))
		}
		k.cols = append(k.cols, c)
		k.rank = append(k.rank, make(map[string]int))
	}
	return k, nil
}

// see records run i, so that the string parts of its key are ranked by first
// appearance.
func (k *keyer) see(i int) {
	for j, c := range k.cols {
		if c.Kind != String {
			continue
		}
		if _, ok := k.rank[j][c.Strings[i]]; !ok {
			k.rank[j][c.Strings[i]] = len(k.rank[j])
		}
	}
}

// id returns a string identifying the key of run i.
func (k *keyer) id(i int) string {
	var b strings.Builder
	for _, c := range k.cols {
		if c.Kind == String {
			b.WriteString(strconv.Quote(c.Strings[i]))
		} else {
			b.WriteString(strconv.FormatUint(math.Float64bits(normalise(c.Floats[i])), 16))
		}
		b.WriteByte(0)
	}
	return b.String()
}

// normalise maps every NaN to one NaN and -0 to 0, so that equal-looking
// values share a key.
func normalise(v float64) float64 {
	if math.IsNaN(v) {
		return math.NaN()
	}
	if v == 0 {
		return 0
	}
	return v
}

// key returns the formatted key of run i.
func (k *keyer) key(i int) Key {
	key := make(Key, len(k.cols))
	for j, c := range k.cols {
		key[j] = c.Format(i)
	}
	return key
}

// compare orders the keys of runs i and j: numeric parts ascending with
// missing values last, string parts by first appearance.
func (k *keyer) compare(i, j int) int {
	for p, c := range k.cols {
		var r int
		if c.Kind == String {
			r = cmp.Compare(k.rank[p][c.Strings[i]], k.rank[p][c.Strings[j]])
		} else {
			r = compareFloat(c.Floats[i], c.Floats[j])
		}
		if r != 0 {
			return r
		}
	}
	return 0
}

// compareFloat orders a before b ascending, with NaN last.
func compareFloat(a, b float64) int {
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return cmp.Compare(a, b)
}

// group is one distinct key and the runs that have it.
type group struct {
	first int   // the first run with this key
	runs  []int // all runs with this key, in table order
}

// groups returns the distinct keys among runs idx, sorted with compare, and
// the position of each key's id in the result.
func (k *keyer) groups(idx []int) ([]*group, map[string]int) {
	for _, i := range idx {
		k.see(i)
	}
	byID := make(map[string]*group)
	var gs []*group
	for _, i := range idx {
		id := k.id(i)
		g, ok := byID[id]
		if !ok {
			g = &group{first: i}
			byID[id] = g
			gs = append(gs, g)
		}
		g.runs = append(g.runs, i)
	}
	slices.SortStableFunc(gs, func(a, b *group) int { return k.compare(a.first, b.first) })
	pos := make(map[string]int, len(gs))
	for p, g := range gs {
		pos[k.id(g.first)] = p
	}
	return gs, pos
}

// header returns the header text of the key of run i: string parts stand
// alone, numeric parts are "label=value".
func (k *keyer) header(labels map[string]string, i int) []string {
	h := make([]string, len(k.cols))
	for j, c := range k.cols {
		v := c.Format(i)
		if c.Kind == Float {
			v = label(labels, k.names[j]) + "=" + v
		}
		h[j] = v
	}
	return h
}

// NoValue is the selector value that denotes a missing value ("" in a
// String column, NaN in a Float one): a claim side or a Where with
// {variant: NoValue} keeps the runs that have no variant. It is a
// spec's null (package experiments), never the "—" a table prints.
const NoValue = ""

// matches reports whether text s denotes value i of column c: the formatted
// value, or for a Float column any spelling that parses to the same number
// ("inf", "+Inf", "1.0"); NoValue denotes a missing value.
func matches(c *Column, i int, s string) bool {
	if s == NoValue {
		if c.Kind == String {
			return c.Strings[i] == ""
		}
		return math.IsNaN(c.Floats[i])
	}
	if c.Format(i) == s {
		return true
	}
	if c.Kind != Float {
		return false
	}
	if s == "∞" {
		return math.IsInf(c.Floats[i], 1)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return err == nil && v == c.Floats[i]
}

// inRange reports whether s is a closed range "lo..hi" of two finite
// numbers, lo ≤ hi, and value i of the Float column c lies in it: a
// selector's way to name a set of seeds ("9..32") or of budgets. A
// missing value (NaN) is in no range; s of any other form is none.
func inRange(c *Column, i int, s string) bool {
	if c.Kind != Float {
		return false
	}
	lo, hi, ok := parseRange(s)
	return ok && c.Floats[i] >= lo && c.Floats[i] <= hi
}

// parseRange parses "lo..hi" (spaces around either number allowed) into
// two finite numbers with lo ≤ hi; ok is false for anything else.
func parseRange(s string) (lo, hi float64, ok bool) {
	a, b, found := strings.Cut(s, "..")
	if !found {
		return 0, 0, false
	}
	lo, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
	hi, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
	if err1 != nil || err2 != nil || math.IsInf(lo, 0) || math.IsInf(hi, 0) || math.IsNaN(lo) || math.IsNaN(hi) || lo > hi {
		return 0, 0, false
	}
	return lo, hi, true
}
