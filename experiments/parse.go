// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package experiments

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Options configures [Parse] and [Load]. A nil *Options means the zero
// value: no overrides, the names of [Registered].
type Options struct {
	// Names holds the known methods, tasks, attacks and scales and the
	// checks of params; nil means [Registered].
	Names *Names
	// Overrides are `key=value` settings applied to the YAML before it is
	// decoded, in order. A key is a dotted path (`delta`, `sweep.seed`,
	// `params.lr`, `methods.dpsgd.params.lora_rank`,
	// `attacks.maxrenyi-mia.orders`); a list element is selected by its
	// index, by its `name`, or by its value when it is a bare name (an
	// attack), which then becomes a mapping {name: NAME} that the
	// override adds a key to. The value is YAML
	// (`[1, 2]`, `inf`, `0.1`), typed by the field it lands in.
	Overrides []string
	// Sources name the overrides in errors: Sources[i], when there and not
	// empty, is what the user typed for Overrides[i] (`--scale bogus` for
	// `scale=bogus`), and errors in Overrides[i] start with it. Otherwise
	// they start with `--set` and the override (`--set scale=bogus`).
	Sources []string
}

// Parse parses and validates the spec in data, read from fileName (used in
// errors only). Errors in the spec are *SyntaxError values.
func Parse(fileName string, data []byte, opts *Options) (spec *Spec, err error) {
	if opts == nil {
		opts = &Options{}
	}
	names := opts.Names
	if names == nil {
		names = Registered()
	}
	defer func() {
		// The YAML library is fuzzed but not ours; a panic in it is a
		// malformed input, never a crash.
		if r := recover(); r != nil {
			spec, err = nil, &SyntaxError{FileName: fileName, Msg: fmt.Sprintf("malformed YAML: %v", r)}
		}
	}()
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlError(fileName, data, err)
	}
	d := &decoder{file: fileName, origin: make(map[*yaml.Node]string), names: names}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, &SyntaxError{FileName: fileName, Msg: "empty spec"}
	}
	root := doc.Content[0]
	if err := d.noAliases(root, 0); err != nil {
		return nil, err
	}
	for i, ov := range opts.Overrides {
		src := "--set " + ov
		if i < len(opts.Sources) && opts.Sources[i] != "" {
			src = opts.Sources[i]
		}
		if err := d.override(root, ov, src); err != nil {
			return nil, err
		}
	}
	spec, err = d.spec(root)
	if err != nil {
		return nil, err
	}
	spec.FileName = fileName
	return spec, nil
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// maxScanLines bounds the spec length for which yamlError looks for the
// line of a syntax error itself; no spec comes near it.
const maxScanLines = 1000

// yamlError returns err, the error of yaml.Unmarshal on data, as a
// *SyntaxError at the line where data stops being YAML.
//
// It does not take yaml.v3's line: for a parser error that is the 0-based
// line of the context mark, where the construct that failed began (the
// line of the `[` of an unclosed list, or of the mapping or list that a
// badly indented line breaks), so one or more lines above the error; only
// scanner errors get the 1-based line of the problem (yaml.v3
// parser.fail). It reports instead the first line L such that no prefix
// of data of L or more whole lines parses, one past the longest prefix
// that does: the line of an unclosed bracket or quote, of a badly
// indented key, of a tab. Each prefix is parsed once, from the longest
// down, so an error near the end of the spec costs a few parses. Above
// maxScanLines lines it keeps yaml.v3's line.
func yamlError(fileName string, data []byte, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	if lines := strings.SplitAfter(string(data), "\n"); len(lines) <= maxScanLines {
		line = len(lines)
		for l := len(lines) - 1; l >= 0; l-- {
			var n yaml.Node
			if yaml.Unmarshal([]byte(strings.Join(lines[:l], "")), &n) == nil {
				line = l + 1
				break
			}
		}
	}
	return &SyntaxError{FileName: fileName, Line: line, Msg: msg}
}

// A decoder turns a YAML node tree into a Spec. We decode yaml.v3 nodes
// by hand rather than with yaml.Decoder.KnownFields: every node carries
// its line, so unknown keys, wrong types and out-of-range values all become
// typed *SyntaxError values at the right line (KnownFields reports unknown
// keys only, as untyped text), overrides can be applied to the tree before
// decoding and typed by the field they land in, and aliases, duplicate
// keys and excessive nesting are rejected before they cost anything. origin maps the nodes that
// came from an override to what the user typed for it (`--set delta=2`,
// `--scale bogus`), for errors.
type decoder struct {
	file   string
	origin map[*yaml.Node]string
	names  *Names
}

func (d *decoder) errorf(n *yaml.Node, format string, args ...any) error {
	if o, ok := d.origin[n]; ok {
		return &SyntaxError{FileName: o, Msg: fmt.Sprintf(format, args...)}
	}
	return &SyntaxError{FileName: d.file, Line: n.Line, Msg: fmt.Sprintf(format, args...)}
}

// maxDepth bounds the nesting of a spec; no valid spec nests deeper than 6.
const maxDepth = 64

