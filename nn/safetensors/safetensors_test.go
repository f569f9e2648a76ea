// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// sameTensors reports whether a and b hold the same names, dtypes, shapes and
// bit-identical values.
func sameTensors(t *testing.T, got, want []Tensor) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d tensors, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := &got[i], &want[i]
		gd, wd := g.DType, w.DType
		if gd == noDType {
			gd = F32
		}
		if wd == noDType {
			wd = F32
		}
		if g.Name != w.Name || gd != wd || !slices.Equal(g.Shape, w.Shape) {
			t.Errorf("tensor %d: got %q %s %v, want %q %s %v", i, g.Name, gd, g.Shape, w.Name, wd, w.Shape)
			continue
		}
		if len(g.Data) != len(w.Data) || len(g.Ints) != len(w.Ints) {
			t.Errorf("tensor %q: got %d floats and %d ints, want %d and %d", g.Name, len(g.Data), len(g.Ints), len(w.Data), len(w.Ints))
			continue
		}
		for j := range w.Data {
			if math.Float32bits(g.Data[j]) != math.Float32bits(w.Data[j]) {
				t.Errorf("tensor %q element %d: got bits %#x, want %#x", g.Name, j, math.Float32bits(g.Data[j]), math.Float32bits(w.Data[j]))
				break
			}
		}
		if !slices.Equal(g.Ints, w.Ints) {
			t.Errorf("tensor %q: got ints %v, want %v", g.Name, g.Ints, w.Ints)
		}
	}
}

// sortedByName returns a copy of ts sorted by name, as the reader returns them.
func sortedByName(ts []Tensor) []Tensor {
	s := slices.Clone(ts)
	slices.SortFunc(s, func(a, b Tensor) int { return strings.Compare(a.Name, b.Name) })
	return s
}

// testTensors returns tensors exercising every value class the writer must
// keep bit for bit: signed zeros, infinities, NaNs with payloads, subnormals,
// extreme integers, a scalar and empty tensors.
func testTensors() []Tensor {
	rng := rand.New(rand.NewPCG(1, 1))
	w := make([]float32, 3*5)
	for i := range w {
		w[i] = float32(rng.NormFloat64())
	}
	special := []float32{
		0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		math.Float32frombits(0x7fc00001), math.Float32frombits(0xffa00000), // quiet NaN with payload, signalling NaN
		math.SmallestNonzeroFloat32, -math.MaxFloat32,
	}
	return []Tensor{
		{Name: "model.w", Shape: []int{3, 5}, Data: w},
		{Name: "a/special", DType: F32, Shape: []int{2, 2, 2}, Data: special},
		{Name: "step", DType: I64, Shape: []int{}, Ints: []int64{math.MinInt64}},
		{Name: "counts", DType: I64, Shape: []int{3}, Ints: []int64{0, math.MaxInt64, -1}},
		{Name: "empty", Shape: []int{0, 4}, Data: []float32{}},
		{Name: "empty_ints", DType: I64, Shape: []int{2, 0}},
		{Name: "ünïcode \"quoted\"\n", Shape: []int{1}, Data: []float32{1}},
	}
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	ts := testTensors()
	for _, meta := range []map[string]string{
		nil,
		{"config": `{"width":64}`, "format": "pt", "zz": "", "ctl\x01": "tab\t<&>"},
	} {
		var buf bytes.Buffer
		if err := Encode(&buf, ts, meta); err != nil {
			t.Fatal(err)
		}
		f, err := Decode(buf.Bytes())
		if err != nil {
			t.Fatalf("decoding what Encode wrote: %v", err)
		}
		sameTensors(t, f.Tensors, sortedByName(ts))
		if len(meta) == 0 && f.Metadata != nil {
			t.Errorf("got metadata %v, want none", f.Metadata)
		}
		if len(f.Metadata) != len(meta) {
			t.Errorf("got metadata %v, want %v", f.Metadata, meta)
		}
		for k, v := range meta {
			if f.Metadata[k] != v {
				t.Errorf("metadata %q: got %q, want %q", k, f.Metadata[k], v)
			}
		}
	}
}

func TestReadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "ckpt.safetensors")
	ts := testTensors()
	var buf bytes.Buffer
	if err := Encode(&buf, ts, map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sameTensors(t, f.Tensors, sortedByName(ts))
	if f.Metadata["k"] != "v" {
		t.Errorf("got metadata %v, want k=v", f.Metadata)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing.safetensors")); err == nil {
		t.Error("ReadFile of a missing file: got nil error")
	}
	// A bad tensor is refused before anything is written.
	bad := append(testTensors(), Tensor{Name: "bad", Shape: []int{2}, Data: []float32{1}})
	var out bytes.Buffer
	if err := Encode(&out, bad, nil); !errors.Is(err, ErrShape) || out.Len() != 0 {
		t.Errorf("Encode with a bad tensor: got %v and %d bytes, want ErrShape and none", err, out.Len())
	}
}

// writeConfig writes ts and cfg to the file path with EncodeConfig.
func writeConfig(t *testing.T, path string, ts []Tensor, cfg any) {
	t.Helper()
	var buf bytes.Buffer
	if err := EncodeConfig(&buf, ts, cfg); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestEncodeCanonical checks the exact bytes of a small file, worked out by
// hand from the format description: sorted keys, no spaces, data_offsets
// counted from the start of the data, header padded with spaces to 8 bytes.
func TestEncodeCanonical(t *testing.T) {
	t.Parallel()
	ts := []Tensor{
		{Name: "b", Shape: []int{2}, Data: []float32{1, -2}},
		{Name: "a", DType: I64, Shape: []int{}, Ints: []int64{5}},
	}
	var buf bytes.Buffer
	if err := Encode(&buf, ts, map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	json := `{"__metadata__":{"k":"v"},"a":{"data_offsets":[0,8],"dtype":"I64","shape":[]},"b":{"data_offsets":[8,16],"dtype":"F32","shape":[2]}}`
	// len(json) = 132; 8+132 = 140, padded to 144: 4 spaces.
	header := json + "    "
	var want []byte
	want = binary.LittleEndian.AppendUint64(want, uint64(len(header)))
	want = append(want, header...)
	want = append(want, 5, 0, 0, 0, 0, 0, 0, 0) // int64 5
	want = append(want, 0, 0, 0x80, 0x3f)       // float32 1 = 0x3f800000
	want = append(want, 0, 0, 0, 0xc0)          // float32 -2 = 0xc0000000
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("got\n%q\nwant\n%q", buf.Bytes(), want)
	}

	// Input order and map order do not matter.
	var again bytes.Buffer
	if err := Encode(&again, []Tensor{ts[1], ts[0]}, map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), want) {
		t.Error("encoding depends on the order of the tensors")
	}
}

// TestDecodeReference decodes a file laid out the way other writers do it:
// metadata first, keys in dtype/shape/data_offsets order, tensors not in name
// order, mixed dtypes. The data bytes and expected values come from
// Debian's python3-numpy 1.24.2 and python3-torch 1.13:
//
//	np.array([0.1, -1e300, 2.5], dtype='<f8').tobytes()
//	np.array([-7, 300], dtype='<i4').tobytes()
//	np.array([0.1], dtype='<f4').tobytes()
//	np.array([1.0, -2.5, 65504.0, 6e-08, -0.0, np.inf], dtype='<f2').tobytes()
//	torch.tensor([1.0, -2.5, 3.140625, 1e-40, -inf], dtype=torch.bfloat16).view(torch.int16)
//	np.array([1, 0, 1], dtype='u1').tobytes()
//
// with the values read back by float(np.float32(x)) and float(b.float()).
func TestDecodeReference(t *testing.T) {
	t.Parallel()
	header := `{"__metadata__":{"format":"pt"},` +
		`"f64":{"dtype":"F64","shape":[3],"data_offsets":[0,24]},` +
		`"i32":{"dtype":"I32","shape":[2],"data_offsets":[24,32]},` +
		`"f32":{"dtype":"F32","shape":[],"data_offsets":[32,36]},` +
		`"f16":{"dtype":"F16","shape":[2,3],"data_offsets":[36,48]},` +
		`"bf16":{"dtype":"BF16","shape":[5],"data_offsets":[48,58]},` +
		`"mask":{"dtype":"BOOL","shape":[3],"data_offsets":[58,61]},` +
		`"empty":{"dtype":"F32","shape":[0,4],"data_offsets":[61,61]}}` + "   \n"
	data, err := hex.DecodeString("9a9999999999b93f9c7500883ce437fe0000000000000440" +
		"f9ffffff2c010000" + "cdcccc3d" + "003c00c1ff7b01000080007c" + "803f20c04940010080ff" + "010001")
	if err != nil {
		t.Fatal(err)
	}
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	b = append(append(b, header...), data...)
	f, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	inf := float32(math.Inf(1))
	want := []Tensor{
		{Name: "bf16", DType: BF16, Shape: []int{5}, Data: []float32{1, -2.5, 3.140625, math.Float32frombits(0x00010000), -inf}}, // 9.183549615799121e-41
		{Name: "empty", DType: F32, Shape: []int{0, 4}, Data: []float32{}},
		{Name: "f16", DType: F16, Shape: []int{2, 3}, Data: []float32{1, -2.5, 65504, 5.960464477539063e-08, float32(math.Copysign(0, -1)), inf}},
		{Name: "f32", DType: F32, Shape: []int{}, Data: []float32{0.10000000149011612}},
		{Name: "f64", DType: F64, Shape: []int{3}, Data: []float32{0.10000000149011612, -inf, 2.5}},
		{Name: "i32", DType: I32, Shape: []int{2}, Ints: []int64{-7, 300}},
		{Name: "mask", DType: BOOL, Shape: []int{3}, Ints: []int64{1, 0, 1}},
	}
	sameTensors(t, f.Tensors, want)
	if f.Metadata["format"] != "pt" || len(f.Metadata) != 1 {
		t.Errorf("got metadata %v, want format=pt", f.Metadata)
	}
}

