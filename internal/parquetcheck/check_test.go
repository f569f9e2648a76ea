// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package parquetcheck

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/parquet-go/parquet-go"
)

type row struct {
	Name  string  `parquet:"name"`
	Value float64 `parquet:"value"`
	Seed  int64   `parquet:"seed"`
}

// valid returns a small parquet file with statistics in its page headers.
func valid(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	rows := []row{{"a", 1, 1}, {"bb", 2, 2}, {"ccc", 3, 3}}
	if err := parquet.Write(&buf, rows, parquet.Compression(&parquet.Snappy)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestOpenValid(t *testing.T) {
	data := valid(t)
	f, err := Open(bytes.NewReader(data), int64(len(data)), nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if f.NumRows() != 3 {
		t.Errorf("got %d rows, want 3", f.NumRows())
	}
}

func TestOpenCorrupt(t *testing.T) {
	good := valid(t)
	footerLen := int(binary.LittleEndian.Uint32(good[len(good)-8:]))
	// The first page header starts after the magic bytes: its first field
	// (1: type, i32) is one byte of header and one of value, then field 2
	// (uncompressed_page_size) is a varint.
	for _, tc := range []struct {
		desc   string
		mutate func([]byte) []byte
		lim    *Limits
	}{
		{"empty", func([]byte) []byte { return nil }, nil},
		{"magic only", func([]byte) []byte { return []byte("PAR1PAR1") }, nil},
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }, nil},
		{"no end magic", func(b []byte) []byte { b[len(b)-1] = 'X'; return b }, nil},
		{"footer longer than the file", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[len(b)-8:], uint32(len(b)))
			return b
		}, nil},
		{"footer over the limit", func(b []byte) []byte { return b }, &Limits{Footer: int64(footerLen - 1)}},
		{"huge page size", func(b []byte) []byte {
			// Field 2 of the first page header: 0x15 then a varint.
			i := bytes.Index(b[4:], []byte{0x15}) + 4
			j := bytes.Index(b[i+1:], []byte{0x15}) + i + 1
			copy(b[j+1:], []byte{0xfe, 0xff, 0xff, 0xff, 0x0f})
			return b
		}, nil},
		{"rows over the limit", func(b []byte) []byte { return b }, &Limits{Rows: 2}},
	} {
		data := tc.mutate(bytes.Clone(good))
		_, err := Open(bytes.NewReader(data), int64(len(data)), tc.lim)
		if err == nil {
			t.Errorf("%s: got nil error", tc.desc)
			continue
		}
		if !errors.Is(err, errCorrupt) {
			t.Errorf("%s: got %v, want a corrupt-file error", tc.desc, err)
		}
	}
}

func TestWalker(t *testing.T) {
	for _, tc := range []struct {
		desc string
		b    []byte
		ok   bool
	}{
		{"empty struct", []byte{0x00}, true},
		{"i32 field 1 = 3", []byte{0x15, 0x06, 0x00}, true},
		{"binary of 2", []byte{0x18, 0x02, 'h', 'i', 0x00}, true},
		{"binary past the end", []byte{0x18, 0x7f, 'h', 0x00}, false},
		{"list of 3 i32", []byte{0x19, 0x35, 0x02, 0x04, 0x06, 0x00}, true},
		{"list longer than the bytes", []byte{0x19, 0xf5, 0xff, 0xff, 0x7f, 0x00}, false},
		{"unknown type", []byte{0x1d, 0x00}, false},
		{"no stop", []byte{0x15, 0x06}, false},
		{"map of 1 i32→binary", []byte{0x1b, 0x01, 0x58, 0x02, 0x01, 'x', 0x00}, true},
	} {
		w := walker{b: tc.b, max: 1 << 16}
		var got []int64
		err := w.structure(0, func(_ []int16, v int64) { got = append(got, v) })
		if (err == nil) != tc.ok {
			t.Errorf("%s: got error %v, want ok=%v", tc.desc, err, tc.ok)
		}
	}
	// A varint field carries its zigzag value.
	w := walker{b: []byte{0x15, 0x06, 0x26, 0x05, 0x00}, max: 1}
	var path [][]int16
	var vals []int64
	if err := w.structure(0, func(p []int16, v int64) { path, vals = append(path, append([]int16(nil), p...)), append(vals, v) }); err != nil {
		t.Fatal(err)
	}
	if len(vals) != 2 || vals[0] != 3 || vals[1] != -3 || path[0][0] != 1 || path[1][0] != 3 {
		t.Errorf("got paths %v values %v, want [[1] [3]] [3 -3]", path, vals)
	}
}
