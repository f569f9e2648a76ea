// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxHeader is the largest header, in bytes, that the reader accepts: 100 MB,
// the limit of the reference implementation.
const MaxHeader = 100 << 20

// File is the decoded content of a safetensors file.
type File struct {
	// Metadata is the "__metadata__" map, nil if the header has none.
	Metadata map[string]string
	// Tensors holds every tensor, sorted by name.
	Tensors []Tensor
}

// entry is a tensor as its header describes it.
type entry struct {
	name       string
	dtype      DType
	shape      []int
	begin, end uint64
}

// Decode parses and validates the safetensors file held in b. It never
// panics and does not retain b. A malformed file gives an *Error naming the
// first problem found.
func Decode(b []byte) (*File, error) {
	if len(b) < 8 {
		return nil, errorf(ErrTruncated, "", "file has %d bytes, fewer than the 8 of the header length", len(b))
	}
	n := binary.LittleEndian.Uint64(b)
	if n > MaxHeader {
		return nil, errorf(ErrHeader, "", "header length %d exceeds the limit of %d bytes", n, MaxHeader)
	}
	if n > uint64(len(b)-8) {
		return nil, errorf(ErrTruncated, "", "header length %d is beyond the end of the file (%d bytes follow the length)", n, len(b)-8)
	}
	header, data := b[8:8+n], b[8+n:]
	meta, entries, err := parseHeader(header)
	if err != nil {
		return nil, err
	}
	if err := checkEntries(entries, uint64(len(data))); err != nil {
		return nil, err
	}
	f := &File{Metadata: meta, Tensors: make([]Tensor, len(entries))}
	for i, e := range entries {
		t := &f.Tensors[i]
		t.Name, t.DType, t.Shape = e.name, e.dtype, e.shape
		raw := data[e.begin:e.end]
		count := len(raw) / e.dtype.Size()
		if e.dtype.IsFloat() {
			t.Data = make([]float32, count)
			decodeFloats(t.Data, raw, e.dtype)
			continue
		}
		t.Ints = make([]int64, count)
		if j, ok := decodeInts(t.Ints, raw, e.dtype); !ok {
			return nil, errorf(ErrDType, e.name, "element %d does not fit %s read as int64", j, e.dtype)
		}
	}
	return f, nil
}

