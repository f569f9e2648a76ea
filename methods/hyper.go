// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/nn/optim"
	"github.com/repro-dp/repro/privacy"
)

// Kind is the type of a hyperparameter's value.
type Kind int

// The kinds of hyperparameters. A spec gives integers and floats as YAML
// numbers, strings and lists as strings (a list is comma-separated), and
// booleans as true/false or on/off.
const (
	Float  Kind = iota // float64
	Int                // int
	String             // string
	List               // []string
	Bool               // bool
)

func (k Kind) String() string {
	return [...]string{"a number", "an integer", "a string", "a comma-separated list", "a boolean"}[k]
}

// A Param declares one hyperparameter of a method: its spec name, kind,
// default at each scale (and, for a few, at each target ε) and range. Each method lists its own in Params;
// the spec checker and Resolve read nothing else, so a name a method does
// not declare is an error everywhere.
type Param struct {
	// Name is the spec name (params: {NAME: value}).
	Name string
	Kind Kind
	// Doc says what the hyperparameter is, with its range.
	Doc string
	// Default returns the value at a scale (smoke, small or full), of the
	// Go type of Kind. Where ByEpsilon has a table for the scale, Default
	// gives the table's value at ReferenceEpsilon.
	Default func(scale string) any
	// ByEpsilon, when not nil, holds for some scales a default chosen at
	// each of a few target budgets: a run at target ε takes
	// ByEpsilon[scale].At(ε) in place of Default(scale) (ResolveAt).
	// DP-SGD's learning rate and epochs at smoke are chosen so, at each ε
	// of table1.
	ByEpsilon map[string]PerEpsilon
	// Check, when not nil, returns an error for a value of the right kind
	// that is out of range.
	Check func(v any) error
	// Tuned lists the scales at which Default was chosen on public
	// validation data (the -tune tasks of experiments tune-baselines). At
	// smoke and small, a run that keeps the default lr of a scale not
	// listed carries a caveat: that default was chosen by comparing test
	// accuracy.
	Tuned []string
	// set, when not nil, stores the value in the shared recipe fields of
	// Hyper.
	set func(h *Hyper, v any)
}

// Hyper holds the resolved hyperparameters of a run. The fields are the
// recipe that the methods training LoRA share (nonprivate, dpsgd, dpzo and
// the methods built on them); every declared hyperparameter, the shared ones
// included, is also readable by name (Float, Int, String, List, Bool).
type Hyper struct {
	// Epochs [epochs] is the number of passes over the training set in
	// expectation: the run takes ⌈Epochs·N/B⌉ steps.
	Epochs float64
	// BatchSize [batch_size] is the expected batch size B: each step
	// includes every example independently with probability q = B/N
	// (Poisson sampling), and the summed gradient is divided by the
	// expected batch size q·N (B unless B > N), not by the realised batch
	// size (Opacus's convention).
	BatchSize int
	// LR [lr] is the peak learning rate; Optimizer [optimizer] is an
	// optim registry name (sgd, adam, adamw); WeightDecay [weight_decay]
	// its weight decay.
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
	// [lora_targets] and LoRAParts [lora_parts] configure LoRA (nn.PEFT).
	LoRARank    int
	LoRAAlpha   float64
	LoRATargets []string
	LoRAParts   []string
	// PEFT [peft] is the PEFT family that is trained: "lora" (LoRA on
	// LoRATargets), "adapter" (two Houlsby adapters per block, bottleneck
	// AdapterDim [adapter_dim]) or "bitfit" (every bias and LayerNorm
	// bias), in the parts LoRAParts.
	PEFT       string
	AdapterDim int
	// Accountant [accountant] is the accountant that calibrates σ and whose
	// ε is the run's ε: "rdp" (the papers' choice) or "pld" (tight). Both
	// ε are recorded whichever calibrates.
	Accountant string
	// Diagnostics [diagnostics] records the per-step diagnostics computed
	// from private data without noise (realised batch size, batch loss,
	// clipped fraction). They are outside the privacy guarantee and
	// labelled so in the privacy record.
	Diagnostics bool
	// Caveats are notes for the privacy record about how the values were
	// chosen (Resolve fills them in).
	Caveats []string

	values map[string]any
}

