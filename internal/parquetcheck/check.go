// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package parquetcheck provides bounds checks of a parquet file's
// structure, to run before github.com/parquet-go/parquet-go reads it.
//
// The parquet decoder trusts the lengths in a file: a corrupt varint in a
// footer or page header makes it allocate up to 2 GiB for one byte string
// (encoding/thrift compactReader.ReadBytes), and a corrupt page size or
// value count sizes its buffers. This package walks the same Thrift
// structures without allocating from them and checks every length against
// the bytes that can hold it, and every size against a bound, so that a
// damaged file is an error, never an out-of-memory crash. The steps are:
//
//  1. [Footer] checks the footer (magic bytes, length, the FileMetaData
//     struct) before the file is opened;
//  2. [Pages] checks every page header of every column chunk, and the
//     row and value counts, once the footer is decoded.
//
// The format is the Apache Parquet file format
// (https://github.com/apache/parquet-format, parquet.thrift) in the Thrift
// compact protocol (Apache Thrift, "Thrift Compact protocol encoding",
// doc/specs/thrift-compact-protocol.md).
package parquetcheck

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// Limits bound what a file may claim. The zero value of a field means its
// default.
type Limits struct {
	// Footer bounds the footer's length in bytes; default 4 MiB.
	Footer int64
	// Elements bounds every Thrift list, set and map; default 65536 (a
	// schema or a row group list longer than that is no run table).
	Elements int64
	// Rows bounds the rows of the file and the values of a column chunk;
	// default 1<<24.
	Rows int64
	// Page bounds a page's uncompressed size in bytes; default 64 MiB.
	Page int64
}

func (l *Limits) withDefaults() Limits {
	d := Limits{Footer: 4 << 20, Elements: 1 << 16, Rows: 1 << 24, Page: 64 << 20}
	if l != nil {
		if l.Footer > 0 {
			d.Footer = l.Footer
		}
		if l.Elements > 0 {
			d.Elements = l.Elements
		}
		if l.Rows > 0 {
			d.Rows = l.Rows
		}
		if l.Page > 0 {
			d.Page = l.Page
		}
	}
	return d
}

// errCorrupt is wrapped by every error of this package.
var errCorrupt = errors.New("parquetcheck: corrupt parquet file")

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errCorrupt, fmt.Sprintf(format, args...))
}

// Footer checks the footer of the parquet file of the given size in r: the
// magic bytes at both ends, the footer length, and that the FileMetaData
// struct is well formed with every length inside the footer. A nil lim
// means the default limits.
func Footer(r io.ReaderAt, size int64, lim *Limits) error {
	l := lim.withDefaults()
	if size < 12 {
		return corrupt("%d bytes, too short for a parquet file", size)
	}
	var tail [8]byte
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return fmt.Errorf("parquetcheck: %w", err)
	}
	if string(tail[4:]) != "PAR1" {
		return corrupt("no PAR1 magic at the end")
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n == 0 || n > size-12 {
		return corrupt("footer of %d bytes in a file of %d", n, size)
	}
	if n > l.Footer {
		return corrupt("footer of %d bytes, more than the %d allowed", n, l.Footer)
	}
	buf := make([]byte, n)
	if _, err := r.ReadAt(buf, size-8-n); err != nil {
		return fmt.Errorf("parquetcheck: %w", err)
	}
	w := walker{b: buf, max: l.Elements}
	if err := w.structure(0, nil); err != nil {
		return corrupt("footer: %v", err)
	}
	return nil
}

// Pages checks the row groups of md, the decoded footer of the parquet file
// of the given size in r: the row counts, and for every column chunk its
// place in the file, its value count, and the header of each of its pages
// (well formed, with its sizes inside the chunk and its uncompressed size
// and value count bounded). A nil lim means the default limits.
func Pages(r io.ReaderAt, size int64, md *format.FileMetaData, lim *Limits) error {
	l := lim.withDefaults()
	if md.NumRows < 0 || md.NumRows > l.Rows {
		return corrupt("%d rows, want 0 to %d", md.NumRows, l.Rows)
	}
	var rows int64
	for g, rg := range md.RowGroups {
		if rg.NumRows < 0 || rg.NumRows > md.NumRows-rows {
			return corrupt("row group %d: %d rows, more than the file's %d", g, rg.NumRows, md.NumRows)
		}
		rows += rg.NumRows
		for c := range rg.Columns {
			if err := chunk(r, size, &rg.Columns[c], l); err != nil {
				return fmt.Errorf("%w (row group %d, column %d)", err, g, c)
			}
		}
	}
	if rows != md.NumRows {
		return corrupt("row groups hold %d rows, the file says %d", rows, md.NumRows)
	}
	return nil
}

