// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/nn/optim"
)

// Hyper holds the hyperparameters of a fine-tuning run. Defaults returns
// them for a method and scale; Parse overrides them from a spec's params.
// The spec name of each field is given in brackets.
type Hyper struct {
	// Epochs [epochs] is the number of passes over the training set in
	// expectation: the run takes ⌈Epochs·N/B⌉ steps.
	Epochs float64
	// BatchSize [batch_size] is the expected batch size B: each step
	// includes every example independently with probability q = B/N
	// (Poisson sampling), and the summed gradient is divided by the
	// expected batch size q·N (B unless B > N), not by the realised batch
	// size (Opacus's convention; ANCHORS §1.7).
	BatchSize int
	// LR [lr] is the peak learning rate; Optimizer [optimizer] is an
	// optim registry name (sgd, adam, adamw) for the first-order methods
	// (DPZO is plain zeroth-order SGD, Algorithm 3); WeightDecay
	// [weight_decay] its weight decay.
	LR          float64
	Optimizer   string
	WeightDecay float64
	// Schedule [schedule] is "constant" or "cosine" (linear warm-up over a
	// fraction Warmup [warmup] of the steps, then cosine decay to 0).
	Schedule string
	Warmup   float64
	// Clip [clip] is the clipping norm: C of DP-SGD's per-sample gradients,
	// C_ZO of DPZO's per-example loss differences. nonprivate does not
	// clip.
	Clip float64
	// LoRARank [lora_rank], LoRAAlpha [lora_alpha], LoRATargets
	// [lora_targets, comma-separated] and LoRAParts [lora_parts,
	// comma-separated] configure LoRA (nn.PEFT).
	LoRARank    int
	LoRAAlpha   float64
	LoRATargets []string
	LoRAParts   []string
	// Accountant [accountant] is the accountant that calibrates σ and whose
	// ε is the run's ε: "rdp" (the papers' choice) or "pld" (tight). Both
	// ε are recorded whichever calibrates.
	Accountant string
	// Phi [phi] is DPZO's perturbation scale φ.
	Phi float64
}

// ParamNames lists the spec names of the hyperparameters Parse reads.
var ParamNames = []string{
	"accountant", "batch_size", "clip", "epochs", "lora_alpha", "lora_parts",
	"lora_rank", "lora_targets", "lr", "optimizer", "phi", "schedule",
	"warmup", "weight_decay",
}

// Defaults returns the default hyperparameters of method at scale (smoke,
// small or full).
//
// The paper's values (Dual-Priv Tables 6 and 7: LoRA, Adam, lr 2e-4, B = 12,
// 1 epoch, C = C_ZO = 1, φ = 0.15) are for LLaVA-7B on ≥ 10⁴ examples.
// TinyMLLM fine-tuned on 256 (smoke) or 2000 (small) examples needs more
// passes and a larger learning rate to learn at all, and DP-SGD needs
// larger batches than 12 to keep the noise σC/B small, so smoke and small
// use B = 32 and 64, 4 epochs and lr 1e-2 and 5e-3 (Adam; at smoke 1e-2
// beat 2e-3 clearly for nonprivate and DP-SGD, small follows the
// pretraining probe's 5e-3); full keeps the paper's shape (B = 12,
// 1 epoch, lr 2e-4). LoRA goes on every projection
// of the language model (q, k, v, o, fc1, fc2) with the preset's rank and
// α = 2r. DPZO uses plain ZO-SGD with the same epochs and batch size and
// a tenth of the learning rate: the zeroth-order estimate (s/2φ)·z has norm
// about √d times the directional derivative. At smoke scale and ε = ∞, no
// rate in 1e-3…2e-2 (nor Adam, nor φ = 0.01, nor 4× the steps) made DPZO
// beat its base model on fashion-vqa; larger rates make it worse, as the
// paper's DPZO rows (near or below chance) suggest.
func Defaults(method, scale string) (Hyper, error) {
	h := Hyper{
		Optimizer:   "adam",
		Schedule:    "constant",
		Clip:        1,
		LoRATargets: []string{"q", "k", "v", "o", "fc1", "fc2"},
		LoRAParts:   []string{"lm"},
		Accountant:  "rdp",
		Phi:         0.15,
	}
	switch scale {
	case "smoke":
		h.Epochs, h.BatchSize, h.LR, h.LoRARank = 4, 32, 1e-2, 4
	case "small":
		h.Epochs, h.BatchSize, h.LR, h.LoRARank = 4, 64, 5e-3, 8
	case "full":
		h.Epochs, h.BatchSize, h.LR, h.LoRARank = 1, 12, 2e-4, 16
	default:
		return Hyper{}, fmt.Errorf("methods: unknown scale %q (want smoke, small or full)", scale)
	}
	h.LoRAAlpha = 2 * float64(h.LoRARank)
	if method == "dpzo" {
		h.Optimizer = "sgd"
		h.LR /= 10
	}
	return h, nil
}

