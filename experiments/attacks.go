// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package experiments

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// AttackOptions are the options a spec sets for one attack: option name
// to values, each in its canonical spelling (a number as the shortest
// decimal that reads back exactly, +Inf as inf) and the option's
// canonical order. An option whose values equal its default is left out,
// so a spec that spells out the defaults gives the same run ids as one
// that names the attack alone.
type AttackOptions map[string][]string

// String returns the options as a spec would write them, sorted by name:
// "k: [0, 10]; orders: [inf]".
func (o AttackOptions) String() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(o)) {
		parts = append(parts, fmt.Sprintf("%s: [%s]", k, strings.Join(o[k], ", ")))
	}
	return strings.Join(parts, "; ")
}

// An AttackOption declares one option of an attack to the spec checker
// (the pipeline fills it in from the attack's own declaration,
// attacks.Option).
type AttackOption struct {
	// Name is the spec key; Elem names one value in errors ("slice").
	Name, Elem string
	// Canonical returns the canonical spelling of one value: v is a
	// float64 for a YAML number (inf included), else the string as
	// written. Its error says what is wrong with v ("unknown slice
	// \"imgg\" (known: ...)", "order -1: must be ≥ 0 or inf").
	Canonical func(v any) (string, error)
	// Sort sorts canonical values into the option's canonical order.
	Sort func(vals []string)
	// Default are the values the attack takes when the spec does not set
	// the option, canonical and in canonical order.
	Default []string
}

// attacks decodes the attacks list of a spec: each element is an attack's
// name, or a mapping with its name and options
// (`{name: mink-mia, k: [10, 50]}`), checked against the options each
// attack declares (Names.AttackOptions).
func (d *decoder) attacks(n *yaml.Node, s *Spec) error {
	return d.list(n, "attacks", func(e *yaml.Node) error {
		name, opts, err := d.attack(e)
		if err != nil {
			return err
		}
		if has(s.Attacks, name) {
			return d.errorf(e, "duplicate attack %q", name)
		}
		s.Attacks = append(s.Attacks, name)
		if len(opts) > 0 {
			if s.AttackOptions == nil {
				s.AttackOptions = make(map[string]AttackOptions)
			}
			s.AttackOptions[name] = opts
		}
		return nil
	})
}

// attack decodes one element of the attacks list.
func (d *decoder) attack(e *yaml.Node) (string, AttackOptions, error) {
	var name string
	checkName := func(v *yaml.Node) error {
		if err := d.str(v, "attack", &name); err != nil {
			return err
		}
		if !has(d.names.Attacks, name) {
			return d.errorf(v, "unknown attack %q (known: %s)", name, strings.Join(d.names.Attacks, ", "))
		}
		return nil
	}
	if e.Kind != yaml.MappingNode {
		if e.Kind != yaml.ScalarNode {
			return "", nil, d.errorf(e, "attack must be a name or a mapping with a name and options")
		}
		err := checkName(e)
		return name, nil, err
	}
	// The name first, wherever it is: the options are the attack's.
	nameAt := -1
	for i := 0; i+1 < len(e.Content); i += 2 {
		if k := e.Content[i]; k.Kind == yaml.ScalarNode && k.Value == "name" {
			nameAt = i
			break
		}
	}
	if nameAt < 0 {
		return "", nil, d.errorf(e, "attack: missing key %q", "name")
	}
	if err := checkName(e.Content[nameAt+1]); err != nil {
		return "", nil, err
	}
	var decls []AttackOption
	if d.names.AttackOptions != nil {
		decls = d.names.AttackOptions(name)
	}
	opts := make(AttackOptions)
	for i := 0; i+1 < len(e.Content); i += 2 {
		k, v := e.Content[i], e.Content[i+1]
		if i == nameAt {
			continue
		}
		if k.Kind != yaml.ScalarNode {
			return "", nil, d.errorf(k, "attack %s: keys must be strings", name)
		}
		if k.Value == "name" {
			return "", nil, d.errorf(k, "attack %s: duplicate key %q", name, k.Value)
		}
		if _, dup := opts[k.Value]; dup {
			return "", nil, d.errorf(k, "attack %s: duplicate key %q", name, k.Value)
		}
		j := slices.IndexFunc(decls, func(o AttackOption) bool { return o.Name == k.Value })
		if j < 0 {
			if len(decls) == 0 {
				return "", nil, d.errorf(k, "attack %s has no option %q (it takes none)", name, k.Value)
			}
			known := make([]string, len(decls))
			for i, o := range decls {
				known[i] = o.Name
			}
			return "", nil, d.errorf(k, "attack %s has no option %q (known: %s)", name, k.Value, strings.Join(known, ", "))
		}
		vals, err := d.attackOption(name, &decls[j], v)
		if err != nil {
			return "", nil, err
		}
		opts[k.Value] = vals
	}
	// Options equal to their defaults are left out (see AttackOptions).
	for _, o := range decls {
		if v, ok := opts[o.Name]; ok && slices.Equal(v, o.Default) {
			delete(opts, o.Name)
		}
	}
	return name, opts, nil
}