// maxHeader bounds the bytes read for one page header.
const maxHeader = 1 << 20

// chunk checks the pages of one column chunk.
func chunk(r io.ReaderAt, size int64, cc *format.ColumnChunk, l Limits) error {
	md := &cc.MetaData
	start := md.DataPageOffset
	if md.DictionaryPageOffset > 0 && md.DictionaryPageOffset < start {
		start = md.DictionaryPageOffset
	}
	end := start + md.TotalCompressedSize
	if start < 4 || md.TotalCompressedSize < 0 || end < start || end > size-8 {
		return corrupt("column chunk at %d+%d outside the file of %d bytes", start, md.TotalCompressedSize, size)
	}
	if md.NumValues < 0 || md.NumValues > l.Rows {
		return corrupt("column chunk of %d values, want 0 to %d", md.NumValues, l.Rows)
	}
	for pos := start; pos < end; {
		n := min(end-pos, maxHeader)
		buf := make([]byte, n)
		if _, err := r.ReadAt(buf, pos); err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("parquetcheck: %w", err)
		}
		var h pageHeader
		w := walker{b: buf, max: l.Elements}
		if err := w.structure(0, h.visit); err != nil {
			return corrupt("page header at %d: %v", pos, err)
		}
		switch {
		case h.compressed < 0 || h.compressed > end-pos-int64(w.pos):
			return corrupt("page at %d: %d compressed bytes past the column chunk's end", pos, h.compressed)
		case h.uncompressed < 0 || h.uncompressed > l.Page:
			return corrupt("page at %d: %d uncompressed bytes, want 0 to %d", pos, h.uncompressed, l.Page)
		case h.values < 0 || h.values > l.Rows:
			return corrupt("page at %d: %d values, want 0 to %d", pos, h.values, l.Rows)
		}
		pos += int64(w.pos) + h.compressed
	}
	return nil
}

// pageHeader holds the fields of a PageHeader that bound allocations
// (parquet.thrift: 2 uncompressed_page_size, 3 compressed_page_size; the
// num_values of 5 data_page_header, 7 dictionary_page_header and 8
// data_page_header_v2, and the latter's num_rows).
type pageHeader struct {
	uncompressed, compressed, values int64
}

func (h *pageHeader) visit(path []int16, v int64) {
	switch {
	case len(path) == 1 && path[0] == 2:
		h.uncompressed = v
	case len(path) == 1 && path[0] == 3:
		h.compressed = v
	case len(path) == 2 && (path[0] == 5 || path[0] == 7 || path[0] == 8) && (path[1] == 1 || path[0] == 8 && path[1] == 3):
		h.values = max(h.values, v)
	}
}

// Thrift compact protocol types.
const (
	tStop   = 0
	tTrue   = 1
	tFalse  = 2
	tByte   = 3
	tI16    = 4
	tI32    = 5
	tI64    = 6
	tDouble = 7
	tBinary = 8
	tList   = 9
	tSet    = 10
	tMap    = 11
	tStruct = 12
)

// maxDepth bounds the nesting of structs and containers.
const maxDepth = 32

// walker walks Thrift compact data in b without allocating from it.
type walker struct {
	b   []byte
	pos int
	max int64 // bound on container sizes
}

func (w *walker) byte() (byte, error) {
	if w.pos >= len(w.b) {
		return 0, io.ErrUnexpectedEOF
	}
	c := w.b[w.pos]
	w.pos++
	return c, nil
}

func (w *walker) uvarint() (uint64, error) {
	v, n := binary.Uvarint(w.b[w.pos:])
	if n <= 0 {
		return 0, errors.New("bad varint")
	}
	w.pos += n
	return v, nil
}

