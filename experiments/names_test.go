// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package experiments

import (
	"fmt"
	"slices"
	"strings"
)

// The tests of this package run without the registries (runners/pipeline
// joins them; see its TestRegisteredNames): they register these fixed
// names, which accept every param.
func init() {
	RegisterNames(func() *Names {
		return &Names{
			Methods: []string{"nonprivate", "dpsgd", "dpzo", "dualpriv", "rapft"},
			Tasks:   []string{"fashion-vqa", "shapes-vqa", "fashion-cls", "records", "records-e2e", "records-echr", "icl", "fl-mm", "shapes-vqa-mia", "fashion-vqa-mia", "shapes-vqa-lira", "fashion-vqa-lira"},
			Attacks: []string{"loss-mia", "zlib-mia", "mink-mia", "maxrenyi-mia", "audit-one-run", "lira-mia", "exposure", "pii-extraction", "pii-reconstruction"},
			Scales:  []string{"smoke", "small", "full"},
		}
	})
}

// withParams returns the test names with a CheckParam that accepts, for
// each method, the params listed in known.
func withParams(known map[string][]string) *Names {
	n := Registered()
	n.CheckParam = func(method, name string, v any) error {
		if !slices.Contains(known[method], name) {
			return fmt.Errorf("method %s has no hyperparameter %q (known: %s)", method, name, strings.Join(known[method], ", "))
		}
		if i, ok := v.(int64); ok {
			v = float64(i)
		}
		if f, ok := v.(float64); ok && f < 0 {
			return fmt.Errorf("%s = %v: want a value ≥ 0", name, v)
		}
		return nil
	}
	n.Compatible = func(method, task string) error {
		if method == "dpzo" && task == "fashion-cls" {
			return fmt.Errorf("method dpzo fine-tunes a tinymllm; task fashion-cls is posed to a vit")
		}
		return nil
	}
	return n
}
