// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

// TrainableCounts returns the number of trainable scalars of m, in total
// (key "trainable_params") and by tensor kind ("trainable_params_lora_a",
// "trainable_params_adapter", "trainable_params_bias", ...), the
// per-family parameter counts a run's manifest records. Kinds without a
// trainable tensor are left out.
func TrainableCounts(m Module) map[string]float64 {
	out := map[string]float64{}
	for _, p := range m.Params() {
		if !p.Trainable {
			continue
		}
		out["trainable_params"] += float64(len(p.Data))
		out["trainable_params_"+string(p.Kind)] += float64(len(p.Data))
	}
	return out
}
