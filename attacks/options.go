// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// OptionKind is the type of the values of an attack's option.
type OptionKind int

// The kinds of options. Every option is a list of values: a spec gives a
// list (`k: [0, 10]`) or a single value (`k: 10`).
const (
	// Choices are names from Option.Values (slices: [img, desp]).
	Choices OptionKind = iota
	// Numbers are float64 values checked by Option.Check; +Inf is
	// written inf.
	Numbers
)

// An Option declares one option of an attack: its spec name, kind, allowed
// values and default. Each attack that takes options lists its own in
// Options; the spec checker and Configure read nothing else, so an option
// an attack does not declare is an error everywhere (the design of
// methods.Param for hyperparameters).
type Option struct {
	// Name is the spec key (attacks: [{name: maxrenyi-mia, NAME: [...]}]).
	Name string
	// Elem names one value in errors and docs: "slice", "order", "K".
	Elem string
	Kind OptionKind
	// Doc says what the option is, with its range.
	Doc string
	// Values are the names a Choices option allows, in their canonical
	// order (the order score sets are computed and reported in).
	Values []string
	// Check, for a Numbers option, returns an error for a value out of
	// range ("must be in [0, 100]"); NaN never reaches it. Numbers are
	// put in ascending order.
	Check func(x float64) error
	// Default are the values the attack uses when a spec does not set the
	// option, in canonical spelling and order (see Canonical).
	Default []string
}

// Canonical returns the canonical spelling of the value v of o: a Choices
// value as it is; a number (a float64, an int64 or an int, or a string
// that strconv.ParseFloat reads, inf included) as the shortest decimal
// that reads back exactly (strconv 'g', -1), +Inf as "inf". It returns an
// error naming o.Elem for an unknown name, a value of the wrong kind, NaN
// or a number Check rejects.
func (o *Option) Canonical(v any) (string, error) {
	if o.Kind == Choices {
		s, ok := v.(string)
		if !ok || !slices.Contains(o.Values, s) {
			return "", fmt.Errorf("unknown %s %s (known: %s)", o.Elem, quote(v), strings.Join(o.Values, ", "))
		}
		return s, nil
	}
	var x float64
	switch v := v.(type) {
	case float64:
		x = v
	case int64:
		x = float64(v)
	case int:
		x = float64(v)
	case string:
		var err error
		if x, err = strconv.ParseFloat(v, 64); err != nil {
			return "", fmt.Errorf("%s %q is not a number", o.Elem, v)
		}
	default:
		return "", fmt.Errorf("%s %v is not a number", o.Elem, v)
	}
	if math.IsNaN(x) {
		return "", fmt.Errorf("%s is NaN", o.Elem)
	}
	if o.Check != nil {
		if err := o.Check(x); err != nil {
			return "", fmt.Errorf("%s %s: %w", o.Elem, formatNumber(x), err)
		}
	}
	return formatNumber(x), nil
}

