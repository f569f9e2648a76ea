// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package safetensors

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Tensor is one named tensor.
//
// Float dtypes keep their values in Data and integer dtypes in Ints; the other
// slice is nil. The writer reads Data and Ints without modifying or retaining
// them; the reader allocates fresh slices that the caller owns.
type Tensor struct {
	Name string
	// DType is the element type. When writing, the zero value means F32;
	// only F32 and I64 can be written.
	DType DType
	// Shape lists the dimensions, outermost first (row-major). An empty shape
	// is a scalar with one element.
	Shape []int
	Data  []float32
	Ints  []int64
}

// Len returns the number of elements that t.Shape describes.
func (t *Tensor) Len() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// metadataKey is the reserved header key of the string → string metadata.
const metadataKey = "__metadata__"

// headerAlign is the alignment of the data buffer in the file.
const headerAlign = 8

// Encode writes tensors ts and the metadata meta (nil for none) to w in the
// safetensors format. The output is deterministic: see the package
// documentation. Encode returns an *Error without writing anything if a name
// is empty, reserved, not valid UTF-8 or repeated, if a dtype cannot be
// written, or if a shape does not match the length of Data or Ints.
func Encode(w io.Writer, ts []Tensor, meta map[string]string) error {
	header, order, err := encodeHeader(ts, meta)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(header)))
	bw.Write(n[:])
	bw.Write(header)
	var scratch [4096]byte
	for _, i := range order {
		t := &ts[i]
		if t.DType == I64 {
			for v := t.Ints; len(v) > 0; {
				k := min(len(v), len(scratch)/8)
				for j, x := range v[:k] {
					binary.LittleEndian.PutUint64(scratch[8*j:], uint64(x))
				}
				bw.Write(scratch[:8*k])
				v = v[k:]
			}
			continue
		}
		for v := t.Data; len(v) > 0; {
			k := min(len(v), len(scratch)/4)
			for j, x := range v[:k] {
				binary.LittleEndian.PutUint32(scratch[4*j:], math.Float32bits(x))
			}
			bw.Write(scratch[:4*k])
			v = v[k:]
		}
	}
	return bw.Flush()
}

// Sum returns the SHA-256 of the bytes that Encode writes for ts and meta, in
// lower-case hexadecimal. For a file that holds what Encode wrote it equals
// HashFile of that file.
func Sum(ts []Tensor, meta map[string]string) (string, error) {
	h := sha256.New()
	if err := Encode(h, ts, meta); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// encodeHeader checks ts and meta and returns the padded header and the order
// in which the tensors' data follow it.
func encodeHeader(ts []Tensor, meta map[string]string) ([]byte, []int, error) {
	order, keys, err := checkHeader(ts, meta)
	if err != nil {
		return nil, nil, err
	}
	dataOrder, begin := dataLayout(ts, order)
	b := appendHeader(nil, ts, order, begin, meta, keys)
	for (8+len(b))%headerAlign != 0 {
		b = append(b, ' ')
	}
	if len(b) > MaxHeader {
		return nil, nil, errorf(ErrHeader, "", "header of %d bytes exceeds the limit of %d bytes", len(b), MaxHeader)
	}
	return b, dataOrder, nil
}

// checkHeader checks ts and meta and returns the indices of ts in byte order
// of their names and the metadata keys in byte order.
func checkHeader(ts []Tensor, meta map[string]string) (order []int, keys []string, err error) {
	order = make([]int, len(ts))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		switch {
		case ts[a].Name < ts[b].Name:
			return -1
		case ts[a].Name > ts[b].Name:
			return 1
		}
		return 0
	})
	for k, i := range order {
		t := &ts[i]
		if err := checkWritable(t); err != nil {
			return nil, nil, err
		}
		if k > 0 && ts[order[k-1]].Name == t.Name {
			return nil, nil, errorf(ErrDuplicate, t.Name, "name given twice")
		}
	}
	// The header holds every name, key and value, so their total length
	// bounds it from below: refuse a too large header before building it.
	var least int
	for i := range ts {
		least += len(ts[i].Name)
	}
	for k, v := range meta {
		least += len(k) + len(v)
	}
	if least > MaxHeader {
		return nil, nil, errorf(ErrHeader, "", "header of more than %d bytes exceeds the limit of %d bytes", least, MaxHeader)
	}
	keys = make([]string, 0, len(meta))
	for k, v := range meta {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return nil, nil, errorf(ErrHeader, "", "metadata key %q or its value is not valid UTF-8", k)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return order, keys, nil
}

