// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"sync/atomic"
)

// Kind says what role a parameter tensor plays, so methods can select tensors
// by role (BitFit trains KindBias, SPARTA masks rows of KindWeight, Dual-Priv
// ranks blocks of KindLoRAA and KindLoRAB).
type Kind string

// Parameter kinds.
const (
	KindWeight    Kind = "weight"    // Linear and Conv2d weights, shape [out, in...]
	KindBias      Kind = "bias"      // Linear, Conv2d and LayerNorm biases
	KindNorm      Kind = "norm"      // LayerNorm gains
	KindEmbedding Kind = "embedding" // token and position embeddings, [CLS]
	KindHead      Kind = "head"      // classifier heads (weight and bias)
	KindLoRAA     Kind = "lora_a"    // LoRA down-projection A, [rank, in]
	KindLoRAB     Kind = "lora_b"    // LoRA up-projection B, [out, rank]
	KindAdapter   Kind = "adapter"   // Houlsby adapter weights and biases
	KindSmear     Kind = "smear"     // per-head key-smearing logits (Tape.SmearKeys)
)

// Param is one named tensor of a model. Name is unique within its model.
//
// Data holds the values, row-major, owned by the model. Grad has the same
// length as Data and holds the gradient an optimizer applies; the engine
// writes it only through Layout.SetGrad. Trainable marks the tensors a Layout
// includes; frozen tensors get no gradient at all, which also saves the work
// of computing it.
type Param struct {
	Name      string
	Kind      Kind
	Shape     []int
	Data      []float32
	Grad      []float32
	Trainable bool

	// pack is Data packed for the products of the inference path, with
	// the values it was packed from (packcache.go).
	pack atomic.Pointer[packedWeight]
}

func newParam(name string, kind Kind, shape ...int) *Param {
	n := numel(shape)
	return &Param{Name: name, Kind: kind, Shape: append([]int(nil), shape...), Data: make([]float32, n), Grad: make([]float32, n)}
}

// Rows returns the number of row groups of p: its first dimension (output
// neurons of a Linear weight, output filters of a Conv2d weight, entries of an
// embedding table). A one-dimensional tensor has one row per element.
func (p *Param) Rows() int { return p.Shape[0] }

// RowLen returns the number of elements in one row of p.
func (p *Param) RowLen() int { return len(p.Data) / p.Shape[0] }

// Len returns the number of elements of p.
func (p *Param) Len() int { return len(p.Data) }

// Tensor returns p's values as a Tensor sharing p.Data.
func (p *Param) Tensor() Tensor { return Tensor{Shape: p.Shape, Data: p.Data} }

func (p *Param) initNormal(rng *rand.Rand, std float64) {
	for i := range p.Data {
		p.Data[i] = float32(rng.NormFloat64() * std)
	}
}

func (p *Param) initUniform(rng *rand.Rand, bound float64) {
	for i := range p.Data {
		p.Data[i] = float32((float64(2*rng.Float64()) - 1) * bound)
	}
}

func (p *Param) fill(v float32) {
	for i := range p.Data {
		p.Data[i] = v
	}
}

// Layout is an ordered list of trainable parameters, each with a range in one
// flat vector of length Size. Per-sample gradients, masks and clip rules are
// flat vectors in this layout. A Layout is immutable; build a new one after
// changing which parameters are trainable.
//
// A gathered layout (GatherRows) holds only some rows of a parameter: its
// block is those rows, in increasing order, and the other rows get no
// gradient at all (SPARTA's trainable rows in their own matrix).
type Layout struct {
	Params  []*Param
	Offsets []int // Offsets[i] is where Params[i] starts; Offsets[len(Params)] == Size
	Size    int
	index   map[*Param]int
	// rows[i], when not nil, are the rows of Params[i] its block holds.
	rows [][]int
}

