// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func encodeIDX(t testing.TB, x *IDX, gz bool) []byte {
	t.Helper()
	var raw bytes.Buffer
	if err := EncodeIDX(&raw, x); err != nil {
		t.Fatal(err)
	}
	if !gz {
		return raw.Bytes()
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(raw.Bytes())
	zw.Close()
	return b.Bytes()
}

func TestIDXRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		desc string
		x    *IDX
	}{
		{"uint8 images", &IDX{Type: IDXUint8, Dims: []int{2, 2, 3}, Uint8: []byte{0, 1, 2, 3, 4, 5, 250, 251, 252, 253, 254, 255}}},
		{"uint8 labels", &IDX{Type: IDXUint8, Dims: []int{3}, Uint8: []byte{9, 0, 4}}},
		{"int32", &IDX{Type: IDXInt32, Dims: []int{4}, Int32: []int32{0, -1, 69999, -2147483648}}},
		{"empty", &IDX{Type: IDXUint8, Dims: []int{0, 28, 28}, Uint8: []byte{}}},
	} {
		for _, gz := range []bool{false, true} {
			got, err := DecodeIDX(bytes.NewReader(encodeIDX(t, tc.x, gz)))
			if err != nil {
				t.Fatalf("%s (gzip %v): %v", tc.desc, gz, err)
			}
			if diff := cmp.Diff(tc.x, got); diff != "" {
				t.Errorf("%s (gzip %v): round trip mismatch (-want +got):\n%s", tc.desc, gz, diff)
			}
		}
	}
}

func TestIDXErrors(t *testing.T) {
	t.Parallel()
	good := encodeIDX(t, &IDX{Type: IDXUint8, Dims: []int{2, 3}, Uint8: []byte{1, 2, 3, 4, 5, 6}}, false)
	gz := encodeIDX(t, &IDX{Type: IDXUint8, Dims: []int{2, 3}, Uint8: []byte{1, 2, 3, 4, 5, 6}}, true)
	badCRC := bytes.Clone(gz)
	badCRC[len(badCRC)-6] ^= 0xff // last bytes are CRC-32 then length
	for _, tc := range []struct {
		desc string
		data []byte
		want string
	}{
		{"empty", nil, "idx header: truncated"},
		{"short header", good[:3], "idx header: truncated"},
		{"short dims", good[:9], "idx header: truncated"},
		{"bad magic", append([]byte{1, 0}, good[2:]...), "bad magic number"},
		{"bad type", append([]byte{0, 0, 0x0d}, good[3:]...), "unsupported element type 0x0d"},
		{"zero dims", []byte{0, 0, 8, 0}, "zero dimensions"},
		{"truncated data", good[:len(good)-1], "truncated: 5 of 6 bytes"},
		{"trailing data", append(bytes.Clone(good), 7), "trailing bytes"},
		{"huge dims", []byte{0, 0, 8, 2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, "exceed"},
		{"truncated gzip", gz[:len(gz)-10], "unexpected EOF"},
		{"bad gzip checksum", badCRC, "gzip: invalid checksum"},
	} {
		_, err := DecodeIDX(bytes.NewReader(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got error %v, want one containing %q", tc.desc, err, tc.want)
		}
	}
}

// FuzzDecodeIDX checks that the decoder never panics and that whatever it
// accepts re-encodes to an equivalent file.
func FuzzDecodeIDX(f *testing.F) {
	f.Add(encodeIDX(f, &IDX{Type: IDXUint8, Dims: []int{2, 3}, Uint8: []byte{1, 2, 3, 4, 5, 6}}, false))
	f.Add(encodeIDX(f, &IDX{Type: IDXInt32, Dims: []int{2}, Int32: []int32{7, -7}}, false))
	f.Add(encodeIDX(f, &IDX{Type: IDXUint8, Dims: []int{1, 2, 2}, Uint8: []byte{0, 255, 3, 4}}, true))
	f.Add([]byte{0, 0, 8, 1, 0, 0, 0, 9})
	f.Fuzz(func(t *testing.T, data []byte) {
		x, err := DecodeIDX(bytes.NewReader(data))
		if err != nil {
			return
		}
		if x.Len() != len(x.Uint8)+len(x.Int32) {
			t.Fatalf("decoded %d elements for dimensions %v", len(x.Uint8)+len(x.Int32), x.Dims)
		}
		y, err := DecodeIDX(bytes.NewReader(encodeIDX(t, x, false)))
		if err != nil {
			t.Fatalf("re-decoding: %v", err)
		}
		if x.Sum256() != y.Sum256() {
			t.Fatalf("re-encoding changed the contents")
		}
	})
}