func (d *decoder) noAliases(n *yaml.Node, depth int) error {
	if depth > maxDepth {
		return d.errorf(n, "nested too deeply")
	}
	if n.Kind == yaml.AliasNode {
		return d.errorf(n, "YAML aliases are not supported in specs")
	}
	for _, c := range n.Content {
		if err := d.noAliases(c, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// override applies one key=value override to the tree under root; src
// names it in errors (`--set delta=2`, `--scale bogus`).
func (d *decoder) override(root *yaml.Node, ov, src string) error {
	errorf := func(format string, args ...any) error {
		return &SyntaxError{FileName: src, Msg: fmt.Sprintf(format, args...)}
	}
	key, value, ok := strings.Cut(ov, "=")
	if !ok || key == "" {
		return errorf("want key=value")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(value), &doc); err != nil {
		return errorf("bad value: %v", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var v *yaml.Node
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		v = doc.Content[0]
	} else {
		v = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value}
	}
	var mark func(*yaml.Node, int) error
	mark = func(n *yaml.Node, depth int) error {
		if depth > maxDepth {
			return errorf("nested too deeply")
		}
		if n.Kind == yaml.AliasNode {
			return errorf("YAML aliases are not supported in specs")
		}
		d.origin[n] = src
		for _, c := range n.Content {
			if err := mark(c, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := mark(v, 0); err != nil {
		return err
	}
	n := root
	segs := strings.Split(key, ".")
	for i, seg := range segs {
		last := i == len(segs)-1
		if seg == "" {
			return errorf("empty key element in %q", key)
		}
		switch n.Kind {
		case yaml.MappingNode:
			j := -1
			for k := 0; k+1 < len(n.Content); k += 2 {
				if n.Content[k].Kind == yaml.ScalarNode && n.Content[k].Value == seg {
					j = k
					break
				}
			}
			if j < 0 {
				k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: seg}
				d.origin[k] = src
				next := v
				if !last {
					next = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
					d.origin[next] = src
				}
				n.Content = append(n.Content, k, next)
				n = next
				continue
			}
			if last {
				n.Content[j+1] = v
			}
			n = n.Content[j+1]
		case yaml.SequenceNode:
			j, err := strconv.Atoi(seg)
			if err != nil {
				j = slices.IndexFunc(n.Content, func(e *yaml.Node) bool {
					return nameOf(e) == seg || e.Kind == yaml.ScalarNode && e.Value == seg
				})
				if j < 0 {
					return errorf("no element named %q in %s", seg, strings.Join(segs[:i], "."))
				}
				if e := n.Content[j]; !last && e.Kind == yaml.ScalarNode {
					// An element that is a bare name (an attack) becomes
					// {name: NAME}, so that an override can give it keys.
					k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "name", Line: e.Line, Column: e.Column}
					n.Content[j] = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: e.Line, Column: e.Column, Content: []*yaml.Node{k, e}}
				}
			} else if j < 0 || j >= len(n.Content) {
				return errorf("index %d out of range in %s (%d elements)", j, strings.Join(segs[:i], "."), len(n.Content))
			}
			if last {
				n.Content[j] = v
			}
			n = n.Content[j]
		default:
			return errorf("%s is not a mapping or a list", strings.Join(segs[:i], "."))
		}
	}
	return nil
}

// nameOf returns the value of the name key of a mapping node, or "".
func nameOf(n *yaml.Node) string {
	if n.Kind != yaml.MappingNode {
		return ""
	}
	for k := 0; k+1 < len(n.Content); k += 2 {
		if n.Content[k].Value == "name" && n.Content[k+1].Kind == yaml.ScalarNode {
			return n.Content[k+1].Value
		}
	}
	return ""
}

// fields decodes the mapping n, calling fs[key] for each key. Unknown,
// duplicate and missing required keys are errors.
func (d *decoder) fields(n *yaml.Node, what string, fs map[string]func(*yaml.Node) error, required ...string) error {
	if n.Kind != yaml.MappingNode {
		return d.errorf(n, "%s must be a mapping", what)
	}
	seen := make(map[string]bool)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return d.errorf(k, "%s: keys must be strings", what)
		}
		if seen[k.Value] {
			return d.errorf(k, "%s: duplicate key %q", what, k.Value)
		}
		seen[k.Value] = true
		f, ok := fs[k.Value]
		if !ok {
			known := make([]string, 0, len(fs))
			for name := range fs {
				known = append(known, name)
			}
			slices.Sort(known)
			return d.errorf(k, "%s: unknown key %q (known: %s)", what, k.Value, strings.Join(known, ", "))
		}
		if err := f(v); err != nil {
			return err
		}
	}
	for _, r := range required {
		if !seen[r] {
			return d.errorf(n, "%s: missing key %q", what, r)
		}
	}
	return nil
}

func (d *decoder) scalar(n *yaml.Node, what string) error {
	if n.Kind != yaml.ScalarNode {
		return d.errorf(n, "%s must be a single value", what)
	}
	return nil
}

func (d *decoder) str(n *yaml.Node, what string, dst *string) error {
	if err := d.scalar(n, what); err != nil {
		return err
	}
	if n.ShortTag() != "!!str" {
		return d.errorf(n, "%s must be a string, not %s", what, n.Value)
	}
	*dst = n.Value
	return nil
}

var (
	identRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	fileRE  = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
)

func (d *decoder) ident(n *yaml.Node, what string, dst *string) error {
	if err := d.str(n, what, dst); err != nil {
		return err
	}
	if !identRE.MatchString(*dst) {
		return d.errorf(n, "%s %q must match [a-z][a-z0-9_]*", what, *dst)
	}
	return nil
}

func (d *decoder) fileName(n *yaml.Node, what string, dst *string) error {
	if err := d.str(n, what, dst); err != nil {
		return err
	}
	if len(*dst) > 64 || !fileRE.MatchString(*dst) {
		return d.errorf(n, "%s %q must match [a-z0-9][a-z0-9_-]* (at most 64 characters)", what, *dst)
	}
	return nil
}

// number decodes an integer or float scalar; inf (or .inf) is +Inf.
func (d *decoder) number(n *yaml.Node, what string) (float64, error) {
	if err := d.scalar(n, what); err != nil {
		return 0, err
	}
	switch n.ShortTag() {
	case "!!int", "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return 0, d.errorf(n, "%s: %q is not a number", what, n.Value)
		}
		return f, nil
	case "!!str":
		switch n.Value {
		case "inf", "+inf", "Inf", "∞":
			return math.Inf(1), nil
		}
	}
	return 0, d.errorf(n, "%s must be a number, not %q", what, n.Value)
}

