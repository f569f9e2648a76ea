// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pretrain

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// ManifestPath returns the path of the result's manifest.
func (r *Result) ManifestPath() string {
	return filepath.Join(filepath.Dir(r.Checkpoint), manifestFile)
}

// metricDocs describes the metrics for people.
var metricDocs = map[string]string{
	"fashion_class_acc":        "public held-out fashion class question, exact match",
	"coarse_acc":               "public held-out coarse label, exact match",
	"shapes_vqa_acc":           "public held-out shapes count/existence, exact match",
	"fashion_class_acc_pruned": "fashion_class_acc with Dual-Priv's token pruning at retention 0.4",
	"shapes_vqa_acc_pruned":    "shapes_vqa_acc with Dual-Priv's token pruning at retention 0.4",
	"records_ppl":              "public held-out records, perplexity per token",
	"icl_zero_shot_acc":        "held-out episodes, fresh label words, no demonstration",
	"icl_few_shot_acc":         "the same episodes with their demonstrations",
	"icl_gain":                 "few-shot minus zero-shot accuracy",
	"icl_shots":                "demonstrations per held-out episode",
	"finetune_base_acc":        "private fashion-vqa test, un-tuned base, exact match",
	"finetune_acc":             "the same after a quick non-private LoRA fine-tune",
	"finetune_gain":            "fine-tuned minus un-tuned accuracy",
	"train_loss":               "mean training loss over the last tenth of the steps",
	"heldout_acc":              "held-out public examples of the training split, accuracy",
	"heldout_n":                "number of held-out examples measured",
}

// WriteText writes a summary of r for people: where the base is, its hash,
// its metrics beside their chance levels, and a closing note on in-context
// learning and fine-tuning.
func (r *Result) WriteText(w io.Writer) error {
	m := r.Manifest
	var b strings.Builder
	how := fmt.Sprintf("built in %s", (time.Duration(m.Timings.Total * float64(time.Second))).Round(time.Second))
	if r.Cached {
		how = "from the cache (built in " + (time.Duration(m.Timings.Total * float64(time.Second))).Round(time.Second).String() + ")"
	}
	fmt.Fprintf(&b, "base %s %s, seed %d, %d parameters, %s\n", m.Arch, m.Scale, m.Seed, m.Params, how)
	fmt.Fprintf(&b, "checkpoint %s\nhash       %s\nmanifest   %s\n\n", r.Checkpoint, r.Hash, r.ManifestPath())
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\tvalue\tchance\t")
	names := make([]string, 0, len(m.Metrics))
	for k := range m.Metrics {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		ch := ""
		if c, ok := m.Chance[k]; ok {
			ch = fmt.Sprintf("%.4g", c)
		}
		fmt.Fprintf(tw, "%s\t%.4g\t%s\t%s\n", k, m.Metrics[k], ch, metricDocs[k])
	}
	tw.Flush()
	if _, ok := m.Metrics["icl_gain"]; ok {
		fmt.Fprintf(&b, "\nin-context learning: %.0f%% with %.0f demonstrations vs %.0f%% zero-shot (chance %.0f%%): %+.0f points\n",
			100*m.Metrics["icl_few_shot_acc"], m.Metrics["icl_shots"], 100*m.Metrics["icl_zero_shot_acc"],
			100*m.Chance["icl_zero_shot_acc"], 100*m.Metrics["icl_gain"])
	}
	if _, ok := m.Metrics["finetune_gain"]; ok {
		fmt.Fprintf(&b, "fine-tuning: LoRA on private fashion-vqa train takes test accuracy from %.0f%% to %.0f%%: %+.0f points\n",
			100*m.Metrics["finetune_base_acc"], 100*m.Metrics["finetune_acc"], 100*m.Metrics["finetune_gain"])
	}
	_, err := io.WriteString(w, b.String())
	return err
}
