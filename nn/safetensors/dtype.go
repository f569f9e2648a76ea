// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package safetensors

import (
	"encoding/binary"
	"math"
)

// DType is the element type of a tensor, spelled as in a safetensors header.
type DType string

// Element types. The 8-bit floats are recognised but cannot be read.
const (
	BOOL    DType = "BOOL"
	U8      DType = "U8"
	I8      DType = "I8"
	F8E4M3  DType = "F8_E4M3"
	F8E5M2  DType = "F8_E5M2"
	I16     DType = "I16"
	U16     DType = "U16"
	F16     DType = "F16"
	BF16    DType = "BF16"
	I32     DType = "I32"
	U32     DType = "U32"
	F32     DType = "F32"
	F64     DType = "F64"
	I64     DType = "I64"
	U64     DType = "U64"
	noDType DType = ""
)

// Size returns the number of bytes of one element of d, or 0 if d is not a
// safetensors dtype.
func (d DType) Size() int {
	switch d {
	case BOOL, U8, I8, F8E4M3, F8E5M2:
		return 1
	case I16, U16, F16, BF16:
		return 2
	case I32, U32, F32:
		return 4
	case F64, I64, U64:
		return 8
	}
	return 0
}

// IsFloat reports whether values of d are read into Tensor.Data.
func (d DType) IsFloat() bool {
	switch d {
	case F16, BF16, F32, F64:
		return true
	}
	return false
}

// IsInt reports whether values of d are read into Tensor.Ints.
func (d DType) IsInt() bool {
	switch d {
	case BOOL, U8, I8, I16, U16, I32, U32, I64, U64:
		return true
	}
	return false
}

// decodeFloats converts the little-endian bytes b of dtype d into dst.
// len(b) must be len(dst)*d.Size().
func decodeFloats(dst []float32, b []byte, d DType) {
	le := binary.LittleEndian
	switch d {
	case F32:
		for i := range dst {
			dst[i] = math.Float32frombits(le.Uint32(b[4*i:]))
		}
	case F64:
		for i := range dst {
			dst[i] = float32(math.Float64frombits(le.Uint64(b[8*i:])))
		}
	case F16:
		for i := range dst {
			dst[i] = halfToFloat(le.Uint16(b[2*i:]))
		}
	case BF16:
		for i := range dst {
			dst[i] = math.Float32frombits(uint32(le.Uint16(b[2*i:])) << 16)
		}
	default:
		panic("safetensors: not a float dtype")
	}
}

// decodeInts converts the little-endian bytes b of dtype d into dst. It
// returns the index of the first value that cannot be represented (a U64 above
// math.MaxInt64, a BOOL byte other than 0 or 1) and false, or -1 and true.
func decodeInts(dst []int64, b []byte, d DType) (int, bool) {
	le := binary.LittleEndian
	switch d {
	case BOOL:
		for i := range dst {
			if b[i] > 1 {
				return i, false
			}
			dst[i] = int64(b[i])
		}
	case U8:
		for i := range dst {
			dst[i] = int64(b[i])
		}
	case I8:
		for i := range dst {
			dst[i] = int64(int8(b[i]))
		}
	case I16:
		for i := range dst {
			dst[i] = int64(int16(le.Uint16(b[2*i:])))
		}
	case U16:
		for i := range dst {
			dst[i] = int64(le.Uint16(b[2*i:]))
		}
	case I32:
		for i := range dst {
			dst[i] = int64(int32(le.Uint32(b[4*i:])))
		}
	case U32:
		for i := range dst {
			dst[i] = int64(le.Uint32(b[4*i:]))
		}
	case I64:
		for i := range dst {
			dst[i] = int64(le.Uint64(b[8*i:]))
		}
	case U64:
		for i := range dst {
			u := le.Uint64(b[8*i:])
			if u > math.MaxInt64 {
				return i, false
			}
			dst[i] = int64(u)
		}
	default:
		panic("safetensors: not an integer dtype")
	}
	return -1, true
}

// halfToFloat converts an IEEE 754 binary16 value to float32 exactly.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // Inf or NaN; keep the payload.
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp != 0: // normal: rebias 15 → 127.
		return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
	case mant == 0:
		return math.Float32frombits(sign)
	}
	// Subnormal: mant·2⁻²⁴, exact in float32.
	v := float32(mant) * (1.0 / (1 << 24))
	if sign != 0 {
		v = -v
	}
	return v
}
