// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package experiments

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/repro-dp/repro"
)

// A Config is the fully resolved configuration of one run. Together with
// the run's [Inputs] it determines the run completely; its seeds come only
// from Seed, so results never depend on how runs are scheduled.
type Config struct {
	Method  string  `json:"method"`
	Task    string  `json:"task"`
	Scale   string  `json:"scale"`
	Seed    int64   `json:"seed"`
	Epsilon Epsilon `json:"epsilon"`
	Delta   float64 `json:"delta"`
	// Attacks run on the trained model, in spec order.
	Attacks []string `json:"attacks"`
	// AttackOptions are the options of the attacks that a spec sets
	// (Spec.AttackOptions); nil for none, which leaves run ids as they
	// were before attacks took options.
	AttackOptions map[string]AttackOptions `json:"attack_options,omitempty"`
	// Params holds the hyperparameters and sweep values other than ε and
	// the seed: int64 for integers (and integer sweep axes), float64,
	// string or bool.
	Params map[string]any `json:"params"`
}

// Inputs are what a run depends on besides its Config: the fingerprint of
// its data and the hash of its pretrained base checkpoint. The runner
// fills them in; both are part of the run id. The zero value means
// "not known yet" (a dry run before the data and base model exist).
type Inputs struct {
	Data string `json:"data"`
	Base string `json:"base"`
}

// code returns the fingerprint of the code on a run's path ([repro.Code]),
// which every run id hashes: a change to a method, an attack, the engine,
// the data or this package's expansion gives new ids, so cached results
// never outlive the code that made them. Tests replace it.
var code = repro.Code

// IDLen is the length of a run id in hex digits (64 bits of SHA-256).
const IDLen = 16

// ID returns the run id of c with inputs in: the first [IDLen] hex digits of
// the SHA-256 of the canonical JSON of {code, config, inputs}, where code
// is the fingerprint of the code on a run's path ([repro.Code]).
// encoding/json sorts map keys and formats floats in the shortest form
// that reads back exactly, so the encoding is canonical.
func (c *Config) ID(in Inputs) string {
	b, err := c.canonical(in)
	if err != nil {
		// Only an unencodable value (NaN ε or an unsupported param type)
		// gets here, and Parse never produces one.
		panic("experiments: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:IDLen]
}

func (c *Config) canonical(in Inputs) ([]byte, error) {
	for k, v := range c.Params {
		switch v := v.(type) {
		case int64, string, bool:
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("param %s is %v", k, v)
			}
		default:
			return nil, fmt.Errorf("param %s has type %T", k, v)
		}
	}
	return json.Marshal(struct {
		Code   string  `json:"code"`
		Config *Config `json:"config"`
		Inputs Inputs  `json:"inputs"`
	}{code(), c, in})
}

// Float returns the param name as a float64, converting integers; ok is
// false if it is missing or not a number.
func (c *Config) Float(name string) (v float64, ok bool) {
	switch x := c.Params[name].(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	}
	return 0, false
}

// Int returns the param name as an int64; ok is false if it is missing or
// not an integer (a float with an integral value counts).
func (c *Config) Int(name string) (v int64, ok bool) {
	switch x := c.Params[name].(type) {
	case int64:
		return x, true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) <= maxInt {
			return int64(x), true
		}
	}
	return 0, false
}

// String returns a short description of c: method, task, ε, the params
// that are sweep values, and the seed.
func (c *Config) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s ε=%s", c.Method, c.Task, c.Epsilon)
	for _, k := range slices.Sorted(maps.Keys(c.Params)) {
		if _, _, ok := axisKind(k); ok {
			fmt.Fprintf(&b, " %s=%v", k, c.Params[k])
		}
	}
	fmt.Fprintf(&b, " seed=%d", c.Seed)
	return b.String()
}