func (d *decoder) boolean(n *yaml.Node, what string, dst *bool) error {
	if err := d.scalar(n, what); err != nil {
		return err
	}
	if n.ShortTag() != "!!bool" {
		return d.errorf(n, "%s must be true or false, not %q", what, n.Value)
	}
	return n.Decode(dst)
}

// list calls f for each element of the sequence n.
func (d *decoder) list(n *yaml.Node, what string, f func(*yaml.Node) error) error {
	if n.Kind != yaml.SequenceNode {
		return d.errorf(n, "%s must be a list", what)
	}
	for _, e := range n.Content {
		if err := f(e); err != nil {
			return err
		}
	}
	return nil
}

// names decodes a non-empty list of distinct names, each in known.
func (d *decoder) nameList(n *yaml.Node, what string, known []string, allowEmpty bool) ([]string, error) {
	var out []string
	err := d.list(n, what, func(e *yaml.Node) error {
		var s string
		if err := d.str(e, what, &s); err != nil {
			return err
		}
		if !has(known, s) {
			return d.errorf(e, "unknown %s %q (known: %s)", what, s, strings.Join(known, ", "))
		}
		if has(out, s) {
			return d.errorf(e, "duplicate %s %q", what, s)
		}
		out = append(out, s)
		return nil
	})
	if err == nil && len(out) == 0 && !allowEmpty {
		err = d.errorf(n, "%s: the list is empty", what)
	}
	return out, err
}

func (d *decoder) identList(n *yaml.Node, what string) ([]string, error) {
	var out []string
	err := d.list(n, what, func(e *yaml.Node) error {
		var s string
		if err := d.ident(e, what, &s); err != nil {
			return err
		}
		if has(out, s) {
			return d.errorf(e, "duplicate %s %q", what, s)
		}
		out = append(out, s)
		return nil
	})
	if err == nil && len(out) == 0 {
		err = d.errorf(n, "%s: the list is empty", what)
	}
	return out, err
}

// params decodes a mapping of hyperparameters to scalar values: int64,
// finite float64, string or bool.
func (d *decoder) params(n *yaml.Node, what string) (map[string]any, error) {
	if n.Kind != yaml.MappingNode {
		return nil, d.errorf(n, "%s must be a mapping", what)
	}
	out := make(map[string]any)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		var name string
		if err := d.ident(k, what+" name", &name); err != nil {
			return nil, err
		}
		if _, dup := out[name]; dup {
			return nil, d.errorf(k, "%s: duplicate key %q", what, name)
		}
		if _, _, isAxis := axisKind(name); isAxis && (name == "epsilon" || name == "seed") {
			return nil, d.errorf(k, "%s: %s is set by the sweep, not a hyperparameter", what, name)
		}
		if reserved(name) {
			return nil, d.errorf(k, "%s: %q is a reserved run column", what, name)
		}
		if err := d.scalar(v, what+"."+name); err != nil {
			return nil, err
		}
		switch v.ShortTag() {
		case "!!int":
			var x int64
			if err := v.Decode(&x); err != nil {
				return nil, d.errorf(v, "%s.%s: %q is not a 64-bit integer", what, name, v.Value)
			}
			out[name] = x
		case "!!float":
			var x float64
			if err := v.Decode(&x); err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, d.errorf(v, "%s.%s: %q is not a finite number", what, name, v.Value)
			}
			out[name] = x
		case "!!bool":
			var x bool
			if err := v.Decode(&x); err != nil {
				return nil, d.errorf(v, "%s.%s: %q is not a boolean", what, name, v.Value)
			}
			out[name] = x
		case "!!str":
			out[name] = v.Value
		default:
			return nil, d.errorf(v, "%s.%s must be a number, string or boolean, not %q", what, name, v.Value)
		}
	}
	return out, nil
}

// axis decodes the values of one sweep axis: a list, or a single value.
func (d *decoder) axis(k, v *yaml.Node) (Axis, error) {
	kind, _, ok := axisKind(k.Value)
	if !ok {
		known := make([]string, len(Axes))
		for i, a := range Axes {
			known[i] = a.Name
		}
		return Axis{}, d.errorf(k, "sweep: unknown axis %q (known: zip, %s)", k.Value, strings.Join(known, ", "))
	}
	elems := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		elems = v.Content
		if len(elems) == 0 {
			return Axis{}, d.errorf(v, "sweep.%s: the list is empty", kind.Name)
		}
	}
	a := Axis{Name: kind.Name}
	for _, e := range elems {
		x, err := d.number(e, "sweep."+kind.Name)
		if err != nil {
			return Axis{}, err
		}
		if err := kind.Check(x); err != nil {
			return Axis{}, d.errorf(e, "sweep.%s: %v", kind.Name, err)
		}
		if kind.Int && x != math.Trunc(x) {
			return Axis{}, d.errorf(e, "sweep.%s: %v is not an integer", kind.Name, x)
		}
		a.Values = append(a.Values, x)
	}
	return a, nil
}