// value returns the resolved value of name; it panics if the method did
// not declare name (a programming error: Resolve checked the spec).
func (h Hyper) value(name string, k Kind) any {
	v, ok := h.values[name]
	if !ok {
		panic("methods: hyperparameter " + name + " was not declared")
	}
	if kindOf(v) != k {
		panic(fmt.Sprintf("methods: hyperparameter %s is %v, not %v", name, kindOf(v), k))
	}
	return v
}

// Float returns the value of the Float hyperparameter name. It panics if
// the method does not declare name with that kind. Int, String, List and
// Bool are the same for the other kinds.
func (h Hyper) Float(name string) float64 { return h.value(name, Float).(float64) }

// Int returns the value of an Int hyperparameter (see Float).
func (h Hyper) Int(name string) int { return h.value(name, Int).(int) }

// String returns the value of a String hyperparameter (see Float).
func (h Hyper) String(name string) string { return h.value(name, String).(string) }

// List returns the value of a List hyperparameter (see Float).
func (h Hyper) List(name string) []string { return slices.Clone(h.value(name, List).([]string)) }

// Bool returns the value of a Bool hyperparameter (see Float).
func (h Hyper) Bool(name string) bool { return h.value(name, Bool).(bool) }

// Values returns every resolved hyperparameter by name (a copy).
func (h Hyper) Values() map[string]any {
	out := make(map[string]any, len(h.values))
	for k, v := range h.values {
		if l, ok := v.([]string); ok {
			v = slices.Clone(l)
		}
		out[k] = v
	}
	return out
}

func kindOf(v any) Kind {
	switch v.(type) {
	case float64:
		return Float
	case int:
		return Int
	case string:
		return String
	case []string:
		return List
	case bool:
		return Bool
	}
	return -1
}

// Scales are the presets a default is given for.
var Scales = []string{"smoke", "small", "full"}

// A PerEpsilon is a hyperparameter's default chosen at each of a few
// target budgets ε (Param.ByEpsilon), in increasing order of ε; +Inf, the
// non-private budget, may be one of them.
type PerEpsilon []EpsilonDefault

// An EpsilonDefault is the value of a default chosen at the target budget
// Epsilon.
type EpsilonDefault struct {
	Epsilon float64
	Value   any
}

// At returns the value for a run at target ε: the value chosen at the
// nearest budget at or below ε (with 3 and 8 tuned, a run at ε = 5 takes
// 3's, one at ε = 20 takes 8's and only ε = +Inf takes +Inf's), or the
// smallest budget's for a run below them all. The rule errs towards the
// recipe tuned for more noise: between two tuned budgets, a run's noise is
// at most that of the budget below. At panics on an empty t.
func (t PerEpsilon) At(epsilon float64) any {
	i := len(t) - 1
	for i > 0 && t[i].Epsilon > epsilon {
		i--
	}
	return t[i].Value
}

// check returns an error unless t lists at least one budget, each > 0
// (+Inf allowed), in increasing order: the one place a table is checked
// (checkTables, from Register).
func (t PerEpsilon) check() error {
	if len(t) == 0 {
		return errors.New("no budget")
	}
	for i, d := range t {
		if err := privacy.CheckEpsilon(d.Epsilon); err != nil {
			return err
		}
		if i > 0 && !(d.Epsilon > t[i-1].Epsilon) {
			return fmt.Errorf("budgets %v after %v: want increasing", d.Epsilon, t[i-1].Epsilon)
		}
	}
	return nil
}

// ReferenceEpsilon is the target budget at which the defaults that do not
// depend on ε were chosen on public validation data (table1's middle
// budget), and so the budget whose value of a ByEpsilon table Default
// gives, and Resolve uses.
const ReferenceEpsilon = 3.0