// TestHalfToFloat checks every binary16 value against a reference built from
// the definition: (−1)^s · 2^(e−15) · (1 + m/1024) for normals,
// (−1)^s · 2^(−14) · m/1024 for subnormals.
func TestHalfToFloat(t *testing.T) {
	t.Parallel()
	for h := 0; h < 1<<16; h++ {
		s, e, m := h>>15, (h>>10)&0x1f, h&0x3ff
		got := halfToFloat(uint16(h))
		var want float64
		switch {
		case e == 0x1f && m == 0:
			want = math.Inf(1)
		case e == 0x1f:
			if !math.IsNaN(float64(got)) || math.Float32bits(got)&0x1fff != 0 || math.Float32bits(got)>>13&0x3ff != uint32(m) {
				t.Errorf("halfToFloat(%#04x) = %#x, want a NaN with payload %#x", h, math.Float32bits(got), m)
			}
			continue
		case e == 0:
			want = math.Ldexp(float64(m)/1024, -14)
		default:
			want = math.Ldexp(1+float64(m)/1024, e-15)
		}
		if s == 1 {
			want = -want
		}
		if math.Float32bits(got) != math.Float32bits(float32(want)) {
			t.Errorf("halfToFloat(%#04x) = %v, want %v", h, got, want)
		}
	}
}