func (w *walker) varint() (int64, error) {
	u, err := w.uvarint()
	return int64(u>>1) ^ -int64(u&1), err
}

// skip advances by n bytes, which must be there.
func (w *walker) skip(n uint64) error {
	if n > uint64(len(w.b)-w.pos) {
		return fmt.Errorf("length %d past the end (%d bytes left)", n, len(w.b)-w.pos)
	}
	w.pos += int(n)
	return nil
}

// size reads a container size of elements of at least one byte each.
func (w *walker) size(n uint64) (int, error) {
	if n > uint64(w.max) || n > uint64(len(w.b)-w.pos) {
		return 0, fmt.Errorf("container of %d elements (%d bytes left, at most %d allowed)", n, len(w.b)-w.pos, w.max)
	}
	return int(n), nil
}

// structure walks a struct, calling visit (if not nil) with the field path
// of every integer field of it and of the structs it holds directly.
func (w *walker) structure(depth int, visit func(path []int16, v int64)) error {
	return w.fields(depth, nil, visit)
}

func (w *walker) fields(depth int, path []int16, visit func([]int16, int64)) error {
	if depth > maxDepth {
		return errors.New("nested too deep")
	}
	var id int16
	for {
		h, err := w.byte()
		if err != nil {
			return err
		}
		typ := h & 0x0f
		if typ == tStop {
			return nil
		}
		if delta := int16(h >> 4); delta != 0 {
			id += delta
		} else {
			v, err := w.varint()
			if err != nil {
				return err
			}
			id = int16(v)
		}
		if err := w.value(typ, depth, append(path, id), visit); err != nil {
			return err
		}
	}
}

// value walks one value of type typ.
func (w *walker) value(typ byte, depth int, path []int16, visit func([]int16, int64)) error {
	switch typ {
	case tTrue, tFalse:
		return nil
	case tByte:
		_, err := w.byte()
		return err
	case tI16, tI32, tI64:
		v, err := w.varint()
		if err == nil && visit != nil {
			visit(path, v)
		}
		return err
	case tDouble:
		return w.skip(8)
	case tBinary:
		n, err := w.uvarint()
		if err != nil {
			return err
		}
		return w.skip(n)
	case tList, tSet:
		return w.list(depth)
	case tMap:
		return w.dict(depth)
	case tStruct:
		if visit != nil && len(path) > 1 {
			visit = nil // only the fields of directly held structs
		}
		return w.fields(depth+1, path, visit)
	}
	return fmt.Errorf("unknown type %d", typ)
}

func (w *walker) list(depth int) error {
	h, err := w.byte()
	if err != nil {
		return err
	}
	n := uint64(h >> 4)
	if n == 15 {
		if n, err = w.uvarint(); err != nil {
			return err
		}
	}
	count, err := w.size(n)
	if err != nil {
		return err
	}
	elem := h & 0x0f
	if elem == tTrue || elem == tFalse {
		// Booleans in a list take one byte each.
		return w.skip(uint64(count))
	}
	for range count {
		if err := w.value(elem, depth+1, nil, nil); err != nil {
			return err
		}
	}
	return nil
}

func (w *walker) dict(depth int) error {
	n, err := w.uvarint()
	if err != nil {
		return err
	}
	count, err := w.size(n)
	if err != nil || count == 0 {
		return err
	}
	kv, err := w.byte()
	if err != nil {
		return err
	}
	for range count {
		for _, t := range []byte{kv >> 4, kv & 0x0f} {
			if t == tTrue || t == tFalse {
				if _, err := w.byte(); err != nil {
					return err
				}
				continue
			}
			if err := w.value(t, depth+1, nil, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// Open checks the footer of the parquet file of the given size in r, opens
// it (skipping its page index and bloom filters, which it does not check),
// and checks its pages; see [Footer] and [Pages]. The parquet decoder may
// still panic on corrupt page data it has room for: callers recover.
func Open(r io.ReaderAt, size int64, lim *Limits) (*parquet.File, error) {
	if err := Footer(r, size, lim); err != nil {
		return nil, err
	}
	f, err := parquet.OpenFile(r, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, fmt.Errorf("parquetcheck: %w", err)
	}
	if err := Pages(r, size, f.Metadata(), lim); err != nil {
		return nil, err
	}
	return f, nil
}
