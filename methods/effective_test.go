// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"strings"
	"testing"
)

// TestSpartaEffectiveModel checks that SPARTA's effective sparsity counts
// the rows of the model the run fine-tunes: the CNN's filters (layer conv)
// for model cnn, the ViT's attention and MLP rows otherwise.
func TestSpartaEffectiveModel(t *testing.T) {
	for _, tc := range []struct {
		model, want, not string
	}{
		{"cnn", "(conv)", " q, k, v"},
		{"vit", " q, k, v", "(conv)"},
	} {
		h, err := ResolveAt("sparta", "smoke", 1, map[string]any{"model": tc.model, "sparsity": 0.2})
		if err != nil {
			t.Fatal(err)
		}
		got := SPARTA{}.Effective("fashion-cls", "smoke", h)["sparsity"]
		if !strings.Contains(got, tc.want) || strings.Contains(got, tc.not) {
			t.Errorf("model %s: effective sparsity %q, want the layers %s and not %s", tc.model, got, tc.want, tc.not)
		}
	}
}