// file builds a safetensors file from a header string and n data bytes.
func file(header string, n int) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	return append(append(b, header...), make([]byte, n)...)
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	good := `{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`
	for _, tc := range []struct {
		desc string
		b    []byte
		want error
		msg  string // a part of the message
	}{
		{"empty file", nil, ErrTruncated, "fewer than the 8"},
		{"short length", []byte{1, 0, 0}, ErrTruncated, "3 bytes"},
		{"header beyond file", file(good, 8)[:40], ErrTruncated, "beyond the end"},
		{"huge header length", binary.LittleEndian.AppendUint64(nil, 1<<62), ErrHeader, "exceeds the limit"},
		{"zero header", file("", 0), ErrHeader, "does not start with '{'"},
		{"not an object", file(`["a"]`, 0), ErrHeader, "does not start with '{'"},
		{"bad JSON", file(`{"a":{"dtype":"F32",}}`, 8), ErrHeader, "invalid JSON"},
		{"unterminated", file(`{"a":{"dtype":"F32"`, 8), ErrHeader, "invalid JSON"},
		{"trailing garbage", file(good+` x`, 8), ErrHeader, "after the header"},
		{"second object", file(good+` {}`, 8), ErrHeader, "after the header"},
		{"invalid UTF-8", file("{\"\xff\":{}}", 0), ErrHeader, "UTF-8"},
		{"tensor not an object", file(`{"a":[1]}`, 0), ErrHeader, `tensor "a"`},
		{"unknown field", file(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}}`, 8), ErrHeader, `unknown field "x"`},
		{"no dtype", file(`{"a":{"shape":[2],"data_offsets":[0,8]}}`, 8), ErrHeader, "no dtype"},
		{"no shape", file(`{"a":{"dtype":"F32","data_offsets":[0,8]}}`, 8), ErrHeader, "no shape"},
		{"no offsets", file(`{"a":{"dtype":"F32","shape":[2]}}`, 8), ErrHeader, "no data_offsets"},
		{"dtype not a string", file(`{"a":{"dtype":4,"shape":[1],"data_offsets":[0,4]}}`, 4), ErrHeader, "dtype is number 4"},
		{"unknown dtype", file(`{"a":{"dtype":"F128","shape":[1],"data_offsets":[0,16]}}`, 16), ErrDType, `unknown dtype "F128"`},
		{"unsupported dtype", file(`{"a":{"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]}}`, 1), ErrDType, "unsupported"},
		{"negative dimension", file(`{"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}`, 8), ErrHeader, "non-negative integer"},
		{"fractional dimension", file(`{"a":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}}`, 8), ErrHeader, "non-negative integer"},
		{"huge dimension", file(`{"a":{"dtype":"F32","shape":[4294967296],"data_offsets":[0,8]}}`, 8), ErrShape, "too large"},
		{"shape overflow", file(`{"a":{"dtype":"F32","shape":[2147483647,2147483647,2147483647],"data_offsets":[0,8]}}`, 8), ErrShape, "too many elements"},
		{"three offsets", file(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4,8]}}`, 8), ErrOffsets, "3 numbers"},
		{"reversed offsets", file(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}}`, 8), ErrOffsets, "reversed"},
		{"offsets out of range", file(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, 4), ErrTruncated, "reach past the 4 bytes"},
		{"byte count mismatch", file(`{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, 8), ErrOffsets, "want 12 for F32 [3]"},
		{"overlap", file(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 8), ErrOffsets, `overlap tensor "a"`},
		{"hole", file(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}`, 12), ErrOffsets, "[4, 8) before"},
		{"trailing data", file(good, 12), ErrOffsets, "[8, 12) at the end"},
		{"duplicate tensor", file(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 8), ErrDuplicate, "twice"},
		{"duplicate field", file(`{"a":{"dtype":"F32","dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, 4), ErrDuplicate, "dtype given twice"},
		{"duplicate metadata", file(`{"__metadata__":{},"__metadata__":{},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, 4), ErrDuplicate, "twice"},
		{"duplicate metadata key", file(`{"__metadata__":{"k":"1","k":"2"}}`, 0), ErrDuplicate, `"k" appears twice`},
		{"metadata not strings", file(`{"__metadata__":{"k":1}}`, 0), ErrHeader, "want a string"},
		{"metadata not an object", file(`{"__metadata__":"x"}`, 0), ErrHeader, "want an object"},
		{"bool out of range", append(file(`{"a":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}}`, 0), 1, 2), ErrDType, "element 1"},
		{"u64 overflow", append(file(`{"a":{"dtype":"U64","shape":[1],"data_offsets":[0,8]}}`, 0), 0, 0, 0, 0, 0, 0, 0, 0x80), ErrDType, "element 0"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			f, err := Decode(tc.b)
			if err == nil {
				t.Fatalf("got %d tensors and nil error, want %v", len(f.Tensors), tc.want)
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.msg) || !strings.HasPrefix(err.Error(), "safetensors: ") {
				t.Errorf("got message %q, want it to contain %q", err, tc.msg)
			}
		})
	}
}