// parseHeader parses the JSON header. It returns the entries sorted by name.
func parseHeader(h []byte) (map[string]string, []entry, error) {
	if len(h) == 0 || h[0] != '{' {
		return nil, nil, errorf(ErrHeader, "", "header does not start with '{'")
	}
	if !utf8.Valid(h) {
		return nil, nil, errorf(ErrHeader, "", "header is not valid UTF-8")
	}
	p := &parser{dec: json.NewDecoder(bytes.NewReader(h))}
	p.dec.UseNumber()
	if err := p.delim('{', ""); err != nil {
		return nil, nil, err
	}
	var (
		meta    map[string]string
		hasMeta bool
		entries []entry
	)
	for p.dec.More() {
		key, err := p.key("")
		if err != nil {
			return nil, nil, err
		}
		if key == metadataKey {
			if hasMeta {
				return nil, nil, errorf(ErrDuplicate, "", "%q appears twice", metadataKey)
			}
			hasMeta = true
			if meta, err = p.metadata(); err != nil {
				return nil, nil, err
			}
			continue
		}
		e, err := p.entry(key)
		if err != nil {
			return nil, nil, err
		}
		entries = append(entries, e)
	}
	if err := p.delim('}', ""); err != nil {
		return nil, nil, err
	}
	switch tok, err := p.dec.Token(); {
	case err == nil:
		return nil, nil, errorf(ErrHeader, "", "%s after the header object; only space padding may follow", describe(tok))
	case err != io.EOF:
		return nil, nil, errorf(ErrHeader, "", "invalid JSON after the header object: %v", err)
	}
	slices.SortStableFunc(entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	for i := 1; i < len(entries); i++ {
		if entries[i].name == entries[i-1].name {
			return nil, nil, errorf(ErrDuplicate, entries[i].name, "tensor appears twice in the header")
		}
	}
	return meta, entries, nil
}

// checkEntries validates dtypes, shapes and offsets against a data buffer of
// n bytes.
func checkEntries(entries []entry, n uint64) error {
	for _, e := range entries {
		size := uint64(e.dtype.Size())
		switch {
		case size == 0:
			return errorf(ErrDType, e.name, "unknown dtype %q", e.dtype)
		case !e.dtype.IsFloat() && !e.dtype.IsInt():
			return errorf(ErrDType, e.name, "unsupported dtype %q", e.dtype)
		}
		if e.begin > e.end {
			return errorf(ErrOffsets, e.name, "data_offsets [%d, %d] are reversed", e.begin, e.end)
		}
		if e.end > n {
			return errorf(ErrTruncated, e.name, "data_offsets [%d, %d] reach past the %d bytes of data", e.begin, e.end, n)
		}
		count, ok := numel(e.shape, math.MaxUint64/size)
		if !ok {
			return errorf(ErrShape, e.name, "shape %v has too many elements", e.shape)
		}
		if got, want := e.end-e.begin, count*size; got != want {
			return errorf(ErrOffsets, e.name, "data_offsets [%d, %d] span %d bytes, want %d for %s %v", e.begin, e.end, got, want, e.dtype, e.shape)
		}
	}
	// The tensors must tile [0, n): sorted by offsets, each begins where the
	// previous one ends.
	byOff := slices.Clone(entries)
	slices.SortStableFunc(byOff, func(a, b entry) int {
		if c := cmpUint(a.begin, b.begin); c != 0 {
			return c
		}
		return cmpUint(a.end, b.end)
	})
	var pos uint64
	prev := ""
	for _, e := range byOff {
		switch {
		case e.begin < pos:
			return errorf(ErrOffsets, e.name, "data_offsets [%d, %d] overlap tensor %q, which ends at %d", e.begin, e.end, prev, pos)
		case e.begin > pos:
			return errorf(ErrOffsets, e.name, "data bytes [%d, %d) before its data_offsets [%d, %d] belong to no tensor", pos, e.begin, e.begin, e.end)
		}
		pos, prev = e.end, e.name
	}
	if pos != n {
		return errorf(ErrOffsets, "", "data bytes [%d, %d) at the end of the file belong to no tensor", pos, n)
	}
	return nil
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// numel returns the number of elements of shape, and false if it exceeds
// limit (a shape with a zero dimension has no elements, whatever the others).
func numel(shape []int, limit uint64) (uint64, bool) {
	if slices.Contains(shape, 0) {
		return 0, true
	}
	n := uint64(1)
	for _, d := range shape {
		if uint64(d) > limit/n {
			return 0, false
		}
		n *= uint64(d)
	}
	return n, true
}

// parser walks the header's JSON tokens.
type parser struct {
	dec *json.Decoder
}

func (p *parser) token(tensor string) (json.Token, error) {
	tok, err := p.dec.Token()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, errorf(ErrHeader, tensor, "invalid JSON at byte %d: %v", p.dec.InputOffset(), err)
	}
	return tok, nil
}

func (p *parser) delim(want json.Delim, tensor string) error {
	tok, err := p.token(tensor)
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return errorf(ErrHeader, tensor, "got %s at byte %d, want %q", describe(tok), p.dec.InputOffset(), string(want))
	}
	return nil
}

func (p *parser) key(tensor string) (string, error) {
	tok, err := p.token(tensor)
	if err != nil {
		return "", err
	}
	s, ok := tok.(string)
	if !ok {
		return "", errorf(ErrHeader, tensor, "got %s at byte %d, want an object key", describe(tok), p.dec.InputOffset())
	}
	return s, nil
}

func (p *parser) str(tensor, field string) (string, error) {
	tok, err := p.token(tensor)
	if err != nil {
		return "", err
	}
	s, ok := tok.(string)
	if !ok {
		return "", errorf(ErrHeader, tensor, "%s is %s, want a string", field, describe(tok))
	}
	return s, nil
}