func (d *decoder) sweep(n *yaml.Node, what string) (Sweep, error) {
	var s Sweep
	if n.Kind != yaml.MappingNode {
		return s, d.errorf(n, "%s must be a mapping", what)
	}
	seen := make(map[string]bool)
	add := func(k *yaml.Node, a Axis) error {
		if seen[a.Name] {
			return d.errorf(k, "%s: axis %q appears twice", what, a.Name)
		}
		seen[a.Name] = true
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return s, d.errorf(k, "%s: keys must be strings", what)
		}
		if k.Value == "zip" {
			err := d.list(v, what+".zip", func(g *yaml.Node) error {
				if g.Kind != yaml.MappingNode || len(g.Content) == 0 {
					return d.errorf(g, "%s.zip: each group must be a non-empty mapping of axes to lists", what)
				}
				var group []Axis
				for j := 0; j+1 < len(g.Content); j += 2 {
					gk, gv := g.Content[j], g.Content[j+1]
					if gv.Kind != yaml.SequenceNode {
						return d.errorf(gv, "%s.zip.%s must be a list", what, gk.Value)
					}
					a, err := d.axis(gk, gv)
					if err != nil {
						return err
					}
					if err := add(gk, a); err != nil {
						return err
					}
					if len(group) > 0 && len(a.Values) != len(group[0].Values) {
						return d.errorf(gv, "%s.zip: %s has %d values, %s has %d", what, a.Name, len(a.Values), group[0].Name, len(group[0].Values))
					}
					group = append(group, a)
				}
				slices.SortFunc(group, byAxisOrder)
				for p := range len(group[0].Values) {
					for q := range p {
						if !slices.ContainsFunc(group, func(a Axis) bool { return a.Values[p] != a.Values[q] }) {
							return d.errorf(g, "%s.zip: points %d and %d are equal", what, q+1, p+1)
						}
					}
				}
				s.Zip = append(s.Zip, group)
				return nil
			})
			if err != nil {
				return s, err
			}
			continue
		}
		a, err := d.axis(k, v)
		if err != nil {
			return s, err
		}
		if err := add(k, a); err != nil {
			return s, err
		}
		for p, x := range a.Values {
			if slices.Index(a.Values, x) != p {
				return s, d.errorf(v, "%s.%s: duplicate value %s", what, a.Name, FormatFloat(x))
			}
		}
		s.Axes = append(s.Axes, a)
	}
	slices.SortFunc(s.Axes, byAxisOrder)
	return s, nil
}

func byAxisOrder(a, b Axis) int {
	_, i, _ := axisKind(a.Name)
	_, j, _ := axisKind(b.Name)
	return i - j
}

// fixedColumns are the run columns every run has (see internal/results).
var fixedColumns = []string{
	"run_id", "experiment", "status", "error", "method", "task", "scale", "seed",
	"epsilon_target", "epsilon", "delta", "sigma", "sample_rate", "steps", "seconds",
}

func reserved(name string) bool { return has(fixedColumns, name) }

func (d *decoder) spec(n *yaml.Node) (*Spec, error) {
	s := &Spec{Scale: "small", Delta: 1e-5}
	diagnostics := true
	var nodes = make(map[string]*yaml.Node)
	keep := func(key string, f func(*yaml.Node) error) func(*yaml.Node) error {
		return func(v *yaml.Node) error { nodes[key] = v; return f(v) }
	}
	err := d.fields(n, "spec", map[string]func(*yaml.Node) error{
		"name":        func(v *yaml.Node) error { return d.fileName(v, "name", &s.Name) },
		"description": func(v *yaml.Node) error { return d.str(v, "description", &s.Description) },
		"scale": func(v *yaml.Node) error {
			if err := d.str(v, "scale", &s.Scale); err != nil {
				return err
			}
			if !has(d.names.Scales, s.Scale) {
				return d.errorf(v, "unknown scale %q (known: %s)", s.Scale, strings.Join(d.names.Scales, ", "))
			}
			return nil
		},
		"delta": func(v *yaml.Node) error {
			x, err := d.number(v, "delta")
			if err != nil {
				return err
			}
			if err := CheckDelta(x); err != nil {
				return d.errorf(v, "%v", err)
			}
			s.Delta = x
			return nil
		},
		"tasks": keep("tasks", func(v *yaml.Node) (err error) {
			s.Tasks, err = d.nameList(v, "task", d.names.Tasks, false)
			return err
		}),
		"attacks": keep("attacks", func(v *yaml.Node) error { return d.attacks(v, s) }),
		"params": keep("params", func(v *yaml.Node) (err error) {
			s.Params, err = d.params(v, "params")
			return err
		}),
		"sweep": keep("sweep", func(v *yaml.Node) (err error) {
			s.Sweep, err = d.sweep(v, "sweep")
			return err
		}),
		"methods": func(v *yaml.Node) error {
			err := d.list(v, "methods", func(e *yaml.Node) error {
				m, err := d.method(e, s)
				if err != nil {
					return err
				}
				nodes[fmt.Sprint("methods.", len(s.Methods))] = e
				s.Methods = append(s.Methods, m)
				return nil
			})
			if err == nil && len(s.Methods) == 0 {
				err = d.errorf(v, "methods: the list is empty")
			}
			return err
		},
		"diagnostics": keep("diagnostics", func(v *yaml.Node) error { return d.onOff(v, "diagnostics", &diagnostics) }),
		"tables": keep("tables", func(v *yaml.Node) error {
			return d.list(v, "tables", func(e *yaml.Node) error {
				nodes[fmt.Sprint("tables.", len(s.Tables))] = e
				t, err := d.table(e)
				s.Tables = append(s.Tables, t)
				return err
			})
		}),
		"claims":     keep("claims", func(v *yaml.Node) (err error) { s.Claims, err = d.claims(v); return err }),
		"regression": func(v *yaml.Node) (err error) { s.Regression, err = d.regressions(v); return err },
		"plots": keep("plots", func(v *yaml.Node) error {
			return d.list(v, "plots", func(e *yaml.Node) error {
				nodes[fmt.Sprint("plots.", len(s.Plots))] = e
				p, err := d.plot(e)
				s.Plots = append(s.Plots, p)
				return err
			})
		}),
	}, "name", "description", "tasks", "methods")
	if err != nil {
		return nil, err
	}
	if !diagnostics {
		// diagnostics: off is the param diagnostics=false of every method
		// (on is every method's default, and leaves run ids unchanged).
		if _, dup := s.Params["diagnostics"]; dup {
			return nil, d.errorf(nodes["diagnostics"], "diagnostics is set both here and in params")
		}
		if s.Params == nil {
			s.Params = map[string]any{}
		}
		s.Params["diagnostics"] = false
	}
	return s, d.check(s, n, nodes)
}