// Sort sorts canonical values of o into its canonical order: the order of
// Values for Choices, ascending for Numbers.
func (o *Option) Sort(vals []string) {
	if o.Kind == Choices {
		slices.SortFunc(vals, func(a, b string) int { return slices.Index(o.Values, a) - slices.Index(o.Values, b) })
		return
	}
	slices.SortFunc(vals, func(a, b string) int {
		x, _ := strconv.ParseFloat(a, 64)
		y, _ := strconv.ParseFloat(b, 64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
}

func quote(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(v)
}

// formatNumber formats x as the spec and the run ids spell it: the
// shortest decimal that reads back as x, and "inf" for +Inf (the spelling
// of experiments.FormatFloat).
func formatNumber(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// An Optioned attack takes options a spec may set:
//
//	attacks:
//	  - loss-mia
//	  - {name: maxrenyi-mia, slices: [img, desp], orders: [0.5, inf], k: [0, 10]}
//
// Its registered value has the default options.
type Optioned interface {
	Attack
	// Options returns the attack's option declarations.
	Options() []Option
	// WithOptions returns the attack with the options opts: option name
	// to values in canonical spelling (Option.Canonical); an option opts
	// does not set takes its default. Configure checks opts first.
	WithOptions(opts map[string][]string) (Attack, error)
	// Sets returns the names of the score sets the attack computes with
	// its options, in the order it computes them: the prefixes of its
	// results without the trailing underscore (renyi_img_ainf_k0).
	Sets() []string
	// Owns reports whether metric is a result of a score set the attack
	// computes with some options (renyi_img_a2_k10_auc for
	// maxrenyi-mia), so that a spec can tell a table metric the options
	// leave out.
	Owns(metric string) bool
}

// Configure returns the attack registered under name with the options
// opts: option name to values as a spec writes them (a number as a
// decimal or inf; see Option.Canonical), the form experiments.Config
// carries. Nil or empty opts give the registered attack. It returns an
// error for an unknown attack, an option the attack does not declare, a
// bad value, a duplicate value or an empty list, in the words a spec
// error uses: `attack maxrenyi-mia has no option "order" (known: slices,
// orders, k)`.
func Configure(name string, opts map[string][]string) (Attack, error) {
	a, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("attacks: unknown attack %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	if len(opts) == 0 {
		return a, nil
	}
	in := make(map[string][]any, len(opts))
	for k, vs := range opts {
		for _, v := range vs {
			in[k] = append(in[k], v)
		}
		if in[k] == nil {
			in[k] = []any{}
		}
	}
	canon, err := CanonicalOptions(name, in)
	if err != nil {
		return nil, err
	}
	return a.(Optioned).WithOptions(canon)
}

// CanonicalOptions checks opts against the options attack name declares
// and returns them in canonical spelling and order (Option.Canonical,
// Option.Sort). Errors are those of Configure.
func CanonicalOptions(name string, opts map[string][]any) (map[string][]string, error) {
	out := make(map[string][]string, len(opts))
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		o, err := LookupOption(name, k)
		if err != nil {
			return nil, err
		}
		if len(opts[k]) == 0 {
			return nil, fmt.Errorf("attack %s: %s: the list is empty", name, k)
		}
		var vals []string
		for _, v := range opts[k] {
			c, err := o.Canonical(v)
			if err != nil {
				return nil, fmt.Errorf("attack %s: %w", name, err)
			}
			if slices.Contains(vals, c) {
				return nil, fmt.Errorf("attack %s: duplicate %s %s", name, o.Elem, c)
			}
			vals = append(vals, c)
		}
		o.Sort(vals)
		out[k] = vals
	}
	return out, nil
}

// LookupOption returns the declaration of option opt of attack name. The
// error for an attack that does not declare it lists those it does.
func LookupOption(name, opt string) (Option, error) {
	a, ok := Lookup(name)
	if !ok {
		return Option{}, fmt.Errorf("attacks: unknown attack %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	oa, ok := a.(Optioned)
	if !ok {
		return Option{}, fmt.Errorf("attack %s has no option %q (it takes none)", name, opt)
	}
	ops := oa.Options()
	i := slices.IndexFunc(ops, func(o Option) bool { return o.Name == opt })
	if i < 0 {
		known := make([]string, len(ops))
		for j, o := range ops {
			known[j] = o.Name
		}
		return Option{}, fmt.Errorf("attack %s has no option %q (known: %s)", name, opt, strings.Join(known, ", "))
	}
	return ops[i], nil
}

// optionValues returns the values of option name in opts, or its default
// in ops; names are canonical and checked (Configure).
func optionValues(ops []Option, opts map[string][]string, name string) []string {
	if v, ok := opts[name]; ok {
		return v
	}
	for _, o := range ops {
		if o.Name == name {
			return o.Default
		}
	}
	panic("attacks: undeclared option " + name)
}

// numbers parses canonical numbers (Option.Canonical).
func numbers(vals []string) ([]float64, error) {
	out := make([]float64, len(vals))
	for i, v := range vals {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("attacks: option value %q is not a number", v)
		}
		out[i] = x
	}
	return out, nil
}

// checkOptions checks that opts holds only options of ops, each with
// values that are canonical and in canonical order, for WithOptions.
func checkOptions(name string, ops []Option, opts map[string][]string) error {
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		i := slices.IndexFunc(ops, func(o Option) bool { return o.Name == k })
		if i < 0 {
			return fmt.Errorf("attacks: %s has no option %q", name, k)
		}
		o := &ops[i]
		if len(opts[k]) == 0 {
			return fmt.Errorf("attacks: %s: option %s is empty", name, k)
		}
		for _, v := range opts[k] {
			c, err := o.Canonical(v)
			if o.Kind == Numbers && err == nil && c != v {
				err = fmt.Errorf("%q is not in canonical form %q", v, c)
			}
			if err != nil {
				return fmt.Errorf("attacks: %s: %w", name, err)
			}
		}
		sorted := slices.Clone(opts[k])
		o.Sort(sorted)
		if !slices.Equal(sorted, opts[k]) || len(slices.Compact(sorted)) != len(opts[k]) {
			return fmt.Errorf("attacks: %s: option %s values %q are not distinct and in canonical order", name, k, opts[k])
		}
	}
	return nil
}