// uints reads an array of non-negative integers.
func (p *parser) uints(tensor, field string) ([]uint64, error) {
	tok, err := p.token(tensor)
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, errorf(ErrHeader, tensor, "%s is %s, want an array", field, describe(tok))
	}
	v := []uint64{}
	for p.dec.More() {
		tok, err := p.token(tensor)
		if err != nil {
			return nil, err
		}
		num, ok := tok.(json.Number)
		if !ok {
			return nil, errorf(ErrHeader, tensor, "%s holds %s, want a non-negative integer", field, describe(tok))
		}
		u, err := strconv.ParseUint(string(num), 10, 64)
		if err != nil {
			return nil, errorf(ErrHeader, tensor, "%s holds %s, want a non-negative integer below 2⁶⁴", field, num)
		}
		v = append(v, u)
	}
	return v, p.delim(']', tensor)
}

func (p *parser) metadata() (map[string]string, error) {
	tok, err := p.token("")
	if err != nil {
		return nil, err
	}
	if tok == nil { // "__metadata__": null
		return nil, nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errorf(ErrHeader, "", "%s is %s, want an object of strings", metadataKey, describe(tok))
	}
	m := map[string]string{}
	for p.dec.More() {
		k, err := p.key("")
		if err != nil {
			return nil, err
		}
		if _, dup := m[k]; dup {
			return nil, errorf(ErrDuplicate, "", "metadata key %q appears twice", k)
		}
		if m[k], err = p.str("", fmt.Sprintf("metadata value of %q", k)); err != nil {
			return nil, err
		}
	}
	return m, p.delim('}', "")
}

func (p *parser) entry(name string) (entry, error) {
	e := entry{name: name}
	if err := p.delim('{', name); err != nil {
		return e, err
	}
	var seenDType, seenShape, seenOffsets bool
	for p.dec.More() {
		k, err := p.key(name)
		if err != nil {
			return e, err
		}
		switch k {
		case "dtype":
			if seenDType {
				return e, errorf(ErrDuplicate, name, "dtype given twice")
			}
			seenDType = true
			s, err := p.str(name, "dtype")
			if err != nil {
				return e, err
			}
			e.dtype = DType(s)
		case "shape":
			if seenShape {
				return e, errorf(ErrDuplicate, name, "shape given twice")
			}
			seenShape = true
			dims, err := p.uints(name, "shape")
			if err != nil {
				return e, err
			}
			e.shape = make([]int, len(dims))
			for i, d := range dims {
				if d > math.MaxInt32 {
					return e, errorf(ErrShape, name, "dimension %d of shape is %d, too large", i, d)
				}
				e.shape[i] = int(d)
			}
		case "data_offsets":
			if seenOffsets {
				return e, errorf(ErrDuplicate, name, "data_offsets given twice")
			}
			seenOffsets = true
			off, err := p.uints(name, "data_offsets")
			if err != nil {
				return e, err
			}
			if len(off) != 2 {
				return e, errorf(ErrOffsets, name, "data_offsets has %d numbers, want 2", len(off))
			}
			e.begin, e.end = off[0], off[1]
		default:
			return e, errorf(ErrHeader, name, "unknown field %q", k)
		}
	}
	if err := p.delim('}', name); err != nil {
		return e, err
	}
	switch {
	case !seenDType:
		return e, errorf(ErrHeader, name, "no dtype")
	case !seenShape:
		return e, errorf(ErrHeader, name, "no shape")
	case !seenOffsets:
		return e, errorf(ErrHeader, name, "no data_offsets")
	}
	return e, nil
}

// describe names a JSON token for an error message.
func describe(tok json.Token) string {
	switch v := tok.(type) {
	case nil:
		return "null"
	case json.Delim:
		return fmt.Sprintf("%q", string(v))
	case string:
		return fmt.Sprintf("string %q", v)
	case json.Number:
		return "number " + string(v)
	case bool:
		return fmt.Sprintf("%t", v)
	}
	return fmt.Sprintf("%v", tok)
}