// attackOption decodes the values of option o of attack: a list, or a
// single value, each checked and spelt by o.Canonical, then put in
// canonical order.
func (d *decoder) attackOption(attack string, o *AttackOption, v *yaml.Node) ([]string, error) {
	elems := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		elems = v.Content
		if len(elems) == 0 {
			return nil, d.errorf(v, "attack %s: %s: the list is empty", attack, o.Name)
		}
	}
	var vals []string
	for _, e := range elems {
		if e.Kind != yaml.ScalarNode {
			return nil, d.errorf(e, "attack %s: %s must be a value or a list of values", attack, o.Name)
		}
		var x any = e.Value
		switch e.ShortTag() {
		case "!!int", "!!float":
			var f float64
			if err := e.Decode(&f); err != nil {
				return nil, d.errorf(e, "attack %s: %s %q is not a number", attack, o.Elem, e.Value)
			}
			x = f
		case "!!str":
			if e.Value == "∞" {
				x = math.Inf(1)
			}
		}
		c, err := o.Canonical(x)
		if err != nil {
			return nil, d.errorf(e, "attack %s: %v", attack, err)
		}
		if has(vals, c) {
			return nil, d.errorf(e, "attack %s: duplicate %s %s", attack, o.Elem, c)
		}
		vals = append(vals, c)
	}
	o.Sort(vals)
	return vals, nil
}

// checkMetrics checks the metrics tables, plots and claims name against
// the score sets of the attacks (Names.AttackSets): a metric that is a
// result of an attack's score set (renyi_img_a2_k10_auc of maxrenyi-mia)
// must be one the attack computes with the spec's options, and the
// attack must be one the spec runs. Other metrics are whatever the runs
// record, and are not checked.
func (d *decoder) checkMetrics(s *Spec, at func(string) *yaml.Node) error {
	if d.names.AttackSets == nil {
		return nil
	}
	type family struct {
		attack string
		run    bool
		sets   []string
		owns   func(string) bool
	}
	var fams []family
	for _, a := range d.names.Attacks {
		sets, owns, err := d.names.AttackSets(a, s.AttackOptions[a])
		if err != nil {
			return d.errorf(at("attacks"), "attack %s: %v", a, err)
		}
		if owns != nil {
			fams = append(fams, family{a, has(s.Attacks, a), sets, owns})
		}
	}
	check := func(n *yaml.Node, what, metric string) error {
		for _, f := range fams {
			if !f.owns(metric) {
				continue
			}
			switch {
			case !f.run:
				return d.errorf(n, "%s: metric %q is a result of attack %s, which the spec does not run", what, metric, f.attack)
			case !slices.ContainsFunc(f.sets, func(set string) bool { return strings.HasPrefix(metric, set+"_") }):
				opts := "its default options"
				if o := s.AttackOptions[f.attack]; len(o) > 0 {
					opts = "the spec's options (" + o.String() + ")"
				}
				return d.errorf(n, "%s: metric %q is not a result of attack %s with %s", what, metric, f.attack, opts)
			}
		}
		return nil
	}
	return eachMetric(s, at, check)
}

// eachMetric calls check with every metric that s's tables, plots and
// claims name, the node of its spec line and what names it ("table T",
// "plot P", "claim C"), and returns the first error.
func eachMetric(s *Spec, at func(string) *yaml.Node, check func(n *yaml.Node, what, metric string) error) error {
	for i, t := range s.Tables {
		tn := at(fmt.Sprint("tables.", i))
		for _, m := range t.Metrics {
			if err := check(elemNode(tn, "metrics", m), "table "+t.Name, m); err != nil {
				return err
			}
		}
	}
	for i, p := range s.Plots {
		pn := at(fmt.Sprint("plots.", i))
		for _, m := range slices.Concat([]string{p.Y}, p.Metrics) {
			if m == "" {
				continue
			}
			n := elemNode(pn, "metrics", m)
			if m == p.Y {
				n = elemNode(pn, "y", m)
			}
			if err := check(n, "plot "+p.Name, m); err != nil {
				return err
			}
		}
	}
	list := at("claims")
	for _, c := range s.Claims {
		cn := claimNode(list, c)
		n := elemNode(cn, "metric", c.Metric)
		if n == cn {
			n = elemNode(cn, "metrics", c.Metric)
		}
		if err := check(n, "claim "+c.Name, c.Metric); err != nil {
			return err
		}
	}
	return nil
}

// claimNode returns the entry of the claims list that c comes from (named
// c.Name, or c.Name less "-<metric>" for an entry of several metrics), or
// list.
func claimNode(list *yaml.Node, c Claim) *yaml.Node {
	if list.Kind != yaml.SequenceNode {
		return list
	}
	for _, e := range list.Content {
		name := elemNode(e, "name", "")
		if name != e && (name.Value == c.Name || name.Value+"-"+c.Metric == c.Name) {
			return e
		}
	}
	return list
}

// elemNode returns the node of value under key in the mapping n (the
// value itself, or the element of a list that equals it), or n.
func elemNode(n *yaml.Node, key, value string) *yaml.Node {
	v := keyNode(n, key)
	if v == n || v == nil {
		return n
	}
	// keyNode returns the key; its value follows it.
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i] == v {
			v = n.Content[i+1]
			break
		}
	}
	if v.Kind == yaml.SequenceNode {
		for _, e := range v.Content {
			if e.Value == value {
				return e
			}
		}
	}
	return v
}