// dataLayout returns the order of the tensors' data and where each tensor's
// data begin in the data buffer. The data go in order of decreasing element
// size, then of name (order), so that every tensor is aligned to its element
// size in the file (the data start at a multiple of 8), as zero-copy readers
// want.
func dataLayout(ts []Tensor, order []int) (dataOrder []int, begin []uint64) {
	dataOrder = slices.Clone(order)
	slices.SortStableFunc(dataOrder, func(a, b int) int { return dtypeOf(&ts[b]).Size() - dtypeOf(&ts[a]).Size() })
	begin = make([]uint64, len(ts))
	var off uint64
	for _, i := range dataOrder {
		begin[i] = off
		off += uint64(ts[i].Len()) * uint64(dtypeOf(&ts[i]).Size())
	}
	return dataOrder, begin
}

// appendHeader appends the header's JSON object to b, unpadded: top-level
// keys in byte order, "__metadata__" (with meta's keys in the order of keys)
// taking its place among the tensor names (in order), each tensor's data at
// begin.
func appendHeader(b []byte, ts []Tensor, order []int, begin []uint64, meta map[string]string, keys []string) []byte {
	b = append(b, '{')
	wroteMeta := len(meta) == 0
	first := true
	comma := func() {
		if !first {
			b = append(b, ',')
		}
		first = false
	}
	writeMeta := func() {
		comma()
		b = appendString(b, metadataKey)
		b = append(b, ':', '{')
		for j, k := range keys {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			b = appendString(b, meta[k])
		}
		b = append(b, '}')
		wroteMeta = true
	}
	for _, i := range order {
		t := &ts[i]
		if !wroteMeta && metadataKey < t.Name {
			writeMeta()
		}
		d := dtypeOf(t)
		comma()
		b = appendString(b, t.Name)
		b = append(b, `:{"data_offsets":[`...)
		b = strconv.AppendUint(b, begin[i], 10)
		b = append(b, ',')
		b = strconv.AppendUint(b, begin[i]+uint64(t.Len())*uint64(d.Size()), 10)
		b = append(b, `],"dtype":`...)
		b = appendString(b, string(d))
		b = append(b, `,"shape":[`...)
		for j, s := range t.Shape {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(s), 10)
		}
		b = append(b, ']', '}')
	}
	if !wroteMeta {
		writeMeta()
	}
	return append(b, '}')
}

// dtypeOf returns the dtype t is written with.
func dtypeOf(t *Tensor) DType {
	if t.DType == noDType {
		return F32
	}
	return t.DType
}

// checkWritable reports whether t can be written.
func checkWritable(t *Tensor) error {
	switch {
	case t.Name == "":
		return errorf(ErrHeader, "", "empty tensor name")
	case t.Name == metadataKey:
		return errorf(ErrHeader, "", "tensor name %q is reserved", metadataKey)
	case !utf8.ValidString(t.Name):
		return errorf(ErrHeader, t.Name, "name is not valid UTF-8")
	}
	for _, d := range t.Shape {
		if d < 0 {
			return errorf(ErrShape, t.Name, "negative dimension in shape %v", t.Shape)
		}
	}
	count, ok := numel(t.Shape, math.MaxInt/8)
	if !ok {
		return errorf(ErrShape, t.Name, "shape %v has too many elements", t.Shape)
	}
	n := int(count)
	switch t.DType {
	case noDType, F32:
		if len(t.Data) != n || len(t.Ints) != 0 {
			return errorf(ErrShape, t.Name, "shape %v needs %d values in Data, have %d (and %d in Ints)", t.Shape, n, len(t.Data), len(t.Ints))
		}
	case I64:
		if len(t.Ints) != n || len(t.Data) != 0 {
			return errorf(ErrShape, t.Name, "shape %v needs %d values in Ints, have %d (and %d in Data)", t.Shape, n, len(t.Ints), len(t.Data))
		}
	default:
		return errorf(ErrDType, t.Name, "cannot write dtype %q, only F32 and I64", t.DType)
	}
	return nil
}

// appendString appends s to b as a JSON string. Only '"', '\\' and the
// control characters are escaped, so the encoding is canonical.
func appendString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