// Defaults returns the default hyperparameters of method at scale, for a
// run at ReferenceEpsilon (Resolve).
func Defaults(method, scale string) (Hyper, error) { return Resolve(method, scale, nil) }

// DefaultsAt returns the default hyperparameters of method for a run at
// scale and target ε.
func DefaultsAt(method, scale string, epsilon float64) (Hyper, error) {
	return ResolveAt(method, scale, epsilon, nil)
}

// Resolve is ResolveAt for a run whose target ε is not given: the defaults
// that depend on ε take their value at ReferenceEpsilon. Runs call
// ResolveAt with their own ε.
func Resolve(method, scale string, params map[string]any) (Hyper, error) {
	return ResolveAt(method, scale, ReferenceEpsilon, params)
}

// ResolveAt returns the hyperparameters of method for a run at scale and
// target ε (+Inf for no privacy): the defaults of the method's Params at
// that scale and ε (Param.ByEpsilon, whose tables Register checked), with
// params overriding them. A name the method does not declare, a value of
// the wrong kind, a value out of range and an invalid ε
// (privacy.CheckEpsilon) are errors naming what is wrong.
func ResolveAt(method, scale string, epsilon float64, params map[string]any) (Hyper, error) {
	m, ok := Lookup(method)
	if !ok {
		return Hyper{}, fmt.Errorf("methods: unknown method %q (want one of %s)", method, strings.Join(Names(), ", "))
	}
	if !slices.Contains(Scales, scale) {
		return Hyper{}, fmt.Errorf("methods: unknown scale %q (want %s)", scale, strings.Join(Scales, ", "))
	}
	if err := privacy.CheckEpsilon(epsilon); err != nil {
		return Hyper{}, fmt.Errorf("methods: %w", err)
	}
	ps := m.Params()
	h := Hyper{values: map[string]any{}}
	for _, p := range ps {
		h.values[p.Name] = p.defaultAt(scale, epsilon)
	}
	for _, k := range sortedKeys(params) {
		v, err := CheckParam(method, k, params[k])
		if err != nil {
			return Hyper{}, err
		}
		h.values[k] = v
	}
	for _, p := range ps {
		if p.set != nil {
			p.set(&h, h.values[p.Name])
		}
	}
	if a, ok := h.values["lora_alpha"].(float64); ok && a == 0 {
		// α = 2r for whatever rank the run has, so the update's scale α/r
		// stays 2 when a spec changes the rank.
		h.LoRAAlpha = 2 * float64(h.LoRARank)
		h.values["lora_alpha"] = h.LoRAAlpha
	}
	if scale != "full" {
		if _, ok := params["lr"]; !ok && untuned(ps, "lr", scale) {
			h.Caveats = append(h.Caveats, fmt.Sprintf(
				"the default learning rate at %s scale was chosen by comparing test accuracy of earlier runs, not on a public validation split", scale))
		}
	}
	return h, nil
}

// defaultAt returns p's default for a run at scale and target ε: from
// its ByEpsilon table at scale if it has one, Default(scale) otherwise.
func (p Param) defaultAt(scale string, epsilon float64) any {
	if t, ok := p.ByEpsilon[scale]; ok {
		return t.At(epsilon)
	}
	return p.Default(scale)
}

// checkTables returns an error naming the first param of ps and scale
// whose ByEpsilon table is invalid (PerEpsilon.check).
func checkTables(ps []Param) error {
	for _, p := range ps {
		for _, scale := range Scales {
			if t, ok := p.ByEpsilon[scale]; ok {
				if err := t.check(); err != nil {
					return fmt.Errorf("%s at %s: ByEpsilon: %w", p.Name, scale, err)
				}
			}
		}
	}
	return nil
}