// onOff decodes a switch: on or true, off or false.
func (d *decoder) onOff(n *yaml.Node, what string, dst *bool) error {
	if err := d.scalar(n, what); err != nil {
		return err
	}
	switch n.Value {
	case "on", "true":
		*dst = true
	case "off", "false":
		*dst = false
	default:
		return d.errorf(n, "%s must be on or off, not %q", what, n.Value)
	}
	return nil
}

func (d *decoder) method(n *yaml.Node, s *Spec) (Method, error) {
	var m Method
	err := d.fields(n, "method", map[string]func(*yaml.Node) error{
		"name": func(v *yaml.Node) error {
			if err := d.str(v, "method name", &m.Name); err != nil {
				return err
			}
			if !has(d.names.Methods, m.Name) {
				return d.errorf(v, "unknown method %q (known: %s)", m.Name, strings.Join(d.names.Methods, ", "))
			}
			return nil
		},
		"variant": func(v *yaml.Node) error { return d.fileName(v, "method variant", &m.Variant) },
		"params": func(v *yaml.Node) (err error) {
			m.Params, err = d.params(v, "params")
			if err == nil {
				err = d.checkParams(v, m.Name, m.Params)
			}
			return err
		},
		"sweep": func(v *yaml.Node) (err error) {
			m.Sweep, err = d.sweep(v, "sweep")
			if err == nil && len(m.Sweep.Zip) > 0 {
				err = d.errorf(v, "a method's sweep may replace axes but not add zip groups")
			}
			return err
		},
		"tasks": func(v *yaml.Node) (err error) {
			m.Tasks, err = d.nameList(v, "task", d.names.Tasks, false)
			return err
		},
	}, "name")
	if err != nil {
		return m, err
	}
	if slices.ContainsFunc(s.Methods, func(o Method) bool { return o.Name == m.Name && o.Variant == m.Variant }) {
		if m.Variant == "" {
			return m, d.errorf(n, "duplicate method %q (give each entry its own variant)", m.Name)
		}
		return m, d.errorf(n, "duplicate method %q variant %q", m.Name, m.Variant)
	}
	if _, ok := m.Params[VariantParam]; ok {
		return m, d.errorf(n, "method %s: %s is the variant key, not a hyperparameter", m.Name, VariantParam)
	}
	// Conflicts between the method's own params and sweep.
	for _, a := range m.Sweep.Axes {
		if _, ok := m.Params[a.Name]; ok {
			return m, d.errorf(n, "method %s: %s is both a hyperparameter and a sweep axis", m.Name, a.Name)
		}
	}
	return m, nil
}

func (d *decoder) table(n *yaml.Node) (Table, error) {
	var t Table
	err := d.fields(n, "table", map[string]func(*yaml.Node) error{
		"name":    func(v *yaml.Node) error { return d.fileName(v, "table name", &t.Name) },
		"title":   func(v *yaml.Node) error { return d.str(v, "table title", &t.Title) },
		"rows":    func(v *yaml.Node) (err error) { t.Rows, err = d.identList(v, "table rows"); return err },
		"columns": func(v *yaml.Node) (err error) { t.Columns, err = d.identList(v, "table columns"); return err },
		"metrics": func(v *yaml.Node) (err error) { t.Metrics, err = d.identList(v, "table metrics"); return err },
		"pool":    func(v *yaml.Node) (err error) { t.Pool, err = d.identList(v, "table pool"); return err },
		"best": func(v *yaml.Node) error {
			if err := d.str(v, "best", &t.Best); err != nil {
				return err
			}
			if t.Best != "min" && t.Best != "max" {
				return d.errorf(v, "best must be min or max, not %q", t.Best)
			}
			return nil
		},
		"reference": func(v *yaml.Node) error {
			return d.list(v, "reference", func(e *yaml.Node) error {
				r, err := d.reference(e)
				t.Reference = append(t.Reference, r)
				return err
			})
		},
	}, "name", "rows", "columns", "metrics")
	if err != nil {
		return t, err
	}
	for _, r := range t.Rows {
		if has(t.Columns, r) {
			return t, d.errorf(n, "table %s: %s is both a row and a column", t.Name, r)
		}
	}
	for _, p := range t.Pool {
		if has(t.Rows, p) || has(t.Columns, p) || p == "seed" {
			return t, d.errorf(n, "table %s: pooled column %s is a row, a column or the seed", t.Name, p)
		}
	}
	for i, r := range t.Reference {
		if !has(t.Metrics, r.Metric) {
			return t, d.errorf(n, "table %s: reference %d: metric %q is not one of the table's metrics", t.Name, i+1, r.Metric)
		}
	}
	return t, nil
}