// Tensor returns the tensor called name, or an error wrapping ErrMissing.
func (f *File) Tensor(name string) (*Tensor, error) {
	i, ok := slices.BinarySearchFunc(f.Tensors, name, func(t Tensor, name string) int { return strings.Compare(t.Name, name) })
	if !ok {
		return nil, errorf(ErrMissing, name, "not in the file")
	}
	return &f.Tensors[i], nil
}

// Float32 returns the values of the float tensor called name, checking that
// its shape is shape. The slice belongs to f. It returns an *Error if the
// tensor is missing, is not a float tensor, or has another shape.
func (f *File) Float32(name string, shape ...int) ([]float32, error) {
	t, err := f.Tensor(name)
	if err != nil {
		return nil, err
	}
	if !t.DType.IsFloat() {
		return nil, errorf(ErrDType, name, "dtype %s, want a float dtype", t.DType)
	}
	if !slices.Equal(t.Shape, shape) {
		return nil, errorf(ErrShape, name, "shape %v, want %v", t.Shape, shape)
	}
	return t.Data, nil
}

// Fill copies values from f into dst: for each dst[i], the tensor of f with
// the same name must exist and have shape dst[i].Shape; its values go to
// dst[i].Data if dst[i].DType is F32 or empty, or to dst[i].Ints if it is I64.
// Every tensor of f must be asked for: use Filter first to load part of a
// file. Fill checks everything before it copies anything: on error dst is
// unchanged and the *Error names the first missing, unexpected or mismatched
// tensor. Fill panics if the length of dst[i].Data or dst[i].Ints does not
// match dst[i].Shape.
func (f *File) Fill(dst []Tensor) error {
	src := make([]*Tensor, len(dst))
	want := make(map[string]bool, len(dst))
	for i := range dst {
		d := &dst[i]
		if want[d.Name] {
			return errorf(ErrDuplicate, d.Name, "asked for twice")
		}
		want[d.Name] = true
		t, err := f.Tensor(d.Name)
		if err != nil {
			return err
		}
		if !slices.Equal(t.Shape, d.Shape) {
			return errorf(ErrShape, d.Name, "shape %v in the file, want %v", t.Shape, d.Shape)
		}
		switch d.DType {
		case noDType, F32:
			if len(d.Data) != d.Len() {
				panic("safetensors: destination length does not match its shape")
			}
			if !t.DType.IsFloat() {
				return errorf(ErrDType, d.Name, "dtype %s in the file, want a float dtype", t.DType)
			}
		case I64:
			if len(d.Ints) != d.Len() {
				panic("safetensors: destination length does not match its shape")
			}
			if !t.DType.IsInt() {
				return errorf(ErrDType, d.Name, "dtype %s in the file, want an integer dtype", t.DType)
			}
		default:
			return errorf(ErrDType, d.Name, "cannot fill a destination of dtype %s", d.DType)
		}
		src[i] = t
	}
	for _, t := range f.Tensors {
		if !want[t.Name] {
			return errorf(ErrUnexpected, t.Name, "in the file but not asked for")
		}
	}
	for i := range dst {
		copy(dst[i].Data, src[i].Data)
		copy(dst[i].Ints, src[i].Ints)
	}
	return nil
}

// Filter returns a File with the tensors of f for which keep returns true.
// The tensors share their values with f; Metadata is shared too.
func (f *File) Filter(keep func(name string) bool) *File {
	g := &File{Metadata: f.Metadata}
	for _, t := range f.Tensors {
		if keep(t.Name) {
			g.Tensors = append(g.Tensors, t)
		}
	}
	return g
}

// Config decodes the JSON in metadata key "config" into v, rejecting unknown
// fields. It returns an error wrapping ErrMissing if there is none.
func (f *File) Config(v any) error {
	s, ok := f.Metadata[ConfigKey]
	if !ok {
		return errorf(ErrMissing, "", "no %q in the metadata", ConfigKey)
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &Error{Msg: fmt.Sprintf("metadata %q: %v", ConfigKey, err), Err: ErrConfig}
	}
	if dec.More() {
		return errorf(ErrConfig, "", "metadata %q holds more than one JSON value", ConfigKey)
	}
	return nil
}