// untuned reports whether ps declares name with a default that was not
// chosen on public validation data at scale (Param.Tuned).
func untuned(ps []Param, name, scale string) bool {
	i := slices.IndexFunc(ps, func(p Param) bool { return p.Name == name })
	return i >= 0 && !slices.Contains(ps[i].Tuned, scale)
}

// CheckParam returns v converted to the Go type of method's hyperparameter
// name, or an error if the method has no such hyperparameter or v is not a
// valid value for it. The spec checker calls it for every param and sweep
// value a method receives, so bad values are errors before anything runs.
func CheckParam(method, name string, v any) (any, error) {
	m, ok := Lookup(method)
	if !ok {
		return nil, fmt.Errorf("methods: unknown method %q", method)
	}
	ps := m.Params()
	i := slices.IndexFunc(ps, func(p Param) bool { return p.Name == name })
	if i < 0 {
		return nil, fmt.Errorf("method %s has no hyperparameter %q (known: %s)", method, name, strings.Join(ParamNames(method), ", "))
	}
	p := ps[i]
	x, err := convert(p.Kind, v)
	if err != nil {
		return nil, fmt.Errorf("%s = %v: %w", name, v, err)
	}
	if p.Check != nil {
		if err := p.Check(x); err != nil {
			return nil, fmt.Errorf("%s = %v: %w", name, v, err)
		}
	}
	return x, nil
}

// ParamNames returns the names of the hyperparameters method declares, in
// declaration order (nil for an unknown method).
func ParamNames(method string) []string {
	m, ok := Lookup(method)
	if !ok {
		return nil
	}
	var names []string
	for _, p := range m.Params() {
		names = append(names, p.Name)
	}
	return names
}

// convert returns v as the Go type of k: YAML integers become floats for
// Float, integral floats become ints for Int, comma-separated strings
// become lists (blank elements dropped), and on/off become booleans.
func convert(k Kind, v any) (any, error) {
	switch k {
	case Float:
		switch x := v.(type) {
		case int64:
			return float64(x), nil
		case int:
			return float64(x), nil
		case float64:
			return x, nil
		}
	case Int:
		var f float64
		switch x := v.(type) {
		case int64:
			f = float64(x)
		case int:
			f = float64(x)
		case float64:
			f = x
		default:
			return nil, fmt.Errorf("want %v", k)
		}
		if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return nil, fmt.Errorf("want %v", k)
		}
		return int(f), nil
	case String:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case List:
		switch x := v.(type) {
		case string:
			var out []string
			for f := range strings.SplitSeq(x, ",") {
				if f = strings.TrimSpace(f); f != "" {
					out = append(out, f)
				}
			}
			return out, nil
		case []string:
			return slices.Clone(x), nil
		}
	case Bool:
		switch x := v.(type) {
		case bool:
			return x, nil
		case string:
			switch x {
			case "on", "true":
				return true, nil
			case "off", "false":
				return false, nil
			}
		}
	}
	return nil, fmt.Errorf("want %v, not %T", k, v)
}

// Checks for Param.Check.

func positive(v any) error {
	if f := toFloat(v); !(f > 0) || math.IsInf(f, 1) {
		return fmt.Errorf("want a finite value > 0")
	}
	return nil
}

func nonNegative(v any) error {
	if f := toFloat(v); !(f >= 0) || math.IsInf(f, 1) {
		return fmt.Errorf("want a finite value ≥ 0")
	}
	return nil
}

func fraction(v any) error {
	if f := toFloat(v); !(f >= 0 && f <= 1) {
		return fmt.Errorf("want a fraction in [0, 1]")
	}
	return nil
}

func between(lo, hi int) func(any) error {
	return func(v any) error {
		if n := v.(int); n < lo || n > hi {
			return fmt.Errorf("want an integer in [%d, %d]", lo, hi)
		}
		return nil
	}
}

func oneOf(names func() []string) func(any) error {
	return func(v any) error {
		if !slices.Contains(names(), v.(string)) {
			return fmt.Errorf("want one of %s", strings.Join(names(), ", "))
		}
		return nil
	}
}