// NewLayout returns the layout of the trainable parameters among ps, in the
// order given. It panics if a parameter appears twice.
func NewLayout(ps []*Param) *Layout {
	l := &Layout{index: make(map[*Param]int)}
	for _, p := range ps {
		if !p.Trainable {
			continue
		}
		if _, dup := l.index[p]; dup {
			panic(Error{"nn: parameter listed twice in a layout"})
		}
		l.index[p] = len(l.Params)
		l.Params = append(l.Params, p)
		l.Offsets = append(l.Offsets, l.Size)
		l.Size += len(p.Data)
	}
	l.Offsets = append(l.Offsets, l.Size)
	return l
}

// GatherRows marks the parameters of m for which train returns true as
// trainable and every other one as frozen, like SetTrainable, and returns
// a gathered layout: a trainable parameter p for which rows returns a
// non-nil list holds only those rows (strictly increasing, in [0,
// p.Rows())), the others all of theirs. The gradients of a gathered
// parameter's other rows are never computed: Affine and Conv2d compute
// the weight gradient of the gathered rows only, and a gathered parameter
// used by any other operation, or on a batched tape, panics. Forward
// passes use the parameter's every row, as they are. It panics on an
// invalid row list.
func GatherRows(m Module, train func(p *Param) bool, rows func(p *Param) []int) *Layout {
	ps := m.Params()
	for _, p := range ps {
		p.Trainable = train(p)
	}
	l := NewLayout(ps)
	l.rows = make([][]int, len(l.Params))
	size := 0
	for i, p := range l.Params {
		l.Offsets[i] = size
		r := rows(p)
		if r == nil {
			size += len(p.Data)
			continue
		}
		for j, v := range r {
			if v < 0 || v >= p.Rows() || j > 0 && v <= r[j-1] {
				panic(Error{"nn: gathered rows of " + p.Name + " are not increasing rows of it"})
			}
		}
		l.rows[i] = append([]int{}, r...)
		size += len(r) * p.RowLen()
	}
	l.Offsets[len(l.Params)] = size
	l.Size = size
	return l
}

// Rows returns the rows of parameter i that the layout holds, or nil when
// it holds all of them (see GatherRows). The caller must not change them.
func (l *Layout) Rows(i int) []int {
	if l.rows == nil {
		return nil
	}
	return l.rows[i]
}

// scatter copies the block b of parameter i into dst, a tensor of the
// parameter's size: the gathered rows to their rows, the others cleared.
func (l *Layout) scatter(dst, b []float32, i int) {
	r := l.Rows(i)
	if r == nil {
		copy(dst, b)
		return
	}
	clear(dst)
	rl := l.Params[i].RowLen()
	for k, row := range r {
		copy(dst[row*rl:(row+1)*rl], b[k*rl:(k+1)*rl])
	}
}

// gather copies the layout's rows of src, a tensor of parameter i's size,
// into its block b.
func (l *Layout) gather(b, src []float32, i int) {
	r := l.Rows(i)
	if r == nil {
		copy(b, src)
		return
	}
	rl := l.Params[i].RowLen()
	for k, row := range r {
		copy(b[k*rl:(k+1)*rl], src[row*rl:(row+1)*rl])
	}
}

// Index returns the position of p in the layout, or -1 if p is not in it.
func (l *Layout) Index(p *Param) int {
	i, ok := l.index[p]
	if !ok {
		return -1
	}
	return i
}

// Block returns the part of the flat vector g that belongs to parameter i.
// It panics if len(g) != l.Size.
func (l *Layout) Block(g []float32, i int) []float32 {
	if len(g) != l.Size {
		panic(errLayout)
	}
	return g[l.Offsets[i]:l.Offsets[i+1]]
}

// SetGrad copies the flat gradient g into every parameter's Grad (the
// rows a gathered layout leaves out get zero). It panics if
// len(g) != l.Size.
func (l *Layout) SetGrad(g []float32) {
	if len(g) != l.Size {
		panic(errLayout)
	}
	for i, p := range l.Params {
		l.scatter(p.Grad, g[l.Offsets[i]:l.Offsets[i+1]], i)
	}
}

