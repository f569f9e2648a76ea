// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// IDX element types (the third byte of the magic number).
const (
	IDXUint8 byte = 0x08
	IDXInt32 byte = 0x0C
)

// maxIDXElements bounds the number of elements a header may declare, so a
// corrupt header cannot ask for an absurd allocation. Fashion-MNIST's largest
// file holds 60000·28·28 = 47,040,000 elements.
const maxIDXElements = 1 << 28

// IDX is a decoded IDX file: a dense array of unsigned bytes or big-endian
// int32 values with its dimensions, as used by MNIST and Fashion-MNIST.
//
// Exactly one of Uint8 and Int32 is non-nil, according to Type.
type IDX struct {
	Type  byte  // IDXUint8 or IDXInt32
	Dims  []int // dimensions, outermost first
	Uint8 []byte
	Int32 []int32
}

// Len returns the number of elements, the product of the dimensions.
func (x *IDX) Len() int {
	n := 1
	for _, d := range x.Dims {
		n *= d
	}
	return n
}

// DecodeIDX decodes an IDX file from r. A gzip stream (as distributed by
// Fashion-MNIST) is detected by its magic bytes and decompressed; its CRC is
// checked. Only the unsigned-byte and int32 element types are supported.
// Truncated data, trailing bytes, a bad magic number and oversized headers are
// errors that say what is wrong; the caller adds the file name.
func DecodeIDX(r io.Reader) (*IDX, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	if head, err := br.Peek(2); err == nil && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		zr.Multistream(false)
		x, err := decodeIDX(zr)
		if err != nil {
			return nil, err
		}
		// Reaching EOF makes the gzip reader verify the CRC and length.
		if _, err := io.Copy(io.Discard, zr); err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return x, nil
	}
	return decodeIDX(br)
}

func decodeIDX(r io.Reader) (*IDX, error) {
	var magic [4]byte
	if _, err := io.ReadFull(r, magic[:]); err != nil {
		return nil, fmt.Errorf("idx header: %w", truncated(err))
	}
	if magic[0] != 0 || magic[1] != 0 {
		return nil, fmt.Errorf("idx header: bad magic number % x (want 00 00 TYPE NDIMS)", magic)
	}
	typ, ndims := magic[2], int(magic[3])
	size := 0
	switch typ {
	case IDXUint8:
		size = 1
	case IDXInt32:
		size = 4
	default:
		return nil, fmt.Errorf("idx header: unsupported element type 0x%02x (want 0x08 or 0x0c)", typ)
	}
	if ndims == 0 {
		return nil, errors.New("idx header: zero dimensions")
	}
	dimBuf := make([]byte, 4*ndims)
	if _, err := io.ReadFull(r, dimBuf); err != nil {
		return nil, fmt.Errorf("idx header: %w", truncated(err))
	}
	x := &IDX{Type: typ, Dims: make([]int, ndims)}
	n := 1
	for i := range ndims {
		d := binary.BigEndian.Uint32(dimBuf[4*i:])
		if d > maxIDXElements || (d != 0 && n > maxIDXElements/int(d)) {
			return nil, fmt.Errorf("idx header: dimensions %v exceed %d elements", x.Dims[:i+1], maxIDXElements)
		}
		x.Dims[i] = int(d)
		n *= int(d)
	}
	data, err := readExactly(r, n*size)
	if err != nil {
		return nil, fmt.Errorf("idx data: %w for dimensions %v", err, x.Dims)
	}
	if typ == IDXUint8 {
		x.Uint8 = data
		return x, nil
	}
	x.Int32 = make([]int32, n)
	for i := range x.Int32 {
		x.Int32[i] = int32(binary.BigEndian.Uint32(data[4*i:]))
	}
	return x, nil
}

// EncodeIDX writes x to w in IDX format, uncompressed. It is the inverse of
// DecodeIDX and is used to build the embedded subset.
func EncodeIDX(w io.Writer, x *IDX) error {
	if len(x.Dims) == 0 || len(x.Dims) > 255 {
		return fmt.Errorf("datasets: idx: %d dimensions", len(x.Dims))
	}
	var buf bytes.Buffer
	buf.Write([]byte{0, 0, x.Type, byte(len(x.Dims))})
	for _, d := range x.Dims {
		buf.Write(binary.BigEndian.AppendUint32(nil, uint32(d)))
	}
	switch x.Type {
	case IDXUint8:
		if len(x.Uint8) != x.Len() {
			return fmt.Errorf("datasets: idx: %d bytes for dimensions %v", len(x.Uint8), x.Dims)
		}
		buf.Write(x.Uint8)
	case IDXInt32:
		if len(x.Int32) != x.Len() {
			return fmt.Errorf("datasets: idx: %d values for dimensions %v", len(x.Int32), x.Dims)
		}
		for _, v := range x.Int32 {
			buf.Write(binary.BigEndian.AppendUint32(nil, uint32(v)))
		}
	default:
		return fmt.Errorf("datasets: idx: unsupported element type 0x%02x", x.Type)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// preallocLimit is the largest declared payload read into a buffer
// allocated up front; larger (or lying) headers grow the buffer as data
// arrives, so a short file cannot force a large allocation.
const preallocLimit = 64 << 20

// readExactly reads exactly n bytes from r and checks that nothing follows.
func readExactly(r io.Reader, n int) ([]byte, error) {
	var data []byte
	if n <= preallocLimit {
		data = make([]byte, n)
		got, err := io.ReadFull(r, data)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			return nil, err
		}
		data = data[:got]
	} else {
		var err error
		data, err = io.ReadAll(io.LimitReader(r, int64(n)))
		if err != nil {
			return nil, err
		}
	}
	if len(data) < n {
		return nil, fmt.Errorf("truncated: %d of %d bytes", len(data), n)
	}
	var one [1]byte
	if k, err := io.ReadFull(r, one[:]); k > 0 {
		return nil, fmt.Errorf("trailing bytes after %d bytes", n)
	} else if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return data, nil
}

func truncated(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("truncated")
	}
	return err
}