// Expand returns the config of every run of s: for each method (in spec
// order) and task (the method's own, else the spec's), the cartesian product of the sweep's axes (in [Axes]
// order, the last varying fastest) and zip groups (in spec order, after
// the axes). An axis the spec does not sweep takes its default: epsilon
// [inf], seed [1].
func (s *Spec) Expand() []Config {
	var out []Config
	for _, m := range s.Methods {
		dims := s.dims(m)
		for _, task := range s.TasksOf(m) {
			idx := make([]int, len(dims))
			for {
				c := Config{
					Method:  m.Name,
					Task:    task,
					Scale:   s.Scale,
					Delta:   s.Delta,
					Attacks: slices.Clone(s.Attacks),
					Params:  make(map[string]any),
				}
				if c.Attacks == nil {
					c.Attacks = []string{}
				}
				for a, o := range s.AttackOptions {
					if c.AttackOptions == nil {
						c.AttackOptions = make(map[string]AttackOptions)
					}
					c.AttackOptions[a] = maps.Clone(o)
					for k, v := range o {
						c.AttackOptions[a][k] = slices.Clone(v)
					}
				}
				maps.Copy(c.Params, s.Params)
				maps.Copy(c.Params, m.Params)
				if m.Variant != "" {
					c.Params[VariantParam] = m.Variant
				}
				for i, dim := range dims {
					for _, a := range dim[idx[i]] {
						v := a.Values[0]
						kind, _, _ := axisKind(a.Name)
						switch {
						case a.Name == "epsilon":
							c.Epsilon = Epsilon(v)
						case a.Name == "seed":
							c.Seed = int64(v)
						case kind.Int:
							c.Params[a.Name] = int64(v)
						default:
							c.Params[a.Name] = v
						}
					}
				}
				out = append(out, c)
				// Advance the odometer, last dimension fastest.
				i := len(dims) - 1
				for ; i >= 0; i-- {
					idx[i]++
					if idx[i] < len(dims[i]) {
						break
					}
					idx[i] = 0
				}
				if i < 0 {
					break
				}
			}
		}
	}
	return out
}

// MaxRuns is the largest number of runs a spec may expand into.
const MaxRuns = 100_000

// count returns the number of runs Expand returns, saturating at
// MaxRuns+1.
func (s *Spec) count() int {
	n := 0
	for _, m := range s.Methods {
		per := len(s.TasksOf(m))
		for _, d := range s.dims(m) {
			per *= len(d)
			if per > MaxRuns {
				return MaxRuns + 1
			}
		}
		n += per
		if n > MaxRuns {
			return MaxRuns + 1
		}
	}
	return n
}

// dims returns the dimensions of method m's sweep: each a list of points,
// a point assigning values to one or more axes.
func (s *Spec) dims(m Method) [][][]Axis {
	// The method's axes replace the spec's axes of the same name.
	axes := slices.Clone(s.Sweep.Axes)
	for _, a := range m.Sweep.Axes {
		if i := slices.IndexFunc(axes, func(b Axis) bool { return b.Name == a.Name }); i >= 0 {
			axes[i] = a
		} else {
			axes = append(axes, a)
		}
	}
	for _, def := range []Axis{{Name: "epsilon", Values: []float64{math.Inf(1)}}, {Name: "seed", Values: []float64{1}}} {
		if _, ok := s.Sweep.Lookup(def.Name); !ok && !slices.ContainsFunc(axes, func(a Axis) bool { return a.Name == def.Name }) {
			axes = append(axes, def)
		}
	}
	slices.SortFunc(axes, byAxisOrder)
	// Each dimension is a list of points; a point assigns values
	// to one or more axes.
	var dims [][][]Axis
	for _, a := range axes {
		var points [][]Axis
		for _, v := range a.Values {
			points = append(points, []Axis{{Name: a.Name, Values: []float64{v}}})
		}
		dims = append(dims, points)
	}
	for _, g := range s.Sweep.Zip {
		var points [][]Axis
		for p := range g[0].Values {
			var point []Axis
			for _, a := range g {
				point = append(point, Axis{Name: a.Name, Values: []float64{a.Values[p]}})
			}
			points = append(points, point)
		}
		dims = append(dims, points)
	}
	return dims
}