func (d *decoder) reference(n *yaml.Node) (Reference, error) {
	var r Reference
	err := d.fields(n, "reference", map[string]func(*yaml.Node) error{
		"at": func(v *yaml.Node) error {
			if v.Kind != yaml.MappingNode {
				return d.errorf(v, "reference at must be a mapping of run columns to values")
			}
			r.At = make(map[string]string)
			for i := 0; i+1 < len(v.Content); i += 2 {
				var k string
				if err := d.ident(v.Content[i], "reference column", &k); err != nil {
					return err
				}
				if _, dup := r.At[k]; dup {
					return d.errorf(v.Content[i], "reference at: duplicate key %q", k)
				}
				if err := d.scalar(v.Content[i+1], "reference value"); err != nil {
					return err
				}
				val := v.Content[i+1].Value
				if x, err := d.number(v.Content[i+1], k); err == nil {
					val = FormatFloat(x)
				}
				r.At[k] = val
			}
			return nil
		},
		"metric": func(v *yaml.Node) error { return d.ident(v, "reference metric", &r.Metric) },
		"value": func(v *yaml.Node) error {
			x, err := d.number(v, "reference value")
			if err == nil && (math.IsInf(x, 0) || math.IsNaN(x)) {
				err = d.errorf(v, "reference value must be finite")
			}
			r.Value = x
			return err
		},
		"source": func(v *yaml.Node) error { return d.str(v, "reference source", &r.Source) },
	}, "at", "metric", "value", "source")
	return r, err
}

func (d *decoder) plot(n *yaml.Node) (Plot, error) {
	p := Plot{Kind: "line", Band: "std"}
	oneOf := func(v *yaml.Node, what string, dst *string, allowed ...string) error {
		if err := d.str(v, what, dst); err != nil {
			return err
		}
		if !has(allowed, *dst) {
			return d.errorf(v, "plot %s must be one of %s, not %q", what, strings.Join(allowed, ", "), *dst)
		}
		return nil
	}
	given := make(map[string]*yaml.Node)
	at := func(key string, f func(v *yaml.Node) error) func(*yaml.Node) error {
		return func(v *yaml.Node) error { given[key] = v; return f(v) }
	}
	err := d.fields(n, "plot", map[string]func(*yaml.Node) error{
		"name":    func(v *yaml.Node) error { return d.fileName(v, "plot name", &p.Name) },
		"title":   func(v *yaml.Node) error { return d.str(v, "plot title", &p.Title) },
		"kind":    func(v *yaml.Node) error { return oneOf(v, "kind", &p.Kind, PlotKinds...) },
		"x":       at("x", func(v *yaml.Node) error { return d.ident(v, "plot x", &p.X) }),
		"y":       at("y", func(v *yaml.Node) error { return d.ident(v, "plot y", &p.Y) }),
		"series":  at("series", func(v *yaml.Node) error { return d.ident(v, "plot series", &p.Series) }),
		"facet":   at("facet", func(v *yaml.Node) error { return d.ident(v, "plot facet", &p.Facet) }),
		"band":    at("band", func(v *yaml.Node) error { return oneOf(v, "band", &p.Band, "std", "sem", "none") }),
		"logx":    at("logx", func(v *yaml.Node) error { return d.boolean(v, "plot logx", &p.LogX) }),
		"metrics": at("metrics", func(v *yaml.Node) (err error) { p.Metrics, err = d.identList(v, "plot metrics"); return err }),
		"rows":    at("rows", func(v *yaml.Node) error { return d.ident(v, "plot rows", &p.Rows) }),
		"attack":  at("attack", func(v *yaml.Node) error { return d.str(v, "plot attack", &p.Attack) }),
		"images":  at("images", func(v *yaml.Node) (err error) { p.Images, err = d.imageList(v); return err }),
	}, "name")
	if err != nil {
		return p, err
	}
	return p, d.plotKeys(n, p, given)
}

// plotKeys are the keys each kind of plot needs and may have, besides
// name, title and kind.
var plotKeys = map[string]struct{ need, may []string }{
	"line":    {need: []string{"x", "y"}, may: []string{"series", "facet", "band", "logx"}},
	"scatter": {need: []string{"x", "y"}, may: []string{"series", "facet", "band", "logx"}},
	"bar":     {need: []string{"x", "y"}, may: []string{"series", "facet", "band"}},
	"radar":   {may: []string{"x", "y", "metrics", "series", "facet", "band"}},
	"roc":     {may: []string{"attack", "series", "facet", "band"}},
	"heatmap": {need: []string{"x", "y", "rows"}, may: []string{"facet"}},
	"grid":    {may: []string{"images", "series", "facet"}},
}