func TestDecodeAccepts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		desc   string
		header string
		n      int
	}{
		{"no tensors", `{}`, 0},
		{"null metadata", `{"__metadata__":null}`, 0},
		{"offsets not in name order", `{"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 8},
		{"empty tensors share an offset", `{"a":{"dtype":"F32","shape":[0],"data_offsets":[4,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"c":{"dtype":"I64","shape":[3,0],"data_offsets":[4,4]}}`, 4},
		{"white space everywhere", " {\n\"a\" : { \"dtype\" : \"F32\" , \"shape\" : [ ] , \"data_offsets\" : [ 0 , 4 ] } }\t\n   "[1:], 4},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			if _, err := Decode(file(tc.header, tc.n)); err != nil {
				t.Errorf("got %v, want nil", err)
			}
		})
	}
}

func TestEncodeErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		desc string
		ts   []Tensor
		meta map[string]string
		want error
	}{
		{"empty name", []Tensor{{Shape: []int{}, Data: []float32{1}}}, nil, ErrHeader},
		{"reserved name", []Tensor{{Name: "__metadata__", Shape: []int{}, Data: []float32{1}}}, nil, ErrHeader},
		{"invalid UTF-8 name", []Tensor{{Name: "\xff", Shape: []int{}, Data: []float32{1}}}, nil, ErrHeader},
		{"invalid UTF-8 metadata", nil, map[string]string{"k": "\xff"}, ErrHeader},
		{"duplicate", []Tensor{{Name: "a", Shape: []int{}, Data: []float32{1}}, {Name: "a", Shape: []int{}, Data: []float32{2}}}, nil, ErrDuplicate},
		{"short data", []Tensor{{Name: "a", Shape: []int{2, 2}, Data: []float32{1}}}, nil, ErrShape},
		{"negative dimension", []Tensor{{Name: "a", Shape: []int{-1}}}, nil, ErrShape},
		{"ints in a float tensor", []Tensor{{Name: "a", Shape: []int{}, Data: []float32{1}, Ints: []int64{1}}}, nil, ErrShape},
		{"unwritable dtype", []Tensor{{Name: "a", DType: F16, Shape: []int{}, Data: []float32{1}}}, nil, ErrDType},
		{"header too large", nil, map[string]string{"big": strings.Repeat("x", MaxHeader)}, ErrHeader},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			var buf bytes.Buffer
			err := Encode(&buf, tc.ts, tc.meta)
			if !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
			if buf.Len() != 0 {
				t.Errorf("wrote %d bytes before failing, want 0", buf.Len())
			}
		})
	}
}

type testConfig struct {
	Width  int     `json:"width"`
	Preset string  `json:"preset"`
	Alpha  float64 `json:"alpha"`
}

func TestEncodeConfigLoadFill(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "model.safetensors")
	cfg := testConfig{Width: 8, Preset: "smoke", Alpha: 0.5}
	ts := testTensors()
	writeConfig(t, path, ts, cfg)
	var got testConfig
	f, err := Load(path, &got)
	if err != nil {
		t.Fatal(err)
	}
	if got != cfg {
		t.Errorf("got config %+v, want %+v", got, cfg)
	}

	// Fill destinations with fresh buffers, in another order.
	dst := make([]Tensor, len(ts))
	for i, src := range ts {
		j := len(ts) - 1 - i
		dst[j] = Tensor{Name: src.Name, DType: src.DType, Shape: src.Shape}
		if src.DType == I64 {
			dst[j].Ints = make([]int64, len(src.Ints))
		} else {
			dst[j].Data = make([]float32, len(src.Data))
		}
	}
	if err := f.Fill(dst); err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(ts)
	slices.Reverse(want)
	sameTensors(t, dst, want)

	// The hash of the file is the hash of its content.
	sum, err := Sum(ts, map[string]string{ConfigKey: `{"width":8,"preset":"smoke","alpha":0.5}`})
	if err != nil {
		t.Fatal(err)
	}
	h, err := HashFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if sum != h || len(h) != 64 {
		t.Errorf("Sum = %s, HashFile = %s, want equal SHA-256 hex digests", sum, h)
	}
	ts[0].Data[0] = math.Nextafter32(ts[0].Data[0], 10)
	if other, _ := Sum(ts, f.Metadata); other == h {
		t.Error("changing one ulp of one value does not change the hash")
	}

	// A config that does not match the caller's type.
	var wrong struct{ Width string }
	if _, err := Load(path, &wrong); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), path) {
		t.Errorf("loading into a mismatched config: got %v, want ErrConfig naming the file", err)
	}
	var strict struct{ Width int }
	if _, err := Load(path, &strict); !errors.Is(err, ErrConfig) {
		t.Errorf("loading into a config without all fields: got %v, want ErrConfig", err)
	}
	noCfg := filepath.Join(dir, "nocfg.safetensors")
	writeConfig(t, noCfg, ts, nil)
	if _, err := Load(noCfg, &got); !errors.Is(err, ErrMissing) {
		t.Errorf("loading a config from a file without one: got %v, want ErrMissing", err)
	}
}

func TestFillErrors(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	src := []Tensor{
		{Name: "w", Shape: []int{2, 3}, Data: []float32{1, 2, 3, 4, 5, 6}},
		{Name: "b", Shape: []int{3}, Data: []float32{7, 8, 9}},
		{Name: "n", DType: I64, Shape: []int{}, Ints: []int64{3}},
	}
	if err := Encode(&buf, src, nil); err != nil {
		t.Fatal(err)
	}
	f, err := Decode(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	w := func() Tensor { return Tensor{Name: "w", Shape: []int{2, 3}, Data: make([]float32, 6)} }
	b := func() Tensor { return Tensor{Name: "b", Shape: []int{3}, Data: make([]float32, 3)} }
	n := func() Tensor { return Tensor{Name: "n", DType: I64, Shape: []int{}, Ints: make([]int64, 1)} }
	for _, tc := range []struct {
		desc string
		dst  []Tensor
		want error
		msg  string
	}{
		{"missing", []Tensor{w(), b(), n(), {Name: "lora.a", Shape: []int{1}, Data: make([]float32, 1)}}, ErrMissing, `tensor "lora.a": not in the file`},
		{"unexpected", []Tensor{w(), b()}, ErrUnexpected, `tensor "n"`},
		{"shape mismatch", []Tensor{{Name: "w", Shape: []int{3, 2}, Data: make([]float32, 6)}, b(), n()}, ErrShape, "shape [2 3] in the file, want [3 2]"},
		{"float into ints", []Tensor{w(), b(), {Name: "n", DType: F32, Shape: []int{}, Data: make([]float32, 1)}}, ErrDType, "want a float dtype"},
		{"ints into floats", []Tensor{w(), {Name: "b", DType: I64, Shape: []int{3}, Ints: make([]int64, 3)}, n()}, ErrDType, "want an integer dtype"},
		{"asked twice", []Tensor{w(), w(), b(), n()}, ErrDuplicate, "asked for twice"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			err := f.Fill(tc.dst)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("got %v, want %v containing %q", err, tc.want, tc.msg)
			}
			for _, d := range tc.dst {
				for _, v := range d.Data {
					if v != 0 {
						t.Fatalf("Fill wrote into %q before failing", d.Name)
					}
				}
			}
		})
	}
	// Filter selects part of a file.
	part := f.Filter(func(name string) bool { return name != "n" })
	dst := []Tensor{w(), b()}
	if err := part.Fill(dst); err != nil {
		t.Fatal(err)
	}
	if dst[1].Data[2] != 9 {
		t.Errorf("got b[2] = %v, want 9", dst[1].Data[2])
	}
	if _, err := f.Float32("b", 3); err != nil {
		t.Error(err)
	}
	if _, err := f.Float32("b", 1, 3); !errors.Is(err, ErrShape) {
		t.Errorf("Float32 with the wrong shape: got %v, want ErrShape", err)
	}
	if _, err := f.Float32("n"); !errors.Is(err, ErrDType) {
		t.Errorf("Float32 of an integer tensor: got %v, want ErrDType", err)
	}
	if _, err := f.Float32("x"); !errors.Is(err, ErrMissing) {
		t.Errorf("Float32 of a missing tensor: got %v, want ErrMissing", err)
	}
}

func TestReadFileErrorNamesPath(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "bad.safetensors")
	if err := os.WriteFile(path, file(`{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, 8), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(path)
	want := "safetensors: " + path + `: tensor "a": data_offsets [0, 8] span 8 bytes, want 12 for F32 [3]`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// TestEncodeAlignment checks that every tensor's data start at a multiple of
// its element size in the file, whatever the order of names and dtypes.
func TestEncodeAlignment(t *testing.T) {
	t.Parallel()
	ts := []Tensor{
		{Name: "a", Shape: []int{3}, Data: []float32{1, 2, 3}},
		{Name: "b", DType: I64, Shape: []int{2}, Ints: []int64{1, 2}},
		{Name: "c", Shape: []int{1}, Data: []float32{1}},
		{Name: "d", DType: I64, Shape: []int{}, Ints: []int64{7}},
	}
	var buf bytes.Buffer
	if err := Encode(&buf, ts, nil); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	n := binary.LittleEndian.Uint64(b)
	var header map[string]struct {
		DType   string    `json:"dtype"`
		Offsets [2]uint64 `json:"data_offsets"`
	}
	if err := json.Unmarshal(b[8:8+n], &header); err != nil {
		t.Fatal(err)
	}
	// I64 first, by name, then F32 by name.
	want := map[string]uint64{"b": 0, "d": 16, "a": 24, "c": 36}
	for name, h := range header {
		start := 8 + n + h.Offsets[0]
		size := uint64(DType(h.DType).Size())
		if start%size != 0 || h.Offsets[0] != want[name] {
			t.Errorf("tensor %q (%s) at data offset %d, file offset %d; want data offset %d, aligned to %d", name, h.DType, h.Offsets[0], start, want[name], size)
		}
	}
}

// TestTruncated cuts a valid file at every length: each cut is an error
// wrapping ErrTruncated.
func TestTruncated(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := Encode(&buf, testTensors(), map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	for n := range len(b) {
		if _, err := Decode(b[:n]); !errors.Is(err, ErrTruncated) {
			t.Fatalf("file cut to %d of %d bytes: got %v, want ErrTruncated", n, len(b), err)
		}
	}
}