// subsetOf returns a check that a list is non-empty and holds only names.
func subsetOf(names ...string) func(any) error {
	return func(v any) error {
		l := v.([]string)
		if len(l) == 0 {
			return fmt.Errorf("want at least one of %s", strings.Join(names, ", "))
		}
		for _, s := range l {
			if !slices.Contains(names, s) {
				return fmt.Errorf("%q is not one of %s", s, strings.Join(names, ", "))
			}
		}
		return nil
	}
}

// upTo returns a check for a finite value in (0, hi].
func upTo(hi float64) func(any) error {
	return func(v any) error {
		if f := toFloat(v); !(f > 0 && f <= hi) {
			return fmt.Errorf("want a value in (0, %g]", hi)
		}
		return nil
	}
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int:
		return float64(x)
	}
	return math.NaN()
}

func list(names ...string) func() []string { return func() []string { return names } }

// byScale returns a Default giving smoke, small and full their values.
func byScale[T any](smoke, small, full T) func(string) any {
	return func(scale string) any {
		switch scale {
		case "smoke":
			return smoke
		case "small":
			return small
		}
		return full
	}
}

// same returns a Default giving every scale v.
func same[T any](v T) func(string) any { return func(string) any { return v } }

// withByEpsilon returns ps with the default of name at scale chosen at
// each budget of t (Param.ByEpsilon); ps is not modified. The param's
// Default at scale must already give t's value at ReferenceEpsilon
// (TestParamTables checks it). It panics if ps has no such name.
func withByEpsilon(ps []Param, name, scale string, t PerEpsilon) []Param {
	return editParam(ps, name, func(p *Param) {
		p.ByEpsilon = maps.Clone(p.ByEpsilon)
		if p.ByEpsilon == nil {
			p.ByEpsilon = map[string]PerEpsilon{}
		}
		p.ByEpsilon[scale] = slices.Clone(t)
	})
}

// withDefault returns ps with the default of name replaced (ps is not
// modified); it panics if ps has no such name.
func withDefault(ps []Param, name string, def func(string) any) []Param {
	return withTuned(ps, name, def)
}

// withTuned returns ps with the default of name replaced by def (at every
// ε), chosen on public validation data at the scales tuned (Param.Tuned);
// ps is not modified. It panics if ps has no such name.
func withTuned(ps []Param, name string, def func(string) any, tuned ...string) []Param {
	return editParam(ps, name, func(p *Param) {
		p.Default = def
		p.ByEpsilon = nil
		p.Tuned = tuned
	})
}

// editParam returns a copy of ps with edit applied to the hyperparameter
// name (ps is not modified); it panics if ps has no such name.
func editParam(ps []Param, name string, edit func(*Param)) []Param {
	ps = slices.Clone(ps)
	i := slices.IndexFunc(ps, func(p Param) bool { return p.Name == name })
	if i < 0 {
		panic("methods: no hyperparameter " + name)
	}
	edit(&ps[i])
	return ps
}