// plotKeys checks that p has the keys its kind needs and no key its kind
// ignores; given holds the value node of each key p was given.
func (d *decoder) plotKeys(n *yaml.Node, p Plot, given map[string]*yaml.Node) error {
	keys := plotKeys[p.Kind]
	for _, k := range keys.need {
		if given[k] == nil {
			return d.errorf(n, "plot %s: a %s plot needs %s", p.Name, p.Kind, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(given)) {
		if !has(keys.need, k) && !has(keys.may, k) {
			return d.errorf(given[k], "plot %s: a %s plot has no %s (it takes: %s)", p.Name, p.Kind, k, strings.Join(slices.Concat(keys.need, keys.may), ", "))
		}
	}
	if p.Kind == "radar" {
		switch {
		case given["metrics"] != nil && (given["x"] != nil || given["y"] != nil):
			return d.errorf(given["metrics"], "plot %s: a radar plot takes metrics, or x and y, not both", p.Name)
		case given["metrics"] != nil && len(p.Metrics) < 3:
			return d.errorf(given["metrics"], "plot %s: a radar plot needs three or more metrics, not %d", p.Name, len(p.Metrics))
		case given["metrics"] == nil && (given["x"] == nil || given["y"] == nil):
			return d.errorf(n, "plot %s: a radar plot needs metrics (three or more), or x and y", p.Name)
		}
	}
	if p.Kind == "heatmap" && p.X == p.Rows {
		return d.errorf(given["rows"], "plot %s: heatmap rows and x are both %s", p.Name, p.X)
	}
	return nil
}

// imageList decodes the image names of a grid plot.
func (d *decoder) imageList(n *yaml.Node) ([]string, error) {
	var names []string
	err := d.list(n, "plot images", func(e *yaml.Node) error {
		var s string
		if err := d.str(e, "plot image", &s); err != nil {
			return err
		}
		if !imageRE.MatchString(s) {
			return d.errorf(e, "plot image %q must match [a-z0-9][a-z0-9_.-]* (the file images/<name>.png of a run)", s)
		}
		if has(names, s) {
			return d.errorf(e, "plot images: %q listed twice", s)
		}
		names = append(names, s)
		return nil
	})
	return names, err
}

var imageRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*$`)

// check validates what spans several keys: params against sweep axes,
// output names, and the run columns tables and plots refer to.
func (d *decoder) check(s *Spec, n *yaml.Node, nodes map[string]*yaml.Node) error {
	at := func(key string) *yaml.Node {
		if v, ok := nodes[key]; ok {
			return v
		}
		return n
	}
	if n := s.count(); n > MaxRuns {
		return d.errorf(at("sweep"), "the spec expands into more than %d runs", MaxRuns)
	}
	if err := d.checkMethods(s, at); err != nil {
		return err
	}
	columns, err := d.runColumns(s, at)
	if err != nil {
		return err
	}
	if err := d.checkOutputs(s, columns, at); err != nil {
		return err
	}
	if err := d.checkSpelling(s, columns, at); err != nil {
		return err
	}
	if err := d.checkMetrics(s, at); err != nil {
		return err
	}
	return d.checkClaims(s, columns, at)
}

// checkMethods checks what each method receives: the spec's params and
// the sweep values against its hyperparameters, and its tasks.
func (d *decoder) checkMethods(s *Spec, at func(string) *yaml.Node) error {
	for i, m := range s.Methods {
		if err := d.checkParams(at("params"), m.Name, s.Params); err != nil {
			return err
		}
		if err := d.checkAxes(at("sweep"), s, m); err != nil {
			return err
		}
		if d.names.Compatible != nil {
			where := at("tasks")
			if m.Tasks != nil {
				where = at(fmt.Sprint("methods.", i))
			}
			for _, t := range s.TasksOf(m) {
				if err := d.names.Compatible(m.Name, t); err != nil {
					return d.errorf(where, "%v", err)
				}
			}
		}
		if err := d.checkData(s, m, at, at(fmt.Sprint("methods.", i))); err != nil {
			return err
		}
	}
	return nil
}

// checkData checks every param and sweep value method m receives against
// each task's data at the spec's scale (Names.CheckData): the spec's
// params at their lines, the method's own and its sweep values at its
// entry mn, the spec's sweep values at their axis.
func (d *decoder) checkData(s *Spec, m Method, at func(string) *yaml.Node, mn *yaml.Node) error {
	if d.names.CheckData == nil {
		return nil
	}
	check := func(n *yaml.Node, name string, v any) error {
		for _, t := range s.TasksOf(m) {
			if err := d.names.CheckData(m.Name, t, s.Scale, name, v); err != nil {
				return d.errorf(n, "task %s at %s scale: %s: %v", t, s.Scale, name, err)
			}
		}
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(s.Params)) {
		if _, own := m.Params[k]; !own {
			if err := check(keyNode(at("params"), k), k, s.Params[k]); err != nil {
				return err
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m.Params)) {
		if err := check(mn, k, m.Params[k]); err != nil {
			return err
		}
	}
	for _, name := range sortedUnique(slices.Concat(s.Sweep.names(), m.Sweep.names())) {
		if name == "epsilon" || name == "seed" || InputParam(name) {
			continue // data and base params reach the inputs, checked as axes
		}
		vals, ok := m.Sweep.Lookup(name)
		n := mn
		if !ok {
			vals, _ = s.Sweep.Lookup(name)
			n = keyNode(at("sweep"), name)
		}
		kind, _, _ := axisKind(name)
		for _, v := range vals {
			var x any = v
			if kind.Int {
				x = int64(v)
			}
			if err := check(n, name, x); err != nil {
				return err
			}
		}
	}
	return nil
}

// runColumns checks that no name is both a param and a sweep axis, and
// returns the run columns the spec's runs have (epsilon as
// epsilon_target).
func (d *decoder) runColumns(s *Spec, at func(string) *yaml.Node) ([]string, error) {
	global := s.Sweep.names()
	for name := range s.Params {
		if has(global, name) {
			return nil, d.errorf(at("params"), "%s is both a hyperparameter and a sweep axis", name)
		}
	}
	columns := []string{"method", "task", "scale", "seed", "epsilon_target", "delta"}
	if slices.ContainsFunc(s.Methods, func(m Method) bool { return m.Variant != "" }) {
		columns = append(columns, VariantParam)
	}
	columns = append(columns, global...)
	for name := range s.Params {
		columns = append(columns, name)
	}
	for _, m := range s.Methods {
		own := m.Sweep.names()
		for _, g := range s.Sweep.Zip {
			for _, a := range g {
				if has(own, a.Name) {
					return nil, d.errorf(at("sweep"), "method %s: axis %s is in a zip group of the spec and cannot be replaced", m.Name, a.Name)
				}
			}
		}
		for name := range m.Params {
			if has(global, name) && !has(own, name) {
				return nil, d.errorf(at("sweep"), "method %s: %s is both a hyperparameter and a sweep axis", m.Name, name)
			}
			columns = append(columns, name)
		}
		for name := range s.Params {
			if has(own, name) {
				return nil, d.errorf(at("params"), "method %s: %s is both a hyperparameter and a sweep axis", m.Name, name)
			}
		}
		columns = append(columns, own...)
	}
	// Run columns are "epsilon_target" and "seed"; the axis epsilon is
	// the target.
	return slices.DeleteFunc(columns, func(c string) bool { return c == "epsilon" }), nil
}

// checkOutputs checks the tables and plots: unique names, and every
// column they refer to a run column.
func (d *decoder) checkOutputs(s *Spec, columns []string, at func(string) *yaml.Node) error {
	outputs := make(map[string]bool)
	for i, t := range s.Tables {
		tn := at(fmt.Sprint("tables.", i))
		if outputs[t.Name] {
			return d.errorf(tn, "duplicate output name %q", t.Name)
		}
		outputs[t.Name] = true
		for _, c := range slices.Concat(t.Rows, t.Columns, t.Pool) {
			if !has(columns, c) {
				return d.errorf(tn, "table %s: %q is not a run column (have: %s)", t.Name, c, strings.Join(sortedUnique(columns), ", "))
			}
		}
		for _, r := range t.Reference {
			for c := range r.At {
				if !has(t.Rows, c) && !has(t.Columns, c) {
					return d.errorf(tn, "table %s: reference at %q is not one of the table's rows or columns", t.Name, c)
				}
			}
		}
	}
	for i, p := range s.Plots {
		pn := at(fmt.Sprint("plots.", i))
		if outputs[p.Name] {
			return d.errorf(pn, "duplicate output name %q", p.Name)
		}
		outputs[p.Name] = true
		// An x–y plot may draw against the achieved ε and σ, which are
		// run columns that no spec key names.
		if p.X != "" && !has(columns, p.X) && !(p.X == "epsilon" || p.X == "sigma") {
			return d.errorf(pn, "plot %s: x %q is not a run column (have: %s, epsilon, sigma)", p.Name, p.X, strings.Join(sortedUnique(columns), ", "))
		}
		for _, c := range []string{p.Series, p.Facet, p.Rows} {
			if c != "" && !has(columns, c) {
				return d.errorf(pn, "plot %s: %q is not a run column (have: %s)", p.Name, c, strings.Join(sortedUnique(columns), ", "))
			}
		}
		if p.Kind == "roc" && len(s.Attacks) == 0 {
			return d.errorf(pn, "plot %s: a roc plot draws the attacks' scores, and the spec has no attacks", p.Name)
		}
		if p.Attack != "" && !has(s.Attacks, p.Attack) {
			return d.errorf(pn, "plot %s: attack %q is not one of the spec's attacks (%s)", p.Name, p.Attack, strings.Join(s.Attacks, ", "))
		}
	}
	return nil
}

// checkParams checks params against the hyperparameters of method with
// the names' CheckParam; n is the params node, and an error points at the
// offending key's line.
func (d *decoder) checkParams(n *yaml.Node, method string, params map[string]any) error {
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if slices.Contains(DataParams, k) {
			return d.errorf(keyNode(n, k), "%s is a data param: sweep it as an axis", k)
		}
		if slices.Contains(BaseParams, k) {
			return d.errorf(keyNode(n, k), "%s is a base param: sweep it as an axis", k)
		}
	}
	if d.names.CheckParam == nil {
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if err := d.names.CheckParam(method, k, params[k]); err != nil {
			return d.errorf(keyNode(n, k), "%v", err)
		}
	}
	return nil
}

// checkAxes checks every value of every sweep axis that reaches method
// (the spec's axes, replaced by the method's own), except epsilon and seed,
// against the method's hyperparameters; n is the sweep node.
func (d *decoder) checkAxes(n *yaml.Node, s *Spec, m Method) error {
	if d.names.CheckParam == nil {
		return nil
	}
	for _, name := range sortedUnique(slices.Concat(s.Sweep.names(), m.Sweep.names())) {
		if name == "epsilon" || name == "seed" || InputParam(name) {
			continue // data and base params reach the inputs, checked as axes
		}
		vals, ok := m.Sweep.Lookup(name)
		if !ok {
			vals, _ = s.Sweep.Lookup(name)
		}
		kind, _, _ := axisKind(name)
		for _, v := range vals {
			var x any = v
			if kind.Int {
				x = int64(v)
			}
			if err := d.names.CheckParam(m.Name, name, x); err != nil {
				return d.errorf(keyNode(n, name), "sweep axis %s: %v", name, err)
			}
		}
	}
	return nil
}

// keyNode returns the key node of name in the mapping n, or n.
func keyNode(n *yaml.Node, name string) *yaml.Node {
	if n != nil && n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == name {
				return n.Content[i]
			}
		}
	}
	return n
}

func sortedUnique(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}