// Parse returns h with the hyperparameters in params replaced. Integers
// and floats are accepted for numeric fields, strings for the others.
// Names Parse does not know are returned in ignored (sorted), so that a
// spec's params for other methods do not fail this one; a known name with a
// value of the wrong type or out of range is an error.
func (h Hyper) Parse(params map[string]any) (out Hyper, ignored []string, err error) {
	num := func(k string, v any) (float64, error) {
		switch x := v.(type) {
		case int64:
			return float64(x), nil
		case int:
			return float64(x), nil
		case float64:
			return x, nil
		}
		return 0, fmt.Errorf("methods: param %s = %v (%T): want a number", k, v, v)
	}
	str := func(k string, v any) (string, error) {
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("methods: param %s = %v (%T): want a string", k, v, v)
		}
		return s, nil
	}
	list := func(s string) []string {
		var out []string
		for f := range strings.SplitSeq(s, ",") {
			if f = strings.TrimSpace(f); f != "" {
				out = append(out, f)
			}
		}
		return out
	}
	for _, k := range sortedKeys(params) {
		v := params[k]
		var f float64
		var s string
		switch k {
		case "epochs", "batch_size", "lr", "weight_decay", "warmup", "clip", "lora_rank", "lora_alpha", "phi":
			f, err = num(k, v)
		case "optimizer", "schedule", "lora_targets", "lora_parts", "accountant":
			s, err = str(k, v)
		default:
			ignored = append(ignored, k)
			continue
		}
		if err != nil {
			return h, nil, err
		}
		switch k {
		case "epochs":
			h.Epochs = f
		case "batch_size":
			if f != math.Trunc(f) || f < 1 || f > 1<<30 {
				return h, nil, fmt.Errorf("methods: param batch_size = %v: want an integer ≥ 1", v)
			}
			h.BatchSize = int(f)
		case "lr":
			h.LR = f
		case "weight_decay":
			h.WeightDecay = f
		case "warmup":
			h.Warmup = f
		case "clip":
			h.Clip = f
		case "lora_rank":
			if f != math.Trunc(f) || f < 1 || f > 1<<20 {
				return h, nil, fmt.Errorf("methods: param lora_rank = %v: want an integer ≥ 1", v)
			}
			h.LoRARank = int(f)
		case "lora_alpha":
			h.LoRAAlpha = f
		case "phi":
			h.Phi = f
		case "optimizer":
			h.Optimizer = s
		case "schedule":
			h.Schedule = s
		case "lora_targets":
			h.LoRATargets = list(s)
		case "lora_parts":
			h.LoRAParts = list(s)
		case "accountant":
			h.Accountant = s
		}
	}
	return h, ignored, h.Validate()
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Validate returns an error naming the first invalid hyperparameter.
func (h Hyper) Validate() error {
	pos := func(name string, v float64) error {
		if !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("methods: %s = %v: want a finite value > 0", name, v)
		}
		return nil
	}
	for _, c := range []struct {
		name string
		v    float64
	}{{"epochs", h.Epochs}, {"lr", h.LR}, {"clip", h.Clip}, {"lora_alpha", h.LoRAAlpha}, {"phi", h.Phi}} {
		if err := pos(c.name, c.v); err != nil {
			return err
		}
	}
	switch {
	case h.BatchSize < 1:
		return fmt.Errorf("methods: batch_size = %d: want ≥ 1", h.BatchSize)
	case h.LoRARank < 1:
		return fmt.Errorf("methods: lora_rank = %d: want ≥ 1", h.LoRARank)
	case !(h.WeightDecay >= 0) || math.IsInf(h.WeightDecay, 0):
		return fmt.Errorf("methods: weight_decay = %v: want a finite value ≥ 0", h.WeightDecay)
	case !(h.Warmup >= 0 && h.Warmup <= 1):
		return fmt.Errorf("methods: warmup = %v: want a fraction of the steps in [0, 1]", h.Warmup)
	case h.Schedule != "constant" && h.Schedule != "cosine":
		return fmt.Errorf("methods: schedule = %q: want constant or cosine", h.Schedule)
	case h.Accountant != "rdp" && h.Accountant != "pld":
		return fmt.Errorf("methods: accountant = %q: want rdp or pld", h.Accountant)
	case !slices.Contains(optim.Names(), h.Optimizer):
		return fmt.Errorf("methods: optimizer = %q: want one of %s", h.Optimizer, strings.Join(optim.Names(), ", "))
	case len(h.LoRATargets) == 0:
		return fmt.Errorf("methods: lora_targets is empty")
	case len(h.LoRAParts) == 0:
		return fmt.Errorf("methods: lora_parts is empty")
	}
	return nil
}

// steps returns the number of steps of a run over n examples and the
// sampling rate q = B/n (at most 1).
func (h Hyper) steps(n int) (steps int, q float64) {
	q = min(1, float64(h.BatchSize)/float64(n))
	steps = int(math.Ceil(h.Epochs * float64(n) / float64(h.BatchSize)))
	return max(steps, 1), q
}

// peft returns the LoRA configuration of h, its tensors seeded from seed.
func (h Hyper) peft(seed uint64) nn.PEFT {
	return nn.PEFT{
		Method:  "lora",
		Rank:    h.LoRARank,
		Alpha:   h.LoRAAlpha,
		Targets: slices.Clone(h.LoRATargets),
		Parts:   slices.Clone(h.LoRAParts),
		Seed:    seed,
	}
}

// schedule returns the learning-rate schedule of h for a run of steps steps.
func (h Hyper) schedule(steps int) optim.Schedule {
	if h.Schedule == "cosine" {
		return optim.Cosine{Peak: h.LR, Warmup: int(math.Round(h.Warmup * float64(steps))), Steps: steps}
	}
	return optim.Constant{Value: h.LR}
}