// loraParams returns the hyperparameters of the LoRA training recipe that
// nonprivate, dpsgd, dpzo and the methods built on them share.
//
// The paper's values (Dual-Priv Tables 6 and 7: LoRA, Adam, lr 2e-4, B = 12,
// 1 epoch, C = C_ZO = 1) are for LLaVA-7B on ≥ 10⁴ examples. TinyMLLM
// fine-tuned on 256 (smoke) or 2000 (small) examples needs more passes and
// a larger learning rate to learn at all, and DP-SGD needs larger batches
// than 12 to keep the noise σC/B small, so smoke and small use B = 32 and
// 64, 4 epochs and lr 1e-2 and 5e-3 (Adam). Those rates were picked by
// comparing test accuracy, so runs that keep them carry a caveat in their
// privacy record; nonprivate, dpsgd (with dualpriv) and dpzo replace them
// with values chosen on public validation data where they list a scale in
// Param.Tuned, which drops the caveat. full keeps the paper's shape
// (B = 12, 1 epoch, lr 2e-4).
// LoRA goes on every projection of the language model (q, k, v, o, fc1,
// fc2) with the preset's rank and α = 2r.
func loraParams() []Param {
	return []Param{
		{Name: "epochs", Kind: Float, Doc: "passes over the training set in expectation, in (0, 10⁶]",
			Default: byScale(4.0, 4.0, 1.0), Check: upTo(1e6), set: func(h *Hyper, v any) { h.Epochs = v.(float64) }},
		{Name: "batch_size", Kind: Int, Doc: "expected batch size B (Poisson rate q = B/N), ≥ 1",
			Default: byScale(32, 64, 12), Check: between(1, 1<<30), set: func(h *Hyper, v any) { h.BatchSize = v.(int) }},
		{Name: "lr", Kind: Float, Doc: "peak learning rate, > 0",
			Default: byScale(1e-2, 5e-3, 2e-4), Check: positive, set: func(h *Hyper, v any) { h.LR = v.(float64) }},
		{Name: "optimizer", Kind: String, Doc: "optimizer: " + strings.Join(optim.Names(), ", "),
			Default: same("adam"), Check: oneOf(optim.Names), set: func(h *Hyper, v any) { h.Optimizer = v.(string) }},
		{Name: "weight_decay", Kind: Float, Doc: "the optimizer's weight decay, ≥ 0",
			Default: same(0.0), Check: nonNegative, set: func(h *Hyper, v any) { h.WeightDecay = v.(float64) }},
		{Name: "schedule", Kind: String, Doc: "learning-rate schedule: constant or cosine",
			Default: same("constant"), Check: oneOf(list("constant", "cosine")), set: func(h *Hyper, v any) { h.Schedule = v.(string) }},
		{Name: "warmup", Kind: Float, Doc: "fraction of the steps of linear warm-up (cosine), in [0, 1]",
			Default: same(0.0), Check: fraction, set: func(h *Hyper, v any) { h.Warmup = v.(float64) }},
		{Name: "clip", Kind: Float, Doc: "clipping norm C, > 0",
			Default: same(1.0), Check: positive, set: func(h *Hyper, v any) { h.Clip = v.(float64) }},
		{Name: "lora_rank", Kind: Int, Doc: "LoRA rank r, ≥ 1",
			Default: byScale(4, 8, 16), Check: between(1, 1<<20), set: func(h *Hyper, v any) { h.LoRARank = v.(int) }},
		{Name: "lora_alpha", Kind: Float, Doc: "LoRA scale α (the update is α/r·BA), > 0; 0 means 2·lora_rank",
			Default: same(0.0), Check: nonNegative, set: func(h *Hyper, v any) { h.LoRAAlpha = v.(float64) }},
		{Name: "lora_targets", Kind: List, Doc: "projections that get LoRA: q, k, v, o, fc1, fc2",
			Default: same([]string{"q", "k", "v", "o", "fc1", "fc2"}), Check: subsetOf("q", "k", "v", "o", "fc1", "fc2"),
			set: func(h *Hyper, v any) { h.LoRATargets = v.([]string) }},
		{Name: "peft", Kind: String, Doc: "PEFT family that is trained: lora, adapter (Houlsby, two per block) or bitfit (biases)",
			Default: same("lora"), Check: oneOf(list("lora", "adapter", "bitfit")), set: func(h *Hyper, v any) { h.PEFT = v.(string) }},
		{Name: "adapter_dim", Kind: Int, Doc: "bottleneck width of the Houlsby adapters (peft = adapter), ≥ 1",
			Default: byScale(8, 16, 64), Check: between(1, 1<<20), set: func(h *Hyper, v any) { h.AdapterDim = v.(int) }},
		{Name: "lora_parts", Kind: List, Doc: "model parts that get the PEFT family (LoRA, adapters or BitFit's biases): lm, projector, vision",
			Default: same([]string{"lm"}), Check: subsetOf("lm", "projector", "vision"), set: func(h *Hyper, v any) { h.LoRAParts = v.([]string) }},
		{Name: "accountant", Kind: String, Doc: "accountant that calibrates σ: rdp or pld",
			Default: same("rdp"), Check: oneOf(list("rdp", "pld")), set: func(h *Hyper, v any) { h.Accountant = v.(string) }},
		{Name: "diagnostics", Kind: Bool, Doc: "record per-step non-private diagnostics (batch size, loss, clipped fraction)",
			Default: same(true), set: func(h *Hyper, v any) { h.Diagnostics = v.(bool) }},
		{Name: "noise_scale", Kind: Float, Doc: "control only: the noise is σ·noise_scale while ε is accounted for the calibrated σ; ≠ 1 plants an under-noised run that audits must catch, > 0",
			Default: same(1.0), Check: positive, set: func(h *Hyper, v any) {
				if s := v.(float64); s != 1 {
					h.Caveats = append(h.Caveats, fmt.Sprintf("%s: the noise is %g × the calibrated σ, but the recorded σ and ε are the calibrated ones; the guarantee does not hold", PlantedCaveat, s))
				}
			}},
	}
}