// Values returns the current values of the trainable parameters as a new flat
// vector.
func (l *Layout) Values() []float32 {
	v := make([]float32, l.Size)
	for i, p := range l.Params {
		l.gather(v[l.Offsets[i]:l.Offsets[i+1]], p.Data, i)
	}
	return v
}

// SetValues copies the flat vector v into the trainable parameters' Data
// (into the layout's rows only, for a gathered parameter). It panics if
// len(v) != l.Size.
func (l *Layout) SetValues(v []float32) {
	if len(v) != l.Size {
		panic(errLayout)
	}
	for i, p := range l.Params {
		b := v[l.Offsets[i]:l.Offsets[i+1]]
		r := l.Rows(i)
		if r == nil {
			copy(p.Data, b)
			continue
		}
		rl := p.RowLen()
		for k, row := range r {
			copy(p.Data[row*rl:(row+1)*rl], b[k*rl:(k+1)*rl])
		}
	}
}

// Mask returns an element mask (1 where keep is true for the parameter,
// 0 elsewhere) over the layout.
func (l *Layout) Mask(keep func(p *Param) bool) []float32 {
	m := make([]float32, l.Size)
	for i, p := range l.Params {
		if keep(p) {
			b := m[l.Offsets[i]:l.Offsets[i+1]]
			for j := range b {
				b[j] = 1
			}
		}
	}
	return m
}

// RowMask returns an element mask over the layout that is 1 on the rows that
// keep reports true for, and 0 elsewhere. keep is called once per row of
// every parameter that the layout holds (with the parameter's row index).
func (l *Layout) RowMask(keep func(p *Param, row int) bool) []float32 {
	m := make([]float32, l.Size)
	for i, p := range l.Params {
		rl := p.RowLen()
		rows := l.Rows(i)
		n := p.Rows()
		if rows != nil {
			n = len(rows)
		}
		for k := 0; k < n; k++ {
			r := k
			if rows != nil {
				r = rows[k]
			}
			if keep(p, r) {
				b := m[l.Offsets[i]+k*rl : l.Offsets[i]+(k+1)*rl]
				for j := range b {
					b[j] = 1
				}
			}
		}
	}
	return m
}

// Parts returns a part index per element of the layout: part(p) for every
// element of parameter p. Use it to build per-layer or per-modality clip
// rules.
func (l *Layout) Parts(part func(p *Param) int) []int32 {
	ix := make([]int32, l.Size)
	for i, p := range l.Params {
		k := int32(part(p))
		b := ix[l.Offsets[i]:l.Offsets[i+1]]
		for j := range b {
			b[j] = k
		}
	}
	return ix
}

// Module is anything made of parameters.
type Module interface {
	// Params returns every tensor of the module, trainable and frozen, in a
	// fixed order, with unique names.
	Params() []*Param
}

// Lookup returns the parameter of m with the given name, or nil.
func Lookup(m Module, name string) *Param {
	for _, p := range m.Params() {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// SetTrainable marks the parameters of m for which train returns true as
// trainable and every other one as frozen, and returns the new layout.
func SetTrainable(m Module, train func(p *Param) bool) *Layout {
	ps := m.Params()
	for _, p := range ps {
		p.Trainable = train(p)
	}
	return NewLayout(ps)
}

// Count returns the number of elements of the parameters of m, in total and
// trainable.
func Count(m Module) (total, trainable int) {
	for _, p := range m.Params() {
		total += len(p.Data)
		if p.Trainable {
			trainable += len(p.Data)
		}
	}
	return total, trainable
}

// checkNames reports an error if two parameters share a name.
func checkNames(ps []*Param) error {
	seen := make(map[string]bool, len(ps))
	for _, p := range ps {
		if seen[p.Name] {
			return fmt.Errorf("nn: duplicate parameter name %q", p.Name)
		}
		seen[p.Name] = true
	}
	return nil
}

// Names returns the sorted names of ps.
func Names(ps []*Param) []string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.Name
	}
	sort.Strings(s)
	return s
}

func isFinite(x []float32) bool {
	for _, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return false
		}
	}
	return true
}