// embeddingsParam is the train_embeddings hyperparameter of nonprivate,
// dpsgd and dpzo (dualpriv and rapft share their loop but do not declare
// it, and never train the embedding): it also
// trains the language model's token embedding, which is tied to its
// output head, beside the PEFT family. Off by default: the PEFT papers
// (Rap-FT, Dual-Priv) keep the embedding frozen; Lukas et al., "Analyzing
// Leakage of Personally Identifiable Information in Language Models"
// (IEEE S&P 2023), fine-tune the whole GPT-2, embedding included. The
// extraction section of docs/attacks.md measures what it does to
// memorisation at smoke.
func embeddingsParam() Param {
	return Param{Name: "train_embeddings", Kind: Bool,
		Doc:     "also train the token embedding (tied to the output head) beside the PEFT family",
		Default: same(false)}
}

// PlantedCaveat starts the privacy-record caveat of a run whose noise was
// scaled by noise_scale ≠ 1: a negative control for audits and bound
// checks, never a private result.
const PlantedCaveat = "planted under-noised control"

// steps returns the number of steps of a run over n examples and the
// sampling rate q = B/n (at most 1).
func (h Hyper) steps(n int) (steps int, q float64) {
	q = min(1, float64(h.BatchSize)/float64(n))
	steps = int(math.Ceil(h.Epochs * float64(n) / float64(h.BatchSize)))
	return max(steps, 1), q
}

// noise returns the noise multiplier a run adds for the calibrated σ
// sigma: σ·noise_scale, which is σ itself except in a planted
// under-noised control (the noise_scale hyperparameter). The one place
// noise_scale is applied.
func (h Hyper) noise(sigma float64) float64 { return sigma * h.Float("noise_scale") }

// peft returns the PEFT configuration of h (LoRA unless h.PEFT names
// another family), its new tensors seeded from seed.
func (h Hyper) peft(seed uint64) nn.PEFT {
	return nn.PEFT{
		Method:     cmp.Or(h.PEFT, "lora"),
		Rank:       h.LoRARank,
		Alpha:      h.LoRAAlpha,
		Targets:    slices.Clone(h.LoRATargets),
		AdapterDim: h.AdapterDim,
		Parts:      slices.Clone(h.LoRAParts),
		Seed:       seed,
	}
}

// schedule returns the learning-rate schedule of h for a run of steps steps.
func (h Hyper) schedule(steps int) optim.Schedule {
	if h.Schedule == "cosine" {
		return optim.Cosine{Peak: h.LR, Warmup: int(math.Round(h.Warmup * float64(steps))), Steps: steps}
	}
	return optim.Constant{Value: h.LR}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
